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
    """A call already streamed turned out unfinished or malformed; discard it."""

    index: int
    reason: str


Event = ReasoningText | ContentText | ReasoningEnd | ToolCallStart | ToolCallArguments | ToolCallEnd | ToolCallAborted
