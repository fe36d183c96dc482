"""ERNIE-4.5 tool calls: Hermes-style ``<tool_call>`` JSON ``</tool_call>`` blocks.

Wire format (the vLLM parser's own example: ``abc\n</think>\n\n\n<tool_call>\ndef\n</tool_call>\n``)::

    <tool_call>
    {"name": "get_weather", "arguments": {"location": "Paris"}}
    </tool_call>

Content may precede the blocks. ``<tool_call>`` / ``</tool_call>`` are added tokens of the
ERNIE-4.5 vocabulary (matched by id when ids are given). The JSON decides where a call ends;
a block with invalid JSON is content, markers included.

Reference: vLLM ``ernie45`` tool parser (``tool_call_regex = <tool_call>\\s*{…}\\s*</tool_call>``).
"""

from __future__ import annotations

from ..codecs import ENVELOPE
from ._json_tools import wrapped

FORMATS = [
    wrapped(
        "ernie45",
        ("<tool_call>",),
        ("</tool_call>",),
        codec=ENVELOPE,
        special=True,
        models=("ERNIE-4.5-21B-A3B-Thinking", "ERNIE-4.5-0.3B", "ERNIE-4.5-300B-A47B"),
        reference="vLLM ernie45 tool parser",
    ),
]
