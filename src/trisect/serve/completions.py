"""``POST /v1/completions``: a raw prompt in, raw text out (the legacy completions API).

No template, no parser: the prompt goes to the upstream as given (after ``prompt_for``: the
rendered BOS is cut for engines that add their own, as for chat), and the text comes back as
the engine wrote it, markers included (llama.cpp is told to keep them as text). This is what
lets one trisect server stand behind another (``--upstream-kind openai``), and what legacy
clients call.

Fields: ``model``, ``prompt`` (a string, or a list of one string), ``max_tokens`` (default 16,
as OpenAI's), ``n``, ``stop``, ``seed``, ``temperature``, ``top_p``, ``logprobs`` (an integer:
the sampled token's logprob plus that many alternatives, OpenAI's legacy shape), ``stream``,
``stream_options.include_usage``, ``return_token_ids`` (vLLM: the generated ids on each
choice), the sampling fields of ``upstream.sampling.SAMPLING``; ``user`` is ignored. ``echo``,
``suffix``, ``best_of`` other than 1 and token-id prompts are a 400 (no engine kind can do them
for every upstream). Answers: ``text_completion`` objects; streamed, one chunk per engine piece
(choices interleaved), a usage chunk when asked, then ``data: [DONE]``. A failure mid-stream is
``data: {"error": …}`` then ``data: [DONE]``, as for chat.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

from .body import an_object, boolean, integer, mapping
from .chat_completions import DONE, sse
from .errors import APIError, from_exception
from .plan import MAX_N, sampling_fields
from .upstream.base import CompletionPiece, closing
from .upstream.sampling import SAMPLING
from .upstream.vllm import chat_to_legacy

DEFAULT_MAX_TOKENS = 16  # OpenAI's default for this API
_FIELDS = frozenset(
    {
        "model",
        "prompt",
        "max_tokens",
        "n",
        "stop",
        "seed",
        "temperature",
        "top_p",
        "logprobs",
        "stream",
        "stream_options",
        "return_token_ids",
        "user",
        "echo",
        "suffix",
        "best_of",
        *SAMPLING,
    }
)


def raw_plan(body: Any, kind: str) -> tuple[str | None, str, dict[str, Any]]:
    """(model, prompt, the checked fields) of a completions body for an upstream of ``kind``
    (``APIError`` on bad input)."""
    body = an_object(body)
    unknown = sorted(k for k, v in body.items() if k not in _FIELDS and v is not None)
    if unknown:
        raise APIError(f"unrecognized request argument: {unknown[0]}", param=unknown[0])
    for name, kinds in SAMPLING.items():
        if body.get(name) is not None and kind not in kinds:
            raise APIError(f"{name} is not supported by the {kind} upstream", param=name)
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise APIError("prompt must be a string (one prompt per request)", param="prompt")
    if boolean(body, "echo", False):
        raise APIError("echo is not supported", param="echo")
    if body.get("suffix"):
        raise APIError("suffix is not supported", param="suffix")
    if integer(body, "best_of", 1) not in (None, 1):
        raise APIError("best_of must be 1", param="best_of")
    logprobs = integer(body, "logprobs", 0, 20)
    stream = boolean(body, "stream", False)
    options = mapping(body, "stream_options")
    if options and not stream:
        raise APIError("stream_options can only be set when stream is true", param="stream_options")
    if set(options) - {"include_usage", "continuous_usage_stats"}:
        raise APIError("stream_options takes include_usage", param="stream_options")
    fields = sampling_fields({k: v for k, v in body.items() if k != "logprobs"})
    fields["logprobs"] = logprobs
    if fields["max_tokens"] is None:
        fields["max_tokens"] = DEFAULT_MAX_TOKENS
    fields["n"] = integer(body, "n", 1, MAX_N) or 1
    fields["stream"] = stream
    fields["include_usage"] = bool(options.get("include_usage"))
    fields["return_token_ids"] = boolean(body, "return_token_ids", False)
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise APIError("model must be a string", param="model")
    return model, prompt, fields


class RawAnswer:
    """The envelope of one completions answer."""

    def __init__(self, model: str, n: int, *, include_usage: bool, return_token_ids: bool, logprobs: bool) -> None:
        self.id = "cmpl-" + uuid.uuid4().hex
        self.created = int(time.time())
        self.model = model
        self.n = n
        self.include_usage = include_usage
        self.return_token_ids = return_token_ids
        self.logprobs = logprobs

    def envelope(self, choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "text_completion",
            "created": self.created,
            "model": self.model,
            "choices": choices,
            "usage": usage,
        }


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


async def sse_stream(answer: RawAnswer, source: AsyncIterator[CompletionPiece]) -> AsyncIterator[bytes]:
    offsets = [0] * answer.n
    prompt = 0
    generated = [0] * answer.n
    try:
        async with closing(source) as pieces:
            async for piece in pieces:
                i = piece.index
                if piece.prompt_tokens is not None:
                    prompt = piece.prompt_tokens
                generated[i] += len(piece.token_ids or ())
                if piece.completion_tokens is not None:
                    generated[i] = piece.completion_tokens
                if not (piece.text or piece.finish_reason or piece.token_ids):
                    continue
                choice: dict[str, Any] = {
                    "index": i,
                    "text": piece.text,
                    "logprobs": chat_to_legacy(piece.logprobs or (), offsets[i]) if answer.logprobs else None,
                    "finish_reason": piece.finish_reason,
                    "stop_reason": piece.stop_reason,
                }
                if answer.return_token_ids:
                    choice["token_ids"] = list(piece.token_ids or ())
                offsets[i] += len(piece.text)
                yield sse(answer.envelope([choice]))
        if answer.include_usage:
            yield sse(answer.envelope([], _usage(prompt, sum(generated))))
    except Exception as exc:  # noqa: BLE001 - becomes the stream's error event
        yield sse(from_exception(exc).body())
    yield DONE


async def whole(answer: RawAnswer, source: AsyncIterator[CompletionPiece]) -> dict[str, Any]:
    texts: list[list[str]] = [[] for _ in range(answer.n)]
    ids: list[list[int]] = [[] for _ in range(answer.n)]
    logprobs: list[list[Mapping[str, Any]]] = [[] for _ in range(answer.n)]
    ends: list[CompletionPiece | None] = [None] * answer.n
    prompt = 0
    async with closing(source) as pieces:
        async for piece in pieces:
            texts[piece.index].append(piece.text)
            ids[piece.index] += piece.token_ids or ()
            logprobs[piece.index] += piece.logprobs or ()
            if piece.prompt_tokens is not None:
                prompt = piece.prompt_tokens
            if piece.finish_reason is not None:
                ends[piece.index] = piece
    choices = []
    completion = 0
    for i, end in enumerate(ends):
        if end is None:
            raise APIError(f"the upstream did not finish choice {i}", status=502)
        completion += end.completion_tokens if end.completion_tokens is not None else len(ids[i])
        choice: dict[str, Any] = {
            "index": i,
            "text": "".join(texts[i]),
            "logprobs": chat_to_legacy(logprobs[i], 0) if answer.logprobs else None,
            "finish_reason": end.finish_reason,
            "stop_reason": end.stop_reason,
        }
        if answer.return_token_ids:
            choice["token_ids"] = ids[i]
        choices.append(choice)
    return answer.envelope(choices, _usage(prompt, completion))
