"""The lexer: what the stream scans next, what it holds back, and which markers are real.

It owns the receive side of a stream, as h11's ``ReceiveBuffer`` does for a connection:

* **Hold-back.** The text at the end of a delta that may still become a live marker is held
  (never more than the longest proper prefix of a live marker) and scanned again, prefixed to
  the next delta; everything before it was scanned once and is never scanned again.
* **Token ids** (``Mode``). ``TEXT``: markers match as text (no tokenizer, or no ids yet).
  ``ALIGNED``: text comes with its ids; ``DECODING``: ids come alone and the lexer
  detokenizes them. In both id modes a special-token marker counts only where its id is:
  the ids of special tokens are queued (``specials``) at the offset, in bytes of ordinary
  tokens, where their text should appear, and a marker found in the text is real only if a
  queued id of its terminal sits at its offset, give or take ``ALIGN_TOLERANCE`` bytes of
  decoder drift (re-synchronised at each special token). The ids' text, and its bytes, are
  what the tokenizer's own decode makes of them (``vocab.Renderer``: byte tokens that make no
  character are U+FFFD, 3 bytes each). Ids may arrive before their text (detokenizer
  hold-back): the marker waits for its text; text may arrive before its ids (``ahead``): a
  special marker in text the ids have not passed yet is held until they do. Text and ids that disagree past that
  tolerance — a queued special id the text passes without its marker, or one whose marker never
  comes by the end — are a ``StreamError`` naming the output offset; so is a token id that is
  not an integer of the vocabulary (naming the id and its position).

Invariants: ``hold`` is a proper prefix of a live marker (or empty); ``specials`` is ordered by
offset; ``text_bytes`` counts the ordinary bytes of the text before ``data[tb_pos]``.

Cost: O(len(delta) + ids in delta) per delta; memory O(held text + queued special ids).
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Sequence
from typing import NoReturn

from ..errors import RequestError, StreamError
from .compile import CompiledFormat, Lexicon, StateTable
from .tracker import valid_unicode
from .value import Value, as_enum, as_int, as_items, as_str, as_tuple
from .vocab import Renderer, Vocab

ALIGN_TOLERANCE = 4
"""Bytes of decoder drift tolerated between the ids' text and the text an engine sent."""


class Mode(enum.Enum):
    """How markers are matched (see the module docstring)."""

    TEXT = "text"
    ALIGNED = "aligned"
    DECODING = "decoding"


TEXT, ALIGNED, DECODING = Mode.TEXT, Mode.ALIGNED, Mode.DECODING


class _Passed(Exception):
    """The text passed a queued special id without its marker (see ``Lexer.claim``)."""

    def __init__(self, terminal: str) -> None:
        super().__init__(terminal)
        self.terminal = terminal


def utf8_len(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode("utf-8"))


