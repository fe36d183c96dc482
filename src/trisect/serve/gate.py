"""What every ``/v1`` request passes before its handler, and what every handler is wrapped in.

``Gate``: ``--api-key`` (``Authorization: Bearer KEY``, or Anthropic's ``x-api-key: KEY``,
compared in constant time) → 401; a body over ``max_body_bytes`` (the declared
``Content-Length``, or counted while reading) → 413; a body that is not JSON (nested too deep for
the decoder, or holding a lone surrogate that no UTF-8 answer could carry) → 400.

``endpoint(handler, render)``: any exception the handler raises becomes an error response in its
API's shape (``render``: OpenAI's by default); a client that left gets 499 and nothing else.
``until_disconnect(request, work)`` races a non-streamed answer against the ASGI
``http.disconnect`` message, so a client that goes away cancels its engine request (streamed
answers are cancelled by Starlette's own disconnect listener).
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from .errors import APIError, from_exception

DEFAULT_MAX_BODY = 8 * 1024 * 1024
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}

Handler = Callable[[Request], Awaitable[Response]]
Render = Callable[[APIError], Response]


def openai_error(error: APIError) -> Response:
    return JSONResponse(error.body(), status_code=error.status)


class Gone(Exception):
    """The client disconnected before a non-streamed answer was ready."""


class Gate:
    def __init__(self, api_key: str | None = None, max_body_bytes: int = DEFAULT_MAX_BODY) -> None:
        self.expected = api_key.encode() if api_key else None
        self.max_body_bytes = max_body_bytes

    def authorize(self, request: Request) -> None:
        if self.expected is None:
            return
        bearer = request.headers.get("authorization", "")
        given = bearer[7:] if bearer[:7].lower() == "bearer " else request.headers.get("x-api-key", "")
        if not hmac.compare_digest(given.encode(), self.expected):
            raise APIError("invalid or missing API key (Authorization: Bearer …)", status=401, code="invalid_api_key")

    async def json(self, request: Request) -> Any:
        self.authorize(request)
        limit = self.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise APIError(f"the request body exceeds {limit} bytes", status=413)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise APIError(f"the request body exceeds {limit} bytes", status=413)
        return parse_json(bytes(body))


def parse_json(body: bytes) -> Any:
    """A request body as JSON (``APIError`` 400 for anything the answer could not be built on)."""
    try:
        value = json.loads(body)
    except RecursionError:
        raise APIError("the request body is nested too deeply") from None
    except ValueError as exc:
        raise APIError(f"the request body is not valid JSON: {exc}") from exc
    if b"\\ud" in body or b"\\uD" in body:  # a surrogate escape: paired, or lone (JSON allows "\ud800")
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone one cannot be rendered, tokenized or sent on
            raise APIError(f"the request body holds text that is not valid Unicode: {exc.reason}") from None
    return value


def endpoint(handler: Handler, render: Render = openai_error) -> Handler:
    async def guarded(request: Request) -> Response:
        try:
            return await handler(request)
        except (Gone, ClientDisconnect):
            return Response(status_code=499)
        except Exception as exc:  # noqa: BLE001 - every failure is an error in the API's shape
            return render(from_exception(exc))

    return guarded


async def until_disconnect(request: Request, work: Awaitable[Any]) -> Any:
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
        raise Gone()
    return task.result()
