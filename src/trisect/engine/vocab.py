"""The tokenizer, seen through the two things the engine needs (duck-typed, no imports).

* which marker strings are single special (added) tokens, and their ids;
* the bytes of an ordinary token, to detokenize ids incrementally and to align token ids with
  the text an engine sends next to them.

Accepted: an HF ``tokenizers.Tokenizer``, a ``transformers`` tokenizer (slow or fast) and a
``tiktoken.Encoding``. Token bytes are cached per id, so the cost per token is one dict lookup.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from ..errors import RequestError, StreamError
from .value import Value

_INT = {int}


@cache
def _byte_decoder() -> dict[str, int]:
    """GPT-2's printable-unicode alphabet for bytes, inverted (byte-level BPE vocabularies)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


def _piece_bytes(piece: str) -> bytes:
    """Bytes of a vocabulary entry as stored by HF tokenizers (byte-level or SentencePiece)."""
    table = _byte_decoder()
    if all(ch in table for ch in piece):
        return bytes(table[ch] for ch in piece)
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        return bytes([int(piece[3:5], 16)])
    return piece.replace("\u2581", " ").encode("utf-8")


class Vocab:
    """Adapter over a tokenizer object; see the module docstring."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self._bytes: dict[int, bytes] = {}
        backend = getattr(tokenizer, "backend_tokenizer", None)
        # control tokens (BOS/EOS, end of turn) decode to nothing when trisect detokenizes
        self._control: frozenset[int]
        if hasattr(tokenizer, "decode_single_token_bytes"):  # tiktoken
            self._kind = "tiktoken"
            specials = tokenizer.special_tokens_set
            self._added = {tokenizer.encode_single_token(s): s for s in specials}
            # tiktoken has no "special" flag: the <|...|> spelling marks control tokens
            self._control = frozenset(i for i, s in self._added.items() if s.startswith("<|") and s.endswith("|>"))
        elif hasattr(tokenizer, "get_added_tokens_decoder") or (
            backend is not None and hasattr(backend, "get_added_tokens_decoder")
        ):  # HF tokenizers, or a transformers fast tokenizer's backend
            self._kind = "hf"
            if not hasattr(tokenizer, "get_added_tokens_decoder"):
                self.tokenizer = backend
            decoder = self.tokenizer.get_added_tokens_decoder()
            self._added = {i: t.content for i, t in decoder.items()}
            self._control = frozenset(i for i, t in decoder.items() if t.special)
        elif hasattr(tokenizer, "convert_ids_to_tokens"):  # transformers slow
            self._kind = "transformers"
            decoder = getattr(tokenizer, "added_tokens_decoder", {}) or {}
            self._added = {i: getattr(t, "content", str(t)) for i, t in decoder.items()}
            for i in getattr(tokenizer, "all_special_ids", ()):
                self._added.setdefault(i, tokenizer.convert_ids_to_tokens(i))
            self._control = frozenset(getattr(tokenizer, "all_special_ids", ()))
        else:
            raise RequestError(
                "tokenizer must be an HF tokenizers.Tokenizer, a transformers tokenizer or a tiktoken.Encoding"
            )
        self._by_text = {text: i for i, text in self._added.items()}
        self._suffixes: dict[str, str] = {}
        # token id -> the bytes it puts in the text an engine sends with it (with text) or in the
        # text trisect decodes (ids alone); ~size for control tokens (see ``text_size``)
        self.sizes: tuple[dict[int, int], dict[int, int]] = ({}, {})
        self._known: set[int] = set()  # ids checked to be token ids (``check_ids``)

    def check_ids(self, token_ids: Sequence[object], first: int = 0) -> None:
        """Every id is a token id of this vocabulary (an ``int``: not a ``bool``, a float or a
        string), else ``StreamError`` naming the first that is not and its position (``first``:
        the position of ``token_ids[0]`` among all ids fed). Cost: two C-level passes once every
        id was seen (a set test and a type test), one dict lookup per id seen for the first time."""
        known = self._known
        if known.issuperset(token_ids) and set(map(type, token_ids)) <= _INT:
            return
        for k, token_id in enumerate(token_ids):
            if type(token_id) is not int:
                raise StreamError(f"token id {token_id!r} at position {first + k} is not an integer")
            if token_id in known:
                continue
            try:
                self.text_size(token_id, False)
            except (TypeError, ValueError, KeyError, IndexError, OverflowError, RequestError):
                raise StreamError(
                    f"token id {token_id!r} at position {first + k} is not in the tokenizer's vocabulary"
                ) from None
            known.add(token_id)

    def special_id(self, text: str) -> int | None:
        """The id of the added/special token spelled exactly ``text``, if there is one."""
        return self._by_text.get(text)

    def added_text(self, token_id: int) -> str | None:
        return self._added.get(token_id)

    def ids_within(self, texts: Iterable[str]) -> frozenset[int]:
        """Ids of the added tokens whose text occurs inside one of ``texts`` (the pieces of a
        marker that is several tokens: Kimi K3's ``<|open|>`` in ``<|open|>think<|sep|>``)."""
        texts = [t for t in texts if t]
        return frozenset(i for i, a in self._added.items() if any(a in t for t in texts))

    def suffix_of(self, pattern: str) -> str:
        """Group 1 of the first added token (lowest id) that ``pattern`` matches whole, or ``""``
        (a checkpoint's marker suffix: ``FormatSpec.vocab_suffix``). Cost: one pass over the
        added tokens, once per pattern."""
        found = self._suffixes.get(pattern)
        if found is None:
            regex = re.compile(pattern)
            matches = (regex.fullmatch(self._added[i]) for i in sorted(self._added))
            found = next((m.group(1) or "" for m in matches if m is not None), "")
            self._suffixes[pattern] = found
        return found

    def is_control(self, token_id: int) -> bool:
        return token_id in self._control

    def text_size(self, token_id: int, decoding: bool) -> int:
        """Bytes of text ``token_id`` stands for: ordinary bytes, or an added token's text (none
        for a control token when trisect decodes: it drops them). Control tokens give ``~size``
        (negative), so a caller can tell them apart. Cached per id; raises for an id outside the
        vocabulary (``KeyError``, ``OverflowError``, ``RequestError``, ``TypeError``)."""
        cache = self.sizes[decoding]
        size = cache.get(token_id)
        if size is None:
            added = self.added_text(token_id)
            if added is None:
                size = len(self.token_bytes(token_id))
            elif token_id in self._control:
                size = ~(0 if decoding else len(added.encode("utf-8")))
            else:
                size = len(added.encode("utf-8"))
            cache[token_id] = size
        return size

    def token_bytes(self, token_id: int) -> bytes:
        cached = self._bytes.get(token_id)
        if cached is not None:
            return cached
        tok = self.tokenizer
        data: bytes
        if self._kind == "tiktoken":
            data = tok.decode_single_token_bytes(token_id)
        elif self._kind == "hf":
            piece = tok.id_to_token(token_id)
            if piece is None:
                raise RequestError(f"token id {token_id} is not in the tokenizer's vocabulary")
            data = _piece_bytes(piece)
        else:
            data = _piece_bytes(tok.convert_ids_to_tokens(token_id))
        self._bytes[token_id] = data
        return data

    def encode_text(self, text: str) -> list[int]:
        """Encode with special tokens recognised (for prompts given as text, in tests and tools)."""
        tok = self.tokenizer
        if self._kind == "tiktoken":
            return list(tok.encode(text, allowed_special="all"))
        if self._kind == "hf":
            return list(tok.encode(text, add_special_tokens=False).ids)
        return list(tok.encode(text, add_special_tokens=False))


class Detokenizer:
    """Incremental ids -> text that never splits a UTF-8 character.

    Added tokens decode to their text, except control tokens (BOS/EOS, end of turn) that are
    not markers of the format (``keep``): those decode to nothing, as with an engine's
    ``skip_special_tokens``. An incomplete character at the very end is dropped.
    """

    def __init__(self, vocab: Vocab, keep: Iterable[int]) -> None:
        self._vocab = vocab
        self._keep = frozenset(keep)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def decode(self, ids: Iterable[int]) -> str:
        vocab = self._vocab
        parts: list[str] = []
        for token_id in ids:
            added = vocab.added_text(token_id)
            if added is not None:
                if token_id in self._keep or not vocab.is_control(token_id):
                    parts.append(added)
                continue
            parts.append(self._decoder.decode(vocab.token_bytes(token_id)))
        return "".join(parts)

    def copy(self) -> Detokenizer:
        """An independent detokenizer in the same state (the bytes of an unfinished character)."""
        return Detokenizer.from_value(self._vocab, self._keep, self.to_value())

    def to_value(self) -> bytes:
        """Its state: the bytes of a character not completed yet (at most 3)."""
        pending, _flag = self._decoder.getstate()
        return pending

    @classmethod
    def from_value(cls, vocab: Vocab, keep: Iterable[int], value: Value) -> Detokenizer:
        if type(value) is not bytes or len(value) > 3:
            raise ValueError("a detokenizer's state is the bytes of an unfinished character")
        new = cls(vocab, keep)
        new._decoder.setstate((value, 0))
        return new

    def keeps(self, token_id: int) -> bool:
        return token_id in self._keep or not self._vocab.is_control(token_id)

    def flush(self) -> str:
        self._decoder.reset()  # bytes of a character that never completed
        return ""
