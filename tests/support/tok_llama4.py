"""The Llama 4 tokenizer (Scout, Maverick) as a ``tiktoken.Encoding``.

``tests/data/tokenizers/llama4``: Meta's ``tokenizer.model`` (200,000 tiktoken ranks) and
``special_tokens.json`` (the 2,048 special tokens from 200000 — ``<|python_start|>`` 200016,
``<|python_end|>`` 200017, ``<|eom|>`` 200007, ``<|eot|>`` 200008 — and the O200K-style
pre-tokenizer regex, both extracted from ``models/llama4/tokenizer.py`` of meta-llama/llama-models).
No test vectors exist for it here; ``tests/test_json_tools.py`` checks round trips and the
special ids.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

DIR = Path(__file__).resolve().parent.parent / "data" / "tokenizers" / "llama4"


@functools.cache
def load() -> Any:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    spec = json.loads((DIR / "special_tokens.json").read_text(encoding="utf-8"))
    return tiktoken.Encoding(
        name="llama4",
        pat_str=spec["pat_str"],
        mergeable_ranks=load_tiktoken_bpe(str(DIR / "tokenizer.model")),
        special_tokens=spec["special_tokens"],
    )
