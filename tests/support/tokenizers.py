"""Real tokenizers for tests, loaded offline from ``tests/data/tokenizers/``.

``load(name)`` returns the tokenizer object, ``encode(name, text)`` / ``decode(name, ids)``
convert between text and token ids. Marker strings that are added tokens of the vocabulary
(``<think>``, ``<tool_call>``, ``<｜tool▁calls▁begin｜>`` …) encode to their single added-token
id, as a serving engine's detokenizer sees them when the model generates them.

Names:

* ``"qwen3"``: the Qwen2 / Qwen2.5 / Qwen3 / Qwen3-Coder / QwQ byte-level BPE as a
  ``tiktoken.Encoding``: ``qwen.tiktoken`` (151,643 ranks) + the 26 added tokens
  151643-151668 from ``added_tokens.json`` (``<|im_start|>``, ``<tool_call>``, ``<think>``, …)
  registered as special tokens, with the Qwen2 pre-tokenizer regex. No NFC normalisation
  (the HF Qwen2 tokenizer applies NFC first; keep test texts NFC and the ids agree).
* ``"deepseek_v3"``: the DeepSeek V3 / R1 / V3.1 / V3.2 tokenizer as an HF
  ``tokenizers.Tokenizer`` (128,000 BPE + 818 added tokens: ``<think>`` = 128798,
  ``<｜tool▁calls▁begin｜>`` = 128806, …) from the gzipped ``tokenizer.json``.

To write a marker as *ordinary* tokens (a model mentioning ``<tool_call>`` in prose), use
``encode_ordinary(name, text)``.
"""

from __future__ import annotations

import functools
import gzip
import importlib
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "tokenizers"

QWEN_DIR = DATA / "qwen2-qwen3"
DEEPSEEK_DIR = DATA / "deepseek-v3"
TEST_VECTORS_DIR = DATA / "test-vectors"

NAMES = ("qwen3", "deepseek_v3")

# The Qwen2 pre-tokenizer split regex (tokenizer.json of Qwen2/2.5/3: "Split" pre-tokenizer);
# added_tokens.json carries the same string, checked in tests/test_tokenizers.py.
QWEN2_PAT_STR = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
    r"|[^\r\n\p{L}\p{N}]?\p{L}+"
    r"|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+"
    r"|\s+(?!\S)"
    r"|\s+"
)


def qwen_added_tokens() -> dict[str, int]:
    """The 26 added tokens of the Qwen3 vocabulary, ``content -> id``."""
    spec = json.loads((QWEN_DIR / "added_tokens.json").read_text(encoding="utf-8"))
    return {tok["content"]: tok["id"] for tok in spec["added_tokens"]}


@functools.cache
def _deepseek_json() -> dict[str, Any]:
    with gzip.open(DEEPSEEK_DIR / "tokenizer.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)


def deepseek_added_tokens() -> dict[str, int]:
    """The 818 added tokens of the DeepSeek V3 vocabulary, ``content -> id``."""
    return {tok["content"]: tok["id"] for tok in _deepseek_json()["added_tokens"]}


def _load_qwen3() -> Any:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(QWEN_DIR / "qwen.tiktoken"))
    return tiktoken.Encoding(
        name="qwen3",
        pat_str=QWEN2_PAT_STR,
        mergeable_ranks=ranks,
        special_tokens=qwen_added_tokens(),
    )


def _load_deepseek_v3() -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_str(json.dumps(_deepseek_json()))


@functools.cache
def _deepseek_v3_ordinary() -> Any:
    # The same tokenizer without its added tokens: marker strings fall through to BPE.
    from tokenizers import Tokenizer

    return Tokenizer.from_str(json.dumps({**_deepseek_json(), "added_tokens": []}))


@functools.cache
def load(name: str) -> Any:
    """The tokenizer called ``name``, loaded once.

    ``"qwen3"`` and ``"deepseek_v3"`` live here; any other family lives in its own module
    ``tests/support/tok_<name>.py`` with a ``load()`` function returning a tiktoken
    ``Encoding`` or an HF ``tokenizers.Tokenizer`` (so families can be added without
    touching this file)."""
    if name == "qwen3":
        return _load_qwen3()
    if name == "deepseek_v3":
        return _load_deepseek_v3()
    try:
        module = importlib.import_module(f"support.tok_{name}")
    except ModuleNotFoundError as exc:
        raise KeyError(f"unknown tokenizer {name!r}") from exc
    return module.load()


def encode(name: str, text: str) -> list[int]:
    """Token ids of ``text``; added-token strings (markers) become their single ids."""
    tok = load(name)
    if hasattr(tok, "decode_single_token_bytes"):
        return tok.encode(text, allowed_special="all")
    return tok.encode(text, add_special_tokens=False).ids


def encode_ordinary(name: str, text: str) -> list[int]:
    """Token ids of ``text`` with marker strings spelled as ordinary BPE tokens."""
    tok = load(name)
    if name == "qwen3":
        return tok.encode(text, allowed_special=set(), disallowed_special=())
    return _deepseek_v3_ordinary().encode(text, add_special_tokens=False).ids


def decode(name: str, ids: list[int]) -> str:
    """Text of ``ids``, added tokens included verbatim."""
    tok = load(name)
    if hasattr(tok, "decode_single_token_bytes"):
        return tok.decode(ids)
    return tok.decode(ids, skip_special_tokens=False)


def qwen2_test_vectors() -> list[tuple[str, list[int]]]:
    """llama.cpp's Qwen2 tokenizer test vectors: ``(text, expected ids)`` pairs."""
    inp = (TEST_VECTORS_DIR / "ggml-vocab-qwen2.gguf.inp").read_text(encoding="utf-8")
    out = (TEST_VECTORS_DIR / "ggml-vocab-qwen2.gguf.out").read_text(encoding="utf-8")
    texts = inp.split("\n__ggml_vocab_test__\n")
    assert texts[-1] == "", "the .inp file ends with a separator"
    texts = texts[:-1]
    ids = [[int(x) for x in line.split()] for line in out.split("\n")[: len(texts)]]
    assert len(texts) == len(ids)
    return list(zip(texts, ids, strict=True))
