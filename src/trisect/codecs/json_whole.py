"""A JSON call read at once by the standard library's C decoder, where it is the rest of the output.

``JsonArgsCodec.feed_last`` and ``JsonEnvelopeCodec.feed_last`` (``json_call``) try these readers
first: ``scan_once`` finds where each value ends (and ``scanstring`` reads the envelope's keys), in
C. They read only the plain shape, where no rule of the codec has anything to decide: a bare
object; an envelope whose keys are each one of its name, arguments and id keys, once, the id (if
any) before the name, the name a non-empty string, the arguments an object or ``null``. Anything
else (another key, a key twice, a string of arguments, ``NaN``, an integer past Python's digit
limit, nesting past the codec's ``MAX_DEPTH``, invalid or unfinished JSON) is ``None``, and the codec
reads the text itself, so its rules decide and where it stops is its own.

The arguments are the span of text the model wrote, never a re-serialised value: byte for byte
what the codec would emit. The decoded value is dropped before that span is sliced, so the
memory a read costs is one copy of the arguments.

Cost: O(len(JSON)) at C speed, plus O(envelope keys) steps of Python.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, cast

from ..engine.jsonscan import MAX_DEPTH

_WS = " \t\r\n"
# ``match`` of a pattern that matches the empty string never returns ``None``
_ws = cast(Callable[[str, int], "re.Match[str]"], re.compile(r"[ \t\r\n]*").match)


class _NotPlain(Exception):
    """The text is not the plain shape (see the module docstring)."""


def _no_constant(_name: str) -> None:
    raise _NotPlain  # NaN / Infinity are Python's extension, not JSON


# the C scanner's entry points (typeshed does not declare them): a value at an index, a string
# body after its opening quote; each returns the value and the index after it
_scan_value = cast(
    Callable[[str, int], tuple[Any, int]],
    json.JSONDecoder(parse_constant=_no_constant).scan_once,  # type: ignore[attr-defined]
)
_scan_string = cast(Callable[[str, int], tuple[str, int]], json.decoder.scanstring)  # type: ignore[attr-defined]
_REFUSED = (_NotPlain, ValueError, RecursionError, StopIteration)


def _shallow(text: str, i: int, j: int) -> bool:
    """``text[i:j]`` cannot nest deeper than the codec's scanner accepts (``MAX_DEPTH``, below
    what the C decoder takes): one C-level count per bracket; deeper text is the codec's to
    decide."""
    return text.count("[", i, j) + text.count("{", i, j) < MAX_DEPTH


def _skip(text: str, i: int) -> int:
    """The index after the JSON whitespace at ``i`` (most often none, or one space)."""
    if i < len(text) and text[i] in _WS:
        i += 1
        if i < len(text) and text[i] in _WS:
            i = _ws(text, i).end()
    return i


def read_object(text: str, i: int, n: int) -> tuple[int, str] | None:
    """A bare arguments object in ``text[i:n]`` after whitespace: (where it ends, its text)."""
    i = _ws(text, i).end()
    if i >= n or text[i] != "{":
        return None
    try:
        _value, j = _scan_value(text, i)
    except _REFUSED:
        return None
    del _value  # one copy of the arguments at a time
    return (j, text[i:j]) if j <= n and _shallow(text, i, j) else None


def read_envelope(
    keys: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], list_opener: bool, text: str, i: int, n: int
) -> tuple[int, str, str | None, str] | None:
    """An envelope in ``text[i:n]`` (``keys``: its name, arguments and id keys; ``list_opener``:
    a ``[`` before it is skipped): (where it ends, name, call id, arguments text)."""
    try:
        return _envelope(keys, list_opener, text, i, n)
    except _REFUSED:
        return None


def _envelope(
    keys: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], list_opener: bool, text: str, i: int, n: int
) -> tuple[int, str, str | None, str] | None:
    name_keys, args_keys, id_keys = keys
    if list_opener and i < n and text[i] == "[":
        i = _skip(text, i + 1)
    i = _skip(text, i)
    if i >= n or text[i] != "{":
        return None
    i = _skip(text, i + 1)
    name: str | None = None
    call_id: str | None = None
    args: str | None = None
    while True:
        if i >= n or text[i] != '"':
            return None
        key, i = _scan_string(text, i + 1)
        i = _skip(text, i)
        if i >= n or text[i] != ":":
            return None
        i = _skip(text, i + 1)
        if i >= n:
            return None
        first = text[i]
        value, j = _scan_value(text, i)
        if key in name_keys and name is None:
            if type(value) is not str or not value:
                return None
            name = value
        elif key in args_keys and args is None:
            if first == "n" and value is None:
                args = "{}"
            elif first == "{" and _shallow(text, i, j):
                del value  # one copy of the arguments at a time
                args = text[i:j]
            else:
                return None
        elif key in id_keys and call_id is None and name is None:
            if type(value) is not str:
                return None
            call_id = value
        else:
            return None
        i = _skip(text, j)
        if i >= n:
            return None
        c = text[i]
        if c == ",":
            i = _skip(text, i + 1)
        elif c == "}":
            break
        else:
            return None
    if name is None or args is None or i + 1 > n:
        return None
    return i + 1, name, call_id, args
