"""The test tokenizers (``tests/support/tokenizers.py``) as Hugging Face fast tokenizers, the
form vLLM and SGLang load (``tokenizer.json`` in a directory).

An HF ``tokenizers.Tokenizer`` is wrapped as it is; a ``tiktoken.Encoding`` (Qwen, Llama 3/4,
gpt-oss) becomes the equivalent byte-level BPE: its ranks as the vocabulary, merges ordered by
the rank of the merged token, its split pattern, its special tokens. The Mistral v3
SentencePiece adapter has no HF form here (``UNSUPPORTED``). Built once per machine into
``$TRISECT_HF_TOKENIZERS`` (default ``~/.cache/trisect-tests/hf-tokenizers``), keyed by a hash
of the tokenizer's source module; a test that feeds a case's ids compares the text the engine
decodes, so a wrong conversion fails there.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from pathlib import Path
from typing import Any

from support import tokenizers

CACHE = Path(os.environ.get("TRISECT_HF_TOKENIZERS") or Path.home() / ".cache" / "trisect-tests" / "hf-tokenizers")
UNSUPPORTED = {
    "mistral": "SentencePiece v3 adapter: no HF fast form offline, and trisect cannot read vLLM's MistralTokenizer"
}
_VERSION = "1"


def _byte_alphabet() -> dict[int, str]:
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table = {b: chr(b) for b in keep}
    n = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)
            n += 1
    return table


def _from_tiktoken(enc: Any) -> Any:
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    ranks: dict[bytes, int] = enc._mergeable_ranks
    alphabet = _byte_alphabet()

    def text(b: bytes) -> str:
        return "".join(alphabet[x] for x in b)

    merges = sorted(
        (rank, ranks[tok[:i]], tok[:i], tok[i:])
        for tok, rank in ranks.items()
        for i in range(1, len(tok))
        if tok[:i] in ranks and tok[i:] in ranks
    )
    vocab = {text(b): r for b, r in ranks.items()}
    tk = Tokenizer(models.BPE(vocab, [(text(a), text(b)) for _, _, a, b in merges], fuse_unk=False))
    tk.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(enc._pat_str), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tk.decoder = decoders.ByteLevel()
    for content, token_id in sorted(enc._special_tokens.items(), key=lambda kv: kv[1]):
        tk.add_special_tokens([AddedToken(content, special=True, normalized=False)])
        if tk.token_to_id(content) != token_id:  # ids of specials must be the encoding's
            raise AssertionError(f"{content!r}: id {tk.token_to_id(content)} != {token_id}")
    return tk


def hf_dir(name: str) -> Path:
    """A directory vLLM's ``CachedHfTokenizer.from_pretrained`` loads, for tokenizer ``name``."""
    if name in UNSUPPORTED:
        raise KeyError(f"{name}: {UNSUPPORTED[name]}")
    module = tokenizers if name in tokenizers.NAMES else __import__(f"support.tok_{name}", fromlist=["load"])
    digest = hashlib.sha256((_VERSION + inspect.getsource(module)).encode()).hexdigest()[:12]
    out = CACHE / f"{name}-{digest}"
    if (out / "tokenizer.json").exists():
        return out
    from transformers import PreTrainedTokenizerFast

    tok = tokenizers.load(name)
    backend = _from_tiktoken(tok) if hasattr(tok, "decode_single_token_bytes") else tok
    hf = PreTrainedTokenizerFast(tokenizer_object=backend)
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    hf.save_pretrained(str(tmp))
    tmp.rename(out)
    return out
