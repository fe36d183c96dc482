"""The protocol-shaped results: a whole ``Message`` and a streamed ``Delta``.

Both convert to the exact OpenAI chat JSON shapes with ``to_dict()``. The reasoning field is
called ``reasoning``; ``reasoning_content=True`` adds the older ``reasoning_content`` name
(vLLM < 0.10, DeepSeek's API) with the same value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..native import mypyc_attr


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One complete tool call. ``arguments`` is a JSON object as a string."""

    id: str
    name: str
    arguments: str
    type: str = "function"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True)
class UnfinishedCall:
    """A tool call cut off by the end of the output (``max_tokens``): not a call, and not
    content either. ``text`` is its raw text exactly as the model wrote it, from its first marker
    to the end of the output; ``reason`` says where it was cut."""

    text: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "reason": self.reason}


@mypyc_attr(allow_interpreted_subclasses=True)  # a caller may extend the message
@dataclass(frozen=True, slots=True)
class Message:
    """The assistant message: ``reasoning``, ``content`` (``None`` when empty), ``tool_calls``.

    ``unfinished_call``: the call the output ended inside, if any (its markup never reaches
    ``content``). It is not part of the OpenAI message (``to_dict`` leaves it out)."""

    reasoning: str | None = None
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    unfinished_call: UnfinishedCall | None = None

    def to_dict(self, *, reasoning_content: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"role": "assistant", "content": self.content}
        out["reasoning"] = self.reasoning
        if reasoning_content:
            out["reasoning_content"] = self.reasoning
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        return out


@dataclass(slots=True)
class ToolCallDelta:
    """A piece of one streamed call.

    ``id`` and ``name`` are set in the first delta of a call only; ``arguments`` pieces
    concatenate to the final JSON object string.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""

    def to_dict(self, *, repeat_id: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index}
        call_id = self.id if self.id is not None else repeat_id
        if call_id is not None:
            out["id"] = call_id
            out["type"] = "function"
        function: dict[str, Any] = {}
        if self.name is not None:
            function["name"] = self.name
        function["arguments"] = self.arguments
        out["function"] = function
        return out


@dataclass(slots=True)
class Delta:
    """What one ``feed()`` (or ``finish()``) adds to the message.

    ``aborted`` lists the indexes of calls that were already streamed to the client and then
    turned out malformed (their text follows as content) or cut off by the end of the output:
    their arguments are not a complete JSON object and a client should discard them. It is
    only ever non-empty in incremental streams; ``parse()`` and atomic streams never emit such a
    call, so a client that drops the aborted calls ends with exactly ``parse()``'s message.
    ``unfinished_call`` (final delta only): the call the output ended inside (``Message``).
    ``ended`` lists the indexes of calls that ended well-formed here: their arguments are
    complete (what ``finish_reason: "tool_calls"`` and a client that runs a call as soon as it
    is whole need to know).
    """

    reasoning: str | None = None
    content: str | None = None
    tool_calls: tuple[ToolCallDelta, ...] = ()
    aborted: tuple[int, ...] = ()
    unfinished_call: UnfinishedCall | None = None
    ended: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(
            self.reasoning or self.content or self.tool_calls or self.aborted or self.unfinished_call or self.ended
        )

    def message(self) -> Message:
        """The message of a stream whose one delta this is (a whole output at once): what a
        ``MessageBuilder`` makes of it, without one."""
        calls: dict[int, list[str]] = {}
        headers: dict[int, tuple[str, str]] = {}
        for piece in self.tool_calls:
            if piece.name is not None:
                headers[piece.index] = (piece.id or "", piece.name)
                calls[piece.index] = [piece.arguments]
            else:
                calls[piece.index].append(piece.arguments)
        aborted = self.aborted
        return Message(
            reasoning=self.reasoning or None,
            content=self.content or None,
            tool_calls=tuple(
                ToolCall(id=headers[i][0], name=headers[i][1], arguments="".join(parts))
                for i, parts in sorted(calls.items())
                if i not in aborted
            ),
            unfinished_call=self.unfinished_call,
        )

    def to_dict(self, *, reasoning_content: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.reasoning:
            out["reasoning"] = self.reasoning
            if reasoning_content:
                out["reasoning_content"] = self.reasoning
        if self.content:
            out["content"] = self.content
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        return out


@dataclass(slots=True)
class MessageBuilder:
    """Folds deltas into a message, the way a client accumulates a stream."""

    reasoning: list[str] = field(default_factory=list)
    content: list[str] = field(default_factory=list)
    calls: dict[int, list[str]] = field(default_factory=dict)
    headers: dict[int, tuple[str, str]] = field(default_factory=dict)
    aborted: set[int] = field(default_factory=set)
    unfinished_call: UnfinishedCall | None = None

    def add(self, delta: Delta | None) -> None:
        if delta is None:
            return
        if delta.reasoning:
            self.reasoning.append(delta.reasoning)
        if delta.content:
            self.content.append(delta.content)
        for piece in delta.tool_calls:
            if piece.name is not None:
                self.headers[piece.index] = (piece.id or "", piece.name)
                self.calls[piece.index] = []
            self.calls[piece.index].append(piece.arguments)
        self.aborted.update(delta.aborted)
        if delta.unfinished_call is not None:
            self.unfinished_call = delta.unfinished_call

    def message(self) -> Message:
        calls = tuple(
            ToolCall(id=self.headers[i][0], name=self.headers[i][1], arguments="".join(parts))
            for i, parts in sorted(self.calls.items())
            if i not in self.aborted
        )
        return Message(
            reasoning="".join(self.reasoning) or None,
            content="".join(self.content) or None,
            tool_calls=calls,
            unfinished_call=self.unfinished_call,
        )
