"""A block of calls: an envelope such as ``<tool_calls>`` … ``</tool_calls>`` the stream is inside.

A block opens where a transition leaves reasoning or content for a state from which a call can
open (a message's end marker, such as Harmony's ``<|end|>``, opens none), and closes where the
stream comes back. Its ``BlockPhase``:

* ``UNDECIDED``: no call of the block has ended as a call yet. All of its text is held, in order,
  as ``(text, Held)``: if the block yields a call, its markers were structure and the rest is
  content (``release``); if it closes without one, all of its text is content, its markers
  included, unless it was markers and whitespace only (``give_back``).
* ``YIELDED``: a call ended as a call; text between calls is content as it comes.
* ``SPILLED``: part of the block became content (text that is not whitespace, outside a call):
  it is not a block after all, and the rest of it is read as it comes.
* ``BROKEN``: its list of calls did not read (``FormatSpec.whole_list``): none of its calls
  stand and all of its text is content, the rest of it too, its markers included, up to and
  with the marker that leaves it; no call opens in it.
* ``OUTSIDE``: not in a block.

In every phase but ``OUTSIDE`` the block keeps its text since its opener or its last call
(``text``): a block the output ends inside before its next call is not content (the message's
unfinished call). With ``FormatSpec.whole_list`` the block is a list the output must close: it
also keeps the text of all of its calls, the indexes of those streamed and, in atomic streams,
the complete calls, held until the list closes (``cut`` makes all of it the unfinished call).
The rules: the engine package docstring (``trisect.engine``).

Cost: O(1) per piece of text; memory O(text of the block since its last call + a list's text).
"""

from __future__ import annotations

import enum

from .events import Event, ToolCallArguments, ToolCallEnd, ToolCallStart
from .value import Value, as_enum, as_int, as_items, as_pieces, as_str, as_tuple


class BlockPhase(enum.Enum):
    """Where the stream is with respect to a block of calls (see the module docstring)."""

    OUTSIDE = "outside"
    UNDECIDED = "undecided"
    YIELDED = "yielded"
    SPILLED = "spilled"
    BROKEN = "broken"


OUTSIDE, UNDECIDED, YIELDED, SPILLED, BROKEN = BlockPhase
_KEEPS_TEXT = (UNDECIDED, YIELDED)


class Held(enum.Enum):
    """What a piece of an undecided block's text is."""

    MARKER = "marker"  # structure if the block yields a call
    SKIP_TEXT = "skip_text"  # envelope text: content (whitespace dropped) if the block yields a call
    CONTENT_TEXT = "content_text"  # content either way (a call that was not a call)


MARKER, SKIP_TEXT, CONTENT_TEXT = Held


