"""One open tool call: its ``Phase`` and the data the phase owns.

The phases, as a table: whether the call was streamed (its start sent, its raw text no longer
kept), whether its arguments still take text, and whether it turned out not to be a call.
``CallTracker`` (``tracker``) moves a call through them; nothing else changes a phase.

Cost: ``copy()`` is O(raw text of a held call + the codec's state).
"""

from __future__ import annotations

import enum
import re
from collections import deque
from collections.abc import Callable, Mapping
from functools import lru_cache, partial
from types import BuiltinFunctionType, FunctionType, MethodType
from typing import Any

from .codec import CallCodec


class Phase(enum.Enum):
    """Where an open call is in its life (see the module docstring)."""

    #                  (streamed, args open, broken)
    HELD = (False, True, False)  # raw text kept, argument text collected
    HELD_CLOSED = (False, False, False)
    STREAMING = (True, True, False)  # argument text goes out as the codec releases it
    STREAMING_CLOSED = (True, False, False)
    REJECTED = (False, False, True)  # held and malformed: its raw text becomes content at its end
    ABORTING = (True, False, True)  # streamed, then malformed: reported aborted at its end

    def __init__(self, streamed: bool, args_open: bool, broken: bool) -> None:
        self.streamed = streamed
        self.args_open = args_open
        self.broken = broken


HELD, HELD_CLOSED, STREAMING, STREAMING_CLOSED, REJECTED, ABORTING = Phase


class Call:
    """The open tool call: its phase and the data its phase owns."""

    __slots__ = (
        "codec",
        "phase",
        "reason",
        "raw",
        "name_parts",
        "id_parts",
        "name",
        "id",
        "index",
        "args",
        "start",
        "state",
        "quick",
        "stops",
    )

    def __init__(self, codec: CallCodec, marker: str, start: int, state: str) -> None:
        self.codec = codec
        self.phase = HELD
        self.reason = ""  # why it is not a call (REJECTED, ABORTING)
        self.raw: list[str] = [marker]  # its exact text, while held
        self.name_parts: list[str] = []
        self.id_parts: list[str] = []
        self.name: str | None = None
        self.id: str | None = None
        self.index = -1  # emission index, once streamed
        self.args: list[str] = []  # argument text released while held
        self.start = start  # output offset of its first marker
        self.state = state  # the state it opened in
        # once streamed: the codec's string fast path and what may end its strings
        self.quick: Callable[[str], str] | None = None
        self.stops: re.Pattern[str] | None = None

    def copy(self) -> Call:
        """An independent call in the same state (its codec copied too)."""
        new = Call.__new__(Call)
        new.codec = codec = _copy_codec(self.codec)
        new.phase, new.reason, new.name, new.id, new.index = self.phase, self.reason, self.name, self.id, self.index
        new.raw, new.args = self.raw[:], self.args[:]
        new.name_parts, new.id_parts = self.name_parts[:], self.id_parts[:]
        new.start, new.state, new.stops = self.start, self.state, self.stops
        new.quick = getattr(codec, "string_piece", None) if self.quick is not None else None
        return new

    def in_plain_string(self, text: str) -> bool:
        """``text`` continues a string of a streamed call's structured arguments (no character
        of it can end the string): the codec's string fast path applies."""
        stops = self.stops
        return self.quick is not None and stops is not None and self.codec.in_string and not stops.search(text)

    @property
    def closed(self) -> bool:
        """Its arguments are complete (closed, or a structured codec's value ended)."""
        phase = self.phase
        if phase.broken:
            return False
        return not phase.args_open or (self.codec.structured and self.codec.done)


def _copy_codec(codec: CallCodec) -> CallCodec:
    """A codec in the same state: its own ``copy()`` if it has one, else ``clone``."""
    own: Callable[[], CallCodec] | None = getattr(codec, "copy", None)
    return own() if own is not None else clone(codec, {})


_ATOMS = frozenset({str, int, bool, float, bytes, type(None)})
_SHARED = (re.Pattern, enum.Enum, type, FunctionType, BuiltinFunctionType, partial, Mapping)


def clone(value: Any, memo: dict[int, Any]) -> Any:
    """A copy of a codec's state: objects, lists, tuples, sets and deques are copied (an
    object's attributes or slots one by one; a bound method follows its object); what codecs
    only read is shared: mappings (the request's tool schemas), strings, numbers, enums,
    patterns, functions. Cheaper than ``copy.deepcopy``, which would copy the schemas too."""
    kind: type = type(value)
    if kind in _ATOMS or isinstance(value, _SHARED):
        return value
    key = id(value)
    if key in memo:
        return memo[key]
    if kind is list:
        new_list: list[Any] = []
        memo[key] = new_list
        new_list.extend([v if type(v) in _ATOMS else clone(v, memo) for v in value])
        return new_list
    if kind is tuple:
        return tuple([clone(v, memo) for v in value])
    if kind is set or kind is frozenset:
        return kind(value)
    if kind is deque:
        return deque([clone(v, memo) for v in value])
    if kind is MethodType:
        return MethodType(value.__func__, clone(value.__self__, memo))
    new: Any = object.__new__(kind)
    memo[key] = new
    setattr_ = object.__setattr__
    for name in _slot_names(kind) or list(vars(value)):
        if hasattr(value, name):
            v = getattr(value, name)
            setattr_(new, name, v if type(v) in _ATOMS else clone(v, memo))
    return new


@lru_cache(maxsize=256)
def _slot_names(kind: type) -> tuple[str, ...]:
    """The slots of a class without a ``__dict__`` (empty: read its instances' ``vars``)."""
    if any("__dict__" in getattr(c, "__slots__", ("__dict__",)) for c in kind.__mro__[:-1]):
        return ()
    return tuple(n for c in kind.__mro__ for n in getattr(c, "__slots__", ()))
