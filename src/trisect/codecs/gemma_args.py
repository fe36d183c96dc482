"""Gemma-style call arguments: ``{key:<|"|>text<|"|>,n:42,nested:{k:true},list:[1,<|"|>a<|"|>]}``.

The argument grammar of Gemma 4 (string delimiter ``<|"|>``) and FunctionGemma
(``<escape>``): an object of ``key:value`` pairs separated by ``,``; keys are bare (a key
written between delimiters is accepted too); a value is a delimited string (raw text, any
character but the delimiter, newlines and braces included), a nested object, an array of
values, or a bare literal up to the next ``,`` / ``}`` / ``]``. This codec is *structured*: it
decides where the arguments end (the ``}`` that closes the outer object), so a marker inside a
delimited string is string text, and it writes one JSON object:

* strings stream as they arrive, JSON-escaped (a partial delimiter at the end of a piece is
  held until it is known);
* a bare literal is written once complete: as written when it is a JSON number, ``true``,
  ``false`` or ``null``, else as a JSON string of its text (stripped);
* output only grows (``{"key": "te`` … ``xt", "n": 42}``); separators are ``", "`` and ``": "``.

Malformed arguments (a ``:`` missing after a key, a closer that does not match, text after
the outer object's start that is not an object) fail the codec; the engine then treats the
call as no call. Cost: O(len(piece)) per ``feed``. ``GemmaArgs(quote)`` is the factory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..engine.value import Value, as_bool, as_int, as_items, as_pieces, as_str, as_tuple
from .base import Codec, emit_json_string

_WS = " \t\r\n"
# modes
_START, _KEY_OR_CLOSE, _KEY, _VALUE, _ELEMENT_OR_CLOSE, _STRING, _BARE, _AFTER, _DONE = range(9)
_KEY_END = ":"


@dataclass(frozen=True, slots=True)
class GemmaArgs:
    """The factory of ``GemmaArgsCodec``: ``quote`` is the family's string delimiter."""

    quote: str

    @property
    def grammar(self) -> str:
        return "argument codec GemmaArgsCodec has no xgrammar style"

    def __call__(self, tools: Mapping[str, Mapping[str, Any]] | None = None, /) -> GemmaArgsCodec:
        return GemmaArgsCodec(tools, quote=self.quote)


