"""Whole outputs: ``Parser.parse(text)``, the machine over the complete text in one pass.

Non-streaming is streaming (DESIGN): ``whole_events`` runs the stream's own machine, with every
rule of the engine, over the output at once (``EventStream.read_whole``: ``feed(text)`` then
``finish()`` of an atomic stream). Only what a whole text allows differs, and it changes no
result:

* where a state has a few marker strings with different first characters, each is found with
  one ``str.find`` and its next position remembered (``WholeFinder``), which spares the regex
  engine's slow path for alternatives that do not share a first character (``{`` or ``<|``);
  elsewhere the state's compiled pattern finds them (about 2 GB/s when they share one);
* a JSON codec reads the rest of the output with the standard library's C decoder
  (``CallCodec.feed_last``; ``trisect.codecs.json_whole``), and its own scanner where the C
  decoder does not read it;
* the text between two markers goes to its field or codec as one span, and calls keep their raw
  text as offsets into the output: whole parsing copies the output about once (the message's
  fields and arguments), plus, for raw-text arguments, the pieces they are joined from.

The replay harness checks ``parse()`` (this path) against every stream of every case, and
``tests/test_whole.py`` against streams on mutated outputs.

Cost: O(len(text)) at C speed (pattern searches or ``str.find``, the JSON decoder, slicing) plus
O(markers + envelope keys) steps of Python; memory about twice the output at most.
"""

from __future__ import annotations

from .compile import CompiledFormat
from .event_stream import EventStream
from .events import Event
from .stream_options import StreamOptions
from .vocab import Vocab


class WholeFinder:
    """Finds markers in one whole text (a ``machine.Finder``): the next position of each marker
    string is remembered, so each string is searched once per occurrence, not once per marker."""

    __slots__ = ("_next", "_data")

    def __init__(self) -> None:
        self._next: dict[str, int] = {}  # marker string -> its next offset found in _data (n: none)
        self._data = ""

    def __call__(self, strings: tuple[str, ...], data: str, scan: int, n: int) -> tuple[int, str]:
        """The earliest of ``strings`` (longest first) in ``data[scan:n]``, the longest at a tie."""
        if data is not self._data:  # other text (what the stream held, read at its end): forget
            self._data = data
            self._next = {}
        next_at = self._next
        best = n
        found = ""
        for s in strings:
            at = next_at.get(s, -1)
            if at < scan:
                at = data.find(s, scan, n)
                if at < 0:
                    at = n
                next_at[s] = at
            if at < best:
                best = at
                found = s
        return (best, found) if found else (-1, "")


def whole_events(
    compiled: CompiledFormat,
    request: StreamOptions,
    state: str,
    text: str,
    *,
    vocab: Vocab | None = None,
) -> list[Event]:
    """The events of the whole output ``text`` from ``state``: those of an atomic stream fed it
    at once and finished."""
    stream = EventStream(compiled, request, initial_state=state, vocab=vocab, atomic_tool_calls=True)
    return stream.read_whole(text, WholeFinder())
