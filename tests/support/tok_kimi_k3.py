"""A synthetic Kimi K3 tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with the three XTML special
tokens as added special (control) tokens. The ids are not the family's real ids. Every channel
marker is three tokens (``<|open|>`` ``think`` ``<|sep|>``), as vLLM's Kimi K3 reasoning parser
describes.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

MARKERS = [
    "<|open|>",
    "<|close|>",
    "<|sep|>",
]


@functools.cache
def load() -> Any:
    return build(MARKERS, control=tuple(MARKERS))


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
