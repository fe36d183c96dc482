"""``POST /v1/chat/completions``: engine pieces → ``trisect.chat`` objects.

One ``trisect.chat.ChatStream`` per choice, so every parsing rule is exactly the library's:

* streamed: each piece is fed to its choice's stream as it arrives (text, token ids, logprobs);
  the chunks it returns are sent as SSE events, then one usage chunk (``include_usage``: the
  prompt counted once, completion and reasoning tokens summed over the choices), then
  ``data: [DONE]``;
* not streamed: each choice's whole output goes through ``trisect.chat.chat_completion`` (the
  stream fed once, atomic), and the choices are put in one ``chat.completion``.

Token counts are the engine's where it reports them, else the ids fed. A failure mid-stream
(``UpstreamError`` or any other) flushes what every open choice has parsed so far (text the
parser held back as a possible marker; its ``finish_reason`` left ``null``, since the choice did
not finish), then sends ``data: {"error": …}`` and ``data: [DONE]``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, cast

from ..openai import ChatStream, chat_completion
from ..parser import Parser
from .errors import APIError, from_exception
from .outcomes import Observe, Observed
from .upstream.base import CompletionPiece, closing


def sse(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n\n"


DONE = b"data: [DONE]\n\n"


class Answer:
    """What one request's answer needs besides the pieces: parser, options, envelope fields."""

    def __init__(
        self,
        parser: Any,
        *,
        model: str,
        n: int,
        options: dict[str, Any],
        include_usage: bool = False,
        continuous_usage: bool = False,
        return_token_ids: bool = False,
        reasoning_field: str = "reasoning",
        observe: Observe | None = None,
    ) -> None:
        # the parser as the OpenAI layer sees it: its streams' events reported to ``observe``
        # (the metrics' parse outcomes), when given
        self.parser = parser if observe is None else cast(Parser, Observed(parser, observe))
        self.id = "chatcmpl-" + uuid.uuid4().hex
        self.created = int(time.time())
        self.model = model
        self.n = n
        self.options = options
        self.include_usage = include_usage
        self.continuous_usage = continuous_usage
        self.return_token_ids = return_token_ids
        self.reasoning_field = reasoning_field

    def stream(self, index: int, *, atomic: bool = False) -> ChatStream:
        return ChatStream(
            self.parser,
            id=self.id,
            model=self.model,
            created=self.created,
            index=index,
            continuous_usage=self.continuous_usage,
            return_token_ids=self.return_token_ids,
            reasoning_field=self.reasoning_field,
            atomic_tool_calls=atomic,
            **self.options,
        )

    def usage(self, streams: list[ChatStream]) -> dict[str, Any]:
        prompt = max((s.prompt_tokens or 0) for s in streams)
        completion = sum(s.completion_tokens for s in streams)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "completion_tokens_details": {"reasoning_tokens": sum(s.reasoning_tokens for s in streams)},
        }


async def stream_chunks(answer: Answer, source: AsyncIterator[CompletionPiece]) -> AsyncIterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` dicts of a streamed answer (the error flush included: see
    the module docstring; the error itself is raised after the flush)."""
    streams = [answer.stream(i) for i in range(answer.n)]
    finished = [False] * answer.n
    prompt_tokens: int | None = None
    try:
        async with closing(source) as pieces:
            async for piece in pieces:
                stream = streams[piece.index]
                if piece.prompt_tokens is not None:
                    prompt_tokens = piece.prompt_tokens
                    for s in streams:
                        s.prompt_tokens = prompt_tokens
                if piece.text or piece.token_ids or piece.logprobs:
                    text = None if piece.ids_only else piece.text  # ids alone: the parser decodes them
                    for chunk in stream.feed(text, piece.token_ids, logprobs=piece.logprobs):
                        yield chunk
                if piece.finish_reason is not None:
                    finished[piece.index] = True
                    for chunk in stream.finish(piece.finish_reason, completion_tokens=piece.completion_tokens):
                        yield chunk
    except Exception:  # not on cancellation: a client that left gets nothing more
        for i, stream in enumerate(streams):
            if not finished[i]:
                for chunk in stream.finish(None):
                    for choice in chunk["choices"]:
                        choice["finish_reason"] = None
                    if any(c["delta"] or c.get("logprobs") for c in chunk["choices"]):
                        yield chunk
        raise
    if answer.include_usage:
        yield {
            "id": answer.id,
            "object": "chat.completion.chunk",
            "created": answer.created,
            "model": answer.model,
            "choices": [],
            "usage": answer.usage(streams),
        }


async def sse_stream(answer: Answer, source: AsyncIterator[CompletionPiece]) -> AsyncIterator[bytes]:
    """The SSE body of a streamed answer, ``data: [DONE]`` last whatever happens."""
    try:
        async for chunk in stream_chunks(answer, source):
            yield sse(chunk)
    except Exception as exc:  # noqa: BLE001 - becomes the stream's error event
        yield sse(from_exception(exc).body())
    yield DONE


async def completion(answer: Answer, source: AsyncIterator[CompletionPiece]) -> dict[str, Any]:
    """The whole ``chat.completion`` of a non-streamed answer."""
    texts: list[list[str]] = [[] for _ in range(answer.n)]
    ids: list[list[int] | None] = [None] * answer.n
    ids_only = [False] * answer.n  # the engine sent ids alone: the parser decodes them
    logprobs: list[list[Any]] = [[] for _ in range(answer.n)]
    finish: list[CompletionPiece | None] = [None] * answer.n
    prompt_tokens = 0
    async with closing(source) as pieces:
        async for piece in pieces:
            i = piece.index
            texts[i].append(piece.text)
            ids_only[i] = ids_only[i] or piece.ids_only
            if piece.token_ids:
                ids[i] = (ids[i] or []) + list(piece.token_ids)
            if piece.logprobs:
                logprobs[i].extend(piece.logprobs)
            if piece.prompt_tokens is not None:
                prompt_tokens = piece.prompt_tokens
            if piece.finish_reason is not None:
                finish[i] = piece
    choices = []
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 0, "reasoning_tokens": 0}
    for i in range(answer.n):
        end = finish[i]
        if end is None:
            raise APIError(f"the upstream did not finish choice {i}", status=502)
        whole = chat_completion(
            answer.parser,
            None if ids_only[i] else "".join(texts[i]),
            token_ids=ids[i],
            finish_reason=end.finish_reason,
            logprobs=logprobs[i] or None,
            completion_tokens=end.completion_tokens,
            id=answer.id,
            model=answer.model,
            created=answer.created,
            prompt_tokens=prompt_tokens,
            return_token_ids=answer.return_token_ids,
            reasoning_field=answer.reasoning_field,
            **answer.options,
        )
        choice = whole["choices"][0]
        choice["index"] = i
        choices.append(choice)
        usage["completion_tokens"] += whole["usage"]["completion_tokens"]
        usage["reasoning_tokens"] += whole["usage"]["completion_tokens_details"]["reasoning_tokens"]
    return {
        "id": answer.id,
        "object": "chat.completion",
        "created": answer.created,
        "model": answer.model,
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": usage["completion_tokens"],
            "total_tokens": prompt_tokens + usage["completion_tokens"],
            "completion_tokens_details": {"reasoning_tokens": usage["reasoning_tokens"]},
        },
    }
