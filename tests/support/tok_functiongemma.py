"""A synthetic FunctionGemma tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with the family's markers as
added tokens: the markers of vLLM 0.33 ``tool_parsers/functiongemma_tool_parser.py``
(``<start_function_call>``, ``<end_function_call>``, ``<escape>``), which matches them as text;
that they are single tokens of the real vocabulary is unverified. The ids are not the family's
real ids.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

MARKERS = [
    "<start_function_call>",
    "<end_function_call>",
    "<escape>",
]


@functools.cache
def load() -> Any:
    return build(MARKERS)


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
