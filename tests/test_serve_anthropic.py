"""``POST /v1/messages`` and ``/v1/messages/count_tokens`` with the official ``anthropic`` SDK,
in front of a replay engine of each upstream kind.

The facts checked are Anthropic's (the Messages API reference: content blocks ``thinking`` /
``text`` / ``tool_use``, the stream's event order ``message_start``, ``content_block_start`` /
``_delta`` / ``_stop`` per block, ``message_delta``, ``message_stop``; ``stop_reason`` values;
the error shape ``{"type": "error", "error": {"type", "message"}}``) and vLLM 0.33's mapping onto
chat (``vllm/entrypoints/anthropic/serving.py``: ``any`` is ``required``, ``tool`` a named
choice, ``disable_parallel_tool_use`` is ``parallel_tool_calls: false``, ``tool_result`` blocks
become ``tool`` messages). Where a Messages request has a chat equivalent, the engine must get
exactly the request the chat endpoint sends for that equivalent.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import pytest

from support.serving import ReplayChoice, ReplayPiece, served_model, stack  # noqa: E402
from trisect.serve.anthropic.request import FIELDS  # noqa: E402
from trisect.serve.replay import Script  # noqa: E402

KINDS = ("vllm", "sglang", "llamacpp", "openai")
WEATHER = {
    "name": "get_weather",
    "description": "Get the weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
CHAT_WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "description": WEATHER["description"], "parameters": WEATHER["input_schema"]},
}
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
TURN = "<think>plan</think>Hello " + CALL


def _pieces(text: str, size: int = 3) -> tuple[ReplayPiece, ...]:
    return tuple(ReplayPiece(text[i : i + size]) for i in range(0, len(text), size))


def _play(text: str, finish: str = "stop", stop: str | None = None) -> Any:
    return lambda body: [ReplayChoice(_pieces(text), finish, stop)]


CLIENTS: list[Any] = []


def _client(app: Any, **options: Any) -> Any:
    client = anthropic.Anthropic(base_url=app.url, api_key=options.pop("api_key", "x"), max_retries=0, **options)
    CLIENTS.append(client)
    return client


@pytest.fixture(autouse=True)
def _close_clients() -> Any:
    yield
    while CLIENTS:
        CLIENTS.pop().close()


def _ask(**extra: Any) -> dict[str, Any]:
    return {"model": "test-model", "max_tokens": 200, "messages": [{"role": "user", "content": "hi"}], **extra}


def _blocks(message: Any) -> list[dict[str, Any]]:
    out = []
    for block in message.content:
        data = block.model_dump(exclude_none=True)
        data.pop("id", None)  # minted per request
        out.append({k: v for k, v in data.items() if k not in ("parsed_output",)})
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_a_tool_turn_round_trips_through_the_sdk_streamed_and_not(kind: str) -> None:
    with stack(kind, _play(TURN), served_model("qwen3", "hermes")) as (replay, app):
        client = _client(app)
        whole = client.messages.create(**_ask(tools=[WEATHER]))
        assert _blocks(whole) == [
            {"type": "thinking", "thinking": "plan", "signature": "trisect-unsigned"},
            {"type": "text", "text": "Hello"},
            {"type": "tool_use", "name": "get_weather", "input": {"city": "Paris"}},
        ]
        assert whole.stop_reason == "tool_use" and whole.stop_sequence is None
        assert whole.content[2].id.startswith("toolu_") and whole.usage.input_tokens == 7
        with client.messages.stream(**_ask(tools=[WEATHER])) as stream:
            streamed = stream.get_final_message()
        assert _blocks(streamed) == _blocks(whole)
        assert streamed.stop_reason == "tool_use" and streamed.usage.input_tokens == 7


def _sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events, name = [], None
    for line in text.splitlines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            events.append((name, json.loads(line[6:])))
    return events


def test_stream_events_come_in_anthropic_order() -> None:
    with stack("vllm", _play(TURN), served_model("qwen3", "hermes")) as (replay, app):
        r = httpx.post(app.url + "/v1/messages", json=_ask(tools=[WEATHER], stream=True))
    events = _sse(r.text)
    assert all(name == data["type"] for name, data in events)  # the SSE event name is the type
    kinds = [data["type"] for _, data in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert events[0][1]["message"]["content"] == [] and events[0][1]["message"]["stop_reason"] is None
    blocks: list[list[dict[str, Any]]] = []
    for _, data in events[1:-2]:
        if data["type"] == "content_block_start":
            assert data["index"] == len(blocks)
            blocks.append([data])
        else:
            assert data["index"] == len(blocks) - 1 and blocks[-1][-1]["type"] != "content_block_stop"
            blocks[-1].append(data)
    assert [b[0]["content_block"]["type"] for b in blocks] == ["thinking", "text", "tool_use"]
    assert all(b[-1]["type"] == "content_block_stop" for b in blocks)
    thinking = [d["delta"]["type"] for d in blocks[0][1:-1]]
    assert set(thinking[:-1]) == {"thinking_delta"} and thinking[-1] == "signature_delta"
    assert {d["delta"]["type"] for d in blocks[1][1:-1]} == {"text_delta"}
    assert blocks[2][0]["content_block"]["input"] == {}  # the input arrives as JSON deltas
    assert json.loads("".join(d["delta"]["partial_json"] for d in blocks[2][1:-1])) == {"city": "Paris"}
    end = events[-2][1]
    assert end["delta"] == {"stop_reason": "tool_use", "stop_sequence": None} and end["usage"]["input_tokens"] == 7


@pytest.mark.parametrize("stream", [False, True])
def test_stop_reason_rules(stream: bool) -> None:
    cases = [
        (_play("Hello there"), {}, "end_turn", None),
        (_play(TURN), {"tools": [WEATHER]}, "tool_use", None),
        (_play("Hello " + CALL[:30], "length"), {"tools": [WEATHER]}, "max_tokens", None),  # cut inside a call
        (_play("Hello there", "length"), {}, "max_tokens", None),
        (_play("Hello", "stop", "END"), {"stop_sequences": ["END"]}, "stop_sequence", "END"),
    ]
    for responder, extra, reason, sequence in cases:
        with stack("vllm", responder, served_model(None, "hermes")) as (replay, app):
            client = _client(app)
            if stream:
                with client.messages.stream(**_ask(**extra)) as s:
                    message = s.get_final_message()
            else:
                message = client.messages.create(**_ask(**extra))
        assert (message.stop_reason, message.stop_sequence) == (reason, sequence)
        if reason == "max_tokens":
            assert all(b.type != "tool_use" for b in message.content)  # a cut-off call is never a tool_use


def _engine_request(kind: str, path: str, body: dict[str, Any], reasoning: str | None = "qwen3") -> dict[str, Any]:
    with stack(kind, _play("ok"), served_model(reasoning, "hermes")) as (replay, app):
        r = httpx.post(app.url + path, json=body)
        assert r.status_code == 200, r.text
        (request,) = replay.requests
    return request


CHAT = {"model": "test-model", "max_completion_tokens": 200, "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(
    ("messages_fields", "chat_fields"),
    [
        ({}, {}),
        ({"tools": [WEATHER]}, {"tools": [CHAT_WEATHER]}),
        ({"tools": [WEATHER], "tool_choice": {"type": "auto"}}, {"tools": [CHAT_WEATHER], "tool_choice": "auto"}),
        ({"tools": [WEATHER], "tool_choice": {"type": "any"}}, {"tools": [CHAT_WEATHER], "tool_choice": "required"}),
        (
            {"tools": [WEATHER], "tool_choice": {"type": "any", "disable_parallel_tool_use": True}},
            {"tools": [CHAT_WEATHER], "tool_choice": "required", "parallel_tool_calls": False},
        ),
        (
            {"tools": [WEATHER], "tool_choice": {"type": "tool", "name": "get_weather"}},
            {"tools": [CHAT_WEATHER], "tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
        ),
        ({"tools": [WEATHER], "tool_choice": {"type": "none"}}, {"tools": [CHAT_WEATHER], "tool_choice": "none"}),
        ({"thinking": {"type": "disabled"}}, {"chat_template_kwargs": {"enable_thinking": False}}),
        (
            {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2000},
            {"chat_template_kwargs": {"enable_thinking": True, "thinking_budget": 1024}, "max_completion_tokens": 2000},
        ),
        ({"thinking": {"type": "adaptive"}}, {}),
        ({"output_config": {"effort": "low"}}, {"reasoning_effort": "low"}),
        (
            {"output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}}},
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "output", "schema": {"type": "object"}},
                }
            },
        ),
        (
            {"stop_sequences": ["x"], "temperature": 0.5, "top_p": 0.9, "top_k": 5, "metadata": {"user_id": "u"}},
            {"stop": ["x"], "temperature": 0.5, "top_p": 0.9, "top_k": 5},
        ),
        ({"system": "Be brief."}, {"messages": [{"role": "system", "content": "Be brief."}, CHAT["messages"][0]]}),
        (
            {"system": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief.", "cache_control": {}}]},
            {
                "messages": [
                    {
                        "role": "system",
                        "content": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}],
                    },
                    CHAT["messages"][0],
                ]
            },  # noqa: E501
        ),
    ],
)
def test_a_messages_request_reaches_the_engine_as_its_chat_equivalent(
    messages_fields: dict[str, Any], chat_fields: dict[str, Any]
) -> None:
    for kind in ("vllm", "llamacpp"):
        got = _engine_request(kind, "/v1/messages", _ask(**messages_fields))
        want = _engine_request(kind, "/v1/chat/completions", {**CHAT, **chat_fields})
        assert got == want


HISTORY_MESSAGES = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "use the tool", "signature": "x"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "18C"}]},
            {"type": "text", "text": "Thanks!"},
        ],
    },
]
HISTORY_CHAT = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "Checking."}],
        "reasoning": "use the tool",
        "tool_calls": [
            {"id": "toolu_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "toolu_1", "content": "18C"},
    {"role": "user", "content": [{"type": "text", "text": "Thanks!"}]},
]


def test_history_blocks_render_as_chat_turns() -> None:
    got = _engine_request("vllm", "/v1/messages", _ask(messages=HISTORY_MESSAGES, tools=[WEATHER]))
    want = _engine_request("vllm", "/v1/chat/completions", {**CHAT, "messages": HISTORY_CHAT, "tools": [CHAT_WEATHER]})
    assert got == want
    assert '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>' in got["prompt"]
    assert "<|im_start|>tool\n18C<|im_end|>" in got["prompt"]


def test_a_final_assistant_turn_is_a_prefill() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure,"}]
    got = _engine_request("vllm", "/v1/messages", _ask(messages=messages))
    assert got["prompt"].endswith("<|im_start|>assistant\nSure,")  # continued, no new turn opened


def test_thinking_switches_the_parser_with_the_template() -> None:
    with stack("vllm", _play("<think>plan</think>Hi"), served_model("qwen3", "hermes")) as (replay, app):
        client = _client(app)
        on = client.messages.create(**_ask(thinking={"type": "enabled", "budget_tokens": 1024}, max_tokens=2048))
        off = client.messages.create(**_ask(thinking={"type": "disabled"}))
    assert _blocks(on) == [
        {"type": "thinking", "thinking": "plan", "signature": "trisect-unsigned"},
        {"type": "text", "text": "Hi"},
    ]
    assert _blocks(off) == [{"type": "text", "text": "<think>plan</think>Hi"}]  # thinking off: the markers are text


def test_count_tokens_is_the_engines_count_of_the_rendered_prompt() -> None:
    script = Script(choices=[ReplayChoice(_pieces("x"))], prompt_tokens=42)
    with stack("vllm", lambda body: script, served_model("qwen3", "hermes")) as (replay, app):
        count = _client(app).messages.count_tokens(model="test-model", messages=HISTORY_MESSAGES, tools=[WEATHER])
        assert count.input_tokens == 42
        (request,) = replay.requests
        assert request["max_tokens"] == 1 and "<|im_start|>tool\n18C<|im_end|>" in request["prompt"]


def test_errors_are_anthropic_shaped() -> None:
    with stack("vllm", _play("hi"), served_model(None, "hermes"), api_key="s3cret") as (replay, app):
        client = _client(app, api_key="s3cret")
        with pytest.raises(anthropic.BadRequestError) as err:
            client.messages.create(model="test-model", max_tokens=0, messages=[{"role": "user", "content": "x"}])
        assert err.value.body["type"] == "error" and err.value.body["error"]["type"] == "invalid_request_error"
        for bad, where in [
            ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "tools[0]"),
            ({"messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]}, "messages[0]"),
            ({"container": "c"}, "container"),
            ({"thinking": {"type": "enabled", "budget_tokens": 100}}, "budget_tokens"),
            ({"frobnicate": 1}, "frobnicate"),
        ]:
            r = httpx.post(app.url + "/v1/messages", json=_ask(**bad), headers={"x-api-key": "s3cret"})
            assert r.status_code == 400 and where in r.json()["error"]["message"], (bad, r.text)
            assert set(r.json()) == {"type", "error"} and set(r.json()["error"]) == {"type", "message"}
        with pytest.raises(anthropic.NotFoundError) as err:
            client.messages.create(**_ask(model="nope"))
        assert err.value.body["error"]["type"] == "not_found_error"
        with pytest.raises(anthropic.AuthenticationError):
            _client(app, api_key="wrong").messages.create(**_ask())
        assert replay.requests == []


def test_a_failing_upstream_is_an_api_error_streamed_and_not() -> None:
    script = Script(status=500, error={"error": {"message": "engine says no"}})
    with stack("vllm", lambda body: script, served_model(None, "hermes")) as (replay, app):
        with pytest.raises(anthropic.APIStatusError) as err:
            _client(app).messages.create(**_ask())
        assert err.value.status_code == 502 and err.value.body["error"]["type"] == "api_error"
        assert "engine says no" in err.value.body["error"]["message"]
    broken = Script(choices=[ReplayChoice(_pieces("Hello there, this breaks"))], error_after=3)
    with stack("vllm", lambda body: broken, served_model(None, "hermes")) as (replay, app):
        r = httpx.post(app.url + "/v1/messages", json=_ask(stream=True))
        events = _sse(r.text)
        assert events[0][1]["type"] == "message_start" and events[-1][1]["type"] == "error"
        assert events[-2][1]["type"] == "content_block_stop"  # the open block is closed first
        with pytest.raises(anthropic.APIStatusError), _client(app).messages.stream(**_ask()) as stream:
            stream.get_final_message()


def test_every_request_field_is_accepted_mapped_or_refused() -> None:
    assert {how for how, _ in FIELDS.values()} == {"accepted", "mapped", "refused"}
    with stack("vllm", _play("ok"), served_model(None, "hermes")) as (replay, app):
        for name, (how, _) in FIELDS.items():
            if how != "refused":
                continue
            r = httpx.post(app.url + "/v1/messages", json=_ask(**{name: {"x": 1}}))
            assert r.status_code == 400 and name in r.json()["error"]["message"]


def test_the_sdk_tool_runner_drives_a_tool_loop() -> None:
    def responder(body: dict[str, Any]) -> list[ReplayChoice]:
        done = "<|im_start|>tool\n" in body["prompt"]
        return [ReplayChoice(_pieces("It is 18C in Paris." if done else "Let me check. " + CALL))]

    asked: list[str] = []

    @anthropic.beta_tool
    def get_weather(city: str) -> str:
        """Get the weather in a city.

        Args:
            city: the city
        """
        asked.append(city)
        return "18C"

    with stack("vllm", responder, served_model(None, "hermes")) as (replay, app):
        runner = _client(app).beta.messages.tool_runner(
            model="test-model",
            max_tokens=200,
            tools=[get_weather],
            messages=[{"role": "user", "content": "Paris?"}],
            thread=False,  # the whole history every turn: trisect keeps no server-side thread
        )
        final = runner.until_done()
    assert asked == ["Paris"]
    assert final.stop_reason == "end_turn" and final.content[-1].text == "It is 18C in Paris."
    assert len(replay.requests) == 2 and "18C" in replay.requests[1]["prompt"]


def test_the_docs_field_table_is_the_servers() -> None:
    from pathlib import Path

    from trisect.serve.anthropic.request import markdown_table

    docs = (Path(__file__).resolve().parent.parent / "docs" / "serve.md").read_text(encoding="utf-8")
    assert markdown_table() in docs
