"""tool_choice, parallel_tool_calls and include_reasoning on parse() and stream(): typed errors
before any parsing, and every path whole, per character and cut at every position."""

from __future__ import annotations

import copy
import json

import pytest

from trisect import MessageBuilder, Parser, RequestError, ToolSchemaError
from trisect.request.choice import constrained_spec, keeps_native_markers


def _tool(name: str, props: dict | None = None, required: list[str] | None = None) -> dict:
    params = {"type": "object", "properties": props or {}}
    if required is not None:
        params["required"] = required
    return {"type": "function", "function": {"name": name, "parameters": params}}


WEATHER = _tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}, ["city"])
TIME = _tool("get_time", {"tz": {"type": "string"}})
TOOLS = [WEATHER, TIME]
NAMED = {"type": "function", "function": {"name": "get_weather"}}

HERMES_CALLS = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {"tz": "UTC"}}\n</tool_call>'
)
CODER_CALLS = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n"
    "</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n"
    "</parameter>\n</function>\n</tool_call>"
)
AUTO_CALLS = [("get_weather", {"city": "Paris", "days": 3}), ("get_time", {"tz": "UTC"})]
REQUIRED_OUT = (
    '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}, '
    '{"name": "get_time", "parameters": {"tz": "UTC"}}]'
)
NAMED_OUT = '{"city": "Paris", "days": 3}'

# (reasoning, tools, native calls): the JSON family and the XML family
FAMILIES = [("qwen3", "hermes", HERMES_CALLS), ("qwen3", "qwen3_coder", CODER_CALLS), (None, "hermes", HERMES_CALLS)]


def _fn(params: object) -> list[dict]:
    return [{"type": "function", "function": {"name": "f", "parameters": params}}]


def _view(msg) -> tuple:
    return msg.reasoning, msg.content, [(c.name, json.loads(c.arguments)) for c in msg.tool_calls]


def _replays(parser: Parser, output: str, **options) -> list[tuple]:
    """parse(), and streams fed whole, per character and split at every position (atomic and
    incremental): every view of the same output."""
    views = [_view(parser.parse(output, **options))]
    chunkings = [[output], list(output)] + [[output[:p], output[p:]] for p in range(1, len(output), 3)]
    for chunks in chunkings:
        for atomic in (True, False):
            stream = parser.stream(atomic_tool_calls=atomic, **options)
            builder = MessageBuilder()
            for piece in chunks:
                builder.add(stream.feed(piece))
            builder.add(stream.finish())
            views.append(_view(builder.message()))
    return views


def _expect(parser: Parser, output: str, expected: tuple, **options) -> None:
    for view in _replays(parser, output, **options):
        assert view == expected


# ---------------------------------------------------------------------------- errors first


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}}, RequestError),
        ({"tools": [], "tool_choice": "required"}, RequestError),
        ({"tool_choice": "required"}, RequestError),
        ({"tool_choice": NAMED}, RequestError),
        ({"tools": TOOLS, "tool_choice": "sometimes"}, RequestError),
        ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {}}}, RequestError),
        ({"tools": TOOLS, "parallel_tool_calls": "no"}, RequestError),
        ({"tools": TOOLS, "include_reasoning": 0}, RequestError),
        ({"tools": [_tool("f"), _tool("f")]}, ToolSchemaError),
        (
            {"tools": _fn({"type": "string"})},
            ToolSchemaError,
        ),
        (
            {"tools": _fn({"required": "a"})},
            ToolSchemaError,
        ),
        (
            {"tools": _fn({"properties": {"a": 1}})},
            ToolSchemaError,
        ),
        ({"tools": _fn({"$defs": []})}, ToolSchemaError),
        ({"tools": [{"type": "function", "function": {"name": "f"}, "strict": 1}], "tool_choice": "x"}, RequestError),
        ({"tools": [{"type": "function"}]}, ToolSchemaError),
    ],
)
def test_impossible_requests_fail_before_parsing(options: dict, error: type) -> None:
    parser = Parser("qwen3", "hermes")
    with pytest.raises(error):
        parser.stream(**options)
    with pytest.raises(error):
        parser.parse("never parsed", **options)


