"""``GET /metrics``, scraped after real requests through every API, read back with
``prometheus_client``'s own parser. Names follow vLLM 0.33 (``vllm/v1/metrics/loggers.py``:
``vllm:request_success``, ``vllm:prompt_tokens``, ``vllm:generation_tokens``,
``vllm:time_to_first_token_seconds``, ``vllm:inter_token_latency_seconds``,
``vllm:e2e_request_latency_seconds``, label ``model_name``); the rest are trisect's."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import openai
import prometheus_client.parser as prometheus

from support.serving import AppServer, ReplayChoice, ReplayPiece, served_model, stack  # noqa: E402
from trisect.serve.metrics import Metrics  # noqa: E402
from trisect.serve.replay import Script  # noqa: E402
from trisect.serve.service import Service  # noqa: E402
from trisect.serve.upstream.http import HTTPUpstream  # noqa: E402

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
CALL = 'Hello <tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
BROKEN = 'Hi <tool_call>\n{"name": "f", "arguments": {"a": 1}\n</tool_call> ok'  # the JSON never closes
CUT = 'Hi <tool_call>\n{"name": "f", "argu'


def _pieces(text: str) -> tuple[ReplayPiece, ...]:
    # one id per 3-character piece: the engine's token count is the number of pieces
    return tuple(ReplayPiece(text[i : i + 3], (i,)) for i in range(0, len(text), 3))


def _responder(body: dict[str, Any]) -> list[ReplayChoice]:
    prompt = body["prompt"]
    text = BROKEN if "broken" in prompt else CUT if "cut" in prompt else CALL
    return [ReplayChoice(_pieces(text), "length" if "cut" in prompt else "stop")]


def _scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = httpx.get(url + "/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    out = {}
    for family in prometheus.text_string_to_metric_families(r.text):
        for sample in family.samples:
            labels = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "model_name"))
            assert sample.labels.get("model_name") == "test-model"
            out[(sample.name, labels)] = sample.value
    return out


def test_metrics_scrape_after_real_requests() -> None:
    served = served_model(None, "hermes")
    with stack("vllm", _responder, served, metrics=Metrics("test-model")) as (replay, app):
        chat = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0)
        messages = anthropic.Anthropic(base_url=app.url, api_key="x", max_retries=0)
        body: dict[str, Any] = {"model": "test-model", "tools": TOOLS}
        chat.chat.completions.create(messages=[{"role": "user", "content": "call"}], **body)
        list(chat.chat.completions.create(messages=[{"role": "user", "content": "broken"}], stream=True, **body))
        list(chat.chat.completions.create(messages=[{"role": "user", "content": "cut"}], stream=True, **body))
        chat.responses.create(model="test-model", input="call", tools=[{"type": "function", "name": "f"}])
        tool = {"name": "f", "input_schema": {"type": "object"}}
        messages.messages.create(
            model="test-model", max_tokens=99, tools=[tool], messages=[{"role": "user", "content": "call"}]
        )  # noqa: E501
        chat.completions.create(model="test-model", prompt="call", max_tokens=99)
        chat.close()
        messages.close()
        got = _scrape(app.url)
    calls, broken, cut = len(_pieces(CALL)), len(_pieces(BROKEN)), len(_pieces(CUT))
    assert got[("vllm:request_success_total", (("finished_reason", "stop"),))] == 5
    assert got[("vllm:request_success_total", (("finished_reason", "length"),))] == 1
    assert got[("vllm:prompt_tokens_total", ())] == 6 * 7  # the replay engine's prompt count, 7 each
    assert got[("vllm:generation_tokens_total", ())] == 4 * calls + broken + cut
    for name in (
        "vllm:time_to_first_token_seconds",
        "vllm:e2e_request_latency_seconds",
        "trisect:request_added_seconds",
    ):
        assert got[(name + "_count", ())] == 6
    assert got[("vllm:inter_token_latency_seconds_count", ())] == 4 * (calls - 1) + (broken - 1) + (cut - 1)
    assert got[("trisect:chunk_added_seconds_count", ())] == 4 * calls + broken + cut
    for api, n in (("chat", 3), ("responses", 1), ("messages", 1), ("completions", 1)):
        assert got[("trisect:requests_total", (("api", api),))] == n
    outcome = {k[1][0][1]: v for k, v in got.items() if k[0] == "trisect:parse_outcomes_total"}
    # chat, Responses and Messages each return the one call; the stream that broke streamed a
    # call and then took it back; the cut one ended inside a call; raw completions parse nothing
    assert outcome == {"calls": 3, "malformed_calls": 1, "unfinished_calls": 1, "marker_recoveries": 0}
    errors = {k[1][0][1]: v for k, v in got.items() if k[0] == "trisect:upstream_errors_total"}
    assert set(errors.values()) == {0}


def test_upstream_errors_are_counted_by_kind() -> None:
    script = Script(status=500, error={"error": {"message": "no"}})
    with stack("vllm", lambda body: script, served_model(None, None), metrics=Metrics("test-model")) as (replay, app):
        httpx.post(app.url + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}]})
        got = _scrape(app.url)
    assert got[("trisect:upstream_errors_total", (("kind", "status"),))] == 1
    upstream = HTTPUpstream(replay.url, "vllm", connect_timeout=2)  # that engine is gone now
    with AppServer(Service(served_model(None, None), upstream, metrics=Metrics("test-model"))) as app:
        r = httpx.post(app.url + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}]})
        assert r.status_code == 503
        assert _scrape(app.url)[("trisect:upstream_errors_total", (("kind", "unreachable"),))] == 1


def test_embedded_marker_recoveries_are_mirrored_at_scrape_time() -> None:
    class Upstream:
        kind = "vllm"
        recoveries = 3

    metrics = Metrics("test-model", Upstream())
    assert (
        'trisect:parse_outcomes_total{kind="marker_recoveries",model_name="test-model"} 3.0' in metrics.text().decode()
    )
    Upstream.recoveries = 5
    assert (
        'trisect:parse_outcomes_total{kind="marker_recoveries",model_name="test-model"} 5.0' in metrics.text().decode()
    )
