"""Per-request options, validated once before any parsing.

``Request`` holds what ``parse()`` / ``stream()`` accept as keyword arguments. Unknown options
and wrongly typed ones are a ``RequestError`` at once, never a surprise mid-stream.

``tool_choice`` is normalised to ``"none"``, ``"auto"``, ``"required"`` or the name of the forced
function (``Request.forced``); a named choice for a tool not in ``tools``, ``"required"`` or a
named choice without tools, and tools whose schemas cannot be used are errors here, before
any parsing (``choice.py`` holds the checks).

Validation is cached by content, because engines and batch jobs send the same tools and options
with every request, as new objects each time: the key is the options' ``marshal`` serialisation
(C speed, exact types: ``True`` is not ``1``), so a new list with the same tools costs one
serialisation and one hash, and the cached ``Request`` is built from a private copy that no
caller can change afterwards. The serialisation also records which objects are shared, so the
same content built another way (one object shared by every tool, a list the caller also holds
elsewhere) may be a second entry: a miss costs one validation, never a wrong result (equal
bytes are equal content). A callable ``id_factory`` is keyed by its identity (the cached request
holds it, so no other function takes its id); options ``marshal`` cannot write otherwise (a
``Mapping`` that is not a ``dict``) skip the request cache; their tools still hit the tool-set
cache. Invalid options are never cached: they raise the same typed errors every time. Both
caches hold at most ``_CACHE_SIZE`` entries (cleared when full).
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..codecs.schema import tool_index
from ..engine.envelope import canonical
from ..engine.stream_options import StreamOptions
from ..errors import RequestError
from .choice import check_tools, normalize_tool_choice


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

    def canonical(self) -> str:
        """The options a stream state is bound to, as one stable text (``StreamParser.to_state``):
        every option but the prompt (``prompt_text`` / ``prompt_token_ids`` only decide where
        the stream starts, which its state carries) and ``id_factory`` (a function: pass the
        same one again)."""
        found = self.__dict__.get("_canonical")
        if found is None:
            bound = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _UNBOUND}
            found = canonical(bound)
            object.__setattr__(self, "_canonical", found)  # frozen: cached once, outside the fields
        return found


_UNBOUND = frozenset({"prompt_text", "prompt_token_ids", "id_factory", "tool_index"})


REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max", "no_think")
"""The accepted ``reasoning_effort`` values: the OpenAI API's (``none``, ``minimal``, ``low``,
``medium``, ``high``, ``xhigh``, ``max``: the ``openai`` package's ``ReasoningEffort``; gpt-oss
takes ``low`` / ``medium`` / ``high``) and the formats' own off switches (``no_think``: Tencent HY
v3's default; DeepSeek V4 turns thinking off at ``none``)."""

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
    "call_text_limit",
}


ToolSet = tuple[tuple[Mapping[str, Any], ...] | None, dict[str, Mapping[str, Any]]]

_CACHE_SIZE = 128
_REQUESTS: dict[bytes, Request] = {}
_TOOL_SETS: dict[bytes, ToolSet] = {}


def _content_key(value: Any) -> bytes | None:
    """``value``'s content as bytes, or ``None`` when ``marshal`` cannot write it."""
    try:
        return marshal.dumps(value)
    except ValueError:
        return None


def _private_copy(key: bytes) -> Any:
    """A fresh copy of the content behind ``key``, or ``None`` when the copy would not have the
    original's types (``marshal`` writes any buffer object, ``bytearray`` or an array, as bytes)."""
    copy = marshal.loads(key)
    todo = [copy]
    while todo:
        value = todo.pop()
        kind = type(value)
        if kind is dict:
            todo.extend(value.keys())
            todo.extend(value.values())
        elif kind is list or kind is tuple or kind is set or kind is frozenset:
            todo.extend(value)
        elif kind is bytes:
            return None
    return copy


def _remember(cache: dict[bytes, Any], key: bytes, value: Any) -> None:
    if len(cache) >= _CACHE_SIZE:
        cache.clear()  # atomic, unlike evicting one entry while another thread adds one
    cache[key] = value


def make_request(options: Mapping[str, Any]) -> Request:
    """The validated ``Request`` for ``options`` (cached by content, see the module docstring)."""
    factory = options.get("id_factory") if isinstance(options, dict) else None
    rest = options
    if factory is not None:  # a function: the rest is the content, the function's identity joins the key
        rest = {k: v for k, v in options.items() if k != "id_factory"}
    key = _content_key(rest)
    if key is not None:
        cache_key = key if factory is None else key + b"\0id_factory" + id(factory).to_bytes(8, "little", signed=True)
        request = _REQUESTS.get(cache_key)
        if request is not None and request.id_factory is factory:
            return request
        copy = _private_copy(key)
        if copy is not None:
            if factory is not None:
                copy["id_factory"] = factory  # the cached request holds it: its id stays unique
            request = _build(copy)
            _remember(_REQUESTS, cache_key, request)
            return request
    return _build(options)


def tool_set(tools: Any, strict: bool = False) -> ToolSet:
    """Validated tools (``ToolSchemaError`` otherwise) and their index, name -> parameters
    schema; cached by content like requests. Only ``strict`` rejects a type name outside JSON
    Schema (``request/choice.py``)."""
    if tools is None:
        return None, {}
    key = _content_key(tools)
    if key is not None:
        cache_key = key + b"\0strict" if strict else key
        hit = _TOOL_SETS.get(cache_key)
        if hit is not None:
            return hit
        copy = _private_copy(key)
        if copy is not None:
            validated = _check_tools(copy, strict)
            _remember(_TOOL_SETS, cache_key, validated)
            return validated
    return _check_tools(tools, strict)


def _check_tools(tools: Any, strict: bool) -> ToolSet:
    index = tool_index(tools)
    check_tools(tools, types=strict)
    return tuple(tools), index


def _build(options: Mapping[str, Any]) -> Request:
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise RequestError(f"unknown request option(s): {', '.join(unknown)}")
    tools = options.get("tools")
    kwargs = options.get("chat_template_kwargs") or {}
    if not isinstance(kwargs, Mapping):
        raise RequestError("chat_template_kwargs must be a mapping")
    effort = options.get("reasoning_effort")
    if effort is not None and effort not in REASONING_EFFORTS:
        raise RequestError(f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}, not {effort!r}")
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
    strict = options.get("strict", False)
    checked, index = tool_set(tools, bool(strict))
    choice, forced = normalize_tool_choice(options.get("tool_choice"), None, index)  # tools checked above
    for flag in ("parallel_tool_calls", "include_reasoning"):
        if not isinstance(options.get(flag, True), bool):
            raise RequestError(f"{flag} must be true or false")
    return Request(
        tools=checked,
        tool_index=index,
        chat_template_kwargs=dict(kwargs),
        reasoning_effort=effort,
        prompt_text=prompt_text,
        prompt_token_ids=prompt_ids,
        id_factory=id_factory,
        strict=bool(strict),
        history_tool_calls=_history_tool_calls(options.get("history_tool_calls", 0)),
        call_text_limit=_call_text_limit(options.get("call_text_limit", 65536)),
        tool_choice=choice,
        forced=forced,
        parallel_tool_calls=options.get("parallel_tool_calls", True),
        include_reasoning=options.get("include_reasoning", True),
    )


def _call_text_limit(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RequestError("call_text_limit must be a non-negative integer (characters)")
    return value


def _history_tool_calls(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RequestError("history_tool_calls must be a non-negative integer")
    return value
