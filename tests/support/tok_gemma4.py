"""A synthetic Gemma 4 tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with the family's markers as
added tokens: vLLM 0.33 ``parser/gemma4.py`` matches ``<|tool_call>``, ``<tool_call|>``, ``<|channel>``
and ``<channel|>`` by token id and keeps ``<|"|>`` as a special token (``preserve_tokens``). The
ids are not the family's real ids.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

MARKERS = [
    "<|tool_call>",
    "<tool_call|>",
    '<|"|>',
    "<|channel>",
    "<channel|>",
    "<|turn>",
    "<turn|>",
]


@functools.cache
def load() -> Any:
    return build(MARKERS)


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
