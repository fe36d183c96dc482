"""The gpt-oss Harmony tokenizer (``o200k_harmony``) as a ``tiktoken.Encoding``, offline.

``o200k_base.tiktoken`` (199,998 ranks) plus the Harmony special tokens of
``o200k_harmony_special_tokens.json`` (``<|start|>`` = 200006, ``<|channel|>`` = 200005,
``<|message|>`` = 200008, ``<|end|>`` = 200007, ``<|call|>`` = 200012, ``<|return|>`` = 200002,
``<|constrain|>`` = 200003, …), with o200k's pre-tokenizer pattern (stored in the same file).
Source: openai/harmony ``src/tiktoken_ext/public_encodings.rs``; ranks from tiktoken-rs.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

DIR = Path(__file__).resolve().parent.parent / "data" / "tokenizers" / "gpt-oss"


def special_tokens() -> dict[str, int]:
    return json.loads((DIR / "o200k_harmony_special_tokens.json").read_text(encoding="utf-8"))["special_tokens"]


@functools.cache
def load() -> Any:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    spec = json.loads((DIR / "o200k_harmony_special_tokens.json").read_text(encoding="utf-8"))
    return tiktoken.Encoding(
        name="o200k_harmony",
        pat_str=spec["pat_str"],
        mergeable_ranks=load_tiktoken_bpe(str(DIR / "o200k_base.tiktoken")),
        special_tokens=spec["special_tokens"],
    )
