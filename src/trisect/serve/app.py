"""The ASGI app (Starlette): routes over ``Service``, and the checks every request passes.

Routes: ``POST /v1/chat/completions``, ``POST /v1/responses``, ``GET /v1/models``,
``GET /health``. Every error is the OpenAI shape (``errors.APIError``), unknown routes and
methods included.

Checks, in order: ``--api-key`` (``Authorization: Bearer KEY`` on every ``/v1`` route, compared in
constant time; ``/health`` stays open, as in vLLM) → 401; a body over ``max_body_bytes`` (the
declared ``Content-Length``, or counted while reading) → 413; a body that is not JSON → 400.

A client that goes away cancels its engine request: streamed answers through Starlette's
disconnect listener (the generator is cancelled, which closes the engine stream), non-streamed
ones by racing the answer against the ASGI ``http.disconnect`` message.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from . import responses
from .chat_completions import completion, sse_stream
from .errors import APIError, from_exception
from .service import Service
from .upstream.base import UpstreamError

DEFAULT_MAX_BODY = 8 * 1024 * 1024
_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def _error(exc: BaseException) -> JSONResponse:
    error = from_exception(exc)
    return JSONResponse(error.body(), status_code=error.status)


class _Gone(Exception):
    """The client disconnected before a non-streamed answer was ready."""


async def _until_disconnect(request: Request, work: Awaitable[Any]) -> Any:
    task = asyncio.ensure_future(work)

    async def watch() -> None:
        while True:
            message = await request.receive()
            if message["type"] == "http.disconnect":
                return

    watcher = asyncio.ensure_future(watch())
    try:
        done, _ = await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done() or watcher.done():
            task.cancel()
        watcher.cancel()
        await asyncio.gather(task, watcher, return_exceptions=True)
    if task not in done or task.cancelled():
        raise _Gone()
    return task.result()


def create_app(service: Service, *, api_key: str | None = None, max_body_bytes: int = DEFAULT_MAX_BODY) -> Starlette:
    expected = f"Bearer {api_key}".encode() if api_key else None

    async def read_json(request: Request) -> Any:
        if expected is not None:
            given = request.headers.get("authorization", "").encode()
            if not hmac.compare_digest(given, expected):
                raise APIError(
                    "invalid or missing API key (Authorization: Bearer …)", status=401, code="invalid_api_key"
                )
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_body_bytes:
            raise APIError(f"the request body exceeds {max_body_bytes} bytes", status=413)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > max_body_bytes:
                raise APIError(f"the request body exceeds {max_body_bytes} bytes", status=413)
        try:
            return json.loads(body)
        except ValueError as exc:
            raise APIError(f"the request body is not valid JSON: {exc}") from exc

    def guarded(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)
            except (_Gone, ClientDisconnect):
                return Response(status_code=499)
            except Exception as exc:  # noqa: BLE001 - every failure is an OpenAI-shaped error
                return _error(exc)

        return endpoint

    async def chat_completions(request: Request) -> Response:
        prepared = service.chat(await read_json(request))
        if prepared.plan.stream:
            return StreamingResponse(
                sse_stream(prepared.answer, prepared.source), media_type="text/event-stream", headers=_SSE_HEADERS
            )
        return JSONResponse(await _until_disconnect(request, completion(prepared.answer, prepared.source)))

    async def create_response(request: Request) -> Response:
        body = await read_json(request)
        chat_body, echo = responses.chat_body(body)
        prepared = service.chat(chat_body)
        fold = responses.ResponseFold(prepared.answer, echo)
        if prepared.plan.stream:
            return StreamingResponse(
                responses.sse_events(fold, prepared.source), media_type="text/event-stream", headers=_SSE_HEADERS
            )
        return JSONResponse(await _until_disconnect(request, responses.whole(fold, prepared.source)))

    async def models(request: Request) -> Response:
        if expected is not None:
            given = request.headers.get("authorization", "").encode()
            if not hmac.compare_digest(given, expected):
                raise APIError(
                    "invalid or missing API key (Authorization: Bearer …)", status=401, code="invalid_api_key"
                )
        created = int(time.time())
        data = [
            {"id": name, "object": "model", "created": created, "owned_by": "trisect"} for name in service.served.names
        ]
        return JSONResponse({"object": "list", "data": data})

    async def health(request: Request) -> Response:
        try:
            await service.upstream.models()
        except UpstreamError as exc:
            return _error(exc)
        return JSONResponse({"status": "ok"})

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        message = "method not allowed" if status == 405 else f"no route {request.method} {request.url.path}"
        return _error(APIError(message, status=status))

    routes = [
        Route("/v1/chat/completions", guarded(chat_completions), methods=["POST"]),
        Route("/v1/responses", guarded(create_response), methods=["POST"]),
        Route("/v1/models", guarded(models), methods=["GET"]),
        Route("/health", guarded(health), methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await service.upstream.aclose()  # connections to the engine, or the embedded model

    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found}, lifespan=lifespan)
