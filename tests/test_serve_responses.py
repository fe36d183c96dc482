"""``POST /v1/responses`` with the official client: ``client.responses.create`` streamed and
not, sync and async, and the client's own stream accumulator (``client.responses.stream``),
which checks the event order (an item is added before its deltas, done before the response
completes). Every event is validated against the ``openai`` package's event types.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import openai
import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from support.serving import ReplayChoice, ReplayPiece, served_model, stack
from trisect import Parser
from trisect.serve.replay import Script

TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
OUTPUT = (
    "<think>The user wants weather.</think>Let me check. "
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
)
EVENTS = TypeAdapter(ResponseStreamEvent)


def _pieces(text: str, size: int = 5) -> tuple[ReplayPiece, ...]:
    return tuple(ReplayPiece(text[i : i + size]) for i in range(0, len(text), size))


@pytest.fixture(scope="module")
def server() -> Any:
    outputs = {"weather": OUTPUT, "plain": "</think>Just text.", "long": "<think>x</think>cut he"}

    def responder(body: dict[str, Any]) -> Any:
        key = next(k for k in outputs if f"[{k}]" in body["prompt"])
        return [ReplayChoice(_pieces(outputs[key]), "length" if key == "long" else "stop")]

    with stack("vllm", responder, served_model("qwen3", "hermes")) as s:
        yield s


def _expected() -> Any:
    chat_tools = [{"type": "function", "function": {k: v for k, v in t.items() if k != "type"}} for t in TOOLS]
    return Parser("qwen3", "hermes").parse(OUTPUT, tools=chat_tools)


def _check_output(response: Response) -> None:
    message = _expected()
    kinds = [item.type for item in response.output]
    assert kinds == ["reasoning", "message", "function_call", "function_call"]
    reasoning, text, *calls = response.output
    assert reasoning.content[0].text == message.reasoning
    assert response.output_text == text.content[0].text == message.content
    assert [(c.name, c.arguments) for c in calls] == [(c.name, c.arguments) for c in message.tool_calls]
    assert all(c.call_id and c.status == "completed" for c in calls)
    assert response.status == "completed" and response.usage is not None


def test_create_not_streamed(server: Any) -> None:
    replay, app = server
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0)
    response = client.responses.create(
        model="test-model", input="[weather] in Paris and Rome?", tools=TOOLS, instructions="be brief"
    )
    _check_output(response)
    Response.model_validate(response.to_dict())  # every field the types require is there
    assert replay.requests[-1]["prompt"].startswith("<|im_start|>system\nbe brief<|im_end|>")


def test_create_streamed_events_are_valid_and_fold_to_the_answer(server: Any) -> None:
    replay, app = server
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0)
    events = list(client.responses.create(model="test-model", input="[weather]", tools=TOOLS, stream=True))
    for event in events:
        EVENTS.validate_python(event.to_dict())
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    for required in (
        "response.reasoning_text.delta",
        "response.output_text.delta",
        "response.function_call_arguments.delta",
        "response.output_item.added",
        "response.output_item.done",
        "response.content_part.added",
    ):
        assert required in kinds
    final = events[-1].response
    _check_output(final)
    reasoning = "".join(e.delta for e in events if e.type == "response.reasoning_text.delta")
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert (reasoning, text) == (_expected().reasoning, _expected().content)
    not_streamed = client.responses.create(model="test-model", input="[weather]", tools=TOOLS)
    assert [i.type for i in not_streamed.output] == [i.type for i in final.output]


def test_stream_helper_accumulates(server: Any) -> None:
    replay, app = server
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0)
    with client.responses.stream(model="test-model", input="[weather]", tools=TOOLS) as stream:
        for _ in stream:
            pass
        final = stream.get_final_response()
    _check_output(final)


def test_async_client(server: Any) -> None:
    replay, app = server

    async def run() -> tuple[Response, list[Any]]:
        async with openai.AsyncOpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0) as client:
            whole = await client.responses.create(model="test-model", input="[weather]", tools=TOOLS)
            stream = await client.responses.create(model="test-model", input="[weather]", tools=TOOLS, stream=True)
            return whole, [e async for e in stream]

    whole, events = asyncio.run(run())
    _check_output(whole)
    _check_output(events[-1].response)


def test_input_items_history_and_incomplete(server: Any) -> None:
    replay, app = server
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0)
    items = [
        {"role": "user", "content": [{"type": "input_text", "text": "weather?"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "hm"}]},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"role": "user", "content": "[plain]"},
    ]
    response = client.responses.create(model="test-model", input=items, tools=TOOLS, max_output_tokens=50)
    assert response.output_text == "Just text." and [i.type for i in response.output] == ["message"]
    prompt = replay.requests[-1]["prompt"]
    assert '"arguments": {"city": "Paris"}' in prompt and "<|im_start|>tool\nsunny" in prompt
    assert replay.requests[-1]["max_tokens"] == 50
    cut = client.responses.create(model="test-model", input="[long]")
    assert cut.status == "incomplete" and cut.incomplete_details.reason == "max_output_tokens"
    events = list(client.responses.create(model="test-model", input="[long]", stream=True))
    assert events[-1].type == "response.incomplete"


def test_stateful_and_unknown_fields_are_a_400(server: Any) -> None:
    replay, app = server
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0)
    with pytest.raises(openai.BadRequestError) as err:
        client.responses.create(model="test-model", input="[plain]", previous_response_id="resp_1")
    assert err.value.body["param"] == "previous_response_id"
    with pytest.raises(openai.BadRequestError) as err:
        client.responses.create(model="test-model", input="[plain]", tools=[{"type": "web_search"}])
    assert err.value.body["param"] == "tools[0]"


def test_failure_mid_stream_is_error_then_response_failed() -> None:
    script = Script(choices=(ReplayChoice(_pieces("</think>Hello there")),), break_after=2)
    with stack("vllm", lambda body: script, served_model("qwen3", "hermes")) as (replay, app):
        r = httpx.post(app.url + "/v1/responses", json={"model": "test-model", "input": "x", "stream": True})
        events = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: ")]
        for event in events:
            EVENTS.validate_python(event)
        assert [e["type"] for e in events[-2:]] == ["error", "response.failed"]
        text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
        assert text and "Hello there".startswith(text)
