"""``HTTPUpstream``: an engine over HTTP, speaking one ``Wire`` (httpx, async, streaming).

Every request streams (``stream: true`` on the wire) so that closing the iterator, which the
server does when its client goes away, closes the connection and the engine aborts the request
(vLLM, SGLang and llama.cpp all abort on disconnect).

Errors, all ``UpstreamError`` (see ``base``):

* cannot connect → 503; no answer within the timeout → 504; any other transport failure → 502;
* an error status, whatever it is → 502 ``upstream_error`` with the upstream's status
  (``upstream_status`` in the error body) and message: the client sent trisect a valid
  request, so the failure is never the client's (an engine's 404 is a missing route, its 400
  a prompt trisect rendered);
* an ``{"error": …}`` event mid-stream, a stream that is not JSON, or one that ends before every
  choice finished → 502.

Cost: one JSON decode per event, plus the wire's decode.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from ...engine.vocab import Vocab
from .base import CompletionPiece, CompletionRequest, UpstreamError
from .llamacpp import LlamacppWire
from .sglang import SglangWire
from .vllm import CompletionsWire, VllmWire
from .vllm_generate import KIND as GENERATE
from .vllm_generate import VllmGenerateWire
from .wire import Wire

WIRES: dict[str, type[Wire]] = {
    "vllm": VllmWire,
    "sglang": SglangWire,
    "llamacpp": LlamacppWire,
    "openai": CompletionsWire,
    GENERATE: VllmGenerateWire,
}


def _error_message(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:500] or "(no body)"
    if isinstance(data, Mapping):
        error = data.get("error", data)
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
        if isinstance(data.get("message"), str):
            return str(data["message"])
    return text[:500]


class HTTPUpstream:
    """``Upstream`` over HTTP. ``base_url`` without the ``/v1`` path (``http://host:8001``)."""

    def __init__(
        self,
        base_url: str,
        kind: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 600.0,
        connect_timeout: float = 10.0,
        client: httpx.AsyncClient | None = None,
        vocab: Vocab | None = None,
    ) -> None:
        if kind not in WIRES:
            raise ValueError(f"upstream kind must be one of {', '.join(WIRES)}")
        # vllm-generate tokenizes the prompt itself (``vocab``: the served model's tokenizer)
        self.wire = VllmGenerateWire(vocab) if kind == GENERATE else WIRES[kind]()
        self.kind = self.wire.kind  # what the server decides by: vllm-generate is a vLLM engine
        self.fans_out = self.wire.fans_out
        self.base_url = base_url.rstrip("/")
        if self.base_url.endswith("/v1"):
            self.base_url = self.base_url[:-3]
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=connect_timeout),
            # idle connections expire before the engines' own keep-alive timeout (uvicorn's, vLLM's: 5 s)
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64, keepalive_expiry=4.0),
        )

    @property
    def token_ids(self) -> bool:
        return self.wire.token_ids

    async def _open(self, url: str, body: dict[str, Any]) -> httpx.Response:
        """Send the request; once more on a fresh connection when a pooled one turns out closed
        before any answer came (the engine dropped an idle keep-alive connection as it was reused:
        the engine never saw the request, so sending it again is safe)."""
        request = self._client.build_request("POST", url, json=body)
        try:
            return await self._client.send(request, stream=True)
        except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError):
            return await self._client.send(self._client.build_request("POST", url, json=body), stream=True)

    async def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionPiece]:
        body = self.wire.body(request, model=self.model)
        decoder = self.wire.decoder(request)
        url = self.base_url + self.wire.path
        try:
            response = await self._open(url, body)
            try:
                if response.status_code >= 400:
                    message = _error_message(await response.aread())
                    raise UpstreamError(
                        f"the upstream answered {response.status_code}: {message}",
                        upstream_status=response.status_code,
                        kind="status",
                    )
                async for data in _sse_data(response):
                    if data == "[DONE]":
                        break
                    event = _json(data)
                    if "error" in event:
                        raise UpstreamError(
                            f"the upstream failed mid-stream: {_error_message(data.encode())}", kind="stream"
                        )
                    for piece in decoder.decode(event):
                        yield piece
                    if decoder.finished and not self.wire.done_sentinel:
                        break
            finally:
                await response.aclose()  # on cancellation too: closing the connection aborts the request
        except httpx.ConnectError as exc:
            raise UpstreamError(f"the upstream at {self.base_url} is unreachable: {exc}", status=503) from exc
        except httpx.TimeoutException as exc:
            raise UpstreamError(f"the upstream at {self.base_url} timed out", status=504, kind="timeout") from exc
        except httpx.HTTPError as exc:
            raise UpstreamError(f"the upstream connection failed: {type(exc).__name__}: {exc}", kind="stream") from exc
        for piece in decoder.close():
            yield piece

    async def models(self) -> list[str]:
        try:
            response = await self._client.get(self.base_url + "/v1/models")
        except httpx.ConnectError as exc:
            raise UpstreamError(f"the upstream at {self.base_url} is unreachable: {exc}", status=503) from exc
        except httpx.HTTPError as exc:
            raise UpstreamError(f"the upstream failed: {type(exc).__name__}: {exc}", status=502) from exc
        if response.status_code >= 400:
            raise UpstreamError(
                f"the upstream answered {response.status_code}", upstream_status=response.status_code, kind="status"
            )
        try:
            data = response.json()
            return [str(m["id"]) for m in data.get("data", ())]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UpstreamError("the upstream's /v1/models is not an OpenAI model list") from exc

    async def aclose(self) -> None:
        await self._client.aclose()


def _json(data: str) -> Mapping[str, Any]:
    try:
        event = json.loads(data)
    except ValueError as exc:
        raise UpstreamError(f"the upstream sent an event that is not JSON: {data[:200]!r}") from exc
    if not isinstance(event, Mapping):
        raise UpstreamError(f"the upstream sent an event that is not a JSON object: {data[:200]!r}")
    return event


async def _sse_data(response: httpx.Response) -> AsyncIterator[str]:
    """The ``data:`` payloads of an SSE stream (one per line: the engines never split one)."""
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            yield line[5:].strip()
