"""Request semantics and the truncation rule, through vLLM 0.33's serving code (``vllm_serving``).

Each claim runs on both compositions vLLM can make of the plugin's names (one ``TrisectParser``,
and vLLM's two-phase ``DelegatingParser``) and, where it streams, at 1 and 4 tokens per delta.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import vllm_serving as vs
from vllm.plugins import load_general_plugins

import trisect
from support import tokenizers
from trisect import grammar
from trisect.errors import RequestError

load_general_plugins()

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}},
    },
]
THINK = "<think>\nThe user wants the forecast.\n</think>\n\n"
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>'
OUTPUT = THINK + "Let me check.\n" + CALL
TWO_CALLS = OUTPUT + '\n<tool_call>\n{"name": "get_time", "arguments": {"tz": "UTC"}}\n</tool_call>'
CUT = OUTPUT[: OUTPUT.index('"days"') + 3]  # max_tokens inside the arguments
PATHS = ("unified", "two_phase")
WAYS = ((False, 1), (True, 1), (True, 4))


def ids(text: str) -> list[int]:
    return tokenizers.encode("qwen3", text)


_SERVERS: dict[bool, vs.Server] = {}


def server(path: str) -> vs.Server:
    unified = path == "unified"
    if unified not in _SERVERS:
        _SERVERS[unified] = vs.Server(vs.tokenizer("qwen3"), "trisect_qwen3", "trisect_hermes", unified=unified)
    return _SERVERS[unified]


def serve(path: str, output: str, *, stream: bool, chunk: int = 1, finish: str = "stop", **body: Any) -> vs.Reply:
    srv = server(path)
    body.setdefault("tools", TOOLS)
    return srv.serve(srv.request(stream=stream, **body), ids(output), finish=finish, chunk=chunk)


def calls(reply: vs.Reply) -> list[tuple[str, dict[str, Any]]]:
    return [(name, json.loads(arguments)) for _, name, arguments in reply.tool_calls]


# ---------------------------------------------------------------------------------------- adjust_request


@pytest.mark.parametrize("path", PATHS)
def test_adjust_request_keeps_special_tokens_and_leaves_auto_free(path: str) -> None:
    reply = serve(path, OUTPUT, stream=False)
    assert reply.request.skip_special_tokens is False
    assert reply.request.structured_outputs is None
    assert calls(reply) == [("get_weather", {"city": "Paris", "days": 3})]


@pytest.mark.parametrize("path", PATHS)
def test_required_applies_trisects_json_schema_and_parses_the_constrained_output(path: str) -> None:
    # the grammar applies once reasoning has ended (vLLM's engine core gates it on the reasoner)
    output = (
        THINK + '[{"name": "get_weather", "parameters": {"city": "Paris"}}, {"name": "get_time", "parameters": {}}]'
    )
    for stream, chunk in WAYS:
        reply = serve(path, output, stream=stream, chunk=chunk, tool_choice="required")
        so = reply.request.structured_outputs
        assert so is not None and so.json == grammar.json_schema(TOOLS, "required")
        assert reply.request.response_format is None
        assert calls(reply) == [("get_weather", {"city": "Paris"}), ("get_time", {})], (stream, chunk)
        assert reply.finish_reason == "tool_calls"
        assert reply.content is None


@pytest.mark.parametrize("path", PATHS)
def test_named_choice_applies_the_function_schema(path: str) -> None:
    named = {"type": "function", "function": {"name": "get_weather"}}
    for stream, chunk in WAYS:
        reply = serve(path, THINK + '{"city": "Paris", "days": 2}', stream=stream, chunk=chunk, tool_choice=named)
        assert reply.request.structured_outputs.json == grammar.json_schema(TOOLS, named)
        assert calls(reply) == [("get_weather", {"city": "Paris", "days": 2})], (stream, chunk)
        assert reply.finish_reason == "stop"  # vLLM (and OpenAI) report stop for a forced function


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("how", ("request", "environment"))
def test_auto_grammar_on_request_is_the_formats_structural_tag(
    path: str, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vllm.parser.abstract_parser import structured_outputs_to_format

    body: dict[str, Any] = {}
    if how == "request":
        body["vllm_xargs"] = {"trisect_auto_grammar": 1}
    else:
        monkeypatch.setenv("TRISECT_AUTO_GRAMMAR", "1")
    reply = serve(path, OUTPUT, stream=False, **body)
    so = reply.request.structured_outputs
    want = grammar.for_request(trisect.Parser("qwen3", "hermes"), tools=TOOLS, tool_choice="auto")
    assert want is not None and json.loads(so.structural_tag) == want["structural_tag"]
    assert structured_outputs_to_format(so) is not None  # vLLM's own conversion to xgrammar accepts it
    assert calls(reply) == [("get_weather", {"city": "Paris", "days": 3})]


def test_auto_grammar_leaves_a_users_response_format_alone() -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    reply = serve("unified", OUTPUT, stream=False, vllm_xargs={"trisect_auto_grammar": 1}, response_format=fmt)
    assert reply.request.structured_outputs is None or reply.request.structured_outputs.structural_tag is None


# ---------------------------------------------------------------------------------------- request options


@pytest.mark.parametrize("path", PATHS)
def test_include_reasoning_false_returns_no_reasoning(path: str) -> None:
    for stream, chunk in WAYS:
        reply = serve(path, OUTPUT, stream=stream, chunk=chunk, include_reasoning=False)
        assert reply.reasoning is None and not any(d.reasoning for d in reply.deltas), (stream, chunk)
        assert reply.content == "Let me check."
        assert calls(reply) == [("get_weather", {"city": "Paris", "days": 3})]


@pytest.mark.parametrize("path", PATHS)
def test_parallel_tool_calls_false_returns_the_first_call(path: str) -> None:
    for stream, chunk in WAYS:
        reply = serve(path, TWO_CALLS, stream=stream, chunk=chunk, parallel_tool_calls=False)
        assert calls(reply) == [("get_weather", {"city": "Paris", "days": 3})], (stream, chunk)
    assert len(calls(serve(path, TWO_CALLS, stream=True, chunk=4))) == 2


@pytest.mark.parametrize("path", PATHS)
def test_tool_choice_none_returns_no_call(path: str) -> None:
    for stream, chunk in WAYS:
        reply = serve(path, OUTPUT, stream=stream, chunk=chunk, tool_choice="none")
        assert reply.tool_calls == [] and reply.finish_reason == "stop", (stream, chunk)
        assert reply.content is not None and reply.content.startswith("Let me check.")


def test_thinking_switched_off_by_the_request() -> None:
    body = {"chat_template_kwargs": {"enable_thinking": False}}
    for stream, chunk in WAYS:
        reply = serve("unified", "Plain answer.", stream=stream, chunk=chunk, **body)
        assert (reply.reasoning, reply.content) == (None, "Plain answer."), (stream, chunk)
    # thinking on: vLLM renders Qwen3's prompt, which leaves <think> to the model (docs/rules.md), so
    # an output that does not open a block is content, and one that does is reasoning first
    on = serve("unified", "Plain answer.", stream=True)
    assert (on.reasoning, on.content) == (None, "Plain answer.")
    on = serve("unified", "<think>Plan.</think>Plain answer.", stream=True)
    assert (on.reasoning, on.content) == ("Plan.", "Plain answer.")


def test_an_unknown_setting_is_a_typed_error() -> None:
    with pytest.raises(RequestError, match="trisect_tool_calls"):
        serve("unified", OUTPUT, stream=True, vllm_xargs={"trisect_tool_calls": "sometimes"})


# ---------------------------------------------------------------------------------------- truncation


@pytest.mark.parametrize("path", PATHS)
def test_a_call_cut_by_max_tokens_never_reaches_the_client(path: str) -> None:
    for stream, chunk in WAYS:
        reply = serve(path, CUT, stream=stream, chunk=chunk, finish="length")
        assert reply.tool_calls == [] and reply.finish_reason == "length", (stream, chunk)
        assert reply.content is not None and reply.content.startswith("Let me check.")


@pytest.mark.parametrize("path", PATHS)
def test_a_cut_off_calls_markup_is_not_content(path: str) -> None:
    for stream, chunk in WAYS:
        reply = serve(path, CUT, stream=stream, chunk=chunk, finish="length")
        assert reply.content == "Let me check.", (stream, chunk)


@pytest.mark.parametrize("path", PATHS)
def test_a_call_cut_by_a_stop_is_not_reported_as_tool_calls(path: str) -> None:
    # the engine stopped inside the call (an EOS or a stop string): finish_reason "stop"
    for stream, chunk in WAYS:
        reply = serve(path, CUT, stream=stream, chunk=chunk, finish="stop")
        assert reply.tool_calls == [] and reply.finish_reason == "stop", (stream, chunk)


def test_the_finish_reason_guard_is_installed_on_033() -> None:
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor

    from trisect.integrations import _vllm_parsers

    assert getattr(ChatStreamProcessor.step, "__trisect__", False) and _vllm_parsers.step_guard_installed


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("how", ("request", "environment"))
def test_incremental_calls_stream_arguments_and_a_cut_call_keeps_the_engines_reason(
    path: str, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    body: dict[str, Any] = {}
    if how == "request":
        body["vllm_xargs"] = {"trisect_tool_calls": "incremental"}
    else:
        monkeypatch.setenv("TRISECT_TOOL_CALLS", "incremental")
    whole = serve(path, OUTPUT, stream=True, **body)
    pieces = [d for d in whole.deltas if d.tool_calls]
    assert len(pieces) > 2  # the arguments arrive as they are generated, not in one piece
    assert calls(whole) == [("get_weather", {"city": "Paris", "days": 3})] and whole.finish_reason == "tool_calls"
    for finish in ("length", "stop"):
        for chunk in (1, 4):
            reply = serve(path, CUT, stream=True, chunk=chunk, finish=finish, **body)
            assert [name for _, name, _ in reply.tool_calls] == ["get_weather"]  # partly sent
            assert reply.finish_reason == finish, (finish, chunk)  # never "tool_calls"
        reply = serve(path, CUT, stream=False, finish=finish, **body)
        assert reply.tool_calls == [] and reply.finish_reason == finish


# ---------------------------------------------------------------------------------------- mixed


@pytest.mark.parametrize("pair", (("trisect_qwen3", "hermes"), ("qwen3", "trisect_hermes")))
def test_mixed_with_vllms_own_parsers(pair: tuple[str, str]) -> None:
    srv = vs.Server(vs.tokenizer("qwen3"), *pair)
    assert srv.parser_cls.__mro__[1].__name__ == "DelegatingParser"
    for stream, chunk in WAYS:
        reply = srv.serve(srv.request(stream=stream, tools=TOOLS), ids(OUTPUT), chunk=chunk)
        assert (
            reply.reasoning == "The user wants the forecast."
            or reply.reasoning.strip() == "The user wants the forecast."
        )
        assert (reply.content or "").strip() == "Let me check.", (stream, chunk)
        assert calls(reply) == [("get_weather", {"city": "Paris", "days": 3})] and reply.finish_reason == "tool_calls"
