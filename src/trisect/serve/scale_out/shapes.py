"""The JSON vLLM 0.33's scale-out endpoints answer, field for field.

Each builder returns a dict with exactly the keys of the pydantic model vLLM serialises
(``model_dump()``: every field, ``None`` included), so a client written against vLLM's
``/v1/chat/completions/derender`` reads trisect's answers unchanged:
``ChatCompletionStreamResponse`` / ``ChatCompletionResponse`` (``entrypoints/openai/
chat_completion/protocol.py``), ``DeltaMessage`` / ``ChatMessage`` and their tool calls
(``entrypoints/generate/base/protocol.py``), ``CompletionStreamResponse`` /
``CompletionResponse`` (``entrypoints/openai/completion/protocol.py``), ``UsageInfo`` and
``ErrorResponse`` (``entrypoints/serve/engine/protocol.py``). The test in
``tests/integrations/test_vllm_scale_out.py`` validates every shape with vLLM's own models.
"""

from __future__ import annotations

from collections.abc import Sequence
from http import HTTPStatus
from typing import Any


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "completion_tokens": completion_tokens,
        "prompt_tokens_details": None,
        "completion_tokens_details": None,
    }


def tool_call_delta(index: int, call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name, "arguments": arguments}
    return {"id": call_id, "type": "function" if call_id is not None else None, "index": index, "function": function}


def delta(
    *, role: str | None, content: str | None, reasoning: str | None, tool_calls: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    return {"role": role, "content": content, "reasoning": reasoning, "tool_calls": list(tool_calls)}


def stream_choice(
    index: int,
    body: dict[str, Any],
    *,
    logprobs: dict[str, Any] | None,
    finish_reason: str | None,
    stop_reason: int | str | None,
    token_ids: list[int] | None,
) -> dict[str, Any]:
    return {
        "index": index,
        "delta": body,
        "logprobs": logprobs,
        "finish_reason": finish_reason,
        "stop_reason": stop_reason,
        "token_ids": token_ids,
        "weight_versions": None,
    }


def chat_chunk(
    request_id: str, model: str, created: int, choices: list[dict[str, Any]], usage: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "id": request_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": choices,
        "usage": usage,
        "system_fingerprint": None,
        "prompt_token_ids": None,
        "prompt_text": None,
        "metrics": None,
        "kv_transfer_params": None,
    }


def message(
    *, content: str | None, reasoning: str | None, tool_calls: Sequence[tuple[str, str, str]]
) -> dict[str, Any]:
    """A ``ChatMessage``; ``tool_calls`` as ``(id, name, arguments)``."""
    return {
        "role": "assistant",
        "content": content,
        "refusal": None,
        "annotations": None,
        "audio": None,
        "function_call": None,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in tool_calls
        ],
        "reasoning": reasoning,
    }


def response_choice(index: int, msg: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A ``ChatCompletionResponseChoice``: the streamed choice's fields, its ``message`` for the
    delta, and the whole one's own."""
    out = stream_choice(index, msg, **fields)
    out["message"] = out.pop("delta")
    return {**out, "routed_experts": None}


def chat_response(
    request_id: str,
    model: str,
    created: int,
    choices: list[dict[str, Any]],
    usage: dict[str, Any],
    *,
    prompt_token_ids: list[int] | None = None,
    prompt_logprobs: Any = None,
    kv_transfer_params: Any = None,
    metrics: Any = None,
) -> dict[str, Any]:
    return {
        "id": request_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": choices,
        "service_tier": None,
        "system_fingerprint": None,
        "usage": usage,
        "prompt_logprobs": prompt_logprobs,
        "prompt_token_ids": prompt_token_ids,
        "prompt_text": None,
        "kv_transfer_params": kv_transfer_params,
        "ec_transfer_params": None,
        "metrics": metrics,
    }


def completion_stream_choice(
    index: int,
    text: str,
    *,
    logprobs: dict[str, Any] | None,
    finish_reason: str | None,
    stop_reason: int | str | None,
    prompt_token_ids: list[int] | None,
    token_ids: list[int] | None,
) -> dict[str, Any]:
    return {
        "index": index,
        "text": text,
        "logprobs": logprobs,
        "finish_reason": finish_reason,
        "stop_reason": stop_reason,
        "prompt_token_ids": prompt_token_ids,
        "token_ids": token_ids,
        "weight_versions": None,
    }


def completion_choice(index: int, text: str, **fields: Any) -> dict[str, Any]:
    """A ``CompletionResponseChoice``: the streamed choice's fields and the whole one's own."""
    return {**completion_stream_choice(index, text, **fields), "prompt_logprobs": None, "routed_experts": None}


def completion_chunk(
    request_id: str, model: str, created: int, choices: list[dict[str, Any]], usage: dict[str, Any] | None
) -> dict[str, Any]:
    chunk = chat_chunk(request_id, model, created, choices, usage)
    for name in ("prompt_token_ids", "prompt_text"):
        del chunk[name]
    return {**chunk, "object": "text_completion"}


def completion_response(
    request_id: str,
    model: str,
    created: int,
    choices: list[dict[str, Any]],
    usage: dict[str, Any],
    *,
    kv_transfer_params: Any = None,
    metrics: Any = None,
) -> dict[str, Any]:
    out = chat_response(
        request_id, model, created, choices, usage, kv_transfer_params=kv_transfer_params, metrics=metrics
    )
    for name in ("prompt_logprobs", "prompt_token_ids", "prompt_text"):
        del out[name]
    return {**out, "object": "text_completion"}


class ScaleOutError(Exception):
    """A request the scale-out endpoints refuse, answered as vLLM's ``ErrorResponse``: ``type``
    is vLLM's (``BadRequestError`` for what its serving layer refuses, the HTTP phrase for the
    rest), ``code`` the status."""

    def __init__(self, message: str, *, status: int = 400, param: str | None = None, kind: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.param = param
        self.kind = kind or ("BadRequestError" if status == 400 else HTTPStatus(status).phrase)

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.status}}
