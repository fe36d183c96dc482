"""MiniMax-M1 tool calls: JSON objects, one per line, between ``<tool_calls>`` and ``</tool_calls>``.

Wire format (vLLM's MiniMax-M1 tool template; the system prompt shows the same)::

    <tool_calls>
    {"name": "get_weather", "arguments": {"location": "Paris"}}
    {"name": "get_time", "arguments": {"timezone": "UTC"}}
    </tool_calls>

A JSON list of the same objects is accepted too. The JSON decides where each call ends; an
object whose JSON is invalid ends there and its text is content; the block markers are dropped.
Served by vLLM as ``minimax`` (MiniMax-M2 is the separate ``minimax_m2`` format).

Reference: vLLM ``examples/tool_chat_template_minimax_m1.jinja``; vLLM ``minimax_tool_parser``.
"""

from __future__ import annotations

from ..codecs import ENVELOPE
from ..engine.spec import GrammarFacts
from ._json_tools import listed

FORMATS = [
    listed(
        "minimax",
        ("<tool_calls>",),
        ("</tool_calls>",),
        codec=ENVELOPE,
        grammar=GrammarFacts(
            unsupported="the table takes JSON lines and a [list] alike; the template writes JSON lines, the "
            "derivation picks the list"
        ),
        models=("MiniMax-M1-40k", "MiniMax-M1-80k", "MiniMax-Text-01"),
        reference="vLLM tool_chat_template_minimax_m1.jinja; vLLM minimax (MiniMax-M1)",
    ),
]
