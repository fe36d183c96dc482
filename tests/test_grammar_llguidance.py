"""Grammars from the formats, proven with llguidance (portable: a small wheel, no torch).

For every tool format that has a structural tag (``grammar.call_shape``): (1) the calls its
cases render in the format are accepted by the grammar, and parse back to the same calls;
(2) malformed calls are rejected; (3) text sampled from the grammar token by token parses back
to valid calls with nothing left over as text. The JSON schema for ``required`` / named is
compiled too, and what it accepts is what ``Parser.parse(..., tool_choice=...)`` reads back.
llguidance reads the structural tag through ``tests/support/llg.py``; the same checks run
through real xgrammar in ``tests/test_grammar_xgrammar.py`` (the ``[xgrammar]`` extra). The
checks that need no grammar engine (which formats have a tag, the schemas' shape, errors) live
here.
"""

from __future__ import annotations

import copy
import json
import random

import pytest

import trisect
from support import llg
from support.grammar_cases import (
    DEFS_A,
    DEFS_B,
    DEFS_C,
    REQUIRED_GOOD,
    REQUIRED_TEXTS,
    SHAPED,
    STRICT_TOOLS,
    TOOLS,
    TYPED,
    UNSHAPED,
    calls,
    expected_calls,
    malformed,
    markers,
    proof_cases,
    valid_args,
)
from trisect import Parser, RequestError, ToolSchemaError, grammar
from trisect.formats import reasoning_format, tool_format

# ---------------------------------------------------------------------------- the formats


@pytest.mark.parametrize("fmt", SHAPED)
def test_rendered_calls_are_accepted_and_parse_back(fmt: str) -> None:
    proven = 0
    for case, parser, tag in proof_cases(fmt):
        m = markers(parser.spec)
        assert llg.accepts(llg.structural_tag(tag, m), case["output"], m), f"{fmt}: rejected {case['id']}"
        msg = parser.parse(case["output"], **case["options"], tools=case["tools"])
        assert calls(msg) == expected_calls(case)
        proven += 1
    assert proven, f"{fmt}: no rendered case to prove the grammar on"


@pytest.mark.parametrize("fmt", SHAPED)
def test_malformed_calls_are_rejected(fmt: str) -> None:
    case, parser, tag = proof_cases(fmt)[0]
    m = markers(parser.spec)
    compiled = llg.structural_tag(tag, m)
    for label, text in malformed(fmt, case).items():
        assert not llg.accepts(compiled, text, m), f"{fmt}: accepted {label}: {text!r}"


def test_formats_without_a_structural_tag_say_why() -> None:
    for fmt in UNSHAPED:
        line = grammar.grammar_support(tool_format(fmt))
        assert line.startswith("no structural tag: ") and len(line) > 30
    for fmt in SHAPED:
        assert grammar.grammar_support(tool_format(fmt)).startswith("structural tag triggered by ")
    assert grammar.grammar_support(reasoning_format("qwen3")).startswith("reasoning block")


def test_the_first_formats_have_structural_tags() -> None:
    assert {"hermes", "qwen3_coder"} <= set(SHAPED)
    assert set(TYPED) <= set(SHAPED)


def test_formats_without_a_structural_tag_raise() -> None:
    for fmt in UNSHAPED[:3]:
        with pytest.raises(RequestError):
            grammar.structural_tag(Parser(None, fmt), TOOLS)


# ---------------------------------------------------------------------------- strict levels


@pytest.mark.parametrize("fmt", sorted(TYPED))
def test_strict_levels(fmt: str) -> None:
    good, ill_typed = TYPED[fmt]
    parser = Parser(None, fmt)
    m = markers(parser.spec)

    def compiled(tools: list, level: str) -> str:
        return llg.structural_tag(grammar.structural_tag(parser, tools, strict_level=level), m)

    loose, typed = compiled(TOOLS, "auto"), compiled(TOOLS, "function")
    assert llg.accepts(loose, good, m) and llg.accepts(typed, good, m)
    assert llg.accepts(loose, ill_typed, m)  # not strict: any arguments object
    assert not llg.accepts(typed, ill_typed, m)
    assert not llg.accepts(compiled(STRICT_TOOLS, "auto"), ill_typed, m)  # "strict": true on the tool
    assert llg.accepts(compiled(TOOLS, "parameter"), good, m)
    assert calls(parser.parse(good, tools=TOOLS)) == [("get_weather", {"city": "Paris", "days": 3})]


