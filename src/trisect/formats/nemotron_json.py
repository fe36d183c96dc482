"""NVIDIA Nemotron JSON tool calls: a JSON list between ``<TOOLCALL>`` and ``</TOOLCALL>``.

Wire format (vLLM's Nemotron JSON tool template: the assistant turn is the content, a blank
line when there is content, then the calls)::

    Let me check.

    <TOOLCALL>[{"name": "get_weather", "arguments": {"location": "Paris"}}, {…}]</TOOLCALL>

The JSON decides where each call ends; a list entry whose JSON is invalid ends there and its
text is content; the list markers are dropped. Arguments the template was given as a string
are written raw, so they arrive as JSON objects.

Reference: vLLM ``examples/tool_chat_template_nemotron_json.jinja``; vLLM
``nemotron_json_tool_parser``.
"""

from __future__ import annotations

from ..codecs import ENVELOPE
from ._json_tools import listed

FORMATS = [
    listed(
        "nemotron_json",
        ("<TOOLCALL>",),
        ("</TOOLCALL>",),
        codec=ENVELOPE,
        models=("Llama-3.1-Nemotron-Nano-8B", "Llama-3.3-Nemotron-Super-49B", "NVIDIA-Nemotron-Nano-9B-v2"),
        reference="vLLM tool_chat_template_nemotron_json.jinja; vLLM nemotron_json",
    ),
]
