"""A replay engine: a real HTTP server on 127.0.0.1 that answers raw-completion requests in one
upstream kind's wire format with outputs you give it (token ids included), for tests and benches.

    responder = lambda body: [ReplayChoice((ReplayPiece("Hi", (13,)),))]
    with ReplayServer("vllm", responder) as replay:
        HTTPUpstream(replay.url, "vllm") ...

``responder(body)`` gets each request's JSON body and returns the choices to play (one per
choice the body asks for) or a ``Script`` with failures to inject: an error status, an error
event or a dropped connection after some events, a delay between events, or a stream that
never starts (``hang``). ``requests`` keeps every body received, ``disconnects`` counts requests
whose client went away before the stream ended (how tests see a cancellation reach the engine),
``completed`` those played to the end.

HTTP/1.1 with keep-alive and chunked responses (as uvicorn, vLLM and llama.cpp send them), the
standard library only; one asyncio task per connection. Runs in the caller's event loop
(``await start()``) or in a thread of its own (``with ReplayServer(...)``).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .upstream.http import WIRES
from .upstream.wire import ReplayChoice, ReplayPiece

__all__ = ["ReplayChoice", "ReplayPiece", "ReplayServer", "Script"]


@dataclass(frozen=True)
class Script:
    choices: Sequence[ReplayChoice] = ()
    prompt_tokens: int = 7
    delay: float = 0.0  # seconds before each event
    status: int | None = None  # answer this HTTP status with ``error`` instead of a stream
    error: dict[str, Any] | None = None
    error_after: int | None = None  # send an ``{"error": …}`` event after this many events
    break_after: int | None = None  # drop the connection after this many events
    hang: bool = False  # never answer (until the client goes away)


Responder = Callable[[dict[str, Any]], "Script | Sequence[ReplayChoice]"]


class ReplayServer:
    def __init__(self, kind: str, responder: Responder, *, model: str = "replay-model") -> None:
        self.wire = WIRES[kind]()
        self.kind = kind
        self.responder = responder
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.disconnects = 0
        self.completed = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    def __enter__(self) -> ReplayServer:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            loop.run_until_complete(self.start())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.aclose())
            loop.close()

        self._thread = threading.Thread(target=run, name="replay-upstream", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    # ------------------------------------------------------------------ HTTP

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while await self._request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = lines[0].split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        if method == "GET" and path in ("/v1/models", "/models"):
            await _send_json(writer, 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]})
            return True
        if method == "GET" and path == "/health":
            await _send_json(writer, 200, {"status": "ok"})
            return True
        if method != "POST" or path != self.wire.path:
            await _send_json(writer, 404, {"error": {"message": f"no route {method} {path}", "code": 404}})
            return True
        request = json.loads(body)
        self.requests.append(request)
        script = self.responder(request)
        if not isinstance(script, Script):
            script = Script(choices=tuple(script))
        if script.status is not None:
            await _send_json(writer, script.status, script.error or {"error": {"message": "replay failure"}})
            return True
        return await self._stream(reader, writer, request, script)

    async def _stream(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: dict[str, Any], script: Script
    ) -> bool:
        # the client closing its side (EOF on our reader) is how a cancellation arrives; the
        # reader is only looked at, never read, so a next request on the connection stays whole
        try:
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
                b"cache-control: no-cache\r\n\r\n"
            )
            await writer.drain()
            if script.hang:
                while not reader.at_eof():
                    await asyncio.sleep(0.005)
                self.disconnects += 1
                return False
            events = [
                "data: " + json.dumps(e) + "\n\n"
                for e in self.wire.encode(request, script.choices, prompt_tokens=script.prompt_tokens)
            ]
            if self.wire.done_sentinel:
                events.append("data: [DONE]\n\n")
            for n, event in enumerate(events):
                if script.delay:
                    await asyncio.sleep(script.delay)
                if reader.at_eof():
                    self.disconnects += 1
                    return False
                if n == script.break_after:
                    return False
                if n == script.error_after:
                    failure = {"error": {"message": "replay failure mid-stream", "type": "server_error", "code": 500}}
                    await _chunk(writer, "data: " + json.dumps(failure) + "\n\n")
                    if self.wire.done_sentinel:
                        await _chunk(writer, "data: [DONE]\n\n")
                    break
                await _chunk(writer, event)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            self.completed += 1
            return True
        except ConnectionError:
            self.disconnects += 1
            return False


async def _chunk(writer: asyncio.StreamWriter, text: str) -> None:
    data = text.encode("utf-8")
    writer.write(b"%x\r\n%s\r\n" % (len(data), data))
    await writer.drain()


async def _send_json(writer: asyncio.StreamWriter, status: int, payload: Any) -> None:
    data = json.dumps(payload).encode("utf-8")
    writer.write(
        b"HTTP/1.1 %d X\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (status, len(data), data)
    )
    await writer.drain()
