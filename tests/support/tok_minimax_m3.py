"""A synthetic MiniMax-M3 tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with ``<mm:think>``,
``</mm:think>`` and the namespace marker as added tokens (vLLM: "the M3 markers are non-special
added tokens"). The ids are not the family's real ids. The format matches the markers as text:
generated marker text may be split into smaller tokens.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

MARKERS = [
    "<mm:think>",
    "</mm:think>",
    "]<]minimax[>[",
]


@functools.cache
def load() -> Any:
    return build(MARKERS)


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
