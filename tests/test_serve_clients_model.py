"""Real clients against the real embedded model (SmolLM2-135M, llama.cpp, one thread): the
official ``anthropic`` SDK (chat, thinking, a forced tool call, streamed and not, and its tool
runner driving a tool loop), the OpenAI Agents SDK (an agent's tool loop over chat
completions), raw ``/v1/completions`` and two servers chained over it, and ``/metrics``
scraped after all of it.

Runs only with ``-m model`` (``.ci/run``'s model step, ``CI=true``: a skip is a failure there).
Shapes are asserted, not wording: a 135M model calls tools reliably only when forced
(``docs/serve.md``), so the tool turns force them, and the turn after a tool result is free.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from support.extras import require
from support.serving import AppServer

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("clients")]

WEATHER = {
    "name": "get_weather",
    "description": "Get the current weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
ASK = [{"role": "user", "content": "What's the weather in Paris?"}]
GREEDY = {"extra_body": {"temperature": 0}}  # the SDK no longer sends sampling fields; the server still reads them
FORCED_ONE = {"type": "any", "disable_parallel_tool_use": True}


@pytest.fixture(scope="module")
def clients() -> None:
    require("xllamacpp", "serve")
    require("agents", "agents")


@pytest.fixture(scope="module")
def live() -> Iterator[Any]:
    from trisect.serve import default_model
    from trisect.serve.demo import LiveServer

    try:
        default_model.fetch()
    except default_model.ModelError as exc:
        pytest.skip(f"the default model cannot be fetched: {exc}")
    with LiveServer(threads=1) as server:
        yield server


@pytest.fixture(scope="module")
def messages(live: Any) -> Iterator[Any]:
    import anthropic

    with anthropic.Anthropic(base_url=live.url[: -len("/v1")], api_key="test", max_retries=0) as client:
        yield client


def _city(block: Any) -> str:
    assert block.type == "tool_use" and block.name == "get_weather" and set(block.input) == {"city"}
    assert isinstance(block.input["city"], str) and block.input["city"]
    return str(block.input["city"])


def test_anthropic_chat_streamed_and_not(messages: Any, live: Any) -> None:
    ask = {"model": live.model, "max_tokens": 32, "messages": [{"role": "user", "content": "Hi!"}], **GREEDY}
    whole = messages.messages.create(**ask)
    assert [b.type for b in whole.content] == ["text"] and whole.content[0].text.strip()
    assert whole.stop_reason in ("end_turn", "max_tokens") and whole.usage.input_tokens > 0
    assert 0 < whole.usage.output_tokens <= 32
    with messages.messages.stream(**ask) as stream:
        streamed = stream.get_final_message()
    assert [b.type for b in streamed.content] == ["text"]
    assert streamed.content[0].text == whole.content[0].text  # greedy: the same answer both ways
    assert messages.messages.count_tokens(model=live.model, messages=ask["messages"]).input_tokens == (
        whole.usage.input_tokens
    )


def test_anthropic_thinking_is_a_thinking_block(messages: Any, live: Any) -> None:
    message = messages.messages.create(
        model=live.model,
        max_tokens=1100,
        **GREEDY,
        thinking={"type": "enabled", "budget_tokens": 1024},
        messages=[{"role": "user", "content": "Is 7 prime?"}],
        stop_sequences=["\n\n\n"],
    )
    assert message.content[0].type == "thinking" and message.content[0].thinking.strip()
    off = messages.messages.create(
        model=live.model, max_tokens=24, thinking={"type": "disabled"}, messages=ASK, **GREEDY
    )
    assert all(b.type == "text" for b in off.content)


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_forced_tool_call(messages: Any, live: Any, stream: bool) -> None:
    ask = {"model": live.model, "max_tokens": 64, "tools": [WEATHER], "tool_choice": FORCED_ONE, **GREEDY}
    if stream:
        with messages.messages.stream(**ask, messages=ASK) as s:
            message = s.get_final_message()
    else:
        message = messages.messages.create(**ask, messages=ASK)
    calls = [b for b in message.content if b.type == "tool_use"]
    assert len(calls) == 1 and message.stop_reason == "tool_use"  # one call: disable_parallel_tool_use
    _city(calls[0])


def test_anthropic_tool_runner_drives_a_tool_loop(messages: Any, live: Any) -> None:
    import anthropic

    asked: list[str] = []

    @anthropic.beta_tool
    def get_weather(city: str) -> str:
        """Get the current weather in a city.

        Args:
            city: the city
        """
        asked.append(city)
        return f"Sunny, 21 C in {city}."

    runner = messages.beta.messages.tool_runner(
        model=live.model,
        max_tokens=64,
        **GREEDY,
        tools=[get_weather],
        tool_choice=FORCED_ONE,
        messages=ASK,
        thread=False,  # the whole history every turn: trisect keeps no server-side thread
        max_iterations=3,
    )
    turns = []
    for message in runner:
        turns.append(message)
        if message.stop_reason == "tool_use":  # the call was forced; the answer after it is free
            runner.set_messages_params(lambda params: {**params, "tool_choice": {"type": "none"}})
    assert turns[0].stop_reason == "tool_use" and len(asked) == 1 and asked[0]
    assert turns[-1].stop_reason in ("end_turn", "max_tokens") and turns[-1].content[-1].type == "text"
    assert len(turns) == 2


def test_openai_agents_sdk_runs_a_tool_loop(live: Any) -> None:
    import openai

    agents = require("agents", "agents")
    agents.set_tracing_disabled(True)
    asked: list[str] = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """Get the current weather in a city."""
        asked.append(city)
        return f"Sunny, 21 C in {city}."

    client = openai.AsyncOpenAI(base_url=live.url, api_key="test", max_retries=0)
    agent = agents.Agent(
        name="weather",
        instructions="Answer with the weather tool.",
        tools=[get_weather],
        model=agents.OpenAIChatCompletionsModel(model=live.model, openai_client=client),
        model_settings=agents.ModelSettings(
            tool_choice="required", parallel_tool_calls=False, temperature=0, max_tokens=64
        ),
        tool_use_behavior="stop_on_first_tool",
    )

    async def run() -> Any:
        try:
            return await agents.Runner.run(agent, "What's the weather in Paris?", max_turns=3)
        finally:
            await client.close()

    result = asyncio.run(run())
    assert len(asked) == 1 and asked[0] and result.final_output == f"Sunny, 21 C in {asked[0]}."


def test_raw_completions_and_two_servers_chained(live: Any) -> None:
    import openai

    from trisect.serve import default_model
    from trisect.serve.model import load_model
    from trisect.serve.service import Service
    from trisect.serve.upstream.http import HTTPUpstream

    raw = openai.OpenAI(base_url=live.url, api_key="test", max_retries=0)
    prompt = "<|im_start|>user\nSay hi.<|im_end|>\n<|im_start|>assistant\n"
    text = raw.completions.create(model=live.model, prompt=prompt, max_tokens=8, temperature=0).choices[0].text
    assert text.strip()
    options = default_model.serve_options()
    served = load_model(**options)  # serve_options names load_model's own arguments
    upstream = HTTPUpstream(live.url, "openai", model=live.model)
    with AppServer(Service(served, upstream)) as front:
        client = openai.OpenAI(base_url=front.url + "/v1", api_key="test", max_retries=0)
        ask = {"model": live.model, "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}
        via_front = client.chat.completions.create(**ask, temperature=0).choices[0].message.content
        direct = raw.chat.completions.create(**ask, temperature=0).choices[0].message.content
        assert via_front and via_front == direct  # rendered in front, generated behind: the same answer
        client.close()
    raw.close()


def test_metrics_scrape_after_the_real_requests(live: Any) -> None:
    import httpx
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(live.url[: -len("/v1")] + "/metrics").text
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }

    def total(name: str, **labels: str) -> float:
        return sum(v for (n, ls), v in samples.items() if n == name and set(labels.items()) <= set(ls))

    assert total("vllm:request_success_total") >= 8 and total("vllm:prompt_tokens_total") > 0
    assert total("vllm:generation_tokens_total") > 0 and total("vllm:time_to_first_token_seconds_count") >= 8
    assert total("trisect:requests_total", api="messages") >= 5 and total("trisect:requests_total", api="chat") >= 2
    assert total("trisect:parse_outcomes_total", kind="calls") >= 4  # the forced calls above
    assert total("trisect:request_added_seconds_count") >= 8
