"""The tokenizer, seen through the two things the engine needs (duck-typed, no imports).

* which marker strings are single special (added) tokens, and their ids;
* the bytes of an ordinary token, to detokenize ids incrementally and to align token ids with
  the text an engine sends next to them: ``Renderer`` makes of ids the text the tokenizer's own
  ``decode(ids, skip_special_tokens=False)`` gives (U+FFFD for bytes that make no character, a
  SentencePiece run's dropped leading space), one id at a time.

Accepted: an HF ``tokenizers.Tokenizer``, a ``transformers`` tokenizer (slow or fast) and a
``tiktoken.Encoding``. Token bytes are cached per id, so the cost per token is one dict lookup.
"""

from __future__ import annotations

import codecs
import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from typing import Any

from ..errors import RequestError, StreamError
from .value import Value, as_bool, as_str, as_tuple

_INT = {int}

# The error handler of a tokenizer whose decode makes each byte that is no character's its own
# U+FFFD (SentencePiece's byte pieces: ``<0xE1><0x8B>`` -> two), where Python's "replace" (and
# Rust's ``from_utf8_lossy`` under HF tokenizers' byte-level decoder) makes one per maximal
# subpart (one). Registered once, in the codecs registry, under trisect's own name.
EACH_BYTE = "trisect.each-byte"


def _each_byte(err: UnicodeError) -> tuple[str, int]:
    if not isinstance(err, UnicodeDecodeError):
        raise err
    return "\ufffd" * (err.end - err.start), err.end


