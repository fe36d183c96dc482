"""Events -> deltas: the one fold every consumer uses.

``fold(events)`` coalesces the events of one ``feed()`` into one ``Delta`` (``None`` when they say
nothing: text held back, or only the end of reasoning); ``render(events, renderer)`` is the same
fold handing its result to a consumer's ``Renderer``. Every protocol shape is a rendering of
its result: ``MessageBuilder`` (in ``types``) folds deltas into a ``Message``, ``ChatStream`` into
``chat.completion.chunk`` dicts, the engine plugins into their delta messages, the server into
Responses events. So what a call's first delta carries (its id and name, with the arguments that
came with them) is decided here and nowhere else.

Cost: O(events).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from ..engine.events import (
    ContentText,
    Event,
    ReasoningText,
    ToolCallAborted,
    ToolCallArguments,
    ToolCallEnd,
    ToolCallStart,
    ToolCallUnfinished,
)
from .types import Delta, ToolCallDelta, UnfinishedCall

R = TypeVar("R", covariant=True)


class Renderer(Protocol[R]):
    """A consumer's shape of the fold's result (``render``). ``on_delta`` gets the coalesced
    delta; the commonest delta, one event (a piece of reasoning, of content, or of one call's
    arguments), goes to the method of that piece instead, and stands for the delta that has only
    that field: the consumer renders it without a ``Delta`` built in between."""

    def on_reasoning(self, text: str) -> R: ...

    def on_content(self, text: str) -> R: ...

    def on_arguments(self, index: int, text: str) -> R: ...

    def on_delta(self, delta: Delta) -> R: ...


def render(events: Sequence[Event], renderer: Renderer[R]) -> R | None:
    """The delta of ``events``, rendered by ``renderer`` (``None`` when they say nothing)."""
    if len(events) == 1:  # the commonest case: one piece of text or of arguments
        event = events[0]
        kind = type(event)
        if kind is ReasoningText:
            return renderer.on_reasoning(event.text)  # type: ignore[union-attr]
        if kind is ContentText:
            return renderer.on_content(event.text)  # type: ignore[union-attr]
        if kind is ToolCallArguments:
            return renderer.on_arguments(event.index, event.text)  # type: ignore[union-attr, arg-type]
    delta = _coalesce(events)
    return renderer.on_delta(delta) if delta is not None else None


class _Deltas:
    """``Delta`` objects: what ``fold`` renders."""

    __slots__ = ()

    def on_reasoning(self, text: str) -> Delta:
        return Delta(text)

    def on_content(self, text: str) -> Delta:
        return Delta(None, text)

    def on_arguments(self, index: int, text: str) -> Delta:
        return Delta(None, None, (ToolCallDelta(index, None, None, text),))

    def on_delta(self, delta: Delta) -> Delta:
        return delta


DELTAS = _Deltas()


def fold(events: Sequence[Event]) -> Delta | None:
    """Coalesce events into one delta."""
    return render(events, DELTAS) if events else None


def _coalesce(events: Sequence[Event]) -> Delta | None:
    reasoning: list[str] = []
    content: list[str] = []
    calls: list[tuple[int, str | None, str | None, list[str]]] = []  # index, id, name, argument pieces
    aborted: list[int] = []
    ended: list[int] = []
    unfinished: UnfinishedCall | None = None
    for event in events:
        if type(event) is ReasoningText:
            reasoning.append(event.text)
        elif type(event) is ContentText:
            content.append(event.text)
        elif type(event) is ToolCallStart:
            calls.append((event.index, event.id, event.name, []))
        elif type(event) is ToolCallArguments:
            if calls and calls[-1][0] == event.index:
                calls[-1][3].append(event.text)
            else:
                calls.append((event.index, None, None, [event.text]))
        elif type(event) is ToolCallEnd:
            ended.append(event.index)
        elif type(event) is ToolCallAborted:
            aborted.append(event.index)
        elif type(event) is ToolCallUnfinished:
            if event.index is not None:
                aborted.append(event.index)
            unfinished = UnfinishedCall(event.text, event.reason)
    if not (reasoning or content or calls or aborted or unfinished or ended):
        return None
    return Delta(
        reasoning="".join(reasoning) or None,
        content="".join(content) or None,
        tool_calls=tuple([ToolCallDelta(i, cid, name, "".join(args)) for i, cid, name, args in calls]),
        aborted=tuple(aborted),
        unfinished_call=unfinished,
        ended=tuple(ended),
    )