class Block:
    """The block of calls of one stream (see the module docstring). ``whole_list``: the
    format's ``FormatSpec.whole_list``."""

    __slots__ = ("_whole_list", "phase", "_text", "_held", "_list", "_list_calls", "_list_held")

    def __init__(self, whole_list: bool) -> None:
        self._whole_list = whole_list
        self.phase = OUTSIDE
        self._text: list[str] = []  # since its opener or its last call
        self._held: list[tuple[str, Held]] = []  # UNDECIDED: all of its text
        # whole lists: the text of the list so far (its calls' and the text between them; empty
        # until something is in it), the indexes of its calls already streamed, and (atomic
        # streams) its complete calls as (index, id, name, arguments)
        self._list: list[str] = []
        self._list_calls: list[int] = []
        self._list_held: list[tuple[int, str, str, str]] = []

    def copy(self) -> Block:
        return Block.from_value(self._whole_list, self.to_value())

    def to_value(self) -> Value:
        """``(phase, text since the opener or last call, held pieces as (text, Held), list text,
        streamed list calls, held list calls as (index, id, name, arguments))``."""
        return (
            self.phase,
            "".join(self._text),
            tuple(self._held),
            "".join(self._list),
            tuple(self._list_calls),
            tuple(self._list_held),
        )

    @classmethod
    def from_value(cls, whole_list: bool, value: Value) -> Block:
        phase, text, held, list_text, list_calls, list_held = as_tuple(value, 6)
        new = cls(whole_list)
        new.phase = as_enum(phase, BlockPhase)
        new._text = as_pieces(text)
        for entry in as_items(held):
            piece, kind = as_tuple(entry, 2)
            new._held.append((as_str(piece), as_enum(kind, Held)))
        new._list = as_pieces(list_text)
        new._list_calls = [as_int(i) for i in as_items(list_calls)]
        for entry in as_items(list_held):
            index, call_id, name, arguments = as_tuple(entry, 4)
            new._list_held.append((as_int(index), as_str(call_id), as_str(name), as_str(arguments)))
        return new

    # ------------------------------------------------------------------ the phase

    @property
    def open(self) -> bool:
        """Inside a block that keeps its text (``UNDECIDED`` or ``YIELDED``)."""
        return self.phase in _KEEPS_TEXT

    @property
    def listing(self) -> bool:
        """Inside a list the output must close (``FormatSpec.whole_list``)."""
        return self._whole_list and self.phase is not OUTSIDE

    def begin(self, marker: str) -> None:
        """A block opens at ``marker`` (``""``: at a call's own marker, which is the call's text)."""
        self.phase = UNDECIDED
        self._text = [marker] if marker else []
        self._held = [(marker, MARKER)] if marker else []
        if self._whole_list:
            self._list = []  # the opener joins it with the text before the first call (call_ends)

    def leave(self, out: list[Event]) -> None:
        """The stream left the block (its held text was given back first): a list's held calls
        stand (their events go to ``out``)."""
        self.close_list(out)
        self._close()

    def close_list(self, out: list[Event]) -> None:
        """The list closed (its ``]``), in the block or as it leaves it: its held calls stand
        (their events go to ``out``) and the list is done; the block reads on as it comes."""
        for index, call_id, name, arguments in self._list_held:
            out.append(ToolCallStart(index, call_id, name))
            if arguments:
                out.append(ToolCallArguments(index, arguments))
            out.append(ToolCallEnd(index))
        self._list, self._list_calls, self._list_held = [], [], []

    def _close(self) -> None:
        self.phase = OUTSIDE
        self._text, self._held = [], []
        self._list, self._list_calls, self._list_held = [], [], []

    # ------------------------------------------------------------------ its text

    def marker(self, marker: str) -> None:
        """A marker applied with no call open (not one that opens a call)."""
        self._keep(marker, MARKER)

    def skip_text(self, s: str) -> bool:
        """Envelope text with no call open. True: the undecided block holds it (content only if
        the block yields a call); False: the caller emits it."""
        return self._keep(s, SKIP_TEXT)

    def _keep(self, s: str, kind: Held) -> bool:
        if self.phase in _KEEPS_TEXT:
            self._text.append(s)
            if self.phase is UNDECIDED:
                self._held.append((s, kind))
                return True
        return False

    def holds_content(self, s: str) -> bool:
        """Content that arises inside the block (a call that was not a call): True when the
        undecided block holds it with its text."""
        if self.phase is UNDECIDED:
            self._held.append((s, CONTENT_TEXT))
            return True
        return False

    def spill(self) -> None:
        """Part of the block became content: it is not a block after all."""
        if self.phase is YIELDED:
            self.phase = SPILLED
            self._text = []

    def text(self) -> str:
        """Its text since its opener or its last call ("" outside)."""
        return "".join(self._text) if self.phase in _KEEPS_TEXT else ""

    # ------------------------------------------------------------------ calls

    def call_ends(self) -> None:
        """A call inside the block ends: the text before it joins a list's, and the block's text
        starts again after it."""
        if self.phase in _KEEPS_TEXT:
            if self.listing:
                self._list += self._text
            self._text = []

    def call_stands(self, raw: str, index: int, events: list[Event] | None) -> None:
        """A call of a list ended as a call: its text joins the list's, and its index (streamed:
        aborted if the list never closes) or, in atomic streams, its ``events`` are kept until
        the list closes."""
        self._list.append(raw)
        if events is None:
            self._list_calls.append(index)
            return
        call_id, name, arguments = "", "", []
        for event in events:
            if type(event) is ToolCallStart:
                call_id, name = event.id, event.name
            elif type(event) is ToolCallArguments:
                arguments.append(event.text)
        self._list_held.append((index, call_id, name, "".join(arguments)))

    def release(self) -> list[tuple[str, Held]]:
        """The undecided block yields a call: its held text, for the caller to emit (markers were
        structure)."""
        held, self._held = self._held, []
        if self.phase is UNDECIDED:
            self.phase = YIELDED
        return held

    def give_back(self) -> str:
        """The undecided block ends without a call: all of its text, markers included, is
        content, unless it is markers and whitespace only ("")."""
        held = self.release()
        text = "".join(s for s, _kind in held)
        if any(kind is not MARKER for _s, kind in held) and text.strip():
            return text
        return ""

    def take_held(self) -> str:
        """The undecided block's text, markers included, taken out ("" when none is held)."""
        return "".join(s for s, _kind in self.release())

    def cut(self) -> tuple[list[int], str]:
        """The output ended inside the list: the indexes of its calls already streamed (aborted)
        and its text from its opener (the unfinished call's, before the open call's text)."""
        calls, text = self._list_calls, "".join(self._list) + self.text()
        self._close()
        return calls, text

    def break_list(self) -> tuple[list[int], str, int | None]:
        """A call of the list does not read, or text between its calls: it is not a list. The
        indexes of its calls already streamed (aborted), its text from its opener up to the bad
        call (content, before the bad call's own text) and the index of its first call held, never
        sent (atomic streams; ``None``); the rest of the block is content (``BROKEN``)."""
        calls, text = self._list_calls, "".join(self._list)
        first_held = self._list_held[0][0] if self._list_held else None
        self._list, self._list_calls, self._list_held = [], [], []
        self.phase, self._text, self._held = BROKEN, [], []
        return calls, text, first_held

    @property
    def list_open(self) -> bool:
        """Inside a list that must close, undecided or with a call in it that stood: a call that
        does not read, or a word between calls, breaks it."""
        return self.listing and (self.phase is UNDECIDED or bool(self._list_calls or self._list_held))

    @property
    def list_text(self) -> str:
        """A list's text so far ("" when nothing is in it)."""
        return "".join(self._list)
