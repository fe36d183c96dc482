"""A synthetic Kimi K2 / K2-Thinking tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with the family's markers as
added tokens. The ids are not the family's real ids.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

MARKERS = [
    "<think>",
    "</think>",
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|im_system|>",
    "<|im_user|>",
    "<|im_assistant|>",
    "<|im_middle|>",
    "<|im_end|>",
]


@functools.cache
def load() -> Any:
    return build(MARKERS)


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