def test_tool_schema_error_is_a_request_error() -> None:
    assert issubclass(ToolSchemaError, RequestError)


def test_request_options_do_not_mutate_tools() -> None:
    tools = copy.deepcopy(TOOLS)
    Parser("qwen3", "hermes").parse(REQUIRED_OUT, tools=tools, tool_choice="required")
    assert tools == TOOLS


# ---------------------------------------------------------------------------- tool_choice


@pytest.mark.parametrize(("reasoning", "fmt", "calls"), FAMILIES)
def test_auto_uses_the_format_markers(reasoning, fmt, calls) -> None:
    parser = Parser(reasoning, fmt)
    think = "<think>\nplan\n</think>\n\n" if reasoning else ""
    _expect(parser, think + calls, ("plan" if reasoning else None, None, AUTO_CALLS), tools=TOOLS, tool_choice="auto")


@pytest.mark.parametrize(("reasoning", "fmt", "calls"), FAMILIES)
def test_none_returns_no_call_and_keeps_the_text_where_the_format_puts_it(reasoning, fmt, calls) -> None:
    """vLLM #42747: streaming with tool_choice="none" still produced tool_calls."""
    parser = Parser(reasoning, fmt)
    think = "<think>\nplan\n</think>\n\n" if reasoning else ""
    _expect(parser, think + calls, ("plan" if reasoning else None, calls, []), tools=TOOLS, tool_choice="none")


def test_none_keeps_a_call_marker_inside_reasoning_as_content() -> None:
    """Qwen3's <tool_call> ends unterminated reasoning; with tools it opens the call, with none it
    is content text, as written (vLLM's qwen3 reasoning pass re-emits the marker:
    docs/formats/vllm-engine.md)."""
    parser = Parser("qwen3", "hermes")
    output = "<think>\nI could " + HERMES_CALLS
    _expect(parser, output, ("I could", HERMES_CALLS, []), tools=TOOLS, tool_choice="none")
    auto = parser.parse(output, tools=TOOLS)
    assert auto.reasoning == "I could" and len(auto.tool_calls) == 2


@pytest.mark.parametrize(("reasoning", "fmt", "calls"), FAMILIES)
def test_required_reads_the_constrained_json_array(reasoning, fmt, calls) -> None:
    parser = Parser(reasoning, fmt)
    think = "<think>\nplan\n</think>\n\n" if reasoning else ""
    _expect(
        parser,
        think + REQUIRED_OUT,
        ("plan" if reasoning else None, None, AUTO_CALLS),
        tools=TOOLS,
        tool_choice="required",
    )


@pytest.mark.parametrize(("reasoning", "fmt", "calls"), FAMILIES)
def test_named_reads_the_arguments_object(reasoning, fmt, calls) -> None:
    parser = Parser(reasoning, fmt)
    think = "<think>\nplan\n</think>\n\n" if reasoning else ""
    expected = ("plan" if reasoning else None, None, [AUTO_CALLS[0]])
    _expect(parser, think + NAMED_OUT, expected, tools=TOOLS, tool_choice=NAMED)


def test_required_accepts_arguments_key_and_whitespace() -> None:
    parser = Parser("qwen3", "hermes")
    out = ' [\n  {"name": "get_time", "arguments": {}} ,\n {"name":"get_weather","parameters":{"city":"X"}}\n]\n'
    _expect(
        parser,
        out,
        (None, None, [("get_time", {}), ("get_weather", {"city": "X"})]),
        tools=TOOLS,
        tool_choice="required",
        chat_template_kwargs={"enable_thinking": False},
    )


