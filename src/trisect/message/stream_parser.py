"""``StreamParser``: the engine's event stream, folded into ``Delta`` objects per ``feed()``.

This is what ``Parser.stream()`` returns. ``feed()`` / ``finish()`` return deltas;
``events()`` / ``finish_events()`` return the engine's typed events unchanged (after the
request's event filter, if any), for consumers that fold them themselves (the OpenAI layer):
without a filter, ``events`` *is* the engine's ``feed``, so such a consumer pays nothing for
this layer.

Cost: the engine's, plus O(events) per ``feed()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ..engine.envelope import Binding, seal
from ..engine.event_stream import VALUE_ENUMS, EventStream
from ..engine.events import Event
from ..engine.value import Value
from ..errors import StreamError
from .fold import fold
from .types import Delta


class EventFilter(Protocol):
    """A request's filter over the engine's events (``request/filter.py``)."""

    def __call__(self, events: list[Event]) -> list[Event]: ...

    def copy(self) -> EventFilter:
        """The same filter in the same state, for a copied stream."""
        ...

    def to_value(self) -> Value:
        """Its state as a plain value (``trisect.engine.value``)."""
        ...

    def from_value(self, value: Value) -> EventFilter:
        """A filter of the same request in the state ``value``."""
        ...


FeedEvents = Callable[..., list[Event]]


class StreamParser:
    """One stream (one request, one choice). Create it with ``Parser.stream()``."""

    __slots__ = ("_engine", "_keep", "events", "_origin", "carried")

    def __init__(
        self,
        engine: EventStream,
        keep: EventFilter | None = None,
        origin: Callable[[], tuple[Binding, bool]] | None = None,
    ) -> None:
        self._engine = engine
        self._keep = keep
        # how the stream was made, as its state needs it (given by Parser.stream): the binding,
        # and whether the prompt made the format drop its reasoning format
        self._origin = origin
        # the caller's value signed with this stream's state (``to_state(carry=…)``), once resumed
        self.carried: Value = None
        # ``events(text, token_ids)``: like ``feed()``, returning the typed events instead of a
        # folded delta (the engine's own method when no request filter applies)
        self.events: FeedEvents = engine.feed if keep is None else self._filtered

    def _filtered(self, text: object = None, token_ids: Sequence[int] | None = None) -> list[Event]:
        assert self._keep is not None
        return self._keep(self._engine.feed(text, token_ids))

    def feed(self, text: object = None, token_ids: Sequence[int] | None = None) -> Delta | None:
        """Add one delta of model output (a str, or ``None`` with ids); returns what it adds to
        the message, or ``None``. Any other text is a ``StreamError`` (``EventStream.feed``)."""
        events = self._engine.feed(text, token_ids)
        if self._keep is not None:
            events = self._keep(events)
        return fold(events) if events else None

    def finish(self) -> Delta | None:
        """End of output: release held text and close what is open."""
        return fold(self.finish_events())

    def finish_events(self) -> list[Event]:
        events = self._engine.finish()
        return self._keep(events) if self._keep is not None else events

    def copy(self) -> StreamParser:
        """An independent stream that continues from this point: ``n > 1`` sampling from one
        prompt, beam search, speculative decoding that rolls rejected tokens back to a
        checkpoint. Cost O(held state: held text, the open call, queued ids), not O(output)."""
        return StreamParser(self._engine.copy(), self._keep.copy() if self._keep is not None else None, self._origin)

    def to_state(self, key: bytes | str, *, ttl: float | None = None, carry: Value = None) -> bytes:
        """This stream's state as signed bytes: ``Parser.resume(state, key, **options)``, in this
        process or another one with the same parser and options, gives a stream that continues
        exactly as this one would (``trisect.engine.envelope``: the layout, and what a state
        reveals). ``ttl``: seconds until the state expires. ``carry``: a small value of the
        caller's own (ints, strs, bools, ``None``, tuples), signed with the state and given back
        as the resumed stream's ``carried`` (a shell's bookkeeping: the role was sent, calls
        completed). Cost O(held state), as ``copy()``."""
        if self._origin is None:
            raise StreamError("this stream was not made by Parser.stream(), so nothing binds its state")
        binding, plain = self._origin()
        return seal((self.to_value(), plain, carry), key, binding, ttl=ttl, enums=VALUE_ENUMS)

    def to_value(self) -> Value:
        """Everything the stream holds, as a plain value (``trisect.engine.value``): ``(the engine's
        value, the request filter's or None)``. ``Parser`` reads it back for the same request."""
        return (self._engine.to_value(), self._keep.to_value() if self._keep is not None else None)

    @property
    def engine(self) -> EventStream:
        """The engine stream underneath (unfiltered)."""
        return self._engine

    @property
    def state(self) -> str:
        """The engine state the stream is in (a state name of the format's table)."""
        return self._engine.state

    @property
    def in_reasoning(self) -> bool:
        """The stream is inside a reasoning block now (its state's text is reasoning)."""
        return self._engine.in_reasoning

    @property
    def reasoning_ended(self) -> bool:
        return self._engine.reasoning_ended

    @property
    def num_tokens(self) -> int:
        """Token ids fed so far."""
        return self._engine.num_tokens
