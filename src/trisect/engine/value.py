"""Plain values: the form each part of a stream's state takes when it is written out.

Every component of a stream (``Lexer``, ``CallTracker`` and its open ``Call`` with the call's
codec, ``Fields``, ``Header``, ``Block``, ``Deferred``, and the ``Machine`` that composes them)
gives its state as a ``Value`` (``to_value()``) and is rebuilt from one (``from_value(...)``, with
the configuration it was made with: the compiled format, the request's options, the tokenizer;
those are never part of a value). ``copy()`` of each component is ``from_value(to_value())``, so
the replay harness, which copies a stream at every cut of every case, checks that the values are
complete.

A ``Value`` is ``None``, a ``bool``, an ``int``, a ``str``, ``bytes`` (the bytes of a character a
detokenizer has not completed), a member of one of the stream's enums
(``event_stream.VALUE_ENUMS``), or a tuple of values.
No value refers to an object, so a value can be encoded by anything that knows these kinds and
the enums (their members by ``.value``, unique within each enum). Values are bounded by the text
the stream still holds (held marker prefixes, held whitespace, an open call's text, a block of
calls not yet decided, reasoning held for a fallback) plus counters.

The readers below (``as_tuple``, ``as_int``, …) take a value apart and raise ``ValueError`` when it
does not have the shape the component wrote; a caller that reads values from outside
authenticates them first (``to_state`` / ``resume``).

Cost: O(size of the value) to write or read.
"""

from __future__ import annotations

import enum
from typing import TypeAlias, TypeVar

Value: TypeAlias = "bool | int | str | bytes | enum.Enum | tuple[Value, ...] | None"

E = TypeVar("E", bound=enum.Enum)


def as_tuple(value: Value, n: int) -> tuple[Value, ...]:
    """``value`` as a tuple of ``n`` values."""
    if type(value) is not tuple or len(value) != n:
        raise ValueError(f"expected a tuple of {n} values, not {_kind(value)}")
    return value


def as_items(value: Value) -> tuple[Value, ...]:
    """``value`` as a tuple of any length."""
    if type(value) is not tuple:
        raise ValueError(f"expected a tuple, not {_kind(value)}")
    return value


def as_int(value: Value) -> int:
    if type(value) is not int:
        raise ValueError(f"expected an int, not {_kind(value)}")
    return value


def as_str(value: Value) -> str:
    if type(value) is not str:
        raise ValueError(f"expected a str, not {_kind(value)}")
    return value


def as_opt_str(value: Value) -> str | None:
    return None if value is None else as_str(value)


def as_bool(value: Value) -> bool:
    if type(value) is not bool:
        raise ValueError(f"expected a bool, not {_kind(value)}")
    return value


def as_enum(value: Value, kind: type[E]) -> E:
    if type(value) is not kind:
        raise ValueError(f"expected a {kind.__name__}, not {_kind(value)}")
    assert isinstance(value, kind)
    return value


def as_strs(value: Value) -> tuple[str, ...]:
    """A tuple of strs."""
    return tuple(as_str(v) for v in as_items(value))


def as_pieces(value: Value) -> list[str]:
    """Text a component keeps as pieces, written joined: its pieces again (none for "")."""
    s = as_str(value)
    return [s] if s else []


def _kind(value: Value) -> str:
    if type(value) is tuple:
        return f"a tuple of {len(value)}"
    return type(value).__name__


def is_value(value: object) -> bool:
    """Is ``value`` a plain value (see the module docstring)?"""
    if value is None or type(value) in (bool, int, str, bytes):
        return True
    if type(value) is tuple:
        return all(is_value(v) for v in value)
    return isinstance(value, enum.Enum)
