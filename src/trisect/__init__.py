"""trisect: raw LLM output -> reasoning, content and tool calls, whole or streamed.

>>> import trisect
>>> parser = trisect.Parser(reasoning="qwen3", tools="hermes")
>>> msg = parser.parse('<think>hi</think>OK<tool_call>{"name": "f", "arguments": {}}</tool_call>')
>>> msg.reasoning, msg.content, msg.tool_calls[0].name, msg.tool_calls[0].arguments
('hi', 'OK', 'f', '{}')
"""

from __future__ import annotations

from . import native  # noqa: F401  first: with TRISECT_PURE=1 every module below loads from its .py file
from .detect import Detection, detect
from .engine.events import (
    ContentText,
    Event,
    ReasoningEnd,
    ReasoningText,
    ToolCallAborted,
    ToolCallArguments,
    ToolCallEnd,
    ToolCallStart,
    ToolCallUnfinished,
)
from .engine.spec import Act, FormatSpec, Region, combine, rules
from .errors import (
    FormatError,
    MalformedOutputError,
    RequestError,
    StateError,
    StreamError,
    TemplateError,
    ToolSchemaError,
    TrisectError,
)
from .formats import format_from_toml, load_format, register_format
from .many import parse_many
from .message import Delta, Message, MessageBuilder, StreamParser, ToolCall, ToolCallDelta, UnfinishedCall
from .parser import Parser, formats

__version__ = "0.1.0"

__all__ = [
    "Act",
    "ContentText",
    "Delta",
    "Detection",
    "Event",
    "FormatError",
    "FormatSpec",
    "MalformedOutputError",
    "Message",
    "MessageBuilder",
    "Parser",
    "ReasoningEnd",
    "ReasoningText",
    "Region",
    "RequestError",
    "StateError",
    "StreamError",
    "StreamParser",
    "TemplateError",
    "ToolCall",
    "ToolCallAborted",
    "ToolCallArguments",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolCallUnfinished",
    "ToolSchemaError",
    "TrisectError",
    "UnfinishedCall",
    "combine",
    "detect",
    "format_from_toml",
    "formats",
    "load_format",
    "parse_many",
    "register_format",
    "rules",
]
