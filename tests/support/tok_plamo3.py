"""A synthetic PLaMo 3 tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with the marker pieces vLLM's
PLaMo 3 parser names (``PLAMO_MARKER_TOKENS``) and ``<|plamo:tag|>`` as added special (control)
tokens. The ids are not the family's real ids. Every PLaMo marker is therefore several tokens,
as in the real vocabulary.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

MARKERS = [
    "<|plamo:begin_",
    "<|plamo:end_",
    ":plamo|>",
    "<|plamo:tag|>",
]


@functools.cache
def load() -> Any:
    return build(MARKERS, control=tuple(MARKERS))


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
