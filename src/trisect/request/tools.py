"""Request shaping that every shell shares: tool definitions as they arrive, the history's
tool calls.

* ``openai_tools(tools)``: tool definitions in any of the shapes clients send (OpenAI chat
  ``{"type": "function", "function": {…}}``, Responses' flat ``{"type": "function", "name": …,
  "parameters": …}``, or pydantic models of either, as the engines hand them) → OpenAI chat
  dicts, the shape ``Parser.request(tools=…)`` and the grammars read. Tools of another type
  (an engine's built-in tools) are left out, or with ``strict=True`` are a ``ToolSchemaError``
  (so is a function tool without a name).
* ``history_tool_calls(messages)``: how many tool calls the history's assistant turns made
  (Kimi-style call ids number on from it).

Cost: O(tools) and O(messages); no copies of schemas beyond the top-level dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import RequestError, ToolSchemaError

_FLAT_KEYS = ("name", "description", "parameters", "strict")


def openai_tools(tools: Sequence[Any] | None, *, strict: bool = False) -> list[dict[str, Any]] | None:
    """OpenAI chat tool dicts for ``tools`` (``None`` when there are none)."""
    if tools is None:
        return None
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        raise RequestError("tools must be a list")
    out: list[dict[str, Any]] = []
    for tool in tools:
        data = tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else tool
        if not isinstance(data, Mapping) or data.get("type", "function") != "function":
            if strict:
                kind = data.get("type") if isinstance(data, Mapping) else type(data).__name__
                raise ToolSchemaError(f"only tools of type 'function' are supported, not {kind!r}")
            continue
        if "function" not in data and "name" in data:  # Responses-style: the function's fields at the top
            data = {"type": "function", "function": {k: data[k] for k in _FLAT_KEYS if data.get(k) is not None}}
        function = data.get("function")
        if strict and not (isinstance(function, Mapping) and isinstance(function.get("name"), str)):
            raise ToolSchemaError("function.name is required")
        out.append(dict(data))
    return out or None


def history_tool_calls(messages: Any) -> int:
    """Tool calls made by the assistant turns of a chat ``messages`` list (anything else: 0)."""
    count = 0
    for message in messages if isinstance(messages, Sequence) else ():
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            count += len(message.get("tool_calls") or ())
    return count
