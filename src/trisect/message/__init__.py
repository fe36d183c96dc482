"""The message layer: the engine's events folded into OpenAI-shaped ``Delta`` and ``Message``."""

from __future__ import annotations

from .fold import fold
from .stream_parser import EventFilter, StreamParser
from .types import Delta, Message, MessageBuilder, ToolCall, ToolCallDelta, UnfinishedCall

__all__ = [
    "Delta",
    "EventFilter",
    "Message",
    "MessageBuilder",
    "StreamParser",
    "ToolCall",
    "ToolCallDelta",
    "UnfinishedCall",
    "fold",
]
