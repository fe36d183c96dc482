"""Pythonic tool calls: one ``name(key=literal, …)`` read as data, streamed as JSON arguments.

The model writes Python call syntax (Llama 3.2 / Llama 4 / OLMo 3 / LFM2 /
ToolACE: ``[get_weather(city="Paris", days=3), get_time()]``); the format's table owns the
list around the calls (``[``, ``,``, ``]`` or newlines) and this codec reads one call. It is a
small hand-written scanner of Python *literals*; model output is never evaluated, compiled or
executed. Accepted values: strings (``'…'``, ``"…"``, triple-quoted, with Python escapes;
no prefixes, no implicit concatenation), numbers (ints and floats, ``-`` sign, ``_`` digit
groups), ``True`` / ``False`` / ``None`` and JSON's ``true`` / ``false`` / ``null``, lists,
tuples (as JSON arrays; ``(x)`` is just ``x``), dicts with string keys, nested up to
``MAX_DEPTH`` levels. Arguments are keywords only, each once; an argument name may be any
identifier, Python keywords included (``f(from="a", class=1)``: JSON schemas name parameters
freely, so a model writes them so; Python's own grammar would reject it). Anything else (a positional
argument, a name, an attribute, a call, an operator, a comprehension, a comment, deeper
nesting) makes the call not a call; the scanner uses an explicit stack, so no input can
raise ``RecursionError``.

Streaming: the call is announced at its first ``=`` (or at ``)`` without arguments), so
``[link]`` or ``[f(1)]`` never show as a call; then ``{"key": `` at ``=``, string values
character by character as JSON-escaped text, numbers and names once they end; every piece is
a prefix of the final arguments. ``feed`` stops right after the closing ``)``
(``done``) or at the first character it cannot accept (``failed``; that character is not
consumed). Cost: O(len(piece)) per ``feed``.
"""

from __future__ import annotations

import json
import keyword
import math
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from ..engine.codec import ArgSyntax
from ..engine.jsonscan import loads_as_integer, run_matcher
from ..engine.value import Value, as_bool, as_int, as_items, as_pieces, as_str, as_strs, as_tuple
from .base import Codec, emit_json_string, integer_text

MAX_DEPTH = 64  # deeper literals are not a call (JSON parsers recurse on nesting)

_WS = " \t\r\n\f"
_IDENT_START = re.compile(r"[A-Za-z_]")
_IDENT = run_matcher(r"[A-Za-z0-9_]*")
_PY_NUMBER = re.compile(r"-?(?:\d(?:_?\d)*)?(?:\.(?:\d(?:_?\d)*)?)?(?:[eE][+-]?\d(?:_?\d)*)?")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_NAMES = {"True": "true", "False": "false", "None": "null", "true": "true", "false": "false", "null": "null"}
_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
}
_HEX_LEN = {"x": 2, "u": 4, "U": 8}
_STRING_STOPS = {q: re.compile("[" + re.escape(q) + "\\\\\n]") for q in "'\""}
_RAW_STOPS = {q: re.compile(re.escape(q)) for q in "'\""}

# scanner states
(
    _LEAD,  # before the function name
    _NAME,  # in the function name
    _AFTER_NAME,  # whitespace before "("
    _ARG,  # expecting a keyword or ")"
    _KEY,  # in a keyword
    _AFTER_KEY,  # whitespace before "="
    _VALUE,  # expecting a value
    _AFTER_VALUE,  # after a value: "," or a closer
    _STR_OPEN,  # one quote seen: "" / '' or a triple quote may follow
    _STR_OPEN2,  # two quotes seen: empty string, or a triple quote
    _STR,  # inside a string
    _ESC,  # after a backslash
    _HEX,  # inside \x.. / \u.... / \U........
    _OCT,  # inside an octal escape
    _NUMBER,  # inside a number
    _WORD,  # inside a bare name (True, null, …)
    _DICT_KEY,  # expecting a dict key (string) or "}"
    _DICT_COLON,  # expecting ":" after a dict key
) = range(18)


