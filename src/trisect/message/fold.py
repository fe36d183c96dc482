"""Events -> deltas: the one fold every consumer uses.

``fold(events)`` coalesces the events of one ``feed()`` into one ``Delta`` (``None`` when they say
nothing: text held back, or only the end of reasoning). Every protocol shape is a rendering of
its result: ``MessageBuilder`` (in ``types``) folds deltas into a ``Message``, ``ChatStream`` into
``chat.completion.chunk`` dicts, the engine plugins into their delta messages, the server into
Responses events. So what a call's first delta carries (its id and name, with the arguments that
came with them) is decided here and nowhere else.

Cost: O(events).
"""

from __future__ import annotations

from collections.abc import Sequence

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


def fold(events: Sequence[Event]) -> Delta | None:
    """Coalesce events into one delta."""
    if not events:
        return None
    if len(events) == 1:  # the commonest case: one piece of text or of arguments
        event = events[0]
        if type(event) is ReasoningText:
            return Delta(event.text)
        if type(event) is ContentText:
            return Delta(None, event.text)
        if type(event) is ToolCallArguments:
            return Delta(None, None, (ToolCallDelta(event.index, None, None, event.text),))
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
