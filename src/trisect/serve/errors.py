"""Errors the server answers with, in the OpenAI shape
``{"error": {"message", "type", "param", "code"}}``.

``APIError(message, status=…, param=…)`` is raised anywhere in request handling and turned into
that body by the app; ``from_exception`` maps trisect's own errors (a bad request option or tool
schema, a template that raised: 400) and ``UpstreamError`` (its status: 400 / 502 / 503 / 504).
"""

from __future__ import annotations

from typing import Any

from ..errors import RequestError, TemplateError, ToolSchemaError, TrisectError
from .upstream.base import UpstreamError

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    500: "server_error",
    502: "upstream_error",
    503: "upstream_unavailable",
    504: "upstream_timeout",
}


class APIError(Exception):
    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        param: str | None = None,
        code: str | None = None,
        upstream_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.param = param
        self.code = code
        self.upstream_status = upstream_status

    @property
    def type(self) -> str:
        return _TYPES.get(self.status, "server_error" if self.status >= 500 else "invalid_request_error")

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"message": self.message, "type": self.type, "param": self.param, "code": self.code}
        if self.upstream_status is not None:
            error["upstream_status"] = self.upstream_status
        return {"error": error}


def from_exception(exc: BaseException) -> APIError:
    """The ``APIError`` for an exception raised while serving a request."""
    if isinstance(exc, APIError):
        return exc
    if isinstance(exc, UpstreamError):
        return APIError(str(exc), status=exc.status, upstream_status=exc.upstream_status)
    if isinstance(exc, ToolSchemaError):
        return APIError(str(exc), param="tools")
    if isinstance(exc, TemplateError):
        return APIError(f"the chat template rejected the request: {exc}", param="messages")
    if isinstance(exc, (RequestError, TrisectError)):
        return APIError(str(exc))
    if isinstance(exc, RecursionError):  # a body that parsed but is too deep for a later step
        return APIError("the request is nested too deeply")
    return APIError(f"internal error: {type(exc).__name__}: {exc}", status=500)