class _Frame:
    """One open container: ``kind`` is "[" (list), "(" (tuple or parentheses), "{" (dict)."""

    __slots__ = ("kind", "count", "hold", "key", "comma")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.count = 0  # elements so far
        self.hold: list[str] | None = [] if kind == "(" else None  # undecided: tuple or parentheses
        self.key = False  # dict: the string being read is a key
        self.comma = False  # a "," was read: sent with the next element (none after a trailing one)

    def to_value(self) -> Value:
        return (self.kind, self.count, "".join(self.hold) if self.hold is not None else None, self.key, self.comma)

    @classmethod
    def from_value(cls, value: Value) -> _Frame:
        kind, count, hold, key, comma = as_tuple(value, 5)
        new = cls(as_str(kind))
        new.count = as_int(count)
        new.hold = None if hold is None else as_pieces(hold)
        new.key = as_bool(key)
        new.comma = as_bool(comma)
        return new


def _json_char(ch: str) -> str:
    if ch == '"' or ch == "\\" or ch < " " or 0xD800 <= ord(ch) <= 0xDFFF:  # a lone surrogate: escaped
        return json.dumps(ch)[1:-1]
    return ch


class PythonicCallCodec(Codec):
    """One ``name(k=v, …)`` call; see the module docstring."""

    structured = True
    grammar: ClassVar[ArgSyntax | str | None] = "argument codec PythonicCallCodec has no xgrammar style"
    # an argument's string is written raw between its quotes (no escapes; RawStringCallCodec)
    raw_strings: ClassVar[bool] = False

    @property
    def string_stops(self) -> str:
        """Characters that may end (or break) a string."""
        return "'\"\\\n"

    def __init__(self, tools: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        super().__init__(tools)
        self._name = ""
        self._state = _LEAD
        self._buf: list[str] = []  # name, keyword, number or word being read
        self._keys: set[str] = set()
        self._stack: list[_Frame] = []
        self._quote = ""
        self._triple = False
        self._closing = 0  # quotes seen that may close a triple-quoted string
        self._esc = ""  # digits of a hex / octal escape
        self._esc_kind = ""

    @property
    def in_string(self) -> bool:
        return self._state in (_STR_OPEN, _STR, _ESC, _HEX, _OCT)  # _STR_OPEN2 may be "" (closed)

    def _own_value(self) -> Value:
        return (
            self._name,
            self._state,
            "".join(self._buf),
            tuple(sorted(self._keys)),
            tuple(frame.to_value() for frame in self._stack),
            self._quote,
            self._triple,
            self._closing,
            self._esc,
            self._esc_kind,
        )

    def _load_own(self, value: Value) -> None:
        name, state, buf, keys, stack, quote, triple, closing, esc, esc_kind = as_tuple(value, 10)
        self._name = as_str(name)
        self._state = as_int(state)
        self._buf = as_pieces(buf)
        self._keys = set(as_strs(keys))
        self._stack = [_Frame.from_value(frame) for frame in as_items(stack)]
        self._quote = as_str(quote)
        self._triple = as_bool(triple)
        self._closing = as_int(closing)
        self._esc = as_str(esc)
        self._esc_kind = as_str(esc_kind)

    # ------------------------------------------------------------------ output

    def _write(self, text: str) -> None:
        for frame in reversed(self._stack):
            if frame.hold is not None:
                frame.hold.append(text)
                return
        self._emit(text)

    def _fail(self) -> None:
        self.failed = True

    # ------------------------------------------------------------------ scanning

    def feed(self, s: str, i: int, end: int) -> int:
        while i < end and not self.done and not self.failed:
            st = self._state
            c = s[i]
            if st == _STR:
                i = self._string_run(s, i, end)
                continue
            if st in (_LEAD, _ARG, _VALUE, _AFTER_VALUE, _AFTER_NAME, _AFTER_KEY, _DICT_KEY, _DICT_COLON) and c in _WS:
                i += 1
                continue
            if st == _LEAD:
                if not _IDENT_START.match(c):
                    self._fail()
                    break
                self._state = _NAME
                continue
            if st in (_NAME, _KEY, _WORD):
                j = _IDENT(s, i, end).end()
                self._buf.append(s[i:j])
                i = j
                if i < end:
                    self._end_word()
                continue
            if st == _NUMBER:
                j = i
                prev = self._buf[-1][-1:] if self._buf else ""
                while j < end:
                    ch = s[j]
                    # a sign directly after an exponent belongs to the number
                    if not (ch.isalnum() or ch in "._" or (ch in "+-" and prev in ("e", "E"))):
                        break
                    prev = ch
                    j += 1
                self._buf.append(s[i:j])
                i = j
                if i < end:
                    self._end_number()
                continue
            if st == _AFTER_NAME:
                if c != "(":
                    self._fail()
                    break
                self._open_args()
                i += 1
                continue
            if st == _ARG:
                if c == ")":
                    self._write("}")
                    self.name = self._name
                    self.done = True
                elif _IDENT_START.match(c):
                    self._state = _KEY
                    continue
                else:
                    self._fail()
                    break
                i += 1
                continue
            if st == _AFTER_KEY:
                # "==" fails at its second "=" (the first is a keyword's, as far as one can
                # tell): a look-ahead would fail at the first only when both are in one chunk
                if c != "=":
                    self._fail()
                    break
                self._state = _VALUE
                self.name = self._name
                i += 1
                continue
            if st == _VALUE:
                if not self._begin_value(c):
                    break
                i += 1
                continue
            if st == _AFTER_VALUE:
                if not self._after_value(c):
                    break
                i += 1
                continue
            if st == _DICT_KEY:
                if c == "}":
                    self._close_container("{")
                elif c in "'\"":
                    self._separate()
                    self._stack[-1].key = True
                    self._begin_string(c)
                else:
                    self._fail()
                    break
                i += 1
                continue
            if st == _DICT_COLON:
                if c != ":":
                    self._fail()
                    break
                self._write(": ")
                self._state = _VALUE
                i += 1
                continue
            if st == _STR_OPEN:
                if c == self._quote:
                    self._state = _STR_OPEN2
                    i += 1
                else:
                    self._state = _STR
                continue
            if st == _STR_OPEN2:
                if c == self._quote:
                    self._triple = True
                    self._state = _STR
                    i += 1
                else:
                    self._end_string()  # "" / '': the empty string
                continue
            if st == _ESC:
                i = self._escape(c, i)
                continue
            if st in (_HEX, _OCT):
                i = self._escape_digits(c, i)
                continue
            self._fail()  # pragma: no cover - every state is handled above
        return i

    # the function name and keywords -------------------------------------------------

    def _end_word(self) -> None:
        word = "".join(self._buf)
        self._buf = []
        st = self._state
        if st == _NAME:
            if keyword.iskeyword(word):
                self._fail()
                return
            self._name = word  # announced at the first "=" or ")": "[link]", "[f(1)]" are no call
            self._state = _AFTER_NAME
        elif st == _KEY:
            if word in self._keys:  # a keyword (``from``, ``class``) is a legal argument name
                self._fail()
                return
            self._write((", " if self._keys else "") + json.dumps(word) + ": ")
            self._keys.add(word)
            self._state = _AFTER_KEY
        else:  # _WORD
            literal = _NAMES.get(word)
            if literal is None:
                self._fail()
                return
            self._write(literal)
            self._value_done()

    def _open_args(self) -> None:
        self._write("{")
        self._state = _ARG

    # values --------------------------------------------------------------------------

    def _separate(self) -> None:
        if self._stack and self._stack[-1].comma:
            self._stack[-1].comma = False
            self._write(", ")

    def _begin_value(self, c: str) -> bool:
        if c not in "])":
            self._separate()
        if c in "'\"":
            self._begin_string(c)
        elif c.isdigit() or c in "-.":
            self._buf = []
            self._state = _NUMBER
            self._buf.append(c)
        elif _IDENT_START.match(c):
            self._buf = [c]
            self._state = _WORD
        elif c in "[({":
            if len(self._stack) >= MAX_DEPTH:
                self._fail()
                return False
            frame = _Frame(c)
            if c == "[":
                self._write("[")
            elif c == "{":
                self._write("{")
            self._stack.append(frame)
            self._state = _DICT_KEY if c == "{" else _VALUE
        elif c in "])" and self._stack and self._stack[-1].kind == {"]": "[", ")": "("}[c] and self._may_close():
            self._close_container(self._stack[-1].kind)
        else:
            self._fail()
            return False
        return True

    def _may_close(self) -> bool:
        """A closer where a value is expected: ``[]``, ``()`` or after a trailing comma."""
        frame = self._stack[-1]
        return frame.count == 0 or frame.kind != "(" or frame.hold is None

    def _after_value(self, c: str) -> bool:
        if not self._stack:  # a keyword's value
            if c == ",":
                self._state = _ARG
                return True
            if c == ")":
                self._write("}")
                self.done = True
                return True
            self._fail()
            return False
        frame = self._stack[-1]
        if c == ",":
            if frame.kind == "(" and frame.hold is not None:  # a comma: a tuple after all
                self._decide_tuple(frame)
            frame.comma = True
            self._state = _DICT_KEY if frame.kind == "{" else _VALUE
            return True
        closer = {"[": "]", "(": ")", "{": "}"}[frame.kind]
        if c == closer:
            self._close_container(frame.kind)
            return True
        self._fail()
        return False

    def _decide_tuple(self, frame: _Frame) -> None:
        held = frame.hold or []
        frame.hold = None
        self._write("[")
        for piece in held:
            self._write(piece)

    def _close_container(self, kind: str) -> None:
        frame = self._stack.pop()
        if kind == "(" and frame.hold is not None:
            if frame.count == 0:  # ()
                self._write("[]")
            elif frame.count == 1:  # (x): parentheses around one value
                for piece in frame.hold:
                    self._write(piece)
            else:  # pragma: no cover - a second element implies a comma
                self._fail()
                return
        else:
            self._write({"[": "]", "(": "]", "{": "}"}[kind])
        self._value_done()

    def _value_done(self) -> None:
        if self._stack:
            frame = self._stack[-1]
            if frame.kind == "{" and frame.key:
                frame.key = False
                self._state = _DICT_COLON
                return
            frame.count += 1
        self._state = _AFTER_VALUE

    def _end_number(self) -> None:
        text = "".join(self._buf)
        self._buf = []
        if not any(ch.isdigit() for ch in text) or not _PY_NUMBER.fullmatch(text):
            self._fail()
            return
        digits = text.lstrip("-")
        if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit() and not any(ch in text for ch in ".eE"):
            self._fail()  # 007 is not a Python literal
            return
        if _JSON_NUMBER.fullmatch(text) and math.isfinite(float(text)):
            self._write(text)
        else:
            plain = text.replace("_", "")
            if any(ch in plain for ch in ".eE"):
                value = float(plain)
                if not math.isfinite(value):
                    self._fail()
                    return
                self._write(json.dumps(value))
            elif loads_as_integer(plain.lstrip("+")):
                self._write(integer_text(plain))
            else:  # more digits than Python converts (json.loads and ast.literal_eval alike)
                self._fail()
                return
        self._value_done()

    # strings -------------------------------------------------------------------------

    def _begin_string(self, quote: str) -> None:
        self._quote = quote
        self._triple = False
        self._closing = 0
        self._write('"')
        self._state = _STR_OPEN

    def _end_string(self) -> None:
        self._write('"')
        self._value_done()

    def _string_run(self, s: str, i: int, end: int) -> int:
        """Consume string text from s[i]: plain runs at once, quotes and escapes one by one."""
        q = self._quote
        if self.raw_strings and q == "'" and not self._triple and not self._stack:
            return self._raw_run(s, i, end)
        stops = _STRING_STOPS[q]
        j = i
        while j < end:
            if not self._closing:  # skip to the next character that matters
                m = stops.search(s, j, end)
                if m is None:
                    j = end
                    break
                j = m.start()
            c = s[j]
            if c == q:
                if not self._triple:
                    self._flush_text(s, i, j)
                    self._end_string()
                    return j + 1
                self._flush_text(s, i, j)
                self._closing += 1
                j += 1
                i = j
                if self._closing == 3:
                    self._closing = 0
                    self._end_string()
                    return j
                continue
            if self._closing:
                self._write(_json_char(q) * self._closing)
                self._closing = 0
            if c == "\\":
                self._flush_text(s, i, j)
                self._state = _ESC
                return j + 1
            if c == "\n" and not self._triple:
                self._flush_text(s, i, j)
                self._fail()
                return j
            j += 1
        self._flush_text(s, i, j)
        return j

    def _raw_run(self, s: str, i: int, end: int) -> int:
        """An argument's string as a raw-string template writes it: every character up to the
        next quote is the value's, backslashes and newlines included."""
        m = _RAW_STOPS[self._quote].search(s, i, end)
        j = end if m is None else m.start()
        self._flush_text(s, i, j)
        if m is None:
            return j
        self._end_string()
        return j + 1

    def _flush_text(self, s: str, i: int, j: int) -> None:
        emit_json_string(s, i, j, self._write)

    def _escape(self, c: str, i: int) -> int:
        self._state = _STR
        if c in _SIMPLE_ESCAPES:
            self._write(_json_char(_SIMPLE_ESCAPES[c]))
        elif c == "\n":
            pass  # a line continuation
        elif c in _HEX_LEN:
            self._esc_kind = c
            self._esc = ""
            self._state = _HEX
        elif c in "01234567":
            self._esc_kind = "o"
            self._esc = c
            self._state = _OCT
        elif c == "N":
            self._fail()  # \N{name} needs the unicode database: not accepted
            return i
        else:
            self._write("\\\\" + _json_char(c))  # unknown escapes keep their backslash
        return i + 1

    def _escape_digits(self, c: str, i: int) -> int:
        if self._esc_kind == "o":
            if c in "01234567" and len(self._esc) < 3:
                self._esc += c
                return i + 1
            self._write(_json_char(chr(int(self._esc, 8))))
            self._state = _STR
            return i
        if c not in "0123456789abcdefABCDEF":
            self._fail()
            return i
        self._esc += c
        if len(self._esc) == _HEX_LEN[self._esc_kind]:
            code = int(self._esc, 16)
            if code > 0x10FFFF:
                self._fail()
                return i
            self._write(_json_char(chr(code)))
            self._state = _STR
        return i + 1


class RawStringCallCodec(PythonicCallCodec):
    """The calls of a template that writes each argument's string raw between single quotes
    (``key='` + value + `'``: OLMo 3, LFM2): in an argument's ``'…'`` string a backslash and a
    newline are the value's characters, as the template wrote them, and the string ends at the
    next ``'`` (a value that holds one cannot be told from its end: the template writes no call
    that reads back). What the template never writes keeps Python's reading: ``"…"`` and
    triple-quoted strings, and strings inside a list or dict (the template's ``tojson``)."""

    raw_strings: ClassVar[bool] = True
    grammar: ClassVar[ArgSyntax | str | None] = "argument codec RawStringCallCodec has no xgrammar style"
