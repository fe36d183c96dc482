"""``trisect serve --scale-out`` in one process: vLLM 0.33's derender and render endpoints over
trisect (``trisect.serve.scale_out``), as functions and over HTTP.

The cases of ``tests/cases`` that have token ids are derendered chunk by chunk, each chunk
resumed from the previous answer's ``stream_state`` alone, and must give ``parse()``'s message
of the same ids; the errors are vLLM's shapes and codes; ``stream_state`` stays bounded.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import pytest
from starlette.testclient import TestClient

from support import cases, tokenizers
from support.serving import served_model
from trisect import Parser
from trisect.engine.envelope import OVERHEAD
from trisect.serve.plan import chat_plan
from trisect.serve.scale_out import RenderOnly
from trisect.serve.scale_out.app import create_scale_out_app
from trisect.serve.scale_out.derender import STATE_FIELD, Derenderer
from trisect.serve.scale_out.render import Renderer
from trisect.serve.service import Service

KEY = b"a state key of thirty-two bytes!"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
PROMPT = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"
OUTPUT = (
    "<think>\nThe user wants the weather. 天気 😀\n</think>\n\nLet me check.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)
EOS = 151645  # <|im_end|>
NO_THINK = "<|im_start|>assistant\n<think>\n\n</think>\n\n"  # a prompt that closed reasoning (Qwen3, thinking off)


def _qwen() -> Derenderer:
    parser = Parser("qwen3", "hermes", tokenizer=tokenizers.load("qwen3"))
    return Derenderer(parser, KEY, model_names=("test-model",), eos_id=EOS)


def _body(
    ids: list[int], *, finish: str | None = None, state: Any = None, chat: Any = None, prompt: Any = None, **more: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "stream": True,
        "generate_chunk": {"request_id": "r1", "choices": [{"index": 0, "token_ids": ids, "finish_reason": finish}]},
        "stream_state": state,
        "chat_request": chat if chat is not None else {"messages": [{"role": "user", "content": "hi"}]},
    }
    if prompt is not None:
        body["prompt_token_ids"] = prompt
    body.update(more)
    return body


def _stream(
    derender: Derenderer, ids: list[int], sizes: list[int], chat: dict[str, Any], prompt: list[int] | None
) -> tuple[dict[str, Any], list[dict[str, Any]], list[int]]:
    """Feed ``ids`` in chunks of ``sizes``, each resumed from the last answer's state alone (the
    prompt on the first chunk only); the assembled message, the chunks, the state sizes."""
    state = None
    chunks: list[dict[str, Any]] = []
    sizes_seen: list[int] = []
    reasoning, content = [], []
    calls: list[dict[str, Any]] = []
    pos = 0
    for k, size in enumerate(sizes):
        piece = ids[pos : pos + size]
        pos += size
        last = k == len(sizes) - 1
        answer = derender.chat_chunk(
            _body(piece, finish="stop" if last else None, state=state, chat=chat, prompt=prompt if k == 0 else None)
        )
        json.dumps(answer)  # plain JSON
        state = answer["stream_state"]
        sizes_seen.append(len(base64.urlsafe_b64decode(state[STATE_FIELD])))
        chunk = answer["chunk"]
        chunks.append(chunk)
        (choice,) = chunk["choices"]
        delta = choice["delta"]
        reasoning.append(delta["reasoning"] or "")
        content.append(delta["content"] or "")
        for tc in delta["tool_calls"]:
            if tc["index"] == len(calls):
                calls.append({"id": tc["id"], "name": tc["function"]["name"], "arguments": ""})
            calls[tc["index"]]["arguments"] += tc["function"]["arguments"] or ""
    message = {"reasoning": "".join(reasoning) or None, "content": "".join(content) or None, "tool_calls": calls}
    return message, chunks, sizes_seen


def test_a_stream_chunk_by_chunk_is_the_whole_derender() -> None:
    derender = _qwen()
    ids = tokenizers.encode("qwen3", OUTPUT) + [EOS]
    prompt = tokenizers.encode("qwen3", PROMPT)
    chat = {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": TOOLS}
    whole = derender.chat(
        {
            "generate_response": {"request_id": "r", "choices": [{"index": 0, "token_ids": ids}]},
            "chat_request": chat,
            "prompt_token_ids": prompt,
        }
    )
    (choice,) = whole["choices"]
    msg = choice["message"]
    assert (msg["reasoning"], msg["content"]) == ("The user wants the weather. 天気 😀", "Let me check.")
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in msg["tool_calls"]] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["stop_reason"] is None  # the tokenizer's own end-of-sequence token, as vLLM reports it
    assert whole["usage"]["completion_tokens"] == len(ids)
    for sizes in ([1] * len(ids), [3] * (len(ids) // 3) + [len(ids) % 3 or 3], [len(ids)]):
        sizes = [s for s in sizes if s]
        sizes[-1] += len(ids) - sum(sizes)
        streamed, chunks, _ = _stream(derender, ids, sizes, chat, prompt)
        assert streamed["reasoning"] == msg["reasoning"]
        assert streamed["content"] == msg["content"]
        assert [(c["name"], json.loads(c["arguments"])) for c in streamed["tool_calls"]] == [
            ("get_weather", {"city": "Paris"})
        ]
        assert streamed["tool_calls"][0]["id"]
        roles = [c["choices"][0]["delta"]["role"] for c in chunks]
        assert roles == ["assistant"] + [None] * (len(chunks) - 1)
        assert [c["choices"][0]["finish_reason"] for c in chunks] == [None] * (len(chunks) - 1) + ["tool_calls"]


def _chat_request(case: dict[str, Any]) -> tuple[dict[str, Any], list[int] | None]:
    """The chat request and prompt ids a render step would have sent for a case's options."""
    options = dict(case["options"])
    chat: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}]}
    if case.get("tools"):
        chat["tools"] = case["tools"]
    for name in ("chat_template_kwargs", "reasoning_effort", "tool_choice", "parallel_tool_calls"):
        if name in options:
            chat[name] = options[name]
    history = options.get("history_tool_calls", 0)
    if history:
        call = {"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        chat["messages"] = [{"role": "assistant", "content": "", "tool_calls": [call] * history}, *chat["messages"]]
    prompt: list[int] | None = options.get("prompt_token_ids")
    if "prompt_text" in options:
        prompt = tokenizers.encode(case["tokenizer"], options["prompt_text"])
    return chat, prompt


def _sample() -> list[dict[str, Any]]:
    seen: dict[tuple[Any, ...], int] = {}
    out = []
    for case in cases.load_cases():
        family = (case["tokenizer"], case["reasoning"], case["tools_format"])
        if case["tokenizer"] is None or case.get("truncated") or case.get("malformed"):
            continue
        if seen.get(family, 0) < 2:
            seen[family] = seen.get(family, 0) + 1
            out.append(case)
    return out


SAMPLE = _sample()
_PARSERS: dict[tuple[Any, ...], Derenderer] = {}


@pytest.mark.parametrize("case", SAMPLE, ids=[c["id"] for c in SAMPLE])
def test_every_tokenized_case_derenders_chunk_by_chunk_as_parse_does(case: dict[str, Any]) -> None:
    family = (case["tokenizer"], case["reasoning"], case["tools_format"])
    derender = _PARSERS.get(family)
    if derender is None:
        parser = Parser(case["reasoning"], case["tools_format"], tokenizer=tokenizers.load(case["tokenizer"]))
        derender = _PARSERS[family] = Derenderer(parser, KEY, model_names=("m",))
    ids = cases.token_ids(case)
    assert ids
    chat, prompt = _chat_request(case)
    if derender.needs_prompt and prompt is None:
        prompt = []
    options = {k: v for k, v in case["options"].items() if k not in ("prompt_text",)}
    if prompt is not None:
        options["prompt_token_ids"] = prompt
    if case.get("tools"):
        options["tools"] = case["tools"]
    want = derender.parser.parse(None, token_ids=ids, **options)
    rng = random.Random(case["id"])
    for sizes in ([1] * len(ids), _groups(rng, len(ids))):
        got, _, state_sizes = _stream(derender, ids, sizes, chat, prompt)
        assert got["reasoning"] == want.reasoning
        assert got["content"] == want.content
        assert [(c["name"], json.loads(c["arguments"])) for c in got["tool_calls"]] == [
            (c.name, json.loads(c.arguments)) for c in want.tool_calls
        ]


def _groups(rng: random.Random, n: int) -> list[int]:
    out = []
    while n > 0:
        k = min(n, rng.randint(1, 8))
        out.append(k)
        n -= k
    return out


def test_later_chunks_need_neither_the_prompt_nor_the_history() -> None:
    derender = _qwen()
    prompt = tokenizers.encode("qwen3", PROMPT)
    first = derender.chat_chunk(_body(tokenizers.encode("qwen3", "<think>\nhmm"), prompt=prompt))
    # the second chunk carries only its ids and the state: no prompt_token_ids, no earlier ids
    second = derender.chat_chunk(_body(tokenizers.encode("qwen3", " ok\n</think>\n\nHi"), state=first["stream_state"]))
    third = derender.chat_chunk(_body([EOS], finish="stop", state=second["stream_state"]))
    deltas = [a["chunk"]["choices"][0]["delta"] for a in (first, second, third)]
    assert "".join(d["reasoning"] or "" for d in deltas) == "hmm ok"
    assert "".join(d["content"] or "" for d in deltas) == "Hi"


def test_the_first_chunk_needs_the_prompt_where_it_decides_the_start() -> None:
    with pytest.raises(Exception) as info:
        _qwen().chat_chunk(_body([1, 2]))
    assert getattr(info.value, "param", None) == "prompt_token_ids"


def test_a_prompt_that_opened_reasoning_starts_the_stream_inside_it() -> None:
    derender = _qwen()
    prompt = tokenizers.encode("qwen3", PROMPT + "<think>\n")
    answer = derender.chat_chunk(_body(tokenizers.encode("qwen3", "thinking</think>\n\nDone"), prompt=prompt))
    delta = answer["chunk"]["choices"][0]["delta"]
    assert (delta["reasoning"], delta["content"]) == ("thinking", "Done")


def test_include_reasoning_false_hides_reasoning_logprobs_and_ids() -> None:
    derender = _qwen()
    ids = tokenizers.encode("qwen3", "<think>\nsecret\n</think>\n\nAnswer")
    chat = {"messages": [], "include_reasoning": False, "logprobs": True, "return_token_ids": True}
    logprobs = {"content": [{"token_id": t, "logprob": -0.5, "top_logprobs": []} for t in ids]}
    body = _body(ids, finish="stop", chat=chat, prompt=[])
    body["generate_chunk"]["choices"][0]["logprobs"] = logprobs
    (choice,) = derender.chat_chunk(body)["chunk"]["choices"]
    assert choice["delta"]["reasoning"] is None and choice["delta"]["content"] == "Answer"
    assert choice["logprobs"] is None and choice["token_ids"] is None


def test_logprobs_resolve_to_token_strings_with_byte_fallback_across_chunks() -> None:
    derender = _qwen()
    ids = tokenizers.encode("qwen3", "𒀀")  # one character, two byte tokens
    assert len(ids) > 1
    chat = {"messages": [], "logprobs": True, "top_logprobs": 1}
    state = None
    tokens = []
    for k, t in enumerate(ids):
        body = _body([t], state=state, chat=chat, prompt=[] if k == 0 else None)
        body["generate_chunk"]["choices"][0]["logprobs"] = {
            "content": [{"token_id": t, "logprob": -1.0, "top_logprobs": [{"token_id": t, "logprob": -1.0}]}]
        }
        answer = derender.chat_chunk(body)
        state = answer["stream_state"]
        (entry,) = answer["chunk"]["choices"][0]["logprobs"]["content"]
        assert entry["top_logprobs"][0]["token"] == entry["token"]
        tokens.append(entry["token"])
    assert tokens[0] == "" and "".join(tokens) == "𒀀"


def test_a_named_tool_choice_keeps_finish_reason_stop() -> None:
    derender = _qwen()
    chat = {"messages": [], "tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}
    ids = tokenizers.encode("qwen3", '{"city": "Paris"}')
    answer = derender.chat_chunk(_body(ids, finish="stop", chat=chat, prompt=tokenizers.encode("qwen3", NO_THINK)))
    (choice,) = answer["chunk"]["choices"]
    assert choice["finish_reason"] == "stop"
    assert choice["delta"]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_a_usage_only_chunk_passes_the_usage_and_keeps_the_state() -> None:
    derender = _qwen()
    first = derender.chat_chunk(_body(tokenizers.encode("qwen3", "Hi"), finish="stop", prompt=[]))
    body = _body([], state=first["stream_state"], prompt_tokens=7)
    body["generate_chunk"] = {"request_id": "r1", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
    answer = derender.chat_chunk(body)
    assert answer["chunk"]["choices"] == []
    assert answer["chunk"]["usage"]["prompt_tokens"] == 7 and answer["chunk"]["usage"]["completion_tokens"] == 2


def test_the_state_stays_within_2_kib_plus_held_text_at_every_chunk() -> None:
    derender = _qwen()
    reasoning = " ".join(f"step {i} of the plan." for i in range(300))
    arguments = json.dumps({"city": "Paris " * 200})
    call = f'{{"name": "get_weather", "arguments": {arguments}}}'
    text = f"<think>\n{reasoning}\n</think>\n\n<tool_call>\n{call}\n</tool_call>"
    ids = tokenizers.encode("qwen3", text)
    chat = {"messages": [], "tools": TOOLS}
    _, _, sizes = _stream(derender, ids, [1] * len(ids), chat, [])
    assert max(sizes) <= 2048 + OVERHEAD, max(sizes)


# ---------------------------------------------------------------------------------------- HTTP


def _app(derender: Derenderer | None = None, **kw: Any) -> TestClient:
    served = served_model("qwen3", "hermes", tokenizers.load("qwen3"))
    derender = derender or Derenderer(served.parser, KEY, model_names=served.names, eos_id=EOS)
    return TestClient(create_scale_out_app(derender, Renderer(Service(served, RenderOnly())), **kw))


def _error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["code"] == status
    return error


def test_over_http_a_stream_resumes_on_any_replica_with_the_same_key() -> None:
    replicas = [_app(), _app()]
    ids = tokenizers.encode("qwen3", OUTPUT)
    chat = {"messages": [], "tools": TOOLS}
    state = None
    args = ""
    for k, t in enumerate(ids):
        body = _body([t], finish="stop" if k == len(ids) - 1 else None, state=state, chat=chat, prompt=[])
        if k:
            del body["prompt_token_ids"]
        answer = replicas[k % 2].post("/v1/chat/completions/derender", json=body)
        assert answer.status_code == 200, answer.text
        state = answer.json()["stream_state"]
        for tc in answer.json()["chunk"]["choices"][0]["delta"]["tool_calls"]:
            args += tc["function"]["arguments"] or ""
    assert json.loads(args) == {"city": "Paris"}


def _state_after(client: TestClient, chat: dict[str, Any]) -> dict[str, Any]:
    body = _body(tokenizers.encode("qwen3", "<think>\nhmm"), chat=chat, prompt=[])
    state: dict[str, Any] = client.post("/v1/chat/completions/derender", json=body).json()["stream_state"]
    return state


def _next(client: TestClient, state: Any, chat: dict[str, Any] | None = None) -> Any:
    return client.post("/v1/chat/completions/derender", json=_body([13], state=state, chat=chat))


@pytest.mark.parametrize(
    "tamper",
    ["altered", "truncated", "extended", "not base64", "not an object", "empty", "another key", "another request"],
)
def test_a_wrong_stream_state_is_a_400_naming_stream_state(tamper: str) -> None:
    client = _app()
    chat = {"messages": [], "tools": TOOLS}
    state = _state_after(client, chat)
    raw = base64.urlsafe_b64decode(state[STATE_FIELD])
    other_chat = chat
    if tamper == "altered":
        raw = raw[:-40] + bytes([raw[-40] ^ 1]) + raw[-39:]
        given: Any = {STATE_FIELD: base64.urlsafe_b64encode(raw).decode()}
    elif tamper == "truncated":
        given = {STATE_FIELD: base64.urlsafe_b64encode(raw[:-1]).decode()}
    elif tamper == "extended":
        given = {STATE_FIELD: base64.urlsafe_b64encode(raw + b"\0").decode()}
    elif tamper == "not base64":
        given = {STATE_FIELD: "!!!"}
    elif tamper == "not an object":
        given = state[STATE_FIELD]
    elif tamper == "empty":
        given = {}
    elif tamper == "another key":
        given = state
        served = served_model("qwen3", "hermes", tokenizers.load("qwen3"))
        client = _app(Derenderer(served.parser, b"another key, also thirty-two b.", model_names=served.names))
    else:
        given = state
        other_chat = {"messages": [], "tools": TOOLS, "parallel_tool_calls": False}
    error = _error(_next(client, given, other_chat), 400)
    assert error["param"] == "stream_state" and "stream_state" in error["message"]


def test_a_state_of_another_parser_is_refused() -> None:
    state = _state_after(_app(), {"messages": []})
    tok = tokenizers.load("qwen3")
    other = Derenderer(Parser("deepseek_r1", "hermes", tokenizer=tok), KEY, model_names=("test-model",))
    error = _error(_next(_app(other), state, {"messages": []}), 400)
    assert error["param"] == "stream_state" and "formats" in error["message"]


def test_an_expired_state_is_refused() -> None:
    served = served_model("qwen3", "hermes", tokenizers.load("qwen3"))
    client = _app(Derenderer(served.parser, KEY, model_names=served.names, ttl=-10))
    error = _error(_next(client, _state_after(client, {"messages": []}), {"messages": []}), 400)
    assert error["param"] == "stream_state" and "expired" in error["message"]


def test_missing_chat_request_is_a_400() -> None:
    body = _body([1])
    del body["chat_request"]
    error = _error(_app().post("/v1/chat/completions/derender", json=body), 400)
    assert "chat_request" in error["message"]
    body = {"generate_response": {"choices": [{"index": 0, "token_ids": [1]}]}}
    assert "chat_request" in _error(_app().post("/v1/chat/completions/derender", json=body), 400)["message"]


def test_more_than_one_choice_per_chunk_is_a_400() -> None:
    body = _body([1], prompt=[])
    body["generate_chunk"]["choices"].append({"index": 1, "token_ids": [2]})
    error = _error(_app().post("/v1/chat/completions/derender", json=body), 400)
    assert "at most one choice per chunk" in error["message"]


def test_stop_strings_in_a_streamed_request_are_a_400() -> None:
    body = _body([1], prompt=[], chat={"messages": [], "stop": ["END"]})
    assert "stop strings" in _error(_app().post("/v1/chat/completions/derender", json=body), 400)["message"]


def test_an_oversized_body_is_a_413() -> None:
    client = _app(max_body_bytes=1000)
    body = _body(list(range(1000)), prompt=[])
    _error(client.post("/v1/chat/completions/derender", json=body), 413)


def test_a_body_that_is_not_an_object_is_a_400_and_an_unknown_model_a_404() -> None:
    client = _app()
    _error(client.post("/v1/chat/completions/derender", content=b"[1, 2, 3]"), 400)
    _error(client.post("/v1/chat/completions/derender", content=b"{"), 400)
    _error(client.post("/v1/chat/completions/derender", json={**_body([1], prompt=[]), "model": "nope"}), 404)
    _error(client.get("/v1/nothing"), 404)


def test_a_generate_response_that_is_not_tokens_is_a_400() -> None:
    body = {"generate_response": {"output_mode": "text", "choices": []}, "chat_request": {"messages": []}}
    assert "output_mode" in _error(_app().post("/v1/chat/completions/derender", json=body), 400)["message"]


def test_a_stop_string_cuts_a_whole_derender() -> None:
    derender = _qwen()
    ids = tokenizers.encode("qwen3", "Hello END world")
    body = {
        "generate_response": {
            "choices": [{"index": 0, "token_ids": ids, "finish_reason": "stop", "stop_reason": "END"}]
        },
        "chat_request": {"messages": []},
        "prompt_token_ids": tokenizers.encode("qwen3", NO_THINK),
    }
    (choice,) = derender.chat(body)["choices"]
    assert choice["message"]["content"] == "Hello" and choice["stop_reason"] == "END"


def test_completions_derender_streamed_is_the_whole_text() -> None:
    client = _app()
    ids = tokenizers.encode("qwen3", "Plain text 日本語 😀 done")
    whole = client.post(
        "/v1/completions/derender",
        json={"generate_responses": [{"request_id": "c", "choices": [{"index": 0, "token_ids": ids}]}]},
    )
    assert whole.status_code == 200, whole.text
    want = whole.json()["choices"][0]["text"]
    assert want == "Plain text 日本語 😀 done"
    state, text = None, ""
    for t in ids:
        body = {"stream": True, "generate_chunk": {"choices": [{"index": 0, "token_ids": [t]}]}, "stream_state": state}
        answer = client.post("/v1/completions/derender", json=body)
        assert answer.status_code == 200, answer.text
        state = answer.json()["stream_state"]
        text += answer.json()["chunk"]["choices"][0]["text"]
    assert text == want


def test_render_gives_the_templates_token_ids_and_the_constraint() -> None:
    client = _app()
    body = {"model": "test-model", "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": TOOLS}
    answer = client.post("/v1/chat/completions/render", json={**body, "tool_choice": "required", "max_tokens": 50})
    assert answer.status_code == 200, answer.text
    request = answer.json()
    served = served_model("qwen3", "hermes", tokenizers.load("qwen3"))
    rendered = Service(served, RenderOnly()).render(chat_plan(body, kind="vllm", default_model="test-model"))
    assert request["token_ids"] == tokenizers.encode("qwen3", rendered)
    assert request["sampling_params"]["max_tokens"] == 50
    assert "structured_outputs" in request["sampling_params"]
    assert request["output_mode"] == "tokens" and request["request_id"].startswith("chatcmpl-")
    assert request["parse_context"]["tools"] == TOOLS
    plain = client.post("/v1/chat/completions/render", json=body).json()
    assert "structured_outputs" not in plain["sampling_params"] and plain["reasoning_ended"] is None
