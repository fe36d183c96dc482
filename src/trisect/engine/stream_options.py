"""What the engine reads of a request: a small frozen object, built once per request.

The request layer (``trisect.request``) validates the caller's options and builds a
``Request``, a subclass of ``StreamOptions`` with the request semantics the engine never sees
(``tool_choice``, ``parallel_tool_calls``, ``include_reasoning``, …). Format functions
(``FormatSpec.initial``, ``call_id``, ``reasoning_fallback``) and codecs receive these fields
only, so the engine and the formats import nothing above themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..native import mypyc_attr

_TRUE = (True, "true", "True", 1)

ToolIndex = Mapping[str, Mapping[str, Any]]
"""Function name -> its ``parameters`` JSON schema (the request's tools)."""


@mypyc_attr(allow_interpreted_subclasses=True)  # request.Request extends it
@dataclass(frozen=True)
class StreamOptions:
    """The per-request options the engine and the formats read."""

    tool_index: ToolIndex = field(default_factory=dict)
    chat_template_kwargs: Mapping[str, Any] = field(default_factory=dict)
    reasoning_effort: str | None = None
    prompt_text: str | None = None
    id_factory: Callable[[int], str] | None = None
    strict: bool = False
    # tool calls already in the conversation history (Kimi-K2 numbers its call ids on from it)
    history_tool_calls: int = 0
    # characters of a call's raw text kept once it is streamed (``engine.call``): the bound of an
    # unfinished call's text, and of the memory a long argument costs
    call_text_limit: int = 65536

    def switch(self, *names: str, default: bool) -> bool:
        """A boolean chat-template switch (``thinking``, ``enable_thinking``), first given wins."""
        for name in names:
            if name in self.chat_template_kwargs:
                value = self.chat_template_kwargs[name]
                if value is None:
                    continue
                return value in _TRUE
        return default


DEFAULT_OPTIONS = StreamOptions()
