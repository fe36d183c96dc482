"""Grammars sent to the engine, and grammars that start after reasoning ends.

The replay engines here behave like real ones on the points the server relies on: a stop string
ends the choice with ``stop_reason`` (vLLM) / ``stopping_word`` (llama.cpp) / ``matched``
(SGLang), its text is left out, its token ids are sent; a constrained request answers with
what the grammar allows.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from support import tokenizers
from support.serving import ReplayChoice, ReplayPiece, served_model, stack
from trisect import Parser
from trisect.grammar import json_schema, structural_tag
from trisect.openai import chat_completion

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
]
REASONING = "The user wants the weather, so I call get_weather."
CALLS = '[{"name": "get_weather", "parameters": {"city": "Paris"}}]'
ARGS = '{"city": "Paris"}'


def _constraint(body: dict[str, Any]) -> tuple[str, Any] | None:
    """(kind, value) of the grammar in an engine request body, any wire."""
    params = body.get("sampling_params", body)
    so = body.get("structured_outputs") or {}
    for key, value in (
        ("json_schema", params.get("json_schema")),
        ("json_schema", so.get("json")),
        ("structural_tag", so.get("structural_tag")),
        ("structural_tag", params.get("structural_tag")),
    ):
        if value is not None:
            return key, json.loads(value) if isinstance(value, str) else value
    return None


def _stops(body: dict[str, Any]) -> list[str]:
    return list(body.get("sampling_params", body).get("stop") or ())


class Engine:
    """Free text: the reasoning, stopped at ``</think>`` when that is a stop string (else the whole
    output); under a grammar: the JSON the grammar asks for."""

    def __init__(self, after: str, tokenizer: str | None = None) -> None:
        self.after = after
        self.tokenizer = tokenizer

    def _piece(self, text: str) -> ReplayPiece:
        ids = tuple(tokenizers.encode(self.tokenizer, text)) if self.tokenizer else ()
        return ReplayPiece(text, ids)

    def __call__(self, body: dict[str, Any]) -> list[ReplayChoice]:
        grammar = _constraint(body)
        if grammar is not None and grammar[0] == "structural_tag" and grammar[1]["format"].get("type") == "sequence":
            return [ReplayChoice((self._piece(f"<think>{REASONING}</think>\n\n{self.after}"),))]  # reasoning first
        if grammar is not None:
            return [ReplayChoice((self._piece(self.after),))]
        if "</think>" in _stops(body):
            marker = self._piece("")
            if self.tokenizer:  # the matched stop string's ids arrive, its text does not
                marker = ReplayPiece("", tuple(tokenizers.encode(self.tokenizer, "</think>")))
            return [
                # the model opens its block itself: Qwen3's prompt ends at the assistant's turn
                ReplayChoice(
                    (self._piece("<think>" + REASONING[:20]), self._piece(REASONING[20:]), marker),
                    stop_reason="</think>",
                )
            ]
        return [ReplayChoice((self._piece(f"<think>{REASONING}</think>{self.after}"),))]


def _ask(app: Any, **extra: Any) -> dict[str, Any]:
    client = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0)
    return client.chat.completions.create(
        model="test-model", messages=[{"role": "user", "content": "weather in Paris?"}], tools=TOOLS, **extra
    ).to_dict()


@pytest.mark.parametrize("kind", ["llamacpp", "sglang"])
@pytest.mark.parametrize("tokenizer", [None, "qwen3"])
def test_two_phases_grammar_after_reasoning(kind: str, tokenizer: str | None) -> None:
    tok = tokenizers.load(tokenizer) if tokenizer else None
    served = served_model("qwen3", "hermes", tok)
    with stack(kind, Engine(CALLS, tokenizer), served) as (replay, app):
        whole = _ask(app, tool_choice="required", max_completion_tokens=300)
        first, second = replay.requests
        assert _constraint(first) is None and "</think>" in _stops(first)  # phase one: free, stops at the marker
        assert _constraint(second) == ("json_schema", json_schema(TOOLS, "required"))
        prompt_key = "prompt" if kind == "llamacpp" else "text"
        assert second[prompt_key] == first[prompt_key] + "<think>" + REASONING + "</think>"
        used = (
            sum(len(tokenizers.encode("qwen3", t)) for t in ("<think>" + REASONING[:20], REASONING[20:], "</think>"))
            if tokenizer
            else 0
        )  # the ids phase one sent, the marker's included
        budget = second["n_predict"] if kind == "llamacpp" else second["sampling_params"]["max_new_tokens"]
        assert budget == 300 - used
        message = whole["choices"][0]["message"]
        assert message["reasoning"] == REASONING
        assert [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]] == [
            ("get_weather", ARGS)
        ]
        assert whole["choices"][0]["finish_reason"] == "tool_calls"
        # the same output through the library, as one text
        expected = chat_completion(
            served.parser,
            f"<think>{REASONING}</think>{CALLS}",
            tools=TOOLS,
            tool_choice="required",
            prompt_text=first[prompt_key],
        )
        assert message["reasoning"] == expected["choices"][0]["message"]["reasoning"]

        streamed = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0).chat.completions.create(
            model="test-model",
            messages=[{"role": "user", "content": "weather?"}],
            tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "get_weather"}},
            stream=True,
        )
        chunks = [c.to_dict() for c in streamed]
        assert _constraint(replay.requests[-1]) == (
            "json_schema",
            json_schema(TOOLS, {"type": "function", "function": {"name": "get_weather"}}),
        )
        reasoning = "".join(c["choices"][0]["delta"].get("reasoning") or "" for c in chunks)
        assert reasoning == REASONING


def test_phase_one_that_never_ends_reasoning_sends_no_grammar() -> None:
    def engine(body: dict[str, Any]) -> list[ReplayChoice]:
        return [ReplayChoice((ReplayPiece("<think>still thinking"),), "length")]

    with stack("llamacpp", engine, served_model("qwen3", "hermes")) as (replay, app):
        whole = _ask(app, tool_choice="required")
        assert len(replay.requests) == 1
        assert whole["choices"][0]["finish_reason"] == "length"
        assert whole["choices"][0]["message"]["reasoning"] == "still thinking"


def test_vllm_one_request_grammar_admits_reasoning_first() -> None:
    served = served_model("qwen3", "hermes")
    with stack("vllm", Engine(CALLS), served) as (replay, app):
        whole = _ask(app, tool_choice="required")
        (body,) = replay.requests
        kind, tag = _constraint(body)
        assert kind == "structural_tag"
        think, ws, schema = tag["format"]["elements"]
        assert think == {"type": "tag", "begin": "", "content": {"type": "any_text"}, "end": "</think>"}
        assert schema == {"type": "json_schema", "json_schema": json_schema(TOOLS, "required")}
        assert whole["choices"][0]["message"]["reasoning"] == REASONING
        assert whole["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == ARGS


def test_grammar_from_the_first_token_when_reasoning_is_off() -> None:
    for kind in ("vllm", "llamacpp"):
        with stack(kind, Engine(CALLS), served_model("qwen3", "hermes")) as (replay, app):
            whole = _ask(app, tool_choice="required", extra_body={"chat_template_kwargs": {"enable_thinking": False}})
            (body,) = replay.requests
            assert _constraint(body) == ("json_schema", json_schema(TOOLS, "required"))
            assert whole["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_response_format_is_a_json_schema_after_reasoning() -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    with stack("llamacpp", Engine('{"answer": "Paris"}'), served_model("qwen3", None)) as (replay, app):
        client = openai.OpenAI(base_url=app.url + "/v1", api_key="x", max_retries=0)
        whole = client.chat.completions.create(
            model="test-model",
            messages=[{"role": "user", "content": "capital?"}],
            response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": schema}},
        ).to_dict()
        assert _constraint(replay.requests[-1]) == ("json_schema", schema)
        assert json.loads(whole["choices"][0]["message"]["content"]) == {"answer": "Paris"}


def test_strict_tool_calling_sends_the_structural_tag() -> None:
    served = served_model("qwen3", "hermes")
    with stack("vllm", Engine(""), served, strict_tool_calling=True) as (replay, app):
        _ask(app)
        kind, tag = _constraint(replay.requests[-1])
        assert kind == "structural_tag"
        assert tag == structural_tag(Parser("qwen3", "hermes"), TOOLS, tool_choice="auto", reasoning="open")
    with stack("vllm", Engine(""), served) as (replay, app):
        _ask(app)
        assert _constraint(replay.requests[-1]) is None  # auto without --strict-tool-calling: free


def test_kinds_that_cannot_constrain_say_so() -> None:
    with stack("openai", Engine(CALLS), served_model("qwen3", "hermes")) as (replay, app):
        with pytest.raises(openai.BadRequestError) as err:
            _ask(app, tool_choice="required")
        assert err.value.body["param"] == "tool_choice"
        with pytest.raises(openai.BadRequestError) as err:
            _ask(app, response_format={"type": "json_object"}, tool_choice="none")
        assert err.value.body["param"] == "response_format"
        assert replay.requests == []


def test_strict_tool_calling_on_llamacpp_is_a_lazy_gbnf_grammar() -> None:
    from trisect.grammar import gbnf

    served = served_model("qwen3", "hermes")
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    with stack("llamacpp", Engine(call), served, strict_tool_calling=True) as (replay, app):
        whole = _ask(app)
        (body,) = replay.requests  # one request: free until the trigger, the call constrained after it
        expected = gbnf(Parser("qwen3", "hermes"), TOOLS, tool_choice="auto")
        assert body["grammar"] == expected.text and body["grammar_lazy"] is True
        assert body["grammar_triggers"] == [{"type": 1, "value": t} for t in expected.triggers] and expected.triggers
        assert "json_schema" not in body
        message = whole["choices"][0]["message"]
        assert message["reasoning"] == REASONING
        assert message["tool_calls"][0]["function"]["arguments"] == ARGS
