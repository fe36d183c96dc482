"""A synthetic MiniMax-M2 tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with the family's markers as
added tokens: the MiniMax-M2 template declares ``<minimax:tool_call>`` / ``</minimax:tool_call>`` as its
special-token variables. The ids are not the family's real ids.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

MARKERS = [
    "<think>",
    "</think>",
    "<minimax:tool_call>",
    "</minimax:tool_call>",
    "]~b]",
    "[e~[",
]


@functools.cache
def load() -> Any:
    return build(MARKERS)


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
