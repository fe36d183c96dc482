"""A synthetic Step-3 tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with the family's markers as
added tokens: the ``｜…｜`` wrappers of vLLM 0.33 ``tool_parsers/step3_tool_parser.py`` (four of
them in its ``SPECIAL_TOKENS``; ``<｜tool_sep｜>`` is added here too, unverified) and ``<think>`` /
``</think>``; the ``steptml:`` tags are text.
The ids are not the family's real ids.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

MARKERS = [
    "<think>",
    "</think>",
    "<｜tool_calls_begin｜>",
    "<｜tool_calls_end｜>",
    "<｜tool_call_begin｜>",
    "<｜tool_call_end｜>",
    "<｜tool_sep｜>",
]


@functools.cache
def load() -> Any:
    return build(MARKERS)


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
