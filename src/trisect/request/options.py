"""Per-request options, validated once before any parsing.

``Request`` holds what ``parse()`` / ``stream()`` accept as keyword arguments. Unknown options
and wrongly typed ones are a ``RequestError`` at once, never a surprise mid-stream.

``tool_choice`` is normalised to ``"none"``, ``"auto"``, ``"required"`` or the name of the forced
function (``Request.forced``); a named choice for a tool not in ``tools``, ``"required"`` or a
named choice without tools, and tools whose schemas cannot be used are errors here, before
any parsing (``choice.py`` holds the checks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..codecs.schema import tool_index
from ..engine.options import StreamOptions
from ..errors import RequestError
from .choice import normalize_tool_choice


@dataclass(frozen=True)
class Request(StreamOptions):
    """A validated request: what the engine reads (``StreamOptions``) plus the request
    semantics applied above it."""

    tools: tuple[Mapping[str, Any], ...] | None = None
    prompt_token_ids: tuple[int, ...] | None = None
    tool_choice: str = "auto"  # "none" | "auto" | "required" | "named"
    forced: str | None = None  # the function a named tool_choice forces
    parallel_tool_calls: bool = True
    include_reasoning: bool = True

    @property
    def constrained(self) -> bool:
        """The output is what a constrained decoder produced (``required`` or a named choice)."""
        return self.tool_choice in ("required", "named")


_OPTIONS = {
    "tools",
    "chat_template_kwargs",
    "reasoning_effort",
    "prompt_text",
    "prompt_token_ids",
    "id_factory",
    "strict",
    "history_tool_calls",
    "tool_choice",
    "parallel_tool_calls",
    "include_reasoning",
}


def make_request(options: Mapping[str, Any]) -> Request:
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise RequestError(f"unknown request option(s): {', '.join(unknown)}")
    tools = options.get("tools")
    kwargs = options.get("chat_template_kwargs") or {}
    if not isinstance(kwargs, Mapping):
        raise RequestError("chat_template_kwargs must be a mapping")
    effort = options.get("reasoning_effort")
    if effort is not None and not isinstance(effort, str):
        raise RequestError("reasoning_effort must be a string")
    prompt_text = options.get("prompt_text")
    if prompt_text is not None and not isinstance(prompt_text, str):
        raise RequestError("prompt_text must be a string")
    prompt_ids = options.get("prompt_token_ids")
    if prompt_ids is not None:
        if isinstance(prompt_ids, (str, bytes)) or not isinstance(prompt_ids, Sequence):
            raise RequestError("prompt_token_ids must be a sequence of integers")
        prompt_ids = tuple(prompt_ids)
        if not all(isinstance(t, int) for t in prompt_ids):
            raise RequestError("prompt_token_ids must be a sequence of integers")
    id_factory = options.get("id_factory")
    if id_factory is not None and not callable(id_factory):
        raise RequestError("id_factory must be callable (index -> id)")
    index = tool_index(tools)
    choice, forced = normalize_tool_choice(options.get("tool_choice"), tools, index)
    for flag in ("parallel_tool_calls", "include_reasoning"):
        if not isinstance(options.get(flag, True), bool):
            raise RequestError(f"{flag} must be true or false")
    return Request(
        tools=tuple(tools) if tools is not None else None,
        tool_index=index,
        chat_template_kwargs=dict(kwargs),
        reasoning_effort=effort,
        prompt_text=prompt_text,
        prompt_token_ids=prompt_ids,
        id_factory=id_factory,
        strict=bool(options.get("strict", False)),
        history_tool_calls=_history_tool_calls(options.get("history_tool_calls", 0)),
        tool_choice=choice,
        forced=forced,
        parallel_tool_calls=options.get("parallel_tool_calls", True),
        include_reasoning=options.get("include_reasoning", True),
    )


def _history_tool_calls(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RequestError("history_tool_calls must be a non-negative integer")
    return value
