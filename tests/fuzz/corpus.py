"""What the fuzzer works on: the cases, their parsers and tokenizers, and the marker pool."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from support import tokenizers
from support.cases import load_cases
from trisect import Parser
from trisect.engine.vocab import _piece_bytes
from trisect.formats import all_formats


@dataclass(frozen=True)
class Item:
    """One case, as the fuzzer uses it."""

    key: str  # file:id
    data: dict[str, Any]

    @property
    def tokenizer(self) -> str | None:
        return self.data.get("tokenizer")

    def request(self) -> dict[str, Any]:
        options = dict(self.data.get("options") or {})
        if self.data.get("tools") is not None:
            options["tools"] = self.data["tools"]
        return options

    def parser(self, *, with_tokenizer: bool) -> Parser:
        return parser_for(
            self.data.get("reasoning"), self.data.get("tools_format"), self.tokenizer if with_tokenizer else None
        )


@functools.cache
def items() -> tuple[Item, ...]:
    return tuple(Item(f"{d['file']}:{d['id']}", d) for d in load_cases())


@functools.cache
def parser_for(reasoning: str | None, tools: str | None, tokenizer: str | None) -> Parser:
    return Parser(reasoning, tools, tokenizer=tokenizers.load(tokenizer) if tokenizer else None)


def tokenizer_names() -> list[str]:
    """Every tokenizer a case uses."""
    return sorted({i.tokenizer for i in items() if i.tokenizer})


@functools.cache
def markers() -> tuple[str, ...]:
    """Every marker string of every registered format (the "other formats' markers")."""
    found = {s for spec in all_formats() for values in spec.terminals.values() for s in values if s.strip()}
    return tuple(sorted(found))


def encode(name: str, text: str) -> list[int] | None:
    """``text``'s ids under tokenizer ``name``, or ``None`` where it cannot be encoded or does not
    decode back to itself (a lone surrogate; a normalising tokenizer). SentencePiece refuses a
    lone surrogate with a ``RuntimeError`` (pybind11 cannot cast the string)."""
    try:
        ids = tokenizers.encode(name, text)
        back = tokenizers.decode(name, ids)
    except (UnicodeError, ValueError, TypeError, OverflowError, RuntimeError):
        return None
    return ids if back == text else None


@functools.cache
def vocab_facts(name: str) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """Tokenizer ``name``: the number of ordinary ids to sample from, its added-token ids, and
    its byte tokens (ids whose bytes are not UTF-8 on their own: byte fallback)."""
    tok = tokenizers.load(name)
    if hasattr(tok, "decode_single_token_bytes"):  # tiktoken
        added = tuple(sorted(tok.encode_single_token(s) for s in tok.special_tokens_set))
        ordinary = min(added) if added else tok.n_vocab
        single = tuple(sorted(tok.encode_single_token(bytes([b])) for b in range(0x80, 0x100)))
        return ordinary, added, single
    added = tuple(sorted(tok.get_added_tokens_decoder()))
    if hasattr(tok, "get_vocab_size"):
        size = tok.get_vocab_size(with_added_tokens=False)
    else:  # an adapter (Mistral's SentencePiece): the first id with no piece
        lo, hi = 0, 1 << 24
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if tok.id_to_token(mid) is not None else (lo, mid)
        size = lo
    byte_ids = []
    for i in range(min(size, 5000)):
        piece = tok.id_to_token(i)
        if piece is None:
            continue
        data = _piece_bytes(piece)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            byte_ids.append(i)
    return size, added, tuple(byte_ids)
