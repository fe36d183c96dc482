"""An Anthropic Messages request → the chat-completions body the server already serves.

Rendering, grammars and parsing are then exactly the chat path's. Every request field is in
``FIELDS`` with what becomes of it (``docs/serve.md`` lists them); a field that is not there is
a 400, as for chat. What an engine accepts follows vLLM 0.33's ``/v1/messages``:

* ``system`` (a string or text blocks) → one system message first; ``messages`` of role
  ``user`` / ``assistant`` (and ``system``, as vLLM takes it) with string content or blocks:
  ``text`` → text parts; ``thinking`` → the assistant turn's ``reasoning``;
  ``redacted_thinking`` → dropped (opaque); ``tool_use`` → the turn's ``tool_calls``
  (``input`` as JSON arguments, ``id`` kept); ``tool_result`` in a user turn → a ``tool``
  message (``tool_use_id`` as ``tool_call_id``; string or text-block content), before the
  turn's own text. Images, documents and other blocks are a 400 (the server renders text).
  ``cache_control`` and ``citations`` on a block are accepted and have no effect.
* A final ``assistant`` turn of text is a prefill: the template continues it
  (``continue_final_message``) instead of opening a new turn.
* ``tool_choice``: ``auto`` → ``auto``, ``any`` → ``required``, ``tool`` → the named function,
  ``none`` → ``none`` (the grammars of chat follow); ``disable_parallel_tool_use`` →
  ``parallel_tool_calls: false``. ``tools``: custom tools (``name``, ``description``,
  ``input_schema``, ``strict``); server tools (a ``type`` such as ``web_search_…``) are a 400.
* ``thinking``: ``enabled`` → ``enable_thinking: true`` and ``thinking_budget`` (the template
  variable of templates that read one; the server does not cut reasoning at the budget),
  ``budget_tokens`` at least 1024 and under ``max_tokens`` as Anthropic requires;
  ``disabled`` → ``enable_thinking: false``; ``adaptive`` → the template's default.
  ``chat_template_kwargs`` (vLLM's extension) wins over both.
* ``output_config.effort`` → ``reasoning_effort``; ``output_config.format`` (``json_schema``)
  → ``response_format``.
* ``max_tokens`` (required) → ``max_completion_tokens``; ``stop_sequences`` → ``stop``;
  ``temperature`` (0–1), ``top_p``, ``top_k`` as they are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..body import an_object, integer, mapping, string
from ..errors import APIError

FIELDS: dict[str, tuple[str, str]] = {  # field -> (accepted | mapped | refused, what becomes of it)
    "model": ("mapped", "one of the served names (404 otherwise)"),
    "messages": ("mapped", "user / assistant (/ system) turns; text, thinking, tool_use, tool_result blocks"),
    "system": ("mapped", "a system message first (string or text blocks)"),
    "max_tokens": ("mapped", "required; max_completion_tokens"),
    "stop_sequences": ("mapped", "stop; the matched one is the answer's stop_sequence"),
    "stream": ("mapped", "Anthropic's event stream"),
    "temperature": ("mapped", "0 to 1"),
    "top_p": ("mapped", ""),
    "top_k": ("mapped", "on engines that take it"),
    "tools": ("mapped", "custom tools as functions; server tools are a 400"),
    "tool_choice": ("mapped", "auto / any (required) / tool (named) / none; disable_parallel_tool_use"),
    "thinking": ("mapped", "enabled / disabled / adaptive → enable_thinking, thinking_budget"),
    "output_config": ("mapped", "effort → reasoning_effort; format (json_schema) → response_format"),
    "chat_template_kwargs": ("mapped", "vLLM's extension: template variables, over thinking's"),
    "metadata": ("accepted", "no effect (user_id)"),
    "service_tier": ("accepted", "no effect"),
    "cache_control": ("accepted", "no effect (engines cache prefixes themselves)"),
    "inference_geo": ("accepted", "no effect"),
    "speed": ("accepted", "no effect"),
    "container": ("refused", "no code-execution containers"),
    "mcp_servers": ("refused", "no MCP connector"),
    "context_management": ("refused", "the server keeps no state"),
    "compaction": ("refused", "the server keeps no state"),
    "thread": ("refused", "the server keeps no state (the SDK's tool runner: pass thread=False)"),
}
THINKING_MIN_BUDGET = 1024


def markdown_table() -> str:
    """``FIELDS`` as the table ``docs/serve.md`` shows (a test keeps the two equal)."""
    rows = ["| field | | what becomes of it |", "|---|---|---|"]
    rows += [f"| `{name}` | {how} | {note} |" for name, (how, note) in FIELDS.items()]
    return "\n".join(rows)  # Anthropic's minimum budget_tokens


def chat_body(body: Any, *, count_only: bool = False) -> dict[str, Any]:
    """The chat-completions body for a Messages (or, ``count_only``, a count_tokens) body."""
    body = an_object(body)
    for name, value in body.items():
        how = FIELDS.get(name, ("unknown", ""))[0]
        if how == "unknown":
            raise APIError(f"{name}: Extra inputs are not permitted", param=name)
        if how == "refused" and value is not None and value is not False:
            raise APIError(f"{name} is not supported: {FIELDS[name][1]}", param=name)
    model = string(body, "model")
    if not model:
        raise APIError("model: Field required", param="model")
    chat: dict[str, Any] = {"model": model, "messages": _messages(body)}
    if not count_only:
        max_tokens = integer(body, "max_tokens", 1)
        if max_tokens is None:
            raise APIError("max_tokens: Field required", param="max_tokens")
        chat["max_completion_tokens"] = max_tokens
        if body.get("stream"):
            chat["stream"] = True
        if body.get("stop_sequences") is not None:
            stop = body["stop_sequences"]
            if not (isinstance(stop, list) and all(isinstance(s, str) for s in stop)):
                raise APIError("stop_sequences must be a list of strings", param="stop_sequences")
            chat["stop"] = stop
        for name in ("temperature", "top_p", "top_k"):
            if body.get(name) is not None:
                chat[name] = body[name]
        temperature = body.get("temperature")
        if isinstance(temperature, (int, float)) and not 0 <= temperature <= 1:
            raise APIError("temperature must be between 0 and 1", param="temperature")
    tools = _tools(body.get("tools"))
    if tools:
        chat["tools"] = tools
    _tool_choice(body.get("tool_choice"), chat)
    kwargs = _thinking(body, chat.get("max_completion_tokens"))
    kwargs.update(mapping(body, "chat_template_kwargs"))
    if kwargs:
        chat["chat_template_kwargs"] = kwargs
    _output_config(mapping(body, "output_config"), chat)
    last = chat["messages"][-1]
    if last["role"] == "assistant" and not last.get("tool_calls") and last.get("content"):
        chat["continue_final_message"] = True  # a prefill: the answer continues this turn
        chat["add_generation_prompt"] = False
    return chat


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        out.append({"role": "system", "content": _texts(system, "system")})
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise APIError("messages must be a non-empty list", param="messages")
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant", "system"):
            raise APIError(f"{where} must be an object with role user or assistant", param=where)
        role = message["role"]
        content = message.get("content")
        if isinstance(content, str):
            out.append({"role": role, "content": content})
        elif role == "system":
            out.append({"role": "system", "content": _texts(content, f"{where}.content")})
        else:
            out += _turn(role, content, f"{where}.content")
    return out


def _blocks(content: Any, where: str) -> list[Mapping[str, Any]]:
    if not isinstance(content, list) or not all(isinstance(b, Mapping) for b in content):
        raise APIError(f"{where} must be a string or a list of content blocks", param=where)
    return content


def _texts(content: Any, where: str) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    parts = []
    for j, block in enumerate(_blocks(content, where)):
        if block.get("type") != "text" or not isinstance(block.get("text"), str):
            raise APIError(f"{where}[{j}]: only text blocks are supported here", param=f"{where}[{j}]")
        parts.append({"type": "text", "text": block["text"]})
    return parts


def _turn(role: str, content: Any, where: str) -> list[dict[str, Any]]:
    """One user or assistant turn of blocks → its chat messages (tool results first)."""
    results: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    reasoning: list[str] = []
    for j, block in enumerate(_blocks(content, where)):
        at = f"{where}[{j}]"
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        elif kind == "thinking" and role == "assistant" and isinstance(block.get("thinking"), str):
            reasoning.append(block["thinking"])
        elif kind == "redacted_thinking" and role == "assistant":
            continue  # opaque: nothing a template could render
        elif kind == "tool_use" and role == "assistant":
            if not isinstance(block.get("name"), str) or not isinstance(block.get("input", {}), Mapping):
                raise APIError(f"{at}: a tool_use block needs a name and an input object", param=at)
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            calls.append(
                {"id": block.get("id"), "type": "function", "function": {"name": block["name"], "arguments": arguments}}
            )
        elif kind == "tool_result" and role == "user":
            result = block.get("content")
            text = "" if result is None else _texts(result, f"{at}.content")
            if isinstance(text, list):
                text = "\n".join(p["text"] for p in text)
            results.append({"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": text})
        else:
            raise APIError(
                f"{at}: content blocks of type {kind!r} are not supported in a {role} turn (text only)", param=at
            )
    out = list(results)
    if role == "user" and not parts:
        return out
    message: dict[str, Any] = {"role": role, "content": parts or None}
    if calls:
        message["tool_calls"] = calls
    if reasoning:
        message["reasoning"] = "".join(reasoning)
    out.append(message)
    return out


def _tools(tools: Any) -> list[dict[str, Any]] | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise APIError("tools must be a list", param="tools")
    out = []
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, Mapping) or tool.get("type", "custom") not in ("custom", None):
            kind = tool.get("type") if isinstance(tool, Mapping) else None
            raise APIError(f"{where}: only custom tools are supported, not {kind!r}", param=where)
        schema = tool.get("input_schema")
        if not isinstance(tool.get("name"), str) or not isinstance(schema, Mapping):
            raise APIError(f"{where}: a tool needs a name and an input_schema object", param=where)
        function: dict[str, Any] = {"name": tool["name"]}
        if tool.get("description") is not None:
            function["description"] = tool["description"]
        function["parameters"] = dict(schema) if "type" in schema else {**schema, "type": "object"}  # vLLM's default
        if tool.get("strict") is not None:
            function["strict"] = tool["strict"]
        out.append({"type": "function", "function": function})
    return out


def _tool_choice(choice: Any, chat: dict[str, Any]) -> None:
    if choice is None:
        return
    kind = choice.get("type") if isinstance(choice, Mapping) else None
    if kind not in ("auto", "any", "tool", "none"):
        raise APIError("tool_choice.type must be auto, any, tool or none", param="tool_choice")
    if kind == "tool":
        if not isinstance(choice.get("name"), str):
            raise APIError("tool_choice.name is required when type is 'tool'", param="tool_choice.name")
        chat["tool_choice"] = {"type": "function", "function": {"name": choice["name"]}}
    else:
        chat["tool_choice"] = {"auto": "auto", "any": "required", "none": "none"}[kind]
    if choice.get("disable_parallel_tool_use"):
        chat["parallel_tool_calls"] = False


def _thinking(body: Mapping[str, Any], max_tokens: int | None) -> dict[str, Any]:
    thinking = body.get("thinking")
    if thinking is None:
        return {}
    kind = thinking.get("type") if isinstance(thinking, Mapping) else None
    if kind == "disabled":
        return {"enable_thinking": False}
    if kind == "adaptive":
        return {}
    if kind != "enabled":
        raise APIError("thinking.type must be enabled, disabled or adaptive", param="thinking")
    budget = integer(thinking, "budget_tokens", THINKING_MIN_BUDGET)
    if budget is None:
        raise APIError("thinking.budget_tokens: Field required", param="thinking.budget_tokens")
    if max_tokens is not None and budget >= max_tokens:
        raise APIError("thinking.budget_tokens must be less than max_tokens", param="thinking.budget_tokens")
    return {"enable_thinking": True, "thinking_budget": budget}


def _output_config(config: Mapping[str, Any], chat: dict[str, Any]) -> None:
    unknown = set(config) - {"effort", "format"}
    if unknown:
        raise APIError(f"output_config.{sorted(unknown)[0]} is not supported", param="output_config")
    if config.get("effort") is not None:
        chat["reasoning_effort"] = config["effort"]
    fmt = config.get("format")
    if fmt is not None:
        if (
            not isinstance(fmt, Mapping)
            or fmt.get("type") != "json_schema"
            or not isinstance(fmt.get("schema"), Mapping)
        ):
            raise APIError("output_config.format must be {type: json_schema, schema}", param="output_config.format")
        chat["response_format"] = {"type": "json_schema", "json_schema": {"name": "output", "schema": fmt["schema"]}}
