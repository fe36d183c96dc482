"""A synthetic Hunyuan-A13B tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with no added tokens (the
family's markers are ordinary token sequences). The ids are not the family's real ids.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

# vLLM's HunyuanA13BReasoningParser spells the markers as ordinary token sequences ("<think>\n"
# is ids 14023, 771, 397): they are not added tokens
MARKERS: list[str] = []


@functools.cache
def load() -> Any:
    return build(MARKERS)


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