def test_strict_parameter_closes_objects_without_touching_the_tools() -> None:
    tools = copy.deepcopy(TOOLS)
    tag = grammar.structural_tag(Parser(None, "hermes"), tools, strict_level="parameter")
    assert tools == TOOLS
    assert '"additionalProperties": false' in json.dumps(tag)
    m = markers(Parser(None, "hermes").spec)
    extra = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "wind": 1}}\n</tool_call>'
    assert not llg.accepts(llg.structural_tag(tag, m), extra, m)
    with pytest.raises(RequestError):
        grammar.structural_tag(Parser(None, "hermes"), tools, strict_level="always")


def test_tool_choice_in_the_structural_tag() -> None:
    parser = Parser(None, "hermes")
    m = markers(parser.spec)
    good = TYPED["hermes"][0]

    def compiled(**options: object) -> str:
        return llg.structural_tag(grammar.structural_tag(parser, TOOLS, **options), m)

    required = compiled(tool_choice="required")
    assert llg.accepts(required, good, m) and not llg.accepts(required, "no call", m)
    forced = compiled(tool_choice={"type": "function", "function": {"name": "get_time"}})
    assert not llg.accepts(forced, good, m)
    assert llg.accepts(forced, '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>', m)
    single = compiled(parallel_tool_calls=False)
    assert not llg.accepts(single, good + "\n" + good, m) and llg.accepts(single, good, m)
    assert llg.accepts(compiled(), good + "\n" + good, m)
    none = compiled(tool_choice="none")
    assert llg.accepts(none, "text only", m)


def test_reasoning_before_the_calls() -> None:
    parser = Parser("qwen3", "qwen3_coder")
    m = markers(parser.spec)
    call = TYPED["qwen3_coder"][0]
    block = llg.structural_tag(grammar.structural_tag(parser, TOOLS, reasoning=True), m)
    assert llg.accepts(block, "<think>\nplan\n</think>\n\n" + call, m)
    assert not llg.accepts(block, call, m)
    opened = llg.structural_tag(grammar.structural_tag(parser, TOOLS, reasoning="open"), m)
    assert llg.accepts(opened, "plan\n</think>\n\n" + call, m)
    msg = parser.parse("<think>\nplan\n</think>\n\n" + call, tools=TOOLS)
    assert msg.reasoning == "plan" and calls(msg) == [("get_weather", {"city": "Paris", "days": 3})]


# ---------------------------------------------------------------------------- sampling


@pytest.mark.parametrize("fmt", SHAPED)
def test_text_the_grammar_accepts_parses_back_to_valid_calls(fmt: str) -> None:
    parser = Parser(None, fmt)
    m = markers(parser.spec)
    tag = grammar.structural_tag(parser, TOOLS, tool_choice="required", strict_level="function")
    compiled = llg.structural_tag(tag, m)
    shape = grammar.call_shape(tool_format(fmt))
    assert not isinstance(shape, str)
    openers = {s.trigger for s in (shape, *shape.alternates)}
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    rng = random.Random(fmt)
    sampler = llg.Sampler(m)
    done = 0
    for _attempt in range(40):
        text = sampler.sample(compiled, rng)
        if text is None:
            continue
        msg = parser.parse(text, tools=TOOLS)
        assert msg.tool_calls, f"{fmt}: no call in {text!r}"
        for call in msg.tool_calls:
            args = json.loads(call.arguments)
            if shape.args not in ("json", "json_envelope"):
                # the XML styles allow whitespace around a value; the parser keeps it in a
                # string (trimming only the template's own newline): compare without it
                args = {k: v.strip() if isinstance(v, str) else v for k, v in args.items()}
            assert valid_args(args, schemas[call.name]), f"{fmt}: {call} from {text!r}"
        for opener in openers:
            if opener not in ("{", "["):  # bare-JSON openers are ordinary characters of free text too
                assert opener not in (msg.content or ""), f"{fmt}: a call was left as text: {text!r}"
        streamed = trisect.MessageBuilder()
        stream = parser.stream(tools=TOOLS, atomic_tool_calls=True)
        for ch in text:
            streamed.add(stream.feed(ch))
        streamed.add(stream.finish())
        assert calls(streamed.message()) == calls(msg)
        done += 1
        if done == 6:
            break
    assert done >= 3, f"{fmt}: the sampler finished only {done} outputs"


