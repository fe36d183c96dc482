"""``POST /v1/completions`` (raw prompt in, raw text out), two trisect servers chained over it,
and the probes a load balancer and an orchestrator use. The answers are checked with the
official ``openai`` client, whose ``Completion`` type is OpenAI's legacy completions shape."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from support.serving import AppServer, ReplayChoice, ReplayPiece, served_model, stack  # noqa: E402
from trisect import Parser  # noqa: E402
from trisect.serve.replay import Script  # noqa: E402
from trisect.serve.service import Service  # noqa: E402
from trisect.serve.upstream.http import HTTPUpstream  # noqa: E402

OUT = '<think>plan</think>Hello <tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def _pieces(text: str, size: int = 4) -> tuple[ReplayPiece, ...]:
    return tuple(ReplayPiece(text[i : i + size]) for i in range(0, len(text), size))


def _play(text: str = OUT, finish: str = "stop") -> Any:
    return lambda body: [ReplayChoice(_pieces(text), finish)] * int(body.get("n") or 1)


@pytest.mark.parametrize("kind", ["vllm", "sglang", "llamacpp", "openai"])
def test_raw_prompt_in_raw_text_out_streamed_and_not(kind: str) -> None:
    with stack(kind, _play(), served_model("qwen3", "hermes")) as (replay, app):
        client = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0)
        whole = client.completions.create(model="test-model", prompt="<|im_start|>user\nhi", max_tokens=50, n=2)
        assert [c.text for c in whole.choices] == [OUT, OUT]  # markers and all: nothing parsed
        assert [c.finish_reason for c in whole.choices] == ["stop", "stop"] and whole.usage.prompt_tokens == 7
        sent = replay.requests[0].get("prompt", replay.requests[0].get("text"))  # SGLang's field is text
        assert sent == "<|im_start|>user\nhi"  # no template applied
        chunks = list(
            client.completions.create(
                model="test-model", prompt="p", max_tokens=50, stream=True, stream_options={"include_usage": True}
            )
        )
        assert "".join(c.choices[0].text for c in chunks if c.choices) == OUT
        assert chunks[-1].choices == [] and chunks[-1].usage.prompt_tokens == 7
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


def test_sampling_fields_an_upstream_kind_cannot_take_are_a_400() -> None:
    with stack("openai", _play(), served_model(None, None)) as (replay, app):
        r = httpx.post(app.url + "/v1/completions", json={"prompt": "x", "top_k": 5})
        assert r.status_code == 400 and r.json()["error"]["param"] == "top_k"
        ok = httpx.post(app.url + "/v1/completions", json={"prompt": "x", "presence_penalty": 0.5})
        assert ok.status_code == 200 and replay.requests[-1]["presence_penalty"] == 0.5


def test_fields_are_checked_before_the_engine() -> None:
    with stack("vllm", _play(), served_model(None, None)) as (replay, app):
        for body, param in [
            ({"prompt": [1, 2, 3]}, "prompt"),
            ({"prompt": "x", "echo": True}, "echo"),
            ({"prompt": "x", "suffix": "y"}, "suffix"),
            ({"prompt": "x", "best_of": 2}, "best_of"),
            ({"prompt": "x", "logprobs": 50}, "logprobs"),
            ({"prompt": "x", "frobnicate": 1}, "frobnicate"),
            ({"prompt": "x", "model": "nope"}, "model"),
        ]:
            r = httpx.post(app.url + "/v1/completions", json=body)
            assert r.status_code in (400, 404) and r.json()["error"]["param"] == param, r.text
        assert replay.requests == []


@contextlib.contextmanager
def _chain(kind: str) -> Iterator[tuple[Any, AppServer, AppServer]]:
    """An engine, trisect in front of it, and a second trisect in front of the first (kind openai)."""
    with stack(kind, _play(), served_model("qwen3", "hermes")) as (replay, back):
        front_upstream = HTTPUpstream(back.url, "openai", model="test-model")
        with AppServer(Service(served_model("qwen3", "hermes"), front_upstream)) as front:
            yield replay, back, front


@pytest.mark.parametrize("kind", ["vllm", "llamacpp"])
def test_two_trisect_servers_chain(kind: str) -> None:
    with _chain(kind) as (replay, back, front):
        client = openai.OpenAI(base_url=front.url + "/v1", api_key="x", max_retries=0)
        body: dict[str, Any] = {"model": "test-model", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
        whole = client.chat.completions.create(**body).choices[0]
        want = Parser("qwen3", "hermes").parse(OUT)
        assert whole.message.reasoning == want.reasoning and whole.message.content == want.content  # type: ignore[attr-defined]
        assert [c.function.name for c in whole.message.tool_calls] == ["f"] and whole.finish_reason == "tool_calls"
        streamed = list(client.chat.completions.create(**body, stream=True))
        assert "".join(c.choices[0].delta.content or "" for c in streamed if c.choices) == want.content
        assert "<|im_start|>user\nhi<|im_end|>" in replay.requests[0]["prompt"]  # rendered once, by the front
        assert httpx.get(front.url + "/ready").status_code == 200


def test_an_upstream_without_the_route_is_a_502_and_ready_says_so() -> None:
    script = Script(status=404, error={"error": {"message": "no route /v1/completions"}})
    with stack("openai", lambda body: script, served_model(None, "hermes")) as (replay, app):
        r = httpx.post(app.url + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}]})
        error = r.json()["error"]
        assert r.status_code == 502 and error["type"] == "upstream_error" and error["upstream_status"] == 404
        assert "no route" in error["message"]
        assert httpx.get(app.url + "/health").status_code == 200


def test_ready_follows_the_upstream_and_health_does_not() -> None:
    with stack("vllm", _play(), served_model(None, None)) as (replay, app):
        assert httpx.get(app.url + "/health").json() == {"status": "ok"}
        assert httpx.get(app.url + "/ready").json() == {"status": "ready"}
    # the engine is gone now; the app of a new stack whose engine is closed
    upstream = HTTPUpstream(replay.url, "vllm", connect_timeout=2)
    with AppServer(Service(served_model(None, None), upstream)) as app:
        assert httpx.get(app.url + "/health").status_code == 200
        ready = httpx.get(app.url + "/ready")
        assert ready.status_code == 503 and ready.json()["error"]["code"] == "upstream_not_ready"
