"""OpenAI chat messages → the variables a chat template reads, as vLLM hands them to
``apply_chat_template`` (``vllm/renderers/chat_utils/chat_message.py``, ``renderers/hf.py``).

* Content: a string, or a list of parts of which the text ones (``text``, ``input_text``,
  ``output_text``, ``refusal``, ``thinking``) count; with the ``string`` content format they are
  joined with ``"\\n"`` into one string (``None`` content is ``""``), with the ``openai`` format
  (templates that loop over ``message.content``) the message keeps a list of
  ``{"type": "text", "text": …}``. Any other part (images, audio, files) is a 400: the server
  renders text only.
* Assistant messages keep ``tool_calls``, with each ``function.arguments`` JSON-decoded to an
  object (what templates expect; a string that is not a JSON object becomes ``{}``, as vLLM
  does, so that a bad turn in the history does not fail every later request); an empty
  ``tool_calls`` list is dropped. ``reasoning`` or ``reasoning_content`` in history is passed as
  both ``reasoning`` and ``reasoning_content``.
* Tool messages keep ``tool_call_id`` (their content, if a list of text parts, is joined).
* ``name`` is kept. ``developer`` messages become ``system`` when the template never mentions
  the developer role, and several system messages are then merged into the first.
* Roles other than system, developer, user, assistant and tool are a 400.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import APIError

TEXT_PARTS = frozenset({"text", "input_text", "output_text", "refusal", "thinking"})
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


def template_messages(
    messages: Any, *, content_format: str = "string", developer_role: bool = True
) -> list[dict[str, Any]]:
    """The template's ``messages`` for an OpenAI ``messages`` list (``APIError`` naming the
    offending ``messages[i]…`` on bad input)."""
    if not isinstance(messages, list) or not messages:
        raise APIError("messages must be a non-empty list", param="messages")
    out = [_message(m, i, content_format) for i, m in enumerate(messages)]
    if not developer_role and any(m["role"] == "developer" for m in out):
        out = _developer_as_system(out)
    return out


def _message(message: Any, i: int, content_format: str) -> dict[str, Any]:
    where = f"messages[{i}]"
    if not isinstance(message, Mapping):
        raise APIError(f"{where} must be an object", param=where)
    role = message.get("role")
    if role not in ROLES:
        raise APIError(f"{where}.role must be one of {', '.join(sorted(ROLES))}, not {role!r}", param=f"{where}.role")
    texts = _texts(message.get("content"), f"{where}.content")
    out: dict[str, Any] = {"role": role}
    if content_format == "openai" and role != "tool":
        out["content"] = [{"type": "text", "text": t} for t in texts]
    else:
        out["content"] = "\n".join(texts)
    name = message.get("name")
    if isinstance(name, str):
        out["name"] = name
    if role == "assistant":
        calls = message.get("tool_calls")
        if calls:
            out["tool_calls"] = [_tool_call(c, f"{where}.tool_calls[{j}]") for j, c in enumerate(calls)]
        reasoning = message.get("reasoning")
        if reasoning is None:
            reasoning = message.get("reasoning_content")
        if reasoning is not None:
            if not isinstance(reasoning, str):
                raise APIError(f"{where}.reasoning must be a string", param=f"{where}.reasoning")
            out["reasoning"] = out["reasoning_content"] = reasoning
    elif role == "tool":
        call_id = message.get("tool_call_id")
        if call_id is not None:
            out["tool_call_id"] = call_id
    return out


def _texts(content: Any, where: str) -> list[str]:
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise APIError(f"{where} must be a string or a list of content parts", param=where)
    texts = []
    for j, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
            continue
        kind = part.get("type", "text") if isinstance(part, Mapping) else None
        if kind not in TEXT_PARTS:
            raise APIError(
                f"{where}[{j}]: content parts of type {kind!r} are not supported (text only)", param=f"{where}[{j}]"
            )
        text = part.get(kind) if kind in ("refusal", "thinking") and kind in part else part.get("text")
        if not isinstance(text, str):
            raise APIError(f"{where}[{j}] has no text", param=f"{where}[{j}]")
        texts.append(text)
    return texts


def _tool_call(call: Any, where: str) -> dict[str, Any]:
    if not isinstance(call, Mapping):
        raise APIError(f"{where} must be an object", param=where)
    function = call.get("function")
    if call.get("type", "function") != "function" or not isinstance(function, Mapping):
        raise APIError(f"{where}: only tool calls of type 'function' are supported", param=where)
    arguments = function.get("arguments")
    if isinstance(arguments, str) and arguments:
        try:
            decoded = json.loads(arguments)
        except ValueError:
            decoded = None
        arguments = decoded if isinstance(decoded, dict) else {}
    elif not isinstance(arguments, Mapping):
        arguments = {}
    return {**call, "type": "function", "function": {**function, "arguments": dict(arguments)}}


def _developer_as_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    converted = [{**m, "role": "system"} if m["role"] == "developer" else m for m in messages]
    systems = [i for i, m in enumerate(converted) if m["role"] == "system"]
    if len(systems) < 2 and (not systems or systems[0] == 0):
        return converted
    texts = []
    for i in systems:
        content = converted[i]["content"]
        text = "\n".join(p["text"] for p in content) if isinstance(content, list) else content
        if text:
            texts.append(text)
    first = converted[systems[0]]
    merged_content: Any = "\n\n".join(texts)
    if isinstance(first["content"], list):
        merged_content = [{"type": "text", "text": merged_content}]
    rest = [m for m in converted if m["role"] != "system"]
    return [{"role": "system", "content": merged_content}, *rest]
