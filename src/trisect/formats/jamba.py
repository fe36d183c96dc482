"""AI21 Jamba tool calls: a JSON list between ``<tool_calls>`` and ``</tool_calls>``.

Wire format::

    <tool_calls>[{"name": "get_weather", "arguments": {"location": "Paris"}}, {…}]</tool_calls>

``<tool_calls>`` / ``</tool_calls>`` are special tokens of the Jamba vocabulary (the parser
refuses a tokenizer without them), matched by id when ids are given. Content before the block
is content. A list entry whose JSON is invalid ends there and its text is content; the list
markers are dropped.

Reference: vLLM 0.33 ``vllm/tool_parsers/jamba_tool_parser.py`` (``tool_calls_start_token`` /
``tool_calls_end_token``, looked up in the vocabulary; a JSON list between them). No Jamba
template or tokenizer is staged.
"""

from __future__ import annotations

from ..codecs import ENVELOPE
from ._json_tools import listed

FORMATS = [
    listed(
        "jamba",
        ("<tool_calls>",),
        ("</tool_calls>",),
        codec=ENVELOPE,
        special=frozenset({"LIST_START", "LIST_END"}),
        models=("Jamba 1.5 Mini", "Jamba 1.5 Large", "Jamba 1.6"),
        reference="vLLM jamba tool parser",
    ),
]
