"""The Anthropic Messages API: ``POST /v1/messages`` and ``POST /v1/messages/count_tokens``.

A Messages body is translated into a chat-completions body (``request``) and prepared by the
same ``Service.chat`` (template, grammar, parser options), then its pieces are fed to one parser
stream (calls atomic) and folded into Anthropic's answer (``answer``). Errors are Anthropic's
shape, ``{"type": "error", "error": {"type", "message"}}``, with its type names per status
(``invalid_request_error``, ``authentication_error``, ``not_found_error``,
``request_too_large``, ``overloaded_error``, ``api_error``); mid-stream, an ``error`` event.
The key is taken from ``x-api-key`` as from ``Authorization: Bearer``.

``count_tokens`` renders the request as ``/v1/messages`` would and asks the upstream for one
token of it, reading the prompt's token count from the answer: the count is the engine's own,
for every upstream kind, at the cost of one prefill (which engines cache).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ...message.fold import fold as fold_events
from ..errors import APIError, from_exception
from ..gate import SSE_HEADERS, Gate, endpoint, until_disconnect
from ..service import Prepared, Service
from ..upstream.base import closing
from .answer import MessageFold
from .request import chat_body

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
}


def error_body(error: APIError) -> dict[str, Any]:
    kind = _TYPES.get(error.status, "api_error" if error.status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": error.message}}


def anthropic_error(error: APIError) -> Response:
    return JSONResponse(error_body(error), status_code=error.status)


async def events(service: Service, prepared: Prepared, fold: MessageFold) -> AsyncIterator[dict[str, Any]]:
    """Every event of one answer, ``message_start`` first and ``message_stop`` last (an error
    mid-answer is raised after the open block is closed)."""
    options = prepared.answer.options
    ids = options.get("id_factory") or (lambda index: service.tool_use_id())
    stream = prepared.answer.parser.stream(atomic_tool_calls=True, **{**options, "id_factory": ids})
    started = False
    counted = 0
    async with closing(prepared.source) as pieces:
        async for piece in pieces:
            if piece.prompt_tokens is not None:
                fold.input_tokens = piece.prompt_tokens
            if not started:
                started = True
                for event in fold.start():
                    yield event
            counted += len(piece.token_ids or ())
            deltas = [fold_events(stream.events(piece.text, piece.token_ids))] if piece.text or piece.token_ids else []
            if piece.finish_reason is not None:
                fold.output_tokens = piece.completion_tokens if piece.completion_tokens is not None else counted
                deltas.append(fold_events(stream.finish_events()))
            for delta in deltas:
                for event in fold.feed(delta):
                    yield event
            if piece.finish_reason is not None:
                for event in fold.finish(piece.finish_reason, piece.stop_reason):
                    yield event
                return
    raise APIError("the upstream ended without finishing the answer", status=502)


def _sse(event: dict[str, Any]) -> bytes:
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event['type']}\ndata: {data}\n\n".encode()


async def sse_events(service: Service, prepared: Prepared, fold: MessageFold) -> AsyncIterator[bytes]:
    started = False
    try:
        async for event in events(service, prepared, fold):
            started = True
            yield _sse(event)
    except Exception as exc:  # noqa: BLE001 - becomes the stream's error event
        if not started:
            for event in fold.start():
                yield _sse(event)
        for event in fold.fail(error_body(from_exception(exc))["error"]):
            yield _sse(event)


async def whole(service: Service, prepared: Prepared, fold: MessageFold) -> dict[str, Any]:
    async for _ in events(service, prepared, fold):
        pass
    return fold.message()


def routes(service: Service, gate: Gate) -> list[Route]:
    async def messages(request: Request) -> Response:
        arrived = time.perf_counter()
        prepared = service.chat(
            chat_body(await gate.json(request)), api="messages", arrived=arrived, id_prefix="toolu_"
        )
        fold = MessageFold(prepared.plan.model)
        if prepared.plan.stream:
            body = sse_events(service, prepared, fold)
            return StreamingResponse(body, media_type="text/event-stream", headers=SSE_HEADERS)
        return JSONResponse(await until_disconnect(request, whole(service, prepared, fold)))

    async def count_tokens(request: Request) -> Response:
        chat = chat_body(await gate.json(request), count_only=True)
        prepared = service.chat({**chat, "max_completion_tokens": 1}, api="count_tokens")
        count = await until_disconnect(request, _prompt_tokens(prepared))
        return JSONResponse({"input_tokens": count})

    return [
        Route("/v1/messages", endpoint(messages, anthropic_error), methods=["POST"]),
        Route("/v1/messages/count_tokens", endpoint(count_tokens, anthropic_error), methods=["POST"]),
    ]


async def _prompt_tokens(prepared: Prepared) -> int:
    async with closing(prepared.source) as pieces:
        async for piece in pieces:
            if piece.prompt_tokens is not None:
                return piece.prompt_tokens
    raise APIError("the upstream reports no prompt token count", status=502)
