"""Parse outcomes, counted from the engine's events as an answer is built (for the metrics).

``outcomes(events)`` names what a batch of events says: ``calls`` (``ToolCallEnd``: a call
returned whole), ``malformed_calls`` (``ToolCallAborted``: it ended malformed, its text given
back as content), ``unfinished_calls`` (``ToolCallUnfinished``: the output ended inside it).
``Observed(parser, observe)`` is the parser as the OpenAI layer sees it, with every stream it
makes reporting its events to ``observe`` on their way to the layer: the counts are the
events the answer was built from, with no second parse.

Cost: one type test per event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..engine.events import Event, ToolCallAborted, ToolCallEnd, ToolCallUnfinished
from ..message.stream_parser import StreamParser
from ..parser import Parser

Observe = Callable[[Sequence[Event]], None]
_KINDS = {ToolCallEnd: "calls", ToolCallAborted: "malformed_calls", ToolCallUnfinished: "unfinished_calls"}


def outcomes(events: Sequence[Event]) -> list[str]:
    return [_KINDS[type(e)] for e in events if type(e) in _KINDS]


class ObservedStream:
    """A ``StreamParser`` whose events are reported as they pass."""

    def __init__(self, stream: StreamParser, observe: Observe) -> None:
        self._stream = stream
        self._observe = observe
        inner = stream.events

        def events(text: str | None = None, token_ids: Sequence[int] | None = None) -> list[Event]:
            found = inner(text, token_ids)
            if found:
                observe(found)
            return found

        self.events = events

    def finish_events(self) -> list[Event]:
        found = self._stream.finish_events()
        if found:
            self._observe(found)
        return found

    def __getattr__(self, name: str) -> Any:  # engine, state, in_reasoning, …: the stream's own
        return getattr(self._stream, name)


class Observed:
    """``parser`` with its streams observed (everything else is the parser's own)."""

    def __init__(self, parser: Parser, observe: Observe) -> None:
        self._parser = parser
        self._observe = observe

    def stream(self, *, atomic_tool_calls: bool = False, **options: Any) -> ObservedStream:
        return ObservedStream(self._parser.stream(atomic_tool_calls=atomic_tool_calls, **options), self._observe)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parser, name)
