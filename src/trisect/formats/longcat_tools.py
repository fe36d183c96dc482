"""LongCat-Flash tool calls: Hermes-style blocks with LongCat's own tags.

Wire format::

    <longcat_tool_call>
    {"name": "get_weather", "arguments": {"location": "Paris"}}
    </longcat_tool_call>

Exactly the Hermes rules (``hermes.py``) with ``<longcat_tool_call>`` / ``</longcat_tool_call>``.

Reference: vLLM ``longcat`` tool parser (``LongcatFlashToolParser``, a Hermes subclass that only
changes the two tags).
"""

from __future__ import annotations

from ..codecs import ENVELOPE
from ._json_tools import wrapped

FORMATS = [
    wrapped(
        "longcat",
        ("<longcat_tool_call>",),
        ("</longcat_tool_call>",),
        codec=ENVELOPE,
        special=False,
        models=("LongCat-Flash-Chat", "LongCat-Flash-Thinking"),
        reference="vLLM longcat tool parser (Hermes with <longcat_tool_call>)",
    ),
]