def test_required_with_an_unknown_name_is_not_a_call() -> None:
    parser = Parser(None, "hermes")
    out = '[{"name": "rm_rf", "parameters": {}}]'
    msg = parser.parse(out, tools=TOOLS, tool_choice="required")
    assert msg.tool_calls == () and msg.content is not None and "rm_rf" in msg.content


def test_required_arguments_stream_incrementally() -> None:
    parser = Parser(None, "hermes")
    stream = parser.stream(tools=TOOLS, tool_choice="required")
    pieces = []
    for ch in '[{"name": "get_weather", "parameters": {"city": "Paris"}}]':
        delta = stream.feed(ch)
        if delta is not None:
            pieces += [p.arguments for p in delta.tool_calls if p.arguments]
    stream.finish()
    assert len(pieces) > 5 and "".join(pieces) == '{"city": "Paris"}'


def test_named_truncated_is_unfinished_not_a_call() -> None:
    parser = Parser(None, "qwen3_coder")
    msg = parser.parse('{"city": "Par', tools=TOOLS, tool_choice=NAMED)
    assert msg.tool_calls == ()
    stream = parser.stream(tools=TOOLS, tool_choice=NAMED)
    first = stream.feed('{"city": "Par')
    assert first is not None and first.tool_calls[0].name == "get_weather"
    assert stream.finish().aborted == (0,)


def test_constrained_output_without_a_tool_format() -> None:
    """required / named need no tool format: the constrained output is the format."""
    parser = Parser("qwen3")
    _expect(parser, "<think>x</think>" + REQUIRED_OUT, ("x", None, AUTO_CALLS), tools=TOOLS, tool_choice="required")


def test_native_markers_under_constraint_flag() -> None:
    assert not keeps_native_markers(None)
    assert constrained_spec(None, None).validate_names


# ---------------------------------------------------------------------------- filters


@pytest.mark.parametrize(("reasoning", "fmt", "calls"), FAMILIES)
def test_parallel_tool_calls_false_returns_the_first_call_only(reasoning, fmt, calls) -> None:
    parser = Parser(reasoning, fmt)
    _expect(
        parser,
        calls,
        (None, None, AUTO_CALLS[:1]),
        tools=TOOLS,
        parallel_tool_calls=False,
        chat_template_kwargs={"enable_thinking": False},
    )
    _expect(
        parser,
        REQUIRED_OUT,
        (None, None, AUTO_CALLS[:1]),
        tools=TOOLS,
        tool_choice="required",
        parallel_tool_calls=False,
        chat_template_kwargs={"enable_thinking": False},
    )


def test_parallel_tool_calls_false_skips_a_malformed_first_call() -> None:
    parser = Parser(None, "hermes")
    out = '<tool_call>\n{"name": "get_time", "arguments": {bad}}\n</tool_call>' + HERMES_CALLS
    msg = parser.parse(out, tools=TOOLS, parallel_tool_calls=False)
    assert [c.name for c in msg.tool_calls] == ["get_weather"]


@pytest.mark.parametrize(("reasoning", "fmt", "calls"), FAMILIES[:2])
def test_include_reasoning_false_never_returns_reasoning(reasoning, fmt, calls) -> None:
    parser = Parser(reasoning, fmt)
    out = "<think>\nsecret plan\n</think>\n\nAnswer." + calls
    _expect(parser, out, (None, "Answer.", AUTO_CALLS), tools=TOOLS, include_reasoning=False)
    _expect(parser, "<think>\nsecret plan", (None, None, []), tools=TOOLS, include_reasoning=False)


# ---------------------------------------------------------------------------- grammar start


