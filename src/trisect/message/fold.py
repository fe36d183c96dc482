"""Events -> protocol shapes: the one fold every consumer uses.

``fold(events)`` coalesces the events of one ``feed()`` into one ``Delta`` (``None`` when they add
nothing a client would see). ``MessageBuilder`` (in ``types``) folds deltas into a ``Message``.

Cost: O(events).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.events import ContentText, Event, ReasoningText, ToolCallAborted, ToolCallArguments, ToolCallStart
from .types import Delta, ToolCallDelta


def fold(events: Sequence[Event]) -> Delta | None:
    """Coalesce events into one delta."""
    if not events:
        return None
    if len(events) == 1:  # the commonest case: one piece of text or of arguments
        event = events[0]
        kind = type(event)
        if kind is ReasoningText:
            return Delta(event.text)  # type: ignore[union-attr]
        if kind is ContentText:
            return Delta(None, event.text)  # type: ignore[union-attr]
        if kind is ToolCallArguments:
            return Delta(None, None, (ToolCallDelta(event.index, None, None, event.text),))  # type: ignore[union-attr]
    reasoning: list[str] = []
    content: list[str] = []
    calls: list[list] = []  # [index, id, name, [args]]
    aborted: list[int] = []
    for event in events:
        kind = type(event)
        if kind is ReasoningText:
            reasoning.append(event.text)  # type: ignore[union-attr]
        elif kind is ContentText:
            content.append(event.text)  # type: ignore[union-attr]
        elif kind is ToolCallStart:
            calls.append([event.index, event.id, event.name, []])  # type: ignore[union-attr]
        elif kind is ToolCallArguments:
            if calls and calls[-1][0] == event.index:  # type: ignore[union-attr]
                calls[-1][3].append(event.text)  # type: ignore[union-attr]
            else:
                calls.append([event.index, None, None, [event.text]])  # type: ignore[union-attr]
        elif kind is ToolCallAborted:
            aborted.append(event.index)  # type: ignore[union-attr]
    if not (reasoning or content or calls or aborted):
        return None
    return Delta(
        reasoning="".join(reasoning) or None,
        content="".join(content) or None,
        tool_calls=tuple([ToolCallDelta(i, cid, name, "".join(args)) for i, cid, name, args in calls]),
        aborted=tuple(aborted),
    )
