"""The OpenAI API's routes: ``POST /v1/chat/completions``, ``POST /v1/responses``,
``POST /v1/completions`` (raw prompt, raw text: ``completions``), ``GET /v1/models``. Each
handler is a few lines over ``Service``: read the body (``Gate``), prepare, answer streamed
(SSE) or whole. Errors are OpenAI-shaped (``gate.endpoint``'s default).
"""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from . import completions, responses
from .chat_completions import completion, sse_stream
from .gate import SSE_HEADERS, Gate, endpoint, until_disconnect
from .service import Service


def routes(service: Service, gate: Gate) -> list[Route]:
    async def chat_completions(request: Request) -> Response:
        arrived = time.perf_counter()
        prepared = service.chat(await gate.json(request), arrived=arrived)
        if prepared.plan.stream:
            body = sse_stream(prepared.answer, prepared.source)
            return StreamingResponse(body, media_type="text/event-stream", headers=SSE_HEADERS)
        return JSONResponse(await until_disconnect(request, completion(prepared.answer, prepared.source)))

    async def create_response(request: Request) -> Response:
        arrived = time.perf_counter()
        chat_body, echo = responses.chat_body(await gate.json(request))
        prepared = service.chat(chat_body, api="responses", arrived=arrived)
        fold = responses.ResponseFold(prepared.answer, echo)
        if prepared.plan.stream:
            body = responses.sse_events(fold, prepared.source)
            return StreamingResponse(body, media_type="text/event-stream", headers=SSE_HEADERS)
        return JSONResponse(await until_disconnect(request, responses.whole(fold, prepared.source)))

    async def create_completion(request: Request) -> Response:
        arrived = time.perf_counter()
        prepared = service.complete(await gate.json(request), arrived=arrived)
        if prepared.stream:
            body = completions.sse_stream(prepared.answer, prepared.source)
            return StreamingResponse(body, media_type="text/event-stream", headers=SSE_HEADERS)
        return JSONResponse(await until_disconnect(request, completions.whole(prepared.answer, prepared.source)))

    async def models(request: Request) -> Response:
        gate.authorize(request)
        created = int(time.time())
        names = service.served.names
        data = [{"id": name, "object": "model", "created": created, "owned_by": "trisect"} for name in names]
        return JSONResponse({"object": "list", "data": data})

    return [
        Route("/v1/chat/completions", endpoint(chat_completions), methods=["POST"]),
        Route("/v1/responses", endpoint(create_response), methods=["POST"]),
        Route("/v1/completions", endpoint(create_completion), methods=["POST"]),
        Route("/v1/models", endpoint(models), methods=["GET"]),
    ]
