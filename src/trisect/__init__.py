"""trisect: raw LLM output -> reasoning, content and tool calls, whole or streamed.

    >>> import trisect
    >>> parser = trisect.Parser(reasoning="qwen3", tools="hermes")
    >>> msg = parser.parse('<think>hi</think>OK<tool_call>{"name": "f", "arguments": {}}</tool_call>')
    >>> msg.reasoning, msg.content, msg.tool_calls[0].name, msg.tool_calls[0].arguments
    ('hi', 'OK', 'f', '{}')
"""

from __future__ import annotations

from ._errors import (
    FormatError,
    MalformedOutputError,
    RequestError,
    StreamError,
    ToolSchemaError,
    TrisectError,
)
from ._events import (
    ContentText,
    Event,
    ReasoningEnd,
    ReasoningText,
    ToolCallAborted,
    ToolCallArguments,
    ToolCallEnd,
    ToolCallStart,
)
from ._message import Delta, Message, MessageBuilder, ToolCall, ToolCallDelta
from ._parser import Parser, formats
from ._spec import Act, FormatSpec, Region, combine, rules
from ._stream import StreamParser

__version__ = "0.1.0"

__all__ = [
    "Act",
    "ContentText",
    "Delta",
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
    "StreamError",
    "StreamParser",
    "ToolCall",
    "ToolCallAborted",
    "ToolCallArguments",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolSchemaError",
    "TrisectError",
    "combine",
    "formats",
    "rules",
]
