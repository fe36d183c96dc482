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

from ..errors import RequestError
from ..request.tools import history_tool_calls, openai_tools
from .body import an_object, boolean, integer, mapping, number, stop, string
from .errors import APIError
from .messages import template_messages
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


def function_tools(value: Any) -> list[dict[str, Any]] | None:
    """A ``tools`` field (chat or Responses shapes) as chat tools; a 400 naming ``tools[i]``."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise APIError("tools must be a list", param="tools")
    out: list[dict[str, Any]] = []
    for i, tool in enumerate(value):
        try:
            out += openai_tools([tool], strict=True) or ()
        except RequestError as exc:
            raise APIError(f"tools[{i}]: {exc}", param=f"tools[{i}]") from exc
    return out or None


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
    body = an_object(body)
    check_fields(body, kind)
    model = body.get("model") or default_model
    if not isinstance(model, str):
        raise APIError("model must be a string", param="model")
    stream = boolean(body, "stream", False)
    options = _stream_options(body, stream)
    tools = function_tools(body.get("tools"))
    template_kwargs = _template_kwargs(body, tools)
    messages = template_messages(body.get("messages"), content_format=content_format, developer_role=developer_role)
    parser_options = _parser_options(body, template_kwargs, tools, messages, kind)
    response_format = _response_format(body.get("response_format"))
    if response_format is not None and tools and body.get("tool_choice") not in (None, "none", "auto"):
        raise APIError("response_format cannot be combined with a forced tool_choice", param="response_format")
    return Plan(
        model=model,
        messages=messages,
        template_kwargs=template_kwargs,
        parser_options=parser_options,
        stream=stream,
        include_usage=bool(options.get("include_usage")),
        continuous_usage=bool(options.get("continuous_usage_stats")),
        n=integer(body, "n", 1, MAX_N) or 1,
        response_format=response_format,
        return_token_ids=boolean(body, "return_token_ids", False),
        **sampling_fields(body),
    )


def _stream_options(body: Mapping[str, Any], stream: bool) -> dict[str, Any]:
    options = mapping(body, "stream_options")
    if options and not stream:
        raise APIError("stream_options can only be set when stream is true", param="stream_options")
    unknown = set(options) - {"include_usage", "continuous_usage_stats"}
    if unknown:
        raise APIError(f"unknown stream_options: {', '.join(sorted(unknown))}", param="stream_options")
    return options


def _template_kwargs(body: Mapping[str, Any], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The template's variables besides ``messages`` (vLLM's precedence: the module docstring)."""
    kwargs = mapping(body, "chat_template_kwargs")
    for reserved in ("chat_template", "tokenize"):
        if reserved in kwargs:
            raise APIError(f"chat_template_kwargs must not set {reserved}", param="chat_template_kwargs")
    effort = string(body, "reasoning_effort")
    documents = body.get("documents")
    if documents is not None and not (isinstance(documents, list) and all(isinstance(d, Mapping) for d in documents)):
        raise APIError("documents must be a list of objects", param="documents")
    out = dict(kwargs)
    out["add_generation_prompt"] = boolean(body, "add_generation_prompt", True)
    out["continue_final_message"] = boolean(body, "continue_final_message", False)
    if out["add_generation_prompt"] and out["continue_final_message"]:
        if body.get("add_generation_prompt") is not None:
            raise APIError(
                "add_generation_prompt and continue_final_message cannot both be true", param="continue_final_message"
            )
        out["add_generation_prompt"] = False  # continuing the final message implies no new turn
    if documents is not None:
        out["documents"] = documents
    if effort is not None:
        out["reasoning_effort"] = effort
        if "enable_thinking" not in kwargs:
            out["enable_thinking"] = effort != "none"
    out["tools"] = tools
    return out


def _parser_options(
    body: Mapping[str, Any],
    template_kwargs: Mapping[str, Any],
    tools: list[dict[str, Any]] | None,
    messages: list[dict[str, Any]],
    kind: str,
) -> dict[str, Any]:
    """trisect's request options: the parser sees the template's switches, so its initial
    state matches the prompt."""
    options: dict[str, Any] = {
        "tools": tools,
        "chat_template_kwargs": {k: v for k, v in template_kwargs.items() if k not in ("tools", "documents")},
        "include_reasoning": boolean(body, "include_reasoning", True),
        "parallel_tool_calls": boolean(body, "parallel_tool_calls", True),
        "history_tool_calls": history_tool_calls(messages),
    }
    if template_kwargs.get("reasoning_effort") is not None:
        options["reasoning_effort"] = template_kwargs["reasoning_effort"]
    tool_choice = body.get("tool_choice")
    if tool_choice is not None:
        options["tool_choice"] = tool_choice
        constrained = tool_choice == "required" or isinstance(tool_choice, Mapping)
        if constrained and kind not in CONSTRAINING:
            raise APIError(
                f"tool_choice {tool_choice!r} needs a grammar, which the {kind} upstream cannot take",
                param="tool_choice",
            )
    return options


def sampling_fields(body: Mapping[str, Any]) -> dict[str, Any]:
    """The ``Plan`` fields that go to the engine as sampling parameters (every API's body names
    them as chat completions does, after translation)."""
    logprobs = None
    if boolean(body, "logprobs", False):
        logprobs = integer(body, "top_logprobs", 0, MAX_TOP_LOGPROBS) or 0
    elif body.get("top_logprobs"):
        raise APIError("top_logprobs needs logprobs: true", param="top_logprobs")
    max_tokens = integer(body, "max_completion_tokens", 1)
    if max_tokens is None:
        max_tokens = integer(body, "max_tokens", 1)
    sampling = {name: body[name] for name in SAMPLING if body.get(name) is not None}
    for name in ("presence_penalty", "frequency_penalty"):
        number(body, name, -2.0, 2.0)
    number(body, "top_k")
    number(body, "min_p", 0.0, 1.0)
    number(body, "repetition_penalty", 0.0)
    if "logit_bias" in sampling and not isinstance(sampling["logit_bias"], Mapping):
        raise APIError("logit_bias must be an object of token id -> bias", param="logit_bias")
    return {
        "max_tokens": max_tokens,
        "stop": stop(body.get("stop")),
        "seed": integer(body, "seed"),
        "temperature": number(body, "temperature", 0.0, 2.0),
        "top_p": number(body, "top_p", 0.0, 1.0),
        "sampling": sampling,
        "logprobs": logprobs,
    }
