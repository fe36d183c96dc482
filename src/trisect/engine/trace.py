"""What a stream consumed: the spans of output it did not emit as reasoning or content.

Off unless asked for (``EventStream.trace = Trace()``); ``trisect.testing``'s nothing-lost
check reads it. Each ``Span`` is a half-open range of output offsets:

* ``marker``: a marker the table applied outside a call (a call's own markers are part of the
  call); ``label`` when applying it only drops text (same region before and after, no action,
  not a special token, a word rather than markup: Gemma 4's channel name ``thought``);
* ``call``: a call that ended as a call, from its first marker to its end;
* ``header``: a message header the format read (Harmony);
* ``dropped``: a call that turned out to be the envelope of a list of calls (``Act.CALL_DROP``);
* ``envelope``: from a marker that leaves reasoning or content to open a call or a block of
  calls (not a message's end marker) to the marker that comes back (or the end of the output),
  with the calls that ended in it and whether any of its text became content (``spilled``).

Cost: O(1) per marker when on; off, one attribute test per marker and per field piece.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .spec import Act

_WORD = re.compile(r"[\w\s'’.,:;!?-]*[^\W\d_][\w\s'’.,:;!?-]*")  # a word, not markup
_OF_A_CALL_OR_HEADER = (Act.CALL_START, Act.HEADER_START)  # markers that begin a call's or a header's text


@dataclass(frozen=True, slots=True)
class Span:
    kind: str
    start: int
    end: int
    calls: int = 0
    spilled: bool = False


class Trace:
    """The spans of one stream, in the order they closed."""

    __slots__ = ("spans", "_open", "_calls", "_spilled")

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self._open = -1  # start of the open envelope (-1: none)
        self._calls = 0
        self._spilled = False

    def copy(self) -> Trace:
        new = Trace()
        new.spans = self.spans[:]
        new._open, new._calls, new._spilled = self._open, self._calls, self._spilled
        return new

    def applied(self, marker: str, at: int, acts: Sequence[Act], keeps_region: bool) -> None:
        """A marker the table applied at ``at`` with no call open, outside a header: consumed,
        unless it begins a call's or a header's text. ``keeps_region``: its rule has no action,
        leaves the region as it was and is not a special token (a word then is a label)."""
        if not any(a in _OF_A_CALL_OR_HEADER for a in acts):
            label = keeps_region and _WORD.fullmatch(marker) is not None
            self.spans.append(Span("label" if label else "marker", at, at + len(marker)))

    def add(self, kind: str, start: int, end: int) -> None:
        self.spans.append(Span(kind, start, end))

    def call(self, start: int, end: int) -> None:
        self.spans.append(Span("call", start, end))
        self._calls += 1

    def spill(self) -> None:
        """Text became content (counts only inside an envelope)."""
        if self._open >= 0:
            self._spilled = True

    def give_back(self) -> None:
        """The open envelope yields no call and its text, markers included, became content:
        its markers were not consumed after all."""
        if self._open >= 0:
            start = self._open
            self.spans = [s for s in self.spans if not (s.kind in ("marker", "label", "dropped") and s.start >= start)]

    def break_list(self) -> None:
        """The open list of calls is none after all (a call of it does not read): its calls and
        markers were not consumed, its text is content."""
        if self._open >= 0:
            start = self._open
            kinds = ("call", "marker", "label", "dropped")
            self.spans = [s for s in self.spans if not (s.kind in kinds and s.start >= start)]
            self._calls, self._spilled = 0, True

    def enter(self, at: int) -> None:
        """An envelope opens at ``at``."""
        if self._open < 0:
            self._open, self._calls, self._spilled = at, 0, False

    def leave(self, at: int) -> None:
        """The open envelope (if any) closes at ``at``."""
        if self._open >= 0:
            self.spans.append(Span("envelope", self._open, at, self._calls, self._spilled))
            self._open = -1
