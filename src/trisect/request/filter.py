"""``parallel_tool_calls=False`` and ``include_reasoning=False``: a filter over the engine's events.

Only the first complete call reaches the client (calls that start after it are dropped whole;
a call that started before it and was aborted was already reported as aborted; the raw text
of a dropped call the output ended inside is still kept, as ``parse()`` keeps it); reasoning
text is never emitted. Cost: O(events).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..engine.events import (
    Event,
    ReasoningText,
    ToolCallAborted,
    ToolCallArguments,
    ToolCallEnd,
    ToolCallStart,
    ToolCallUnfinished,
)
from ..engine.value import Value, as_bool, as_int, as_items, as_tuple
from .options import Request

_CALL_EVENTS = (ToolCallStart, ToolCallArguments, ToolCallEnd, ToolCallAborted)


def filter_events(request: Request) -> _EventFilter | None:
    if request.parallel_tool_calls and request.include_reasoning:
        return None
    return _EventFilter(single_call=not request.parallel_tool_calls, reasoning=request.include_reasoning)


class _EventFilter:
    __slots__ = ("single_call", "reasoning", "done", "dropped")

    def __init__(self, *, single_call: bool, reasoning: bool) -> None:
        self.single_call = single_call
        self.reasoning = reasoning
        self.done = False  # a call reached the client complete
        self.dropped: set[int] = set()

    def copy(self) -> _EventFilter:
        return self.from_value(self.to_value())

    def to_value(self) -> Value:
        """``(a call reached the client, the indexes of the calls dropped)``; the two switches
        come from the request."""
        return (self.done, tuple(sorted(self.dropped)))

    def from_value(self, value: Value) -> _EventFilter:
        """A filter of this request's switches in the state ``value`` (``to_value``)."""
        done, dropped = as_tuple(value, 2)
        new = _EventFilter(single_call=self.single_call, reasoning=self.reasoning)
        new.done = as_bool(done)
        new.dropped = {as_int(i) for i in as_items(dropped)}
        return new

    def __call__(self, events: Iterable[Event]) -> list[Event]:
        out: list[Event] = []
        for event in events:
            kind = type(event)
            if kind is ReasoningText:
                if self.reasoning:
                    out.append(event)
                continue
            if self.single_call and type(event) is ToolCallUnfinished:
                if event.index in self.dropped:  # its raw text is kept; the client never saw the call
                    event = ToolCallUnfinished(None, event.text, event.reason)
            elif self.single_call and isinstance(event, _CALL_EVENTS):
                index = event.index
                if kind is ToolCallStart and self.done:
                    self.dropped.add(index)
                if index in self.dropped:
                    continue
                if kind is ToolCallEnd:
                    self.done = True
            out.append(event)
        return out
