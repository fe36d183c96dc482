"""Hunyuan-A13B tool calls: a JSON list between ``<tool_calls>`` and ``</tool_calls>``.

Wire format (vLLM's Hunyuan-A13B tool template, which also instructs the model so)::

    Let me check.<tool_calls>[{"name": "get_weather", "arguments": {"location": "Paris"}}, {…}]</tool_calls>

Content may precede the block (the template writes it first). ``<tool_calls>`` /
``</tool_calls>`` are added tokens of the Hunyuan vocabulary (matched by id when ids are
given). The JSON decides where each call ends; a list entry whose JSON is invalid ends there
and its text is content; the list markers are dropped. Arguments are kept as written
(non-ASCII unescaped, vLLM #46308) and the call after an empty-argument call keeps its
arguments (vLLM #47901).

Reference: vLLM ``examples/tool_chat_template_hunyuan_a13b.jinja``; vLLM ``hunyuan_a13b`` parser.
"""

from __future__ import annotations

from ..codecs import ENVELOPE
from ._json_tools import listed

FORMATS = [
    listed(
        "hunyuan_a13b",
        ("<tool_calls>",),
        ("</tool_calls>",),
        codec=ENVELOPE,
        special=frozenset({"LIST_START", "LIST_END"}),
        models=("Hunyuan-A13B-Instruct",),
        reference="vLLM tool_chat_template_hunyuan_a13b.jinja; vLLM hunyuan_a13b",
    ),
]
