"""The engine: a ``FormatSpec`` compiled once, run per request by one ``EventStream``.

Imports only the standard library and ``trisect.errors``: nothing of the request, message,
OpenAI, grammar or shell layers. Its one output is typed events (``events``).
"""

from __future__ import annotations

from .codec import CallCodec, CodecFactory
from .compile import CompiledFormat, compile_format
from .events import (
    ContentText,
    Event,
    ReasoningEnd,
    ReasoningText,
    ToolCallAborted,
    ToolCallArguments,
    ToolCallEnd,
    ToolCallStart,
)
from .options import StreamOptions, ToolIndex
from .spec import ARGS_DONE, ARGS_FAILED, CONTENT, REASONING, Act, FormatSpec, Region, Rule, combine, rules
from .stream import EventStream
from .tokenizer import Vocab

__all__ = [
    "ARGS_DONE",
    "ARGS_FAILED",
    "CONTENT",
    "REASONING",
    "Act",
    "CallCodec",
    "CodecFactory",
    "CompiledFormat",
    "ContentText",
    "Event",
    "EventStream",
    "FormatSpec",
    "ReasoningEnd",
    "ReasoningText",
    "Region",
    "Rule",
    "StreamOptions",
    "ToolCallAborted",
    "ToolCallArguments",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolIndex",
    "Vocab",
    "combine",
    "compile_format",
    "rules",
]
