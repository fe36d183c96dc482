"""A synthetic Tencent HY v4 checkpoint with suffixed structural tokens tokenizer; the real one is not staged.

Byte-level BPE on a fixed corpus (``support.synth_tokenizer``) with the structural tokens
spelled with a checkpoint suffix as added tokens. The ids are not the family's real ids. The
suffix ``:6124c78e`` is the example in vLLM's ``detect_token_suffix`` docstring.
"""

from __future__ import annotations

import functools
from typing import Any

from support.synth_tokenizer import build

MARKERS = [
    "<think:6124c78e>",
    "</think:6124c78e>",
    "<tool_calls:6124c78e>",
    "</tool_calls:6124c78e>",
    "<tool_call:6124c78e>",
    "</tool_call:6124c78e>",
    "<tool_sep:6124c78e>",
    "<arg_key:6124c78e>",
    "</arg_key:6124c78e>",
    "<arg_value:6124c78e>",
    "</arg_value:6124c78e>",
]


@functools.cache
def load() -> Any:
    return build(MARKERS)


@functools.cache
def load_ordinary() -> Any:
    """The same BPE without added tokens: marker strings as ordinary tokens."""
    return build([])