codecs.register_error(EACH_BYTE, _each_byte)


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
        # ordinary token id -> its bytes' length, for tokens whose bytes are whole UTF-8 (they render
        # as themselves where nothing is pending): the lexer's one dict lookup per id
        self.plain_sizes: dict[int, int] = {}
        self._drops: bool | None = None
        self._errors: str | None = None
        self._known: set[int] = set()  # ids checked to be token ids (``check_ids``)
        self._fingerprint: bytes | None = None

    def check_ids(self, token_ids: Sequence[object], first: int = 0) -> None:
        """Every id is a token id of this vocabulary (an ``int``: not a ``bool``, a float or a
        string), else ``StreamError`` naming the first that is not and its position (``first``:
        the position of ``token_ids[0]`` among all ids fed). Cost: two C-level passes once every
        id was seen (a set test and a type test), one dict lookup per id seen for the first time."""
        known = self._known
        try:
            if known.issuperset(token_ids) and set(map(type, token_ids)) <= _INT:
                return
        except TypeError:  # an unhashable "id" (a list): found below
            pass
        for k, token_id in enumerate(token_ids):
            if type(token_id) is not int:
                raise StreamError(f"token id {token_id!r} at position {first + k} is not an integer")
            if token_id in known:
                continue
            try:
                if self.added_text(token_id) is None:
                    self.token_bytes(token_id)
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

    def plain_size(self, token_id: int) -> int | None:
        """The bytes' length of an ordinary token whose bytes are whole UTF-8 (``None``: an added
        token, or bytes that only render with their neighbours: byte fallback, a split
        character). Cached; raises for an id outside the vocabulary (``KeyError``,
        ``OverflowError``, ``RequestError``, ``TypeError``)."""
        size = self.plain_sizes.get(token_id)
        if size is not None:
            return size
        if self.added_text(token_id) is not None:
            return None
        data = self.token_bytes(token_id)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        self.plain_sizes[token_id] = len(data)
        return len(data)

    @property
    def drops_run_space(self) -> bool:
        """The tokenizer's decode drops the leading space of the first ordinary token after an
        added token (SentencePiece's dummy prefix, as mistral-common decodes each run), asked of
        the tokenizer once: it decodes an added token and a token that starts with a space."""
        if self._drops is None:
            self._drops = self._probe_run_space()
        return self._drops

    @property
    def utf8_errors(self) -> str:
        """How the tokenizer's decode replaces bytes that make no character: ``"replace"`` (one
        U+FFFD per maximal subpart) or ``EACH_BYTE`` (one per byte), asked of the tokenizer once:
        it decodes the byte tokens of an unfinished three-byte character (``E1 8B``)."""
        if self._errors is None:
            self._errors = EACH_BYTE if self._probe_each_byte() else "replace"
        return self._errors

    def utf8_decoder(self) -> codecs.IncrementalDecoder:
        """An incremental UTF-8 decoder that replaces what makes no character as the tokenizer does."""
        return codecs.getincrementaldecoder("utf-8")(self.utf8_errors)

    def decode_bytes(self, data: bytes) -> str:
        """``data`` as text, what makes no character replaced as the tokenizer does."""
        return data.decode("utf-8", self.utf8_errors)

    def _probe_each_byte(self) -> bool:
        if self._kind == "tiktoken":  # tiktoken decodes with Python's "replace"
            return False
        found: dict[bytes, int] = {}
        for token_id, data in self._ordinary_tokens(1024):  # byte tokens come first in SentencePiece
            if data in (b"\xe1", b"\x8b"):
                found.setdefault(data, token_id)
        if len(found) < 2:
            return False
        try:
            text = self.tokenizer.decode([found[b"\xe1"], found[b"\x8b"]], skip_special_tokens=False)
        except (TypeError, ValueError):
            return False
        return bool(text == "\ufffd\ufffd")

    def _ordinary_tokens(self, limit: int) -> Iterator[tuple[int, bytes]]:
        """``(id, bytes)`` of the ordinary tokens among the first ``limit`` ids (ids the tokenizer
        cannot read skipped): what the probes look through."""
        for token_id in range(limit):
            if token_id not in self._added:
                try:
                    yield token_id, self.token_bytes(token_id)
                except (KeyError, ValueError, TypeError, OverflowError, RequestError):
                    continue

    def _probe_run_space(self) -> bool:
        if self._kind == "tiktoken" or not self._added:
            return False
        spaced = None  # an ordinary token that is a space and a word
        for token_id, data in self._ordinary_tokens(5000):  # the first such word among the commonest
            if len(data) > 2 and data[:1] == b" " and data[1:].isalpha() and data.isascii():
                spaced = (token_id, data[1:].decode())
                break
        if spaced is None:
            return False
        decode = self.tokenizer.decode
        # added tokens that decode to their own text (not a BOS or an unknown-token marker)
        for added in sorted(self._added, reverse=True)[:16]:
            text = self._added[added]
            try:
                if decode([added], skip_special_tokens=False) != text:
                    continue
                pair = decode([added, spaced[0]], skip_special_tokens=False)
            except (TypeError, ValueError):
                return False
            return bool(pair == text + spaced[1])
        return False

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

    def fingerprint(self) -> bytes:
        """A digest that tells tokenizers apart (a stream state is bound to the one it was made
        with): the tokenizer's kind and size, every added token, and the bytes of up to 4096
        ordinary ids spread over the vocabulary. Computed once (a few milliseconds)."""
        found = self._fingerprint
        if found is not None:
            return found
        tok = self.tokenizer
        try:
            if self._kind == "tiktoken":
                size = int(tok.n_vocab)
            elif self._kind == "hf":
                size = int(tok.get_vocab_size(with_added_tokens=True))
            else:
                size = len(tok)
        except (AttributeError, TypeError):  # an adapter that cannot say: sample the first ids
            size = 1 << 16
        h = hashlib.sha256(f"{self._kind}:{size}:".encode())
        for token_id in sorted(self._added):
            h.update(f"{token_id}={self._added[token_id]!r}{int(token_id in self._control)};".encode())
        for token_id in range(0, size, max(1, size // 4096)):
            if token_id in self._added:
                continue
            try:
                data = self.token_bytes(token_id)
            except (KeyError, ValueError, TypeError, IndexError, OverflowError, RequestError):
                data = b"?"  # a hole in the id space: part of what this tokenizer is
            h.update(len(data).to_bytes(2, "big") + data)
        found = self._fingerprint = h.digest()
        return found

    def encode_text(self, text: str) -> list[int]:
        """Encode with special tokens recognised (for prompts given as text, in tests and tools)."""
        tok = self.tokenizer
        if self._kind == "tiktoken":
            return list(tok.encode(text, allowed_special="all"))
        if self._kind == "hf":
            return list(tok.encode(text, add_special_tokens=False).ids)
        return list(tok.encode(text, add_special_tokens=False))


class Renderer:
    """Token ids -> the text the tokenizer's own decode gives them, one id at a time.

    ``decode(ids, skip_special_tokens=False)`` is the text an engine sends with ids when a
    parser runs, and the text trisect makes of ids alone; the lexer aligns the two by it. The
    bytes of consecutive ordinary tokens are decoded together, never splitting a character; an
    added token ends that run, so the bytes of a character it interrupts, and bytes that are not
    UTF-8, are U+FFFD as the tokenizer's decode makes them (``Vocab.utf8_errors``: one per
    maximal subpart, Unicode's substitution, which Rust's ``String::from_utf8_lossy`` under HF
    tokenizers and Python's ``"replace"`` both follow; one per byte under SentencePiece's byte
    pieces), as are those left at the end of the output. The first token of a run after an added token loses
    the leading space a SentencePiece decoder drops there (``Vocab.drops_run_space``, learned
    from the tokenizer). Added tokens are their text. ``added(..., hold=True)`` (ids alone, a
    control token that is not a marker of the format): the text is held until a token that is
    not one follows, and then is text where the model wrote it; the ones the output ends with
    are an engine's stop tokens, whose text an engine does not send: ``end`` drops them.
    """

    __slots__ = ("_vocab", "_decoder", "_run_start", "_held", "dirty")

    def __init__(self, vocab: Vocab) -> None:
        self._vocab = vocab
        self._decoder = vocab.utf8_decoder()
        self._run_start = True  # the next ordinary token begins a run (after an added token)
        self._held = ""  # control tokens' text, held (ids alone)
        # the next ordinary token may not render as its own bytes (bytes are pending, it may
        # lose a SentencePiece space, held text comes first): the lexer's fast path is off
        self.dirty = vocab.drops_run_space

    def ordinary(self, token_id: int) -> str:
        """The text an ordinary token releases (held control text first)."""
        data = self._vocab.token_bytes(token_id)
        if self._run_start:
            self._run_start = False
            if data[:1] == b" " and self._vocab.drops_run_space:
                data = data[1:]
        text = self._decoder.decode(data)
        self.dirty = bool(self._decoder.getstate()[0])
        if self._held:
            text, self._held = self._held + text, ""
        return text

    def added(self, text: str, *, hold: bool = False) -> str:
        """An added token (its ``text``) ends the run: what that releases (U+FFFD for pending
        bytes, then, unless ``hold``, the held text and the token's own)."""
        out = self._decoder.decode(b"", final=True)
        self._decoder.reset()
        self._run_start = True
        self.dirty = True
        if hold:
            self._held += text
            return out
        out += self._held + text
        self._held = ""
        return out

    def end(self) -> str:
        """End of the output: pending bytes as U+FFFD; held control text (stop tokens) dropped."""
        out = self._decoder.decode(b"", final=True)
        self._decoder.reset()
        self._held = ""
        return out

    def copy(self) -> Renderer:
        return Renderer.from_value(self._vocab, self.to_value())

    def to_value(self) -> Value:
        """``(pending bytes, at a run's start, held text)``: at most 3 bytes and the held tokens."""
        pending, _flag = self._decoder.getstate()
        return (pending, self._run_start, self._held)

    @classmethod
    def from_value(cls, vocab: Vocab, value: Value) -> Renderer:
        pending, run_start, held = as_tuple(value, 3)
        if type(pending) is not bytes or len(pending) > 3:
            raise ValueError("a renderer's pending bytes are those of one unfinished character")
        new = cls(vocab)
        new._decoder.setstate((pending, 0))
        new._run_start = as_bool(run_start)
        new._held = as_str(held)
        new.dirty = bool(pending) or new._run_start or bool(new._held)
        return new
