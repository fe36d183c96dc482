"""``trisect serve`` end to end: the official ``openai`` client (sync and async, streamed and
not) against the server in front of a replay engine of each upstream kind, which plays recorded
cases from ``tests/cases`` in that kind's wire format, token ids included.

Each answer must equal the library's: the non-streamed message ``trisect.chat.chat_completion``
of the same output, the streamed chunks exactly those a ``ChatStream`` returns for the same
engine steps, and their fold the same message. Tool-call ids (random where the model wrote
none) are compared by position.
"""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest

from support import cases, tokenizers
from support.serving import ReplayChoice, replay_pieces, served_model, stack
from trisect.openai import ChatStream, chat_completion

KINDS = ("vllm", "sglang", "llamacpp", "openai")
FAMILIES = {  # (tokenizer, reasoning, tools) -> cases to play
    ("qwen3", "qwen3", "hermes"): 3,
    ("qwen3", "qwen3", "qwen3_coder"): 2,
    ("deepseek_v3", "deepseek_v3", "deepseek_v32"): 2,
    ("gpt_oss", "openai_gptoss", "openai"): 2,
    ("llama3", None, "llama3_json"): 2,
    (None, None, "hermes"): 1,
}


def _pick() -> list[dict[str, Any]]:
    chosen: list[dict[str, Any]] = []
    for family, count in FAMILIES.items():
        found = [
            c
            for c in cases.load_cases()
            if (c["tokenizer"], c["reasoning"], c["tools_format"]) == family
            and set(c["options"]) <= {"chat_template_kwargs"}
            and not c.get("ids_only")
        ]
        chosen += found[:count]
    return chosen


CASES = _pick()


def _tokenizer(case: dict[str, Any]) -> Any:
    return tokenizers.load(case["tokenizer"]) if case["tokenizer"] else None


def _normalize(value: Any) -> Any:
    """Drop envelope fields that differ per request and number tool-call ids by position."""
    if isinstance(value, dict):
        out = {k: _normalize(v) for k, v in value.items() if k not in ("id", "created", "system_fingerprint")}
        if "index" in value and "function" in value and "id" in value:
            out["id"] = f"call-{value['index']}"
        return out
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    return value


def _message_calls(message: dict[str, Any]) -> dict[str, Any]:
    out = dict(message)
    if out.get("tool_calls"):
        out["tool_calls"] = [{**c, "id": f"call-{i}"} for i, c in enumerate(out["tool_calls"])]
    return out


class Player:
    """Plays the case named in the request's last user message."""

    def __init__(self) -> None:
        self.by_id = {c["id"]: c for c in CASES}

    def __call__(self, body: dict[str, Any]) -> list[ReplayChoice]:
        prompt = body.get("prompt") or body.get("text")
        case = next(c for cid, c in self.by_id.items() if f"case:{cid}\n" in prompt)
        finish = "length" if case["truncated"] else "stop"
        return [ReplayChoice(replay_pieces(case), finish)] * int(body.get("n") or 1)


@pytest.fixture(scope="module", params=KINDS)
def server(request: pytest.FixtureRequest) -> Any:
    first = CASES[0]
    with stack(
        request.param, Player(), served_model(first["reasoning"], first["tools_format"], _tokenizer(first))
    ) as s:
        yield request.param, s


def _use(app: Any, case: dict[str, Any]) -> None:
    app.service.served = served_model(case["reasoning"], case["tools_format"], _tokenizer(case))


def _request(case: dict[str, Any], **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "test-model",
        "messages": [{"role": "user", "content": f"case:{case['id']}\n"}],
        **extra,
    }
    if case["tools"]:
        body["tools"] = case["tools"]
    kwargs = case["options"].get("chat_template_kwargs")
    if kwargs:
        body["extra_body"] = {"chat_template_kwargs": kwargs}
    return body


