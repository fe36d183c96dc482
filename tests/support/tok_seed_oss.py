"""A synthetic Seed-OSS tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with the family's markers as
added tokens: the four wrapper tokens vLLM 0.33 ``parser/seed_oss.py`` puts in place of Qwen3's
(``<seed:think>``, ``</seed:think>``, ``<seed:tool_call>``, ``</seed:tool_call>``).
The ids are not the family's real ids.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

MARKERS = [
    "<seed:think>",
    "</seed:think>",
    "<seed:tool_call>",
    "</seed:tool_call>",
]


@functools.cache
def load() -> Any:
    return build(MARKERS)


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
