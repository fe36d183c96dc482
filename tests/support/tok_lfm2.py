"""A synthetic Liquid LFM2 tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with the markers of LFM2's
pythonic tool calls (``<|tool_call_start|>``, ``<|tool_call_end|>``: vLLM 0.33
``tool_parsers/lfm2_tool_parser.py`` looks both up in the vocabulary) and its ChatML turn markers
(unverified: no LFM2 tokenizer or template is staged) as added tokens. The
ids are not the family's real ids.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

MARKERS = ["<|tool_call_start|>", "<|tool_call_end|>", "<|im_start|>", "<|im_end|>"]


@functools.cache
def load() -> Any:
    return build(MARKERS)


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