def _options(case: dict[str, Any], prompt: str) -> dict[str, Any]:
    kwargs = {
        **case["options"].get("chat_template_kwargs", {}),
        "add_generation_prompt": True,
        "continue_final_message": False,
    }
    return {
        "tools": case["tools"] or None,
        "chat_template_kwargs": kwargs,
        "include_reasoning": True,
        "parallel_tool_calls": True,
        "history_tool_calls": 0,
        "prompt_text": prompt,
    }


def _steps(kind: str, case: dict[str, Any]) -> list[tuple[str, tuple[int, ...] | None]]:
    ids = kind != "openai"
    return [(p.text, p.token_ids if ids and p.token_ids else None) for p in replay_pieces(case)]


def _expected_chunks(app: Any, kind: str, case: dict[str, Any], prompt: str) -> list[dict[str, Any]]:
    stream = ChatStream(app.service.served.parser, model="test-model", prompt_tokens=7, **_options(case, prompt))
    chunks: list[dict[str, Any]] = []
    steps = _steps(kind, case)
    for text, ids in steps:
        chunks += stream.feed(text, ids)
    count = sum(len(p.token_ids) for p in replay_pieces(case))  # the engine's count, ids sent or not
    chunks += stream.finish("length" if case["truncated"] else "stop", completion_tokens=count)
    return chunks


def _expected_completion(app: Any, kind: str, case: dict[str, Any], prompt: str) -> dict[str, Any]:
    steps = _steps(kind, case)
    ids = [i for _, group in steps for i in (group or ())] or None
    return chat_completion(
        app.service.served.parser,
        "".join(t for t, _ in steps),
        token_ids=ids,
        finish_reason="length" if case["truncated"] else "stop",
        completion_tokens=sum(len(p.token_ids) for p in replay_pieces(case)),
        model="test-model",
        prompt_tokens=7,
        **_options(case, prompt),
    )


def _fold(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    reasoning, content, calls = [], [], {}
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            reasoning.append(delta.get("reasoning") or "")
            content.append(delta.get("content") or "")
            for piece in delta.get("tool_calls") or ():
                call = calls.setdefault(piece["index"], {"name": "", "arguments": ""})
                call["name"] += piece["function"].get("name") or ""
                call["arguments"] += piece["function"].get("arguments") or ""
    return {
        "reasoning": "".join(reasoning) or None,
        "content": "".join(content) or None,
        "calls": [calls[i] for i in sorted(calls)],
    }


def _message_fold(message: dict[str, Any]) -> dict[str, Any]:
    calls = [
        {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
        for c in message.get("tool_calls") or ()
    ]
    return {"reasoning": message.get("reasoning"), "content": message.get("content"), "calls": calls}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_sync_client_equals_the_library(server: Any, case: dict[str, Any]) -> None:
    kind, (replay, app) = server
    _use(app, case)
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="unused", max_retries=0)

    whole = client.chat.completions.create(**_request(case)).to_dict()
    prompt = replay.requests[-1].get("prompt") or replay.requests[-1].get("text")
    expected = _expected_completion(app, kind, case, prompt)
    assert _normalize(whole) == _normalize(expected)

    chunks = [c.to_dict() for c in client.chat.completions.create(**_request(case), stream=True)]
    expected_chunks = _expected_chunks(app, kind, case, prompt)
    assert _normalize(chunks) == _normalize(expected_chunks)
    if not case["truncated"]:  # a truncated call: the stream sent it, the whole message has it as raw text
        assert _fold(chunks) == _message_fold(expected["choices"][0]["message"])


def test_async_client_stream_and_not(server: Any) -> None:
    kind, (replay, app) = server
    case = CASES[0]
    _use(app, case)

    async def run() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        async with openai.AsyncOpenAI(base_url=app.url + "/v1", api_key="unused", max_retries=0) as client:
            whole = (await client.chat.completions.create(**_request(case))).to_dict()
            stream = await client.chat.completions.create(
                **_request(case), stream=True, stream_options={"include_usage": True}
            )
            chunks = [c.to_dict() async for c in stream]
        return whole, chunks

    whole, chunks = asyncio.run(run())
    prompt = replay.requests[-1].get("prompt") or replay.requests[-1].get("text")
    expected = _expected_completion(app, kind, case, prompt)
    assert _normalize(whole) == _normalize(expected)
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == whole["usage"]
    assert _normalize(chunks[:-1]) == _normalize(_expected_chunks(app, kind, case, prompt))


def test_n_choices_each_equal_the_library(server: Any) -> None:
    kind, (replay, app) = server
    case = CASES[0]
    _use(app, case)
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="unused", max_retries=0)
    before = len(replay.requests)
    whole = client.chat.completions.create(**_request(case), n=3, seed=11).to_dict()
    sent = replay.requests[before:]
    if kind in ("vllm", "openai"):
        assert len(sent) == 1 and sent[0]["n"] == 3 and sent[0]["seed"] == 11  # the engine samples n itself
    else:
        assert len(sent) == 3  # fanned out, one request per choice, seeds 11, 12, 13
        seeds = sorted(b.get("seed", b.get("sampling_params", {}).get("sampling_seed")) for b in sent)
        assert seeds == [11, 12, 13]
    prompt = sent[0].get("prompt") or sent[0].get("text")
    expected = _expected_completion(app, kind, case, prompt)["choices"][0]
    assert [c["index"] for c in whole["choices"]] == [0, 1, 2]
    for choice in whole["choices"]:
        assert _normalize({**choice, "index": 0}) == _normalize(expected)
    ids_per_choice = sum(len(p.token_ids) for p in replay_pieces(case)) if kind != "openai" else None
    if ids_per_choice is not None:
        assert whole["usage"]["completion_tokens"] == 3 * ids_per_choice
    stream = client.chat.completions.create(**_request(case), n=2, stream=True)
    by_choice: dict[int, list[dict[str, Any]]] = {0: [], 1: []}
    for chunk in stream:
        for choice in chunk.to_dict()["choices"]:
            by_choice[choice["index"]].append({"choices": [{**choice, "index": 0}]})
    for index in (0, 1):
        assert _fold(by_choice[index]) == _message_fold(expected["message"])