class GemmaArgsCodec(Codec):
    """Per-call codec; see the module docstring."""

    structured = True

    def __init__(self, tools: Mapping[str, Mapping[str, Any]] | None = None, *, quote: str) -> None:
        super().__init__(tools)
        self._quote = quote
        self._mode = _START
        self._stack: list[list[Any]] = []  # [closer, count]
        self._buf: list[str] = []  # the key or bare literal being read
        self._partial = ""  # the end of a piece that may begin the delimiter
        self._string_is_key = False

    def _own_value(self) -> Value:
        """``(mode, open containers as (closer, count), key or literal text, partial delimiter,
        the string is a key)``."""
        stack = tuple((closer, count) for closer, count in self._stack)
        return (self._mode, stack, "".join(self._buf), self._partial, self._string_is_key)

    def _load_own(self, value: Value) -> None:
        mode, stack, buf, partial, string_is_key = as_tuple(value, 5)
        self._mode = as_int(mode)
        self._stack = []
        for entry in as_items(stack):
            closer, count = as_tuple(entry, 2)
            self._stack.append([as_str(closer), as_int(count)])
        self._buf = as_pieces(buf)
        self._partial = as_str(partial)
        self._string_is_key = as_bool(string_is_key)

    @property
    def in_string(self) -> bool:
        """Inside a delimited string (not while a partial delimiter is held: it may end it)."""
        return self._mode == _STRING and not self._partial

    @property
    def string_stops(self) -> str:
        """Characters that may end a string: the engine scans text holding them itself."""
        return self._quote[0]

    # ------------------------------------------------------------------ reading

    def feed(self, s: str, i: int, end: int) -> int:
        quote = self._quote
        while i < end and not (self.done or self.failed):
            mode = self._mode
            if mode == _STRING:
                i = self._string(s, i, end)
                continue
            if self._partial:  # an opening delimiter split across pieces
                held = self._partial
                need = quote[len(held) :]
                got = s[i : min(end, i + len(need))]
                if got != need[: len(got)]:
                    # "<" that does not start a string: the start of a bare key or literal, as
                    # when the whole text is in one piece (where a chunk ends decides nothing)
                    self._partial = ""
                    self._buf = [held]
                    self._mode = _KEY if mode == _KEY_OR_CLOSE else _BARE
                    continue
                if len(got) < len(need):
                    self._partial = held + got
                    return end
                self._partial = ""
                i += len(need)
                self._open_string(key=mode == _KEY_OR_CLOSE)
                continue
            c = s[i]
            if mode == _BARE:
                if c in ",}]":
                    self._end_bare()
                    self._mode = _AFTER
                    continue  # the closer is read in _AFTER
                self._buf.append(c)
                i += 1
                continue
            if mode == _KEY:
                if c == _KEY_END:
                    self._write_key("".join(self._buf).strip(_WS))
                    self._buf = []
                    self._mode = _VALUE
                elif c in ",{}[]":
                    self.failed = True
                    return i
                else:
                    self._buf.append(c)
                i += 1
                continue
            if c in _WS:
                i += 1
                continue
            if mode == _START:
                if c != "{":
                    self.failed = True
                    return i
                self._open("{", "}")
                self._mode = _KEY_OR_CLOSE
                i += 1
            elif mode == _KEY_OR_CLOSE:
                if c == "}":
                    i = self._close("}", i)
                elif c == ",":
                    i += 1  # a stray comma (trailing, doubled) is formatting
                elif s.startswith(quote, i, end) or (c == quote[0] and quote.startswith(s[i:end])):
                    i = self._delimiter(s, i, end, key=True)
                else:
                    self._mode = _KEY
            elif mode in (_VALUE, _ELEMENT_OR_CLOSE):
                if mode == _ELEMENT_OR_CLOSE and c == "]":
                    i = self._close("]", i)
                    continue
                if c in ",}]":
                    self.failed = True  # a key without a value, or an empty element
                    return i
                if s.startswith(quote, i, end) or (c == quote[0] and quote.startswith(s[i:end])):
                    self._element()
                    i = self._delimiter(s, i, end, key=False)
                elif c == "{":
                    self._element()
                    self._open("{", "}")
                    self._mode = _KEY_OR_CLOSE
                    i += 1
                elif c == "[":
                    self._element()
                    self._open("[", "]")
                    self._mode = _ELEMENT_OR_CLOSE
                    i += 1
                else:
                    self._element()
                    self._mode = _BARE
            elif mode == _AFTER:
                closer = self._stack[-1][0]
                if c == ",":
                    self._mode = _KEY_OR_CLOSE if closer == "}" else _VALUE
                    i += 1
                elif c in "}]":
                    i = self._close(c, i)
                else:
                    self.failed = True
                    return i
        return i

    def _delimiter(self, s: str, i: int, end: int, *, key: bool) -> int:
        quote = self._quote
        if s.startswith(quote, i, end):
            self._open_string(key=key)
            return i + len(quote)
        self._partial = s[i:end]  # a partial delimiter at the end of the piece
        return end

    def _open_string(self, *, key: bool) -> None:
        self._string_is_key = key
        self._mode = _STRING
        if not key:
            self._emit('"')

    def _string(self, s: str, i: int, end: int) -> int:
        held = self._partial
        base = 0  # index in the caller's s of this s[0]
        if held:  # a delimiter split across deltas: the delta joined to the few characters held
            self._partial = ""
            base = i - len(held)
            s, i, end = held + s[i:end], 0, len(held) + end - i
        quote = self._quote
        j = s.find(quote, i, end)
        if j >= 0:
            self._string_text(s, i, j)
            if self._string_is_key:
                self._mode = _KEY  # the key's ':' follows
            else:
                self._emit('"')
                self._mode = _AFTER
            return base + j + len(quote)
        # hold the longest suffix that may begin the delimiter
        keep = end
        for k in range(min(len(quote) - 1, end - i), 0, -1):
            if quote.startswith(s[end - k : end]):
                keep = end - k
                break
        self._string_text(s, i, keep)
        self._partial = s[keep:end]
        return base + end

    def _string_text(self, s: str, i: int, j: int) -> None:
        if j <= i:
            return
        if self._string_is_key:
            self._buf.append(s[i:j])
        else:
            emit_json_string(s, i, j, self._emit)  # in place: a long value is never sliced whole

    # ------------------------------------------------------------------ writing

    def _open(self, opener: str, closer: str) -> None:
        self._stack.append([closer, 0])
        self._emit(opener)

    def _element(self) -> None:
        top = self._stack[-1]
        if top[0] == "]":
            if top[1]:
                self._emit(", ")
            top[1] += 1

    def _write_key(self, key: str) -> None:
        top = self._stack[-1]
        self._emit((", " if top[1] else "") + json.dumps(key, ensure_ascii=False) + ": ")
        top[1] += 1

    def _end_bare(self) -> None:
        text = "".join(self._buf).strip(_WS)
        self._buf = []
        self._emit(_literal(text))

    def _close(self, c: str, i: int) -> int:
        if not self._stack or self._stack[-1][0] != c:
            self.failed = True
            return i
        self._stack.pop()
        self._emit(c)
        if self._stack:
            self._mode = _AFTER
        else:
            self._mode = _DONE
            self.done = True
        return i + 1


def _literal(text: str) -> str:
    """A bare value: JSON when it is a number, ``true``, ``false`` or ``null``; else a string."""
    try:
        value = json.loads(text, parse_constant=_not_json)
    except ValueError:
        return json.dumps(text, ensure_ascii=False)
    if isinstance(value, (str, list, dict)):
        return json.dumps(text, ensure_ascii=False)
    return text


def _not_json(name: str) -> None:
    raise ValueError(f"{name} is not JSON")
