"""An incremental JSON scanner: consumes exactly one JSON value, fed in pieces.

It validates as it goes, so every prefix it accepted is a prefix of some valid JSON text, and
it stops right after the value ends (``done``) or at the first character that cannot continue
it (``failed``). It never builds the value: callers slice the text they fed it. Runs inside
strings, whitespace and digits are skipped with one regex match each, so the cost is a small
constant per structural character plus C speed for long strings.

What it accepts loads with the standard library's ``json.loads`` (``loadable``, the default:
arguments a call returns): besides JSON's grammar, it fails at nesting deeper than
``MAX_DEPTH`` and at an integer of more digits than Python converts (``max_int_digits``), which
``json.loads`` refuses (``RecursionError``, ``ValueError``).

Cost: O(len(piece)) per ``feed``; state is O(nesting depth).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import cast

from .value import Value, as_bool, as_int, as_str, as_tuple

Run = Callable[[str, int, int], "re.Match[str]"]


def run_matcher(pattern: str) -> Run:
    """``re.compile(pattern).match`` for a pattern that matches the empty string (a run such as
    ``[ \\t]*``), typed as never returning ``None``: it cannot."""
    return cast(Run, re.compile(pattern).match)


_WS = run_matcher(r"[ \t\r\n]*")
_STR_RUN = run_matcher(r'[^"\\\x00-\x1f]*')
_NUM_RUN = run_matcher(r"[0-9eE.+\-]*")
_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPES = frozenset('"\\/bfnrtu')
_LITERALS = {"t": "true", "f": "false", "n": "null"}

MAX_DEPTH = 512
"""The deepest nesting accepted: ``json.loads`` recurses once per level and fails near the
interpreter's recursion limit (1,000 by default, less its caller's own depth)."""


def max_int_digits() -> int:
    """Digits of the longest integer ``json.loads`` converts: Python's integer-string limit
    (``sys.get_int_max_str_digits()``, 4,300 by default; none before Python 3.11 or when 0)."""
    get = getattr(sys, "get_int_max_str_digits", None)
    limit: int = get() if get is not None else 0
    return limit or sys.maxsize


def loads_as_integer(text: str) -> bool:
    """A decimal integer literal ``json.loads`` converts (not too many digits)."""
    digits = len(text) - (text[:1] in "+-")
    return digits <= 640 or digits <= max_int_digits()  # 640: the least limit Python allows


# scanner states
_VALUE = 0  # expecting a value
_STRING = 1  # inside a string
_ESC = 2  # after a backslash in a string
_UHEX = 3  # inside \uXXXX
_NUM = 4  # inside a number
_LIT = 5  # inside true/false/null
_KEY_OR_CLOSE = 6  # after "{"
_KEY = 7  # after "," in an object
_COLON = 8  # after a key
_AFTER = 9  # after a value inside a container
_VALUE_OR_CLOSE = 10  # after "["
_DONE = 11
_FAILED = 12


class JsonScanner:
    """Consumes one JSON value. ``feed(s, i, end)`` returns the index where it stopped."""

    __slots__ = ("_stack", "_state", "_in_key", "_pending", "_hex_left", "_num", "_num_len", "_depth")

    def __init__(self, *, loadable: bool = True) -> None:
        self._depth = MAX_DEPTH if loadable else sys.maxsize  # the deepest nesting accepted
        self._stack: list[str] = []
        self._state = _VALUE
        self._in_key = False
        self._pending = ""  # the rest of a literal
        self._hex_left = 0
        self._num = _N_START  # where a number is in its grammar (_number_step): O(1) state per feed
        self._num_len = 0  # digits of the number so far

    def to_value(self) -> Value:
        """``(open containers, state, in a key, rest of a literal, hex digits left, number state,
        digits of the number, loadable)``: O(nesting depth)."""
        loadable = self._depth != sys.maxsize
        return (
            "".join(self._stack),
            self._state,
            self._in_key,
            self._pending,
            self._hex_left,
            self._num,
            self._num_len,
            loadable,
        )

    @classmethod
    def from_value(cls, value: Value) -> JsonScanner:
        stack, state, in_key, pending, hex_left, num, num_len, loadable = as_tuple(value, 8)
        new = cls(loadable=as_bool(loadable))
        new._num_len = as_int(num_len)
        new._stack = list(as_str(stack))
        new._state = as_int(state)
        new._in_key = as_bool(in_key)
        new._pending = as_str(pending)
        new._hex_left = as_int(hex_left)
        new._num = as_int(num)
        return new

    @property
    def done(self) -> bool:
        return self._state == _DONE

    @property
    def failed(self) -> bool:
        return self._state == _FAILED

    @property
    def started(self) -> bool:
        return self._state != _VALUE or bool(self._stack)

    @property
    def depth(self) -> int:
        return len(self._stack)

    @property
    def in_string(self) -> bool:
        return self._state in (_STRING, _ESC, _UHEX)

    @property
    def in_string_text(self) -> bool:
        """Inside a string and not inside an escape: plain text continues the string."""
        return self._state == _STRING

    def close(self) -> bool:
        """End of input: a number at top level may end here. Returns ``done``."""
        if self._state == _NUM and not self._stack and self._num in _N_COMPLETE:
            self._state = _DONE if self._number_loads() else _FAILED
        return self._state == _DONE

    def _number_loads(self) -> bool:
        """The complete number loads with ``json.loads`` (an integer of too many digits does not)."""
        n = self._num_len
        return self._num != _N_INT or n <= 640 or n <= max_int_digits() or self._depth == sys.maxsize

    def _end_value(self) -> int:
        if not self._stack:
            return _DONE
        return _AFTER

    def feed(self, s: str, i: int = 0, end: int | None = None) -> int:
        if end is None:
            end = len(s)
        st = self._state
        stack = self._stack
        while i < end and st < _DONE:
            if st == _STRING:
                i = _STR_RUN(s, i, end).end()
                if i >= end:
                    break
                c = s[i]
                i += 1
                if c == '"':
                    if self._in_key:
                        self._in_key = False
                        st = _COLON
                    else:
                        st = self._end_value()
                elif c == "\\":
                    st = _ESC
                else:
                    st = _FAILED
                    i -= 1
                continue
            c = s[i]
            if st == _VALUE or st == _VALUE_OR_CLOSE:
                if c in " \t\r\n":
                    i = _WS(s, i, end).end()
                    continue
                if c == '"':
                    st = _STRING
                elif c == "{" or c == "[":
                    if len(stack) >= self._depth:
                        st = _FAILED
                        break
                    stack.append("}" if c == "{" else "]")
                    st = _KEY_OR_CLOSE if c == "{" else _VALUE_OR_CLOSE
                elif c == "]" and st == _VALUE_OR_CLOSE:
                    stack.pop()
                    st = self._end_value()
                elif c == "-" or "0" <= c <= "9":
                    st = _NUM
                    self._num = _N_START
                    self._num_len = -1 if c == "-" else 0  # counts digits only
                    continue  # the number run below takes the character
                elif c in _LITERALS:
                    st = _LIT
                    self._pending = _LITERALS[c][1:]
                else:
                    st = _FAILED
                    break
                i += 1
            elif st == _NUM:
                j = _NUM_RUN(s, i, end).end()
                num = self._num = _number_step(self._num, s, i, j)
                self._num_len += j - i
                i = j
                if num == _N_BAD:
                    st = _FAILED
                    break
                if i >= end:
                    break  # the number may go on in the next delta
                if num not in _N_COMPLETE or not self._number_loads():
                    st = _FAILED
                    break
                st = self._end_value()
            elif st == _LIT:
                want = self._pending
                if c != want[0]:
                    st = _FAILED
                    break
                i += 1
                self._pending = want[1:]
                if not self._pending:
                    st = self._end_value()
            elif st == _ESC:
                if c not in _ESCAPES:
                    st = _FAILED
                    break
                i += 1
                if c == "u":
                    st = _UHEX
                    self._hex_left = 4
                else:
                    st = _STRING
            elif st == _UHEX:
                if c not in _HEX:
                    st = _FAILED
                    break
                i += 1
                self._hex_left -= 1
                if not self._hex_left:
                    st = _STRING
            elif st == _KEY_OR_CLOSE or st == _KEY:
                if c in " \t\r\n":
                    i = _WS(s, i, end).end()
                    continue
                if c == '"':
                    self._in_key = True
                    st = _STRING
                elif c == "}" and st == _KEY_OR_CLOSE:
                    stack.pop()
                    st = self._end_value()
                else:
                    st = _FAILED
                    break
                i += 1
            elif st == _COLON:
                if c in " \t\r\n":
                    i = _WS(s, i, end).end()
                    continue
                if c != ":":
                    st = _FAILED
                    break
                i += 1
                st = _VALUE
            else:  # _AFTER
                if c in " \t\r\n":
                    i = _WS(s, i, end).end()
                    continue
                if c == ",":
                    st = _KEY if stack[-1] == "}" else _VALUE
                elif c == stack[-1]:
                    stack.pop()
                    st = self._end_value()
                else:
                    st = _FAILED
                    break
                i += 1
        self._state = st
        return i


# A JSON number's grammar as a state machine, so that a number split over many deltas costs
# O(delta) per feed (not a re-check of all its text so far): the states after "", "-", "0",
# "12", "1.", "1.5", "1e", "1e+", "1e5"; _N_BAD: it can no longer be a number.
_N_START, _N_SIGN, _N_ZERO, _N_INT, _N_DOT, _N_FRAC, _N_E, _N_ESIGN, _N_EXP, _N_BAD = range(10)
_N_COMPLETE = frozenset({_N_ZERO, _N_INT, _N_FRAC, _N_EXP})
_N_DIGITS = frozenset({_N_INT, _N_FRAC, _N_EXP})  # states a run of digits keeps
_DIGIT_RUN = run_matcher(r"[0-9]*")
_N_NEXT: dict[tuple[int, str], int] = {}
for _state, _chars, _to in (
    (_N_START, "-", _N_SIGN),
    (_N_START, "0", _N_ZERO),
    (_N_START, "123456789", _N_INT),
    (_N_SIGN, "0", _N_ZERO),
    (_N_SIGN, "123456789", _N_INT),
    (_N_ZERO, ".", _N_DOT),
    (_N_ZERO, "eE", _N_E),
    (_N_INT, "0123456789", _N_INT),
    (_N_INT, ".", _N_DOT),
    (_N_INT, "eE", _N_E),
    (_N_DOT, "0123456789", _N_FRAC),
    (_N_FRAC, "0123456789", _N_FRAC),
    (_N_FRAC, "eE", _N_E),
    (_N_E, "+-", _N_ESIGN),
    (_N_E, "0123456789", _N_EXP),
    (_N_ESIGN, "0123456789", _N_EXP),
    (_N_EXP, "0123456789", _N_EXP),
):
    for _c in _chars:
        _N_NEXT[(_state, _c)] = _to


def _number_step(state: int, s: str, i: int, j: int) -> int:
    """The number's state after ``s[i:j]`` (characters of ``[0-9eE.+-]``); runs of digits are
    skipped with one C match. Cost O(j - i)."""
    while i < j and state != _N_BAD:
        if state in _N_DIGITS:
            i = _DIGIT_RUN(s, i, j).end()
            if i >= j:
                break
        state = _N_NEXT.get((state, s[i]), _N_BAD)
        i += 1
    return state


def is_json_object(text: str) -> bool:
    """Whether ``text`` is exactly one JSON object (surrounding whitespace allowed)."""
    scanner = JsonScanner()
    stripped = text.strip(" \t\r\n")
    if not stripped.startswith("{"):
        return False
    return scanner.feed(stripped) == len(stripped) and scanner.done
