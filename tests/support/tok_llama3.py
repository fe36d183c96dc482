"""The Llama 3.x tokenizer (Llama 3.1 / 3.2 / 3.3, Hermes-on-Llama-3) as a ``tiktoken.Encoding``.

``tests/data/tokenizers/llama3``: Meta's ``tokenizer.model`` (128,000 tiktoken ranks) and
``special_tokens.json`` (the 256 special tokens from 128000 — ``<|python_tag|>`` 128010,
``<|eom_id|>`` 128008, ``<|eot_id|>`` 128009 — and the pre-tokenizer regex, both extracted from
``models/llama3/tokenizer.py`` of meta-llama/llama-models). Checked against llama.cpp's
``ggml-vocab-llama-bpe`` test vectors in ``tests/test_json_tools.py``.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

DIR = Path(__file__).resolve().parent.parent / "data" / "tokenizers" / "llama3"


@functools.cache
def load() -> Any:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    spec = json.loads((DIR / "special_tokens.json").read_text(encoding="utf-8"))
    return tiktoken.Encoding(
        name="llama3",
        pat_str=spec["pat_str"],
        mergeable_ranks=load_tiktoken_bpe(str(DIR / "tokenizer.model")),
        special_tokens=spec["special_tokens"],
    )
