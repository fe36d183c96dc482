"""One open tool call: its ``Phase`` and the data the phase owns.

The phases, as a table: whether the call was streamed (its start sent), whether its arguments
still take text, and whether it turned out not to be a call. ``CallTracker`` (``tracker``)
moves a call through them; nothing else changes a phase.

Its state is a plain value (``to_value``; ``engine.value``): the codec's own value, the phase,
and the call's text so far. ``copy()`` is that value read back, with a fresh codec from the
format's factory.

Raw text: a call keeps its exact text from its first marker while it is held (not streamed):
a held call that turns out malformed gives all of it back as content. Once it is streamed, its
arguments have gone out as they came, so it keeps only its first ``limit`` characters
(``StreamOptions.call_text_limit``) and counts the rest (``cut``): a long argument streams in
memory bounded by the limit. What the kept text is for: the text of a call the output ends
inside (``ToolCallUnfinished``, which says how much was not kept), and the content a streamed
call gives back when it turns out malformed (its first ``limit`` characters; the rest reached
the client as its arguments, reported aborted).

Cost: ``copy()`` and ``to_value()`` are O(kept raw text of the call + the codec's state).
"""

from __future__ import annotations

import enum
import re
from functools import lru_cache

from .codec import CallCodec
from .value import Value, as_enum, as_int, as_opt_str, as_pieces, as_str, as_tuple


class Phase(enum.Enum):
    """Where an open call is in its life (see the module docstring and the sets below)."""

    HELD = "held"  # not streamed: raw text kept, argument text collected
    HELD_CLOSED = "held_closed"
    STREAMING = "streaming"  # argument text goes out as the codec releases it
    STREAMING_CLOSED = "streaming_closed"
    REJECTED = "rejected"  # held and malformed: its raw text becomes content at its end
    ABORTING = "aborting"  # streamed, then malformed: reported aborted at its end


HELD, HELD_CLOSED, STREAMING, STREAMING_CLOSED, REJECTED, ABORTING = Phase

#             HELD  HELD_CLOSED  STREAMING  STREAMING_CLOSED  REJECTED  ABORTING
# streamed     -        -            x             x               -         x
# args open    x        -            x             -               -         -
# broken       -        -            -             -               x         x
# tuples, not sets: ``in`` compares identity in C, where a set would hash each enum in Python
STREAMED = (STREAMING, STREAMING_CLOSED, ABORTING)
ARGS_OPEN = (HELD, STREAMING)
BROKEN = (REJECTED, ABORTING)


@lru_cache(maxsize=64)
def _stops_regex(stops: str) -> re.Pattern[str]:
    """A regex matching any character that may end a codec's string (``string_stops``)."""
    return re.compile("[" + re.escape(stops) + "]")


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
        "markup",
        "kept",
        "cut",
    )

    def __init__(self, codec: CallCodec, marker: str, start: int, state: str) -> None:
        self.codec = codec
        self.phase = HELD
        self.reason = ""  # why it is not a call (REJECTED, ABORTING)
        self.raw: list[str] = [marker] if marker else []  # its exact text, from its first marker
        self.kept = len(marker)  # characters in ``raw``
        self.cut = 0  # characters of raw text not kept (streamed past the limit)
        self.name_parts: list[str] = []
        self.id_parts: list[str] = []
        self.name: str | None = None
        self.id: str | None = None
        self.index = -1  # emission index, once streamed
        self.args: list[str] = []  # argument text released while held
        self.start = start  # output offset of its first marker
        self.state = state  # the state it opened in
        # derived from the codec once streamed (``streamed_paths``): its string fast path
        # applies, and the characters that may end its strings
        self.quick = False
        self.stops: re.Pattern[str] | None = None
        self.markup = ""  # the text of the markup run being read (``CallTracker.markup_text``)

    def copy(self, codec: CallCodec) -> Call:
        """An independent call in the same state; ``codec`` is a fresh one from the format's
        factory, which takes this call's codec state."""
        return Call.from_value(codec, self.to_value())

    def keep(self, text: str, limit: int) -> None:
        """Raw text of the call: kept whole while it is held, up to ``limit`` characters once
        it is streamed (see the module docstring)."""
        if self.phase not in STREAMED or self.kept + len(text) <= limit:
            self.raw.append(text)
            self.kept += len(text)
            return
        room = max(0, limit - self.kept)
        if room:
            self.raw.append(text[:room])
            self.kept += room
        self.cut += len(text) - room

    def streamed_text(self, limit: int) -> None:
        """The call was streamed: from now on it keeps no more than ``limit`` characters."""
        if self.kept > limit:
            whole = "".join(self.raw)
            self.raw = [whole[:limit]]
            self.cut += self.kept - limit
            self.kept = limit

    def text(self) -> str:
        """The raw text kept."""
        return "".join(self.raw)

    def to_value(self) -> Value:
        """``(codec, phase, reason, raw, name, id, name text, id text, index, held arguments,
        start, state, markup run, characters not kept)``: texts joined."""
        return (
            self.codec.to_value(),
            self.phase,
            self.reason,
            "".join(self.raw),
            self.name,
            self.id,
            "".join(self.name_parts),
            "".join(self.id_parts),
            self.index,
            "".join(self.args),
            self.start,
            self.state,
            self.markup,
            self.cut,
        )

    @classmethod
    def from_value(cls, codec: CallCodec, value: Value) -> Call:
        """The call of ``value``, its codec state read into ``codec`` (fresh from the factory)."""
        codec_value, phase, reason, raw, name, call_id, name_parts, id_parts, index, args, start, state, markup, cut = (
            as_tuple(value, 14)
        )
        codec.restore(codec_value)
        new = cls(codec, "", as_int(start), as_str(state))
        new.phase = as_enum(phase, Phase)
        new.reason = as_str(reason)
        new.raw = as_pieces(raw)
        new.kept = len(as_str(raw))
        new.cut = as_int(cut)
        new.name = as_opt_str(name)
        new.id = as_opt_str(call_id)
        new.name_parts = as_pieces(name_parts)
        new.id_parts = as_pieces(id_parts)
        new.index = as_int(index)
        new.args = as_pieces(args)
        new.markup = as_str(markup)
        if new.phase in STREAMED:
            new.streamed_paths()
        return new

    def streamed_paths(self) -> None:
        """The call is streamed: its codec's string fast path applies from now on."""
        codec = self.codec
        self.quick = codec.fast_strings
        if codec.structured:
            self.stops = _stops_regex(codec.string_stops)

    def in_plain_string(self, text: str) -> bool:
        """``text`` continues a string of a streamed call's structured arguments (no character
        of it can end the string): the codec's string fast path applies."""
        stops = self.stops
        return self.quick and stops is not None and self.codec.in_string and not stops.search(text)

    @property
    def closed(self) -> bool:
        """Its arguments are complete (closed, or a structured codec's value ended)."""
        phase = self.phase
        if phase in BROKEN:
            return False
        return phase not in ARGS_OPEN or (self.codec.structured and self.codec.done)
