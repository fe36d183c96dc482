"""A chat-completions request body → a ``Plan``: what to render, what to ask the engine, how to
parse and answer. Every field is checked here, once, before any engine is called
(``fields.check_fields`` for the table, then each value's type and range), so a bad request is
a 400 naming its parameter and never a failure mid-stream.

Template variables follow vLLM (``ChatCompletionRequest.build_chat_params``): the request's
``chat_template_kwargs``, overridden by ``add_generation_prompt``, ``continue_final_message``,
``documents`` and ``reasoning_effort`` when set, and ``enable_thinking = reasoning_effort !=
"none"`` when an effort is given and the kwargs do not set ``enable_thinking``. The parser sees
the same kwargs, so its initial state (thinking on or off) matches the prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import APIError
from .messages import history_tool_calls, template_messages
from .request_fields import CONSTRAINING, check_fields
from .upstream.sampling import SAMPLING

MAX_N = 128
MAX_TOP_LOGPROBS = 20


@dataclass
class Plan:
    model: str
    messages: list[dict[str, Any]]
    template_kwargs: dict[str, Any]  # tools, documents, add_generation_prompt, continue_final_message, kwargs
    parser_options: dict[str, Any]  # request options of trisect's parser
    stream: bool = False
    include_usage: bool = False
    continuous_usage: bool = False
    n: int = 1
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    sampling: dict[str, Any] = field(default_factory=dict)
    logprobs: int | None = None  # alternatives per token (0: only the sampled token's logprob)
    response_format: dict[str, Any] | None = None  # {"type": "json_schema", "schema": …} / json_object
    return_token_ids: bool = False


def _number(body: Mapping[str, Any], name: str, lo: float | None = None, hi: float | None = None) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise APIError(f"{name} must be a number", param=name)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise APIError(f"{name} must be between {lo} and {hi}", param=name)
    return value


def _integer(body: Mapping[str, Any], name: str, lo: int | None = None, hi: int | None = None) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise APIError(f"{name} must be an integer", param=name)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bound = f"at least {lo}" if hi is None else f"between {lo} and {hi}"
        raise APIError(f"{name} must be {bound}", param=name)
    return value


def _boolean(body: Mapping[str, Any], name: str, default: bool) -> bool:
    value = body.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise APIError(f"{name} must be true or false", param=name)
    return value


def _object(body: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = body.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise APIError(f"{name} must be an object", param=name)
    return dict(value)


def _stop(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return tuple(s for s in value if s)
    raise APIError("stop must be a string or a list of strings", param="stop")


def _tools(value: Any) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise APIError("tools must be a list", param="tools")
    for i, tool in enumerate(value):
        if not isinstance(tool, Mapping) or tool.get("type", "function") != "function":
            raise APIError(f"tools[{i}]: only tools of type 'function' are supported", param=f"tools[{i}]")
        if not isinstance(tool.get("function"), Mapping) or not isinstance(tool["function"].get("name"), str):
            raise APIError(f"tools[{i}].function.name is required", param=f"tools[{i}].function")
    return [dict(t) for t in value] or None


def _response_format(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise APIError("response_format must be an object", param="response_format")
    kind = value.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object", "schema": {"type": "object"}}
    if kind == "json_schema":
        spec = value.get("json_schema")
        if not isinstance(spec, Mapping) or not isinstance(spec.get("schema", {}), Mapping):
            raise APIError("response_format.json_schema must be an object with a schema", param="response_format")
        return {"type": "json_schema", "schema": dict(spec.get("schema") or {"type": "object"})}
    raise APIError(
        f"response_format type {kind!r} is not supported (text, json_object, json_schema)", param="response_format"
    )


def chat_plan(
    body: Any,
    *,
    kind: str,
    content_format: str = "string",
    developer_role: bool = True,
    default_model: str = "",
) -> Plan:
    """Validate a chat-completions body for an upstream of ``kind`` (``APIError`` on bad input)."""
    if not isinstance(body, Mapping):
        raise APIError("the request body must be a JSON object")
    check_fields(body, kind)
    model = body.get("model") or default_model
    if not isinstance(model, str):
        raise APIError("model must be a string", param="model")
    stream = _boolean(body, "stream", False)
    options = _object(body, "stream_options")
    if options and not stream:
        raise APIError("stream_options can only be set when stream is true", param="stream_options")
    unknown = set(options) - {"include_usage", "continuous_usage_stats"}
    if unknown:
        raise APIError(f"unknown stream_options: {', '.join(sorted(unknown))}", param="stream_options")
    tools = _tools(body.get("tools"))
    kwargs = _object(body, "chat_template_kwargs")
    for reserved in ("chat_template", "tokenize"):
        if reserved in kwargs:
            raise APIError(f"chat_template_kwargs must not set {reserved}", param="chat_template_kwargs")
    effort = body.get("reasoning_effort")
    if effort is not None and not isinstance(effort, str):
        raise APIError("reasoning_effort must be a string", param="reasoning_effort")
    documents = body.get("documents")
    if documents is not None and not (isinstance(documents, list) and all(isinstance(d, Mapping) for d in documents)):
        raise APIError("documents must be a list of objects", param="documents")
    template_kwargs = dict(kwargs)
    template_kwargs["add_generation_prompt"] = _boolean(body, "add_generation_prompt", True)
    template_kwargs["continue_final_message"] = _boolean(body, "continue_final_message", False)
    if template_kwargs["add_generation_prompt"] and template_kwargs["continue_final_message"]:
        if "add_generation_prompt" in body and body["add_generation_prompt"] is not None:
            raise APIError(
                "add_generation_prompt and continue_final_message cannot both be true", param="continue_final_message"
            )
        template_kwargs["add_generation_prompt"] = False  # continuing the final message implies no new turn
    if documents is not None:
        template_kwargs["documents"] = documents
    if effort is not None:
        template_kwargs["reasoning_effort"] = effort
        if "enable_thinking" not in kwargs:
            template_kwargs["enable_thinking"] = effort != "none"
    template_kwargs["tools"] = tools
    messages = template_messages(body.get("messages"), content_format=content_format, developer_role=developer_role)
    parser_kwargs = {k: v for k, v in template_kwargs.items() if k not in ("tools", "documents")}
    parser_options: dict[str, Any] = {
        "tools": tools,
        "chat_template_kwargs": parser_kwargs,
        "include_reasoning": _boolean(body, "include_reasoning", True),
        "parallel_tool_calls": _boolean(body, "parallel_tool_calls", True),
        "history_tool_calls": history_tool_calls(messages),
    }
    if effort is not None:
        parser_options["reasoning_effort"] = effort
    tool_choice = body.get("tool_choice")
    if tool_choice is not None:
        parser_options["tool_choice"] = tool_choice
        constrained = tool_choice == "required" or isinstance(tool_choice, Mapping)
        if constrained and kind not in CONSTRAINING:
            raise APIError(
                f"tool_choice {tool_choice!r} needs a grammar, which the {kind} upstream cannot take",
                param="tool_choice",
            )
    response_format = _response_format(body.get("response_format"))
    if response_format is not None and tools and tool_choice not in (None, "none", "auto"):
        raise APIError("response_format cannot be combined with a forced tool_choice", param="response_format")
    logprobs = None
    if _boolean(body, "logprobs", False):
        logprobs = _integer(body, "top_logprobs", 0, MAX_TOP_LOGPROBS) or 0
    elif body.get("top_logprobs"):
        raise APIError("top_logprobs needs logprobs: true", param="top_logprobs")
    max_tokens = _integer(body, "max_completion_tokens", 1)
    if max_tokens is None:
        max_tokens = _integer(body, "max_tokens", 1)
    seed = _integer(body, "seed")
    sampling: dict[str, Any] = {}
    for name in SAMPLING:
        if body.get(name) is not None:
            sampling[name] = body[name]
    for name in ("presence_penalty", "frequency_penalty"):
        _number(body, name, -2.0, 2.0)
    _number(body, "top_k")
    _number(body, "min_p", 0.0, 1.0)
    _number(body, "repetition_penalty", 0.0)
    if "logit_bias" in sampling and not isinstance(sampling["logit_bias"], Mapping):
        raise APIError("logit_bias must be an object of token id -> bias", param="logit_bias")
    return Plan(
        model=model,
        messages=messages,
        template_kwargs=template_kwargs,
        parser_options=parser_options,
        stream=stream,
        include_usage=bool(options.get("include_usage")),
        continuous_usage=bool(options.get("continuous_usage_stats")),
        n=_integer(body, "n", 1, MAX_N) or 1,
        max_tokens=max_tokens,
        stop=_stop(body.get("stop")),
        seed=seed,
        temperature=_number(body, "temperature", 0.0, 2.0),
        top_p=_number(body, "top_p", 0.0, 1.0),
        sampling=sampling,
        logprobs=logprobs,
        response_format=response_format,
        return_token_ids=_boolean(body, "return_token_ids", False),
    )