class Lexer:
    """The receive buffer and token-id alignment of one stream."""

    __slots__ = (
        "_compiled",
        "_vocab",
        "mode",
        "hold",
        "num_tokens",
        "_render",
        "specials",
        "_id_bytes",
        "text_bytes",
        "tb_pos",
        "_shift",
        "base",
        "ahead",
    )

    def __init__(self, compiled: CompiledFormat, vocab: Vocab | None) -> None:
        self._compiled = compiled
        self._vocab = vocab
        self.mode = TEXT
        self.hold = ""  # text held back: a proper prefix of a live marker
        self.num_tokens = 0  # token ids fed so far
        self._render: Renderer | None = None  # the ids' text (both id modes: ``Renderer``)
        # special ids whose text has not been matched yet: (ordinary-byte offset, terminal)
        self.specials: deque[tuple[int, str]] = deque()
        self._id_bytes = 0  # ordinary bytes of all ids fed
        self.text_bytes = 0  # ordinary bytes of the text before data[tb_pos]
        self.tb_pos = 0
        self._shift = 0  # drift measured at the last special token
        self.base = 0  # output offset of data[0] in the delta being scanned
        # ALIGNED: the text may run ahead of its ids far enough that a special marker in it has
        # its id still to come (so special markers are looked for though none is queued)
        self.ahead = False

    @property
    def vocab(self) -> Vocab | None:
        return self._vocab

    def copy(self) -> Lexer:
        """An independent lexer in the same state. Cost O(held text + queued ids)."""
        return Lexer.from_value(self._compiled, self._vocab, self.to_value())

    def to_value(self) -> Value:
        """``(mode, hold, num_tokens, renderer, specials, id_bytes, text_bytes, shift)``: the
        held text, the ids fed, the renderer's state (an unfinished character, held control
        text; ``None`` in text mode), the queued special ids as ``(offset, terminal)`` pairs and
        the byte counts that align them. ``tb_pos`` and ``base`` are set per delta (``begin``)."""
        detok = self._render.to_value() if self._render is not None else None
        specials = tuple(self.specials)
        return (self.mode, self.hold, self.num_tokens, detok, specials, self._id_bytes, self.text_bytes, self._shift)

    @classmethod
    def from_value(cls, compiled: CompiledFormat, vocab: Vocab | None, value: Value) -> Lexer:
        mode, hold, num_tokens, detok, specials, id_bytes, text_bytes, shift = as_tuple(value, 8)
        new = cls(compiled, vocab)
        new.mode = as_enum(mode, Mode)
        new.hold = as_str(hold)
        new.num_tokens = as_int(num_tokens)
        if detok is not None:
            if vocab is None or new.mode is TEXT:
                raise ValueError("a renderer's state without token ids")
            new._render = Renderer.from_value(vocab, detok)
        for entry in as_items(specials):
            offset, terminal = as_tuple(entry, 2)
            new.specials.append((as_int(offset), as_str(terminal)))
        new._id_bytes = as_int(id_bytes)
        new.text_bytes = as_int(text_bytes)
        new._shift = as_int(shift)
        return new

    # ------------------------------------------------------------------ input

    def accept(self, text: object, token_ids: Sequence[int] | None) -> str:
        """Validate one delta and queue its ids; returns the text to scan. ``text`` is the
        caller's, unchecked: anything but a str or ``None`` is a ``StreamError`` here."""
        if token_ids:
            text = self._take_ids(text, token_ids)
        elif text is None:
            return ""
        elif self.mode is DECODING:
            raise StreamError("this stream detokenizes ids itself: feed token ids without text")
        if not isinstance(text, str):
            raise StreamError(f"text must be a string, not {type(text).__name__}")
        if self.mode is ALIGNED:
            if text and not text.isascii() and not valid_unicode(text):
                # no token spells a lone surrogate: the text is not what its ids say
                raise StreamError(
                    "text given with token ids is not valid Unicode (a lone surrogate): no token spells it"
                )
            # set on every delta (ids without text too), so a copy, which does not keep it, agrees
            end = self.text_bytes + self._shift + utf8_len(self.hold) + utf8_len(text)
            self.ahead = end - self._compiled.shortest_special + ALIGN_TOLERANCE >= self._id_bytes
        return text

    def _take_ids(self, text: object, token_ids: Sequence[object]) -> object:
        """Queue the special ids of ``token_ids`` at their offsets in the ids' text (bytes of
        what ``Renderer`` makes of the other ids, as the tokenizer's decode does); ids alone:
        that text is the delta's. The ids are the caller's, unchecked (``object``, as in
        ``Vocab.check_ids``): one that is not a token id is a ``StreamError`` naming it."""
        vocab = self._vocab
        first = self.num_tokens  # position of token_ids[0] among all ids fed
        self.num_tokens += len(token_ids)
        if vocab is None:
            if text is None:
                raise StreamError("token ids without text need a tokenizer: Parser(..., tokenizer=...)")
            return text
        decode = text is None
        if self.mode is TEXT:
            self.mode = DECODING if decode else ALIGNED
            self._render = Renderer(vocab)
        elif (self.mode is DECODING) != decode:
            raise StreamError("feed either text with ids or ids alone, the same way for the whole stream")
        render = self._render
        assert render is not None
        special_ids = self._compiled.special_ids
        keep = self._compiled.decoded_ids  # markers and their pieces: text even if control tokens
        pending = self.specials
        obytes = self._id_bytes
        plain = vocab.plain_sizes  # the cache of Vocab.plain_size, read inline (one dict lookup per id)
        parts: list[str] = []
        for token_id in token_ids:
            if type(token_id) is not int:  # bool and float hash like ints: rejected before any lookup
                self._bad_id(token_ids, first)
            size = plain.get(token_id)
            if size is not None and not render.dirty and not decode:
                obytes += size  # the commonest id: ordinary bytes that render as themselves
                continue
            terminal = special_ids.get(token_id)
            if terminal is not None:  # the marker's text is not ordinary bytes: queued at its offset
                piece = render.added("")
                obytes += utf8_len(piece)
                pending.append((obytes, terminal))
                if decode:
                    parts.append(piece + (vocab.added_text(token_id) or ""))
                continue
            try:
                added = vocab.added_text(token_id)
                if added is None and size is None:
                    vocab.plain_size(token_id)  # validates the id (an ordinary one: its bytes)
            except (TypeError, ValueError, KeyError, IndexError, OverflowError, RequestError):
                self._bad_id(token_ids, first)
            if added is None:
                piece = render.ordinary(token_id)
            else:  # ids alone: a control token that is no marker is held (text unless it ends the output)
                piece = render.added(added, hold=decode and token_id not in keep and vocab.is_control(token_id))
            obytes += utf8_len(piece)
            if decode:
                parts.append(piece)
        self._id_bytes = obytes
        return "".join(parts) if decode else text

    def check_alignment(self, offset: int) -> None:
        """End of the output, text given with ids: every special token's id met its marker in
        the text (give or take ``ALIGN_TOLERANCE`` bytes). One that did not means text and ids
        that tell different stories (the text may lag or lead its ids, as an engine's
        detokenizer or a two-phase hand-over makes it; it may not lose a marker)."""
        if self.specials:
            _off, terminal = self.specials[0]
            raise StreamError(
                f"text and token ids disagree at output offset {offset}: the id of {terminal} "
                f"({self._compiled.marker_of.get(terminal, terminal)!r}) never met its text"
            )

    def _bad_id(self, token_ids: Sequence[object], first: int) -> NoReturn:
        """Raise the ``StreamError`` naming the first id of ``token_ids`` that is not a token id."""
        assert self._vocab is not None
        self._vocab.check_ids(token_ids, first)
        raise StreamError("a token id is not in the tokenizer's vocabulary")

    def flush(self) -> str:
        """End of output, ids alone: what the renderer still holds (an unfinished character, as
        U+FFFD; held stop tokens are dropped)."""
        if self.mode is not DECODING or self._render is None:
            return ""
        tail = self._render.end()
        self._id_bytes += utf8_len(tail)
        return tail

    # ------------------------------------------------------------------ scanning

    def begin(self, text: str, offset: int) -> str:
        """The data to scan for this delta: the held text, then the delta (``data[0]`` is at
        output offset ``offset``)."""
        data = self.hold + text if self.hold else text
        self.base = offset
        self.hold = ""
        self.tb_pos = 0
        return data

    def lexicon(self, st: StateTable) -> Lexicon:
        """The markers live in state ``st`` for the current mode."""
        if self.mode is TEXT:
            return st.text_lex
        if not self.specials and not self.ahead:
            return st.plain_lex  # no special id queued or to come: only the ordinary markers can match
        return st.ids_lex or st.text_lex

    def may_be_cut_marker(self, st: StateTable, s: str) -> bool:
        """Could ``s``, held at the end of the output, be a marker the output was cut inside?
        In text mode any live marker's prefix could be; with token ids a special-token marker
        is one id, never cut, so only a marker spelled with ordinary tokens could be (the
        ordinary tokens that spell part of a special one are text, as they are mid-stream)."""
        return self.mode is TEXT or s in st.plain_lex.prefixes

    def id_may_come(self, terminal: str, data: str, i: int) -> bool:
        """The special marker ``terminal`` found at ``data[i]`` has no id queued, but the text
        runs ahead of its ids (an engine can send a token's text a delta before its id): the
        ids have not passed it yet, so its id may still come. The stream then holds it."""
        return self._before_ids_end(self.bytes_at(data, i))

    def _before_ids_end(self, y: int) -> bool:
        """Text at ordinary-byte offset ``y`` the ids have not passed yet (ALIGNED)."""
        return self.mode is ALIGNED and self._id_bytes <= y + self._shift + ALIGN_TOLERANCE

    def bytes_at(self, data: str, i: int) -> int:
        """Ordinary bytes of the text before ``data[i]`` (``i`` only grows within a delta)."""
        if i > self.tb_pos:
            self.text_bytes += utf8_len(data[self.tb_pos : i])
            self.tb_pos = i
        return self.text_bytes

    def is_real(self, terminal: str, data: str, i: int) -> bool:
        """Is the special marker ``terminal`` found at ``data[i]`` given by its id?"""
        return self._match(terminal, self.bytes_at(data, i), claim=False)

    def claim(self, terminal: str, data: str, a: int, b: int) -> bool:
        """Use up the id of the special marker at ``data[a:b]``, if it is real; its bytes are
        not ordinary text."""
        try:
            matched = self._match(terminal, self.bytes_at(data, a), claim=True)
        except _Passed as passed:
            raise StreamError(
                f"text and token ids disagree at output offset {self.base + a}: the text reached "
                f"{self._compiled.marker_of.get(terminal, terminal)!r} past the id of {passed.terminal} "
                f"({self._compiled.marker_of.get(passed.terminal, passed.terminal)!r}), which it never spelled"
            ) from None
        if not matched:
            return False
        self.tb_pos = b
        return True

    def _match(self, terminal: str, y: int, claim: bool) -> bool:
        pending = self.specials
        y += self._shift
        if claim and pending and pending[0][0] < y - ALIGN_TOLERANCE:
            # the text passed a special token's id without its marker: they tell different stories
            raise _Passed(pending[0][1])
        for k, (off, term) in enumerate(pending):
            if off > y + ALIGN_TOLERANCE:
                return False
            if term == terminal and off >= y - ALIGN_TOLERANCE:
                if claim:
                    del pending[k]
                    self._shift += off - y
                return True
        return False

    def next_special(
        self, st: StateTable, data: str, pos: int, end: int, final: bool
    ) -> tuple[int, int, str, bool] | None:
        """Span and terminal of the next special-token marker in data[pos:end] that is real, or
        (``False`` last) whose id may still come (the text runs ahead of its ids; not at the end
        of the output), live in state ``st`` or not (inside a JSON string any special token is
        string text)."""
        lex = st.ids_lex or st.text_lex
        if lex.pattern is None:
            return None
        special = self._compiled.special
        terminal_of = self._compiled.terminal_of
        base = self.bytes_at(data, pos)
        for m in lex.pattern.finditer(data, pos, end):
            terminal = terminal_of[m.group()]
            if terminal in special:
                y = base + utf8_len(data[pos : m.start()])
                if self._match(terminal, y, claim=False):
                    return m.start(), m.end(), terminal, True
                if not final and self._before_ids_end(y):
                    return m.start(), m.end(), terminal, False
        return None


def holdback(data: str, lo: int, n: int, lex: Lexicon) -> int:
    """Start of the longest suffix of data[lo:n] that is a proper prefix of a live marker."""
    start = max(lo, n - lex.longest_prefix)
    starts = lex.starts
    assert starts is not None
    m = starts.search(data, start)
    while m is not None:
        i = m.start()
        if data[i:n] in lex.prefixes:
            return i
        m = starts.search(data, i + 1)
    return n