def test_return_token_ids_and_logprobs(server: Any) -> None:
    kind, (replay, app) = server
    case = CASES[0]
    _use(app, case)
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="unused", max_retries=0)
    if kind == "openai":
        with pytest.raises(openai.BadRequestError) as err:
            client.chat.completions.create(**_request(case), extra_body={"return_token_ids": True})
        assert err.value.body["param"] == "return_token_ids"
        return
    whole = client.chat.completions.create(**_request(case), extra_body={"return_token_ids": True}).to_dict()
    assert whole["choices"][0]["token_ids"] == cases.token_ids(case)
    hidden = client.chat.completions.create(
        **_request(case), extra_body={"return_token_ids": True, "include_reasoning": False}
    ).to_dict()
    assert "token_ids" not in hidden["choices"][0] and "reasoning" not in hidden["choices"][0]["message"]


def test_request_fields_reach_the_engine(server: Any) -> None:
    kind, (replay, app) = server
    case = CASES[0]
    _use(app, case)
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="unused", max_retries=0)
    client.chat.completions.create(
        **_request(case),
        max_completion_tokens=99,
        temperature=0.5,
        top_p=0.9,
        stop=["END"],
        seed=3,
        presence_penalty=0.1,
        frequency_penalty=0.2,
    )
    body = replay.requests[-1]
    params = body.get("sampling_params", body)
    max_name = {"vllm": "max_tokens", "openai": "max_tokens", "sglang": "max_new_tokens", "llamacpp": "n_predict"}
    assert params[max_name[kind]] == 99
    assert params["temperature"] == 0.5 and params["top_p"] == 0.9 and params["stop"] == ["END"]
    assert params["presence_penalty"] == 0.1 and params["frequency_penalty"] == 0.2
    assert params.get("seed", params.get("sampling_seed")) == 3
    if kind == "vllm":
        assert body["skip_special_tokens"] is False and body["add_special_tokens"] is False
        assert body["return_token_ids"] is True
    if kind == "llamacpp":
        assert "<tool_call>" in body["preserved_tokens"] and body["return_tokens"] is True
    if kind == "sglang":
        assert params["skip_special_tokens"] is False
    extra = {"top_k": 5, "min_p": 0.1, "repetition_penalty": 1.1}
    if kind == "openai":
        with pytest.raises(openai.BadRequestError) as err:
            client.chat.completions.create(**_request(case), extra_body={"top_k": 5})
        assert err.value.body["param"] == "top_k" and err.value.status_code == 400
    else:
        client.chat.completions.create(**_request(case), extra_body=extra)
        params = replay.requests[-1].get("sampling_params", replay.requests[-1])
        assert params["top_k"] == 5 and params["min_p"] == 0.1
        assert params["repeat_penalty" if kind == "llamacpp" else "repetition_penalty"] == 1.1


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"echo": True}, "echo"),
        ({"use_beam_search": True}, "use_beam_search"),
        ({"skip_special_tokens": True}, "skip_special_tokens"),
        ({"no_such_field": 1}, "no_such_field"),
        ({"temperature": "hot"}, "temperature"),
        ({"n": 0}, "n"),
        ({"top_logprobs": 3}, "top_logprobs"),
        ({"stream_options": {"include_usage": True}}, "stream_options"),
        ({"response_format": {"type": "yaml"}}, "response_format"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
            "messages[0].content[0]",
        ),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
        ({"tool_choice": {"type": "function", "function": {"name": "no_such_tool"}}}, None),
        ({"stop_token_ids": [1]}, "stop_token_ids"),
    ],
)
def test_bad_fields_are_a_400_naming_them(server: Any, extra: dict[str, Any], param: str | None) -> None:
    kind, (replay, app) = server
    case = CASES[0]
    _use(app, case)
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="unused", max_retries=0)
    body = {**_request(case)}
    body.pop("extra_body", None)
    known = {"messages", "temperature", "n", "top_logprobs", "stream_options", "response_format"}
    extra_body = {k: v for k, v in extra.items() if k not in known}
    body.update({k: v for k, v in extra.items() if k in known})
    if kind in ("vllm", "sglang") and "stop_token_ids" in extra:
        client.chat.completions.create(**body, extra_body=extra_body)  # those kinds take it
        return
    before = len(replay.requests)
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(**body, extra_body=extra_body)
    error = err.value.body
    assert set(error) == {"message", "type", "param", "code"} and error["type"] == "invalid_request_error"
    if param is not None:
        assert error["param"] == param
    assert len(replay.requests) == before  # rejected before the engine was asked


def test_history_reaches_the_template_as_vllm_passes_it(server: Any) -> None:
    kind, (replay, app) = server
    case = CASES[0]
    _use(app, case)
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="unused", max_retries=0)
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "be"}, {"type": "text", "text": "brief"}]},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "reasoning": "think",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "user", "content": f"case:{case['id']}\n"},
    ]
    client.chat.completions.create(model="test-model", messages=messages, tools=case["tools"])
    prompt = replay.requests[-1].get("prompt") or replay.requests[-1].get("text")
    assert "<|im_start|>system\nbe\nbrief<|im_end|>" in prompt  # text parts joined with "\n"
    # arguments decoded to an object before the template's tojson
    assert '<tool_call>{"name": "get_weather", "arguments": {"location": "Paris"}}</tool_call>' in prompt
    assert "<|im_start|>tool\nsunny<|im_end|>" in prompt


def test_field_table_in_the_docs_is_the_code_table() -> None:
    from pathlib import Path

    from trisect.serve.request_fields import markdown_table

    docs = (Path(__file__).resolve().parent.parent / "docs" / "serve.md").read_text(encoding="utf-8")
    assert markdown_table() in docs
