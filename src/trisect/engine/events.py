"""The events a stream produces. Everything downstream (deltas, messages, the OpenAI layer,
the CLI's replay view) is a fold over these.

Events are frozen. The three a stream makes per delta (a piece of reasoning, of content, of a
call's arguments) set their fields through the slots themselves: a frozen dataclass's generated
``__init__`` goes through ``object.__setattr__`` per field, which costs about half again what
the rest of making the event does.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, init=False)
class ReasoningText:
    text: str

    def __init__(self, text: str) -> None:
        _SET_REASONING(self, text)


@dataclass(frozen=True, slots=True, init=False)
class ContentText:
    text: str

    def __init__(self, text: str) -> None:
        _SET_CONTENT(self, text)


@dataclass(frozen=True, slots=True)
class ReasoningEnd:
    """Reasoning ended here (by its end marker, a tool call, or the end of the output)."""


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True, init=False)
class ToolCallArguments:
    index: int
    text: str

    def __init__(self, index: int, text: str) -> None:
        _SET_INDEX(self, index)
        _SET_ARGUMENTS(self, text)


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


_SET_REASONING = ReasoningText.__dict__["text"].__set__
_SET_CONTENT = ContentText.__dict__["text"].__set__
_SET_INDEX = ToolCallArguments.__dict__["index"].__set__
_SET_ARGUMENTS = ToolCallArguments.__dict__["text"].__set__

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
