"""The scale-out tier's ASGI app: vLLM 0.33's render and derender routes over trisect.

Routes: ``POST /v1/chat/completions/derender`` (a ``DerenderChatRequest``, or with
``"stream": true`` a ``DerenderChatStreamRequest``), ``POST /v1/completions/derender``,
``POST /v1/chat/completions/render``, ``POST /v1/completions/render``, ``GET /v1/models``,
``GET /health``. Errors are vLLM's ``ErrorResponse`` (``{"error": {"message", "type", "param",
"code"}}``): a body over ``max_body_bytes`` → 413, a body that is not a JSON object → 400, what
the endpoints refuse → 400 (a ``stream_state`` that does not verify names ``stream_state``), an
unknown model → 404, unknown routes → 404 / 405.

Every handler runs on the event loop: a chunk costs tens of microseconds (its ids, not the
history), less than handing it to a thread would.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...errors import TrisectError
from ..errors import APIError
from ..gate import Gate
from .derender import Derenderer
from .render import Renderer
from .shapes import ScaleOutError

Handler = Callable[[dict[str, Any]], Any]

DEFAULT_MAX_BODY = 32 * 1024 * 1024  # a non-streamed response of a long generation, with logprobs


def _error(exc: BaseException) -> JSONResponse:
    if isinstance(exc, ScaleOutError):
        error = exc
    elif isinstance(exc, APIError):
        kind = "NotFoundError" if exc.status == 404 else None
        kind = "Unauthorized" if exc.status == 401 else kind
        error = ScaleOutError(exc.message, status=exc.status, param=exc.param, kind=kind)
    elif isinstance(exc, TrisectError):
        error = ScaleOutError(str(exc))
    else:
        error = ScaleOutError(f"internal error: {type(exc).__name__}: {exc}", status=500, kind="InternalServerError")
    return JSONResponse(error.body(), status_code=error.status)


def create_scale_out_app(
    derenderer: Derenderer,
    renderer: Renderer,
    *,
    api_key: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY,
) -> Starlette:
    gate = Gate(api_key, max_body_bytes)  # the API key, the body's size and JSON, as trisect serve checks them

    async def read_json(request: Request) -> dict[str, Any]:
        data = await gate.json(request)
        if not isinstance(data, dict):
            raise ScaleOutError("the request body must be a JSON object")
        return data

    def endpoint(handler: Callable[[dict[str, Any]], Any]) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            try:
                return JSONResponse(handler(await read_json(request)))
            except ClientDisconnect:
                return Response(status_code=499)
            except Exception as exc:  # noqa: BLE001 - every failure is a vLLM-shaped error
                return _error(exc)

        return run

    def by_stream(chunk: Handler, whole: Handler) -> Handler:
        """One route, two request shapes: ``"stream": true`` is one chunk (vLLM's union)."""

        def handler(body: dict[str, Any]) -> Any:
            stream = body.get("stream", False)
            if stream is not True and stream is not False and stream is not None:
                raise ScaleOutError("stream must be true or false", param="stream")
            return chunk(body) if stream is True else whole(body)

        return handler

    async def models(request: Request) -> Response:
        created = int(time.time())
        data = [{"id": n, "object": "model", "created": created, "owned_by": "trisect"} for n in derenderer.names]
        return JSONResponse({"object": "list", "data": data})

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        message = "method not allowed" if status == 405 else f"no route {request.method} {request.url.path}"
        return _error(ScaleOutError(message, status=status))

    chat, chat_chunk = derenderer.chat, derenderer.chat_chunk
    completion, completion_chunk = derenderer.completion, derenderer.completion_chunk
    routes = [
        Route("/v1/chat/completions/derender", endpoint(by_stream(chat_chunk, chat)), methods=["POST"]),
        Route("/v1/completions/derender", endpoint(by_stream(completion_chunk, completion)), methods=["POST"]),
        Route("/v1/chat/completions/render", endpoint(renderer.chat), methods=["POST"]),
        Route("/v1/completions/render", endpoint(renderer.completion), methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]
    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found})