def test_reasoning_ended_at_start() -> None:
    qwen = Parser("qwen3", "hermes")
    assert not qwen.reasoning_ended_at_start()
    assert qwen.reasoning_ended_at_start(chat_template_kwargs={"enable_thinking": False})
    assert qwen.reasoning_ended_at_start(prompt_text="<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert not qwen.reasoning_ended_at_start(prompt_text="<|im_start|>assistant\n<think>\n")
    assert Parser(None, "hermes").reasoning_ended_at_start()
    r1 = Parser("deepseek_r1", "hermes")
    assert not r1.reasoning_ended_at_start()
    assert not r1.reasoning_ended_at_start(prompt_text="<｜Assistant｜><think>\n")
    # hidden and constrained: the grammar applies from the first token, unless the prompt opened a block
    hidden = {"tools": TOOLS, "tool_choice": "required", "include_reasoning": False}
    assert qwen.reasoning_ended_at_start(prompt_text="<|im_start|>assistant\n", **hidden)
    assert not r1.reasoning_ended_at_start(prompt_text="<｜Assistant｜><think>\n", **hidden)
    assert not qwen.reasoning_ended_at_start(**hidden)  # prompt unknown: never guess


def test_hidden_constrained_output_parses_from_content_and_a_stray_block_stays_hidden() -> None:
    parser = Parser("qwen3", "hermes")
    opts = {
        "tools": TOOLS,
        "tool_choice": "required",
        "include_reasoning": False,
        "prompt_text": "<|im_start|>assistant\n",
    }
    _expect(parser, REQUIRED_OUT, (None, None, AUTO_CALLS), **opts)
    _expect(parser, "<think>\nsecret\n</think>\n" + REQUIRED_OUT, (None, None, AUTO_CALLS), **opts)


def test_a_format_that_keeps_its_markers_under_constraint_parses_like_auto(monkeypatch) -> None:
    """FormatSpec.grammar.native_under_constraint: required / named outputs are native calls."""
    import dataclasses
    import importlib

    from trisect import grammar
    from trisect import parser as _parser
    from trisect.engine.spec import GrammarFacts

    catalogue = importlib.import_module("trisect.formats")

    original = catalogue.tool_format
    native = dataclasses.replace(original("hermes"), grammar=GrammarFacts(native_under_constraint=True))

    def lookup(name: str):
        return native if name == "hermes" else original(name)

    monkeypatch.setattr(_parser, "tool_format", lookup)
    monkeypatch.setattr(catalogue, "tool_format", lookup)
    parser = Parser(None, "hermes")
    _expect(parser, HERMES_CALLS, (None, None, AUTO_CALLS), tools=TOOLS, tool_choice="required")
    _expect(parser, HERMES_CALLS, (None, None, AUTO_CALLS), tools=TOOLS, tool_choice=NAMED)
    assert parser.parse(REQUIRED_OUT, tools=TOOLS, tool_choice="required").tool_calls == ()
    constraint = grammar.for_request(parser, tools=TOOLS, tool_choice="required")
    assert constraint is not None and constraint["structural_tag"]["format"]["at_least_one"]
    assert "json_schema" in grammar.for_request(Parser(None, "qwen3_coder"), tools=TOOLS, tool_choice="required")


def test_response_layer_and_grammars_import_with_third_party_packages_blocked() -> None:
    """trisect.chat and trisect.grammar are core: standard library only (openai / xgrammar are
    what the tests validate against, never imported by trisect)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import sys
        allowed = set(sys.stdlib_module_names) | {"trisect", "_distutils_hack", "__editable___trisect_0_1_0_finder"}
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] not in allowed:
                    raise ImportError("blocked third-party import: " + name)
                return None
        sys.meta_path.insert(0, Block())
        import trisect
        from trisect import chat, grammar
        tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
        parser = trisect.Parser("qwen3", "hermes")
        out = '<think>a</think>b<tool_call>{"name": "f", "arguments": {}}</tool_call>'
        done = chat.chat_completion(parser, out, tools=tools)
        assert done["choices"][0]["finish_reason"] == "tool_calls", done
        assert grammar.structural_tag(parser, tools)["type"] == "structural_tag"
        assert grammar.json_schema(tools, "required")["type"] == "array"
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")
