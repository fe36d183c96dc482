"""``trisect serve`` when things go wrong, and under load: each claim of docs/serve.md's "Reliability
and security" is one test here.
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import time
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

from support.serving import AppServer, ReplayChoice, ReplayPiece, served_model, stack
from support.work import HANG
from trisect import Parser
from trisect.serve.replay import Script
from trisect.serve.service import Service
from trisect.serve.upstream.http import HTTPUpstream

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
OUTPUT = '<think>plan</think>Hello there <tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'


def _pieces(text: str, size: int = 4) -> tuple[ReplayPiece, ...]:
    return tuple(ReplayPiece(text[i : i + size]) for i in range(0, len(text), size))


def _body(**extra: Any) -> dict[str, Any]:
    return {"model": "test-model", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, **extra}


def _served() -> Any:
    return served_model("qwen3", "hermes")


def _wait(predicate: Callable[[], bool], seconds: float = HANG) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def _sse(text: str) -> list[Any]:
    out = []
    for line in text.splitlines():
        if line.startswith("data: "):
            data = line[6:]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_upstream_is_a_503_and_the_server_stays_up() -> None:
    upstream = HTTPUpstream(f"http://127.0.0.1:{_closed_port()}", "vllm", connect_timeout=2)
    with AppServer(Service(_served(), upstream)) as app:
        for _ in range(2):
            r = httpx.post(app.url + "/v1/chat/completions", json=_body())
            assert r.status_code == 503
            error = r.json()["error"]
            assert set(error) == {"message", "type", "param", "code"} and "unreachable" in error["message"]
        r = httpx.post(app.url + "/v1/chat/completions", json=_body(stream=True))
        events = _sse(r.text)
        assert events[-2]["error"]["type"] == "upstream_unavailable" and events[-1] == "[DONE]"
        assert httpx.get(app.url + "/health").status_code == 200  # liveness: this process answers
        ready = httpx.get(app.url + "/ready")
        assert ready.status_code == 503 and "unreachable" in ready.json()["error"]["message"]
        assert httpx.get(app.url + "/v1/models").json()["data"][0]["id"] == "test-model"


@pytest.mark.parametrize("status", [500, 503, 400, 404, 429])
def test_failing_upstream_is_a_502_upstream_error_with_its_status(status: int) -> None:
    answer = 502  # never a client error: the client's request to trisect was valid
    script = Script(status=status, error={"error": {"message": "engine says no", "code": status}})
    with stack("vllm", lambda body: script, _served()) as (replay, app):
        r = httpx.post(app.url + "/v1/chat/completions", json=_body())
        assert r.status_code == answer
        error = r.json()["error"]
        assert "engine says no" in error["message"] and error["type"] == "upstream_error"
        assert error["upstream_status"] == status
        client = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.APIStatusError) as err:
            client.chat.completions.create(**_body())
        assert err.value.status_code == answer
        assert httpx.get(app.url + "/v1/models").status_code == 200  # still up


@pytest.mark.parametrize("failure", ["error_after", "break_after"])
def test_failure_mid_stream_flushes_then_error_then_done(failure: str) -> None:
    # "Hello there <tool_" is sent before the failure: the parser holds "<tool_" back as a
    # possible marker; the flush releases it as the text it is
    pieces = (
        ReplayPiece("<think>plan</think>"),
        ReplayPiece("Hello there "),
        ReplayPiece("<tool_"),
        ReplayPiece('call>\n{"name": "f", "arguments": {}}\n</tool_call>'),
    )
    script = Script(choices=(ReplayChoice(pieces),), **{failure: 3})
    with stack("vllm", lambda body: script, _served()) as (replay, app):
        r = httpx.post(app.url + "/v1/chat/completions", json=_body(stream=True))
        events = _sse(r.text)
        assert events[-1] == "[DONE]"
        assert set(events[-2]) == {"error"} and events[-2]["error"]["type"] == "upstream_error"
        chunks = events[:-2]
        content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
        reasoning = "".join(c["choices"][0]["delta"].get("reasoning") or "" for c in chunks)
        assert (reasoning, content) == ("plan", "Hello there <tool_")
        assert all(c["choices"][0]["finish_reason"] is None for c in chunks)
        client = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0)
        seen = []
        with pytest.raises(openai.APIError):
            for chunk in client.chat.completions.create(**_body(stream=True)):
                seen.append(chunk)
        assert seen  # the client got what was parsed, then the error


def test_client_disconnect_cancels_the_upstream_request() -> None:
    # long enough that the engine is still streaming whenever the disconnect reaches it
    slow = Script(choices=(ReplayChoice(_pieces("word " * 20_000, 5)),), delay=0.02)
    with stack("vllm", lambda body: slow, _served()) as (replay, app):
        with httpx.stream("POST", app.url + "/v1/chat/completions", json=_body(stream=True)) as r:
            lines = r.iter_lines()
            while not next(lines).startswith("data: "):
                pass
        assert _wait(lambda: replay.disconnects == 1), "the engine never saw the request cancelled"
        assert replay.completed == 0


def test_client_disconnect_cancels_a_non_streamed_request() -> None:
    with stack("llamacpp", lambda body: Script(hang=True), _served()) as (replay, app):
        with pytest.raises(httpx.ReadTimeout):
            # the engine never answers: only the read times out (connecting may be slow on a busy machine)
            httpx.post(app.url + "/v1/chat/completions", json=_body(), timeout=httpx.Timeout(HANG, read=0.3))
        assert _wait(lambda: replay.disconnects == 1), "the engine never saw the request cancelled"


def test_malformed_json_unknown_model_and_unknown_route() -> None:
    with stack("vllm", lambda body: [ReplayChoice(_pieces("</think>hi"))], _served()) as (replay, app):
        r = httpx.post(
            app.url + "/v1/chat/completions", content=b'{"model": ', headers={"content-type": "application/json"}
        )
        assert r.status_code == 400 and "not valid JSON" in r.json()["error"]["message"]
        r = httpx.post(app.url + "/v1/chat/completions", json=_body(model="gpt-9"))
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "model_not_found" and r.json()["error"]["param"] == "model"
        assert httpx.get(app.url + "/v2/nothing").status_code == 404
        assert httpx.get(app.url + "/v1/chat/completions").status_code == 405
        assert replay.requests == []


def test_body_over_the_limit_is_a_413() -> None:
    with stack("vllm", lambda body: [ReplayChoice(_pieces("</think>hi"))], _served(), max_body_bytes=2000) as (
        replay,
        app,
    ):
        big = _body(messages=[{"role": "user", "content": "x" * 5000}])
        r = httpx.post(app.url + "/v1/chat/completions", json=big)
        assert r.status_code == 413 and r.json()["error"]["type"] == "invalid_request_error"

        def chunks() -> Any:  # no content-length: the limit is counted while reading
            data = json.dumps(big).encode()
            for i in range(0, len(data), 500):
                yield data[i : i + 500]

        r = httpx.post(app.url + "/v1/chat/completions", content=chunks())
        assert r.status_code == 413
        assert httpx.post(app.url + "/v1/chat/completions", json=_body()).status_code == 200
        assert len(replay.requests) == 1


@pytest.mark.parametrize("depth", [100_000, 5_000, 1_000])
def test_a_body_nested_deeply_is_a_400_and_the_server_stays_up(depth: int) -> None:
    with stack("vllm", lambda body: [ReplayChoice(_pieces("</think>hi"))], _served()) as (replay, app):
        deep = b"[" * depth + b"]" * depth
        for body in (deep, b'{"model": "test-model", "messages": [{"role": "user", "content": ' + deep + b"}]}"):
            r = httpx.post(app.url + "/v1/chat/completions", content=body, headers={"content-type": "application/json"})
            assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error", r.text
        assert httpx.post(app.url + "/v1/chat/completions", json=_body()).status_code == 200
        assert len(replay.requests) == 1


def test_a_recursion_error_in_any_later_step_is_a_400() -> None:
    from trisect.serve.errors import from_exception

    error = from_exception(RecursionError("maximum recursion depth exceeded"))
    assert error.status == 400 and error.type == "invalid_request_error"


def test_a_lone_surrogate_in_the_body_is_a_400() -> None:
    with stack("vllm", lambda body: [ReplayChoice(_pieces("</think>hi"))], _served()) as (replay, app):
        for text in ('"hi \\ud800 there"', '"\\udfff"', '"\\ud83d"'):
            body = '{"model": "test-model", "messages": [{"role": "user", "content": ' + text + "}]}"
            r = httpx.post(app.url + "/v1/chat/completions", content=body.encode())
            assert r.status_code == 400 and "not valid Unicode" in r.json()["error"]["message"], r.text
        paired = '{"model": "test-model", "messages": [{"role": "user", "content": "\\ud83d\\ude00"}]}'
        assert httpx.post(app.url + "/v1/chat/completions", content=paired.encode()).status_code == 200
        assert len(replay.requests) == 1


def test_api_key() -> None:
    with stack("vllm", lambda body: [ReplayChoice(_pieces("</think>hi"))], _served(), api_key="s3cret") as (
        replay,
        app,
    ):
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "s3cret"}):
            r = httpx.post(app.url + "/v1/chat/completions", json=_body(), headers=headers)
            assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
            assert httpx.get(app.url + "/v1/models", headers=headers).status_code == 401
        assert httpx.get(app.url + "/health").status_code == 200  # open, as in vLLM
        client = openai.OpenAI(base_url=app.url + "/v1", api_key="s3cret", max_retries=0)
        assert client.chat.completions.create(**_body()).choices[0].message.content == "hi"
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=app.url + "/v1", api_key="nope", max_retries=0).chat.completions.create(**_body())
        assert len(replay.requests) == 1


def test_binds_loopback_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    from trisect.serve import cli

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(kw))
    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    base = ["--upstream", "http://127.0.0.1:9", "--chat-template", template, "--model", "m"]
    assert cli.main(base) == 0
    assert seen["host"] == "127.0.0.1" and seen["port"] == 8000 and seen["workers"] == 1
    assert cli.main([*base, "--host", "0.0.0.0", "--port", "9000"]) == 0
    assert seen["host"] == "0.0.0.0" and seen["port"] == 9000


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def test_256_concurrent_streams_no_cross_talk_bounded_memory() -> None:
    parser = Parser("qwen3", "hermes")

    def output(n: int) -> str:
        return (
            f"<think>request {n} thinks {n * 7}</think>answer {n}: "
            + f"w{n} " * 4
            + f'<tool_call>\n{{"name": "f", "arguments": {{"n": {n}}}}}\n</tool_call>'
        )

    def responder(body: dict[str, Any]) -> list[ReplayChoice]:
        n = int(body["prompt"].split("request ")[1].split(" ")[0])
        return [ReplayChoice(_pieces(output(n), 12))]

    async def one(client: Any, n: int) -> tuple[int, dict[str, Any]]:
        body = {
            "model": "test-model",
            "messages": [{"role": "user", "content": f"request {n} please"}],
            "tools": TOOLS,
            "stream": True,
        }
        reasoning, content, args = [], [], []
        async with client.stream("POST", "/v1/chat/completions", json=body) as r:
            async for line in r.aiter_lines():
                if not line.startswith("data: {"):
                    continue
                delta = json.loads(line[6:])["choices"][0]["delta"]
                reasoning.append(delta.get("reasoning") or "")
                content.append(delta.get("content") or "")
                args += [c["function"].get("arguments") or "" for c in delta.get("tool_calls") or ()]
        return n, {"reasoning": "".join(reasoning), "content": "".join(content), "arguments": "".join(args)}

    async def round_(url: str, base: int) -> list[tuple[int, dict[str, Any]]]:
        limits = httpx.Limits(max_connections=300)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=HANG) as client:
            return await asyncio.gather(*(one(client, base + i) for i in range(256)))

    with stack("vllm", responder, _served()) as (replay, app):
        rss = []
        for r in range(2):
            results = asyncio.run(round_(app.url, 1000 * r))
            for n, got in results:
                message = parser.parse(output(n), tools=TOOLS)
                assert got == {
                    "reasoning": message.reasoning,
                    "content": message.content,
                    "arguments": message.tool_calls[0].arguments,
                }, n
            gc.collect()
            rss.append(_rss_mb())
        assert replay.completed == 2 * 256
        # memory is bounded: after the first round (warm-up), another round of 256 streams adds
        # no more than a small constant (a leak of the streams' state would add megabytes)
        assert rss[1] - rss[0] < 20, rss


def test_memory_is_capped_when_every_request_brings_new_tools() -> None:
    # what a server keeps between requests is caches; each is capped (validated requests and
    # tool sets: 128 each, cleared when full; compiled formats, choices, grammars and templates:
    # LRU caches of 8 to 512; the few without a cap hold one entry per format or catalogue), so
    # requests that each bring tools never seen before fill them to their caps and no further
    import asyncio
    import functools
    import sys

    from trisect.request import options

    class Idle:  # an upstream never asked: preparing a request is what fills the caches
        kind = "vllm"
        fans_out = False

    service = Service(_served(), Idle())  # type: ignore[arg-type]

    def prepare(i: int) -> None:
        tool = {"type": "function", "function": {"name": f"f{i}", "parameters": {"type": "object"}}}
        body = {"messages": [{"role": "user", "content": f"hi {i}"}], "tools": [tool], "stream": i % 2 == 0}
        prepared = service.chat(body)
        asyncio.run(prepared.source.aclose())  # type: ignore[attr-defined]
        prepared.answer.stream(0).feed("ok")

    def caches() -> dict[str, Any]:
        return {
            f"{name}.{key}": value.cache_info()
            for name, module in list(sys.modules.items())
            if name.startswith("trisect.")
            for key, value in vars(module).items()
            if isinstance(value, functools._lru_cache_wrapper)  # type: ignore[attr-defined]
        }

    prepare(0)
    first = caches()
    for i in range(1, 600):
        prepare(i)
    last = caches()
    assert 0 < len(options._REQUESTS) <= options._CACHE_SIZE and len(options._TOOL_SETS) <= options._CACHE_SIZE
    for name, info in last.items():
        if info.maxsize is None:  # unbounded: it must not grow with requests
            assert info.currsize == first[name].currsize if name in first else info.currsize <= 1, name
        else:
            assert info.currsize <= info.maxsize, name
