"""Routes for load balancers and orchestrators, open without the API key (as vLLM's are).

* ``GET /health`` — liveness: the server process answers (200 ``{"status": "ok"}``) without
  asking the upstream. Point an orchestrator's liveness probe here: a restart does not fix an
  upstream that is down.
* ``GET /ready`` — readiness: the upstream answers its model list (200 ``{"status": "ready"}``),
  else 503 with the reason in the OpenAI error shape. Point a load balancer (and a readiness
  probe) here, so traffic goes only to servers whose engine can answer.
* ``GET /metrics`` — Prometheus text format (``metrics``), when the server keeps metrics.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .errors import APIError
from .gate import endpoint
from .service import Service
from .upstream.base import UpstreamError

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"  # Prometheus' text exposition format


def routes(service: Service) -> list[Route]:
    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def ready(request: Request) -> Response:
        try:
            await service.upstream.models()
        except UpstreamError as exc:
            raise APIError(f"not ready: {exc}", status=503, code="upstream_not_ready") from exc
        return JSONResponse({"status": "ready"})

    async def metrics(request: Request) -> Response:
        if service.metrics is None:
            raise APIError("metrics are off (install prometheus_client: pip install 'trisect[serve]')", status=404)
        return Response(service.metrics.text(), media_type=CONTENT_TYPE)

    return [
        Route("/health", endpoint(health), methods=["GET"]),
        Route("/ready", endpoint(ready), methods=["GET"]),
        Route("/metrics", endpoint(metrics), methods=["GET"]),
    ]
