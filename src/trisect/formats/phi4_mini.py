"""Phi-4-mini tool calls: ``functools[`` then a JSON list of envelopes, no closing marker.

Wire format (the system prompt of vLLM's Phi-4-mini tool template: "prefix function calls with
functools marker (no closing marker required) … functools[{"name": [function name],
"arguments": [function arguments as JSON]}, ...]")::

    functools[{"name": "get_weather", "arguments": {"location": "Paris"}}, {…}]

The list ends at its ``]``; text after it is content. A list entry whose JSON is invalid ends
there and its text is content; ``functools[`` and ``]`` are dropped.

Reference: vLLM ``examples/tool_chat_template_phi4_mini.jinja``; vLLM ``phi4_mini_json`` parser.
"""

from __future__ import annotations

from ..codecs import ENVELOPE
from ._json_tools import listed

FORMATS = [
    listed(
        "phi4_mini_json",
        ("functools[",),
        None,
        codec=ENVELOPE,
        start_opens_list=True,
        models=("Phi-4-mini-instruct",),
        reference="vLLM tool_chat_template_phi4_mini.jinja; vLLM phi4_mini_json",
    ),
]