# ---------------------------------------------------------------------------- JSON schema


def test_json_schema_required_is_one_branch_per_tool_with_defs_merged() -> None:
    tools = [DEFS_A, DEFS_B]
    before = copy.deepcopy(tools)
    schema = grammar.json_schema(tools, "required")
    assert schema is not None and tools == before
    assert schema["type"] == "array" and schema["minItems"] == 1
    branches = schema["items"]["anyOf"]
    assert [b["properties"]["name"]["enum"] for b in branches] == [["a"], ["b"]]
    assert '"$defs":' not in json.dumps(branches) and schema["$defs"] == DEFS_A["function"]["parameters"]["$defs"]
    single = grammar.json_schema(tools, "required", parallel_tool_calls=False)
    assert single is not None and single["maxItems"] == 1
    with pytest.raises(ToolSchemaError):
        grammar.json_schema([DEFS_A, DEFS_C], "required")
    assert grammar.json_schema(tools, "auto") is None and grammar.json_schema(tools, "none") is None
    named = grammar.json_schema(tools, {"type": "function", "function": {"name": "b"}})
    assert named == DEFS_B["function"]["parameters"]
    with pytest.raises(RequestError):
        grammar.json_schema(tools, {"type": "function", "function": {"name": "zz"}})


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder"])
def test_json_schema_round_trip(fmt: str) -> None:
    parser = Parser("qwen3", fmt)
    tools = [*TOOLS, DEFS_A]
    schema = grammar.json_schema(tools, "required")
    assert schema is not None
    required = llg.json_schema(schema)
    for text, ok in REQUIRED_TEXTS:
        assert llg.accepts(required, text) == ok, text
    msg = parser.parse("<think>x</think>" + REQUIRED_GOOD, tools=tools, tool_choice="required")
    assert calls(msg) == [("get_weather", {"city": "Paris", "days": 3}), ("a", {"p": {"x": 1}})]
    named = {"type": "function", "function": {"name": "get_weather"}}
    forced_schema = grammar.json_schema(tools, named)
    assert forced_schema is not None
    forced = llg.json_schema(forced_schema)
    assert llg.accepts(forced, '{"city": "Paris"}') and not llg.accepts(forced, '{"days": 1}')
    msg = parser.parse('<think>x</think>{"city": "Paris"}', tools=tools, tool_choice=named)
    assert calls(msg) == [("get_weather", {"city": "Paris"})]


def test_for_request() -> None:
    parser = Parser("qwen3", "hermes")
    assert grammar.for_request(parser, tools=TOOLS, tool_choice="none") is None
    assert "json_schema" in (grammar.for_request(parser, tools=TOOLS, tool_choice="required") or {})
    assert "structural_tag" in (grammar.for_request(parser, tools=TOOLS) or {})
    assert grammar.for_request(Parser("qwen3", "pythonic"), tools=TOOLS) is None


# ---------------------------------------------------------------------------- the translation itself


def test_the_translation_keeps_free_text_free_of_triggers() -> None:
    """A trigger in free text must open a tag (xgrammar's triggered_tags), and excluded strings
    never appear in free text: the checks above would pass vacuously otherwise."""
    tag = {
        "type": "structural_tag",
        "format": {
            "type": "triggered_tags",
            "triggers": ["<a>"],
            "tags": [{"type": "tag", "begin": "<a>", "content": {"type": "const_string", "value": "x"}, "end": "</a>"}],
            "excludes": ["<b>"],
        },
    }
    compiled = llg.structural_tag(tag)
    assert llg.accepts(compiled, "hi <a>x</a> there <a>x</a>")
    assert not llg.accepts(compiled, "hi <a>y</a>")
    assert not llg.accepts(compiled, "hi <b> there")
    assert not llg.accepts(compiled, "hi <a>")
