"""The ASGI app (Starlette): the routes of each API over one ``Service``, behind one ``Gate``.

Routes: the OpenAI API (``openai_api``), the Anthropic Messages API (``anthropic``), the probes
(``probes``: ``/health``, ``/ready``, ``/metrics``), and any ``routes`` the caller adds (they are
tried after these). Unknown routes and methods are
OpenAI-shaped 404 / 405 errors. On shutdown the upstream is closed (connections to the engine,
or the embedded model).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from . import anthropic, openai_api, probes
from .errors import APIError
from .gate import DEFAULT_MAX_BODY, Gate, openai_error
from .service import Service


def create_app(
    service: Service,
    *,
    api_key: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY,
    routes: Sequence[BaseRoute] = (),
) -> Starlette:
    gate = Gate(api_key, max_body_bytes)
    table = [*openai_api.routes(service, gate), *anthropic.routes(service, gate), *probes.routes(service), *routes]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await service.upstream.aclose()

    handlers = {404: _not_found, 405: _not_found}
    return Starlette(routes=table, exception_handlers=handlers, lifespan=lifespan)


async def _not_found(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 404
    message = "method not allowed" if status == 405 else f"no route {request.method} {request.url.path}"
    return openai_error(APIError(message, status=status))
