"""The events a stream produces. Everything downstream (deltas, messages, the OpenAI layer,
the CLI's replay view) is a fold over these."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReasoningText:
    text: str


@dataclass(frozen=True, slots=True)
class ContentText:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningEnd:
    """Reasoning ended here (by its end marker, a tool call, or the end of the output)."""


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallArguments:
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    index: int


@dataclass(frozen=True, slots=True)
class ToolCallAborted:
    """A call already streamed turned out malformed when it ended; discard it (its text
    follows as content, as ``parse()`` has it)."""

    index: int
    reason: str


@dataclass(frozen=True, slots=True)
class ToolCallUnfinished:
    """The output ended inside a call. ``text`` is the call's raw text as the model wrote it
    (from its first marker to the end of the output), which is not content; ``index`` is the
    call's index if it had been streamed (discard it), else ``None``."""

    index: int | None
    text: str
    reason: str


Event = (
    ReasoningText
    | ContentText
    | ReasoningEnd
    | ToolCallStart
    | ToolCallArguments
    | ToolCallEnd
    | ToolCallAborted
    | ToolCallUnfinished
)
