"""Grammars from the formats, proven with the real xgrammar on the CPU.

For every tool format that has a structural tag (``grammar.call_shape``): (1) the calls its
cases render in the format are accepted by the compiled grammar, and parse back to the same
calls; (2) malformed calls are rejected; (3) text sampled from the grammar token by token
parses back to valid calls with nothing left over as text. The JSON schema for
``required`` / named is compiled by xgrammar too, and what it accepts is what
``Parser.parse(..., tool_choice=...)`` reads back.
"""

from __future__ import annotations

import copy
import json
import os
import random
import re
from functools import cache
from pathlib import Path

import pytest

import trisect
from trisect import Parser, RequestError, ToolSchemaError, grammar
from trisect.formats import reasoning_format, tool_format

if os.environ.get("CI"):
    import xgrammar as xgr  # CI proves the round trip: a missing xgrammar is a failure there
else:
    xgr = pytest.importorskip("xgrammar")

CASES = Path(__file__).resolve().parent / "cases"
STOP = "<|trisect-stop|>"


# ---------------------------------------------------------------------------- xgrammar set-up


@cache
def _vocab(markers: tuple[str, ...]) -> tuple[list[str], object]:
    """Single characters plus the format's markers as tokens (a sampler emits whole markers)."""
    chars = sorted({chr(i) for i in range(32, 127)} | {c for m in markers for c in m})
    vocab = [*chars, "\n", *markers, STOP]
    info = xgr.TokenizerInfo(vocab, vocab_type=xgr.VocabType.RAW, stop_token_ids=[len(vocab) - 1])
    return vocab, xgr.GrammarCompiler(info)


def _markers(*specs) -> tuple[str, ...]:
    out = {s for spec in specs if spec is not None for v in spec.terminals.values() for s in v if len(s) > 1}
    return tuple(sorted(out))


def _compile(tag: dict, markers: tuple[str, ...]):
    _vocab_list, compiler = _vocab(markers)
    return compiler.compile_structural_tag(json.dumps(tag))


def _accepts(compiled, text: str, markers: tuple[str, ...]) -> bool:
    vocab, _compiler = _vocab(markers)
    matcher = xgr.GrammarMatcher(compiled)
    return matcher.accept_string(text) and matcher.accept_token(len(vocab) - 1)


# ---------------------------------------------------------------------------- the formats


SHAPED = sorted(s.name for s in trisect.formats() if s.kind == "tools" and not isinstance(grammar.call_shape(s), str))
UNSHAPED = sorted(s.name for s in trisect.formats() if s.kind == "tools" and isinstance(grammar.call_shape(s), str))

# Shapes a parser accepts but no template writes (recovery paths, other spellings of the same
# envelope) are not what a grammar should produce; xgrammar's XML argument styles also cannot
# hold the format's own closing tag inside a value (the parser can).
NOT_TEMPLATE = re.compile(
    r"recovery|missing|marker-text|marker-inside|close-tag|closer-token|inside-value|arguments-before-name|"
    r"compact|string-args|arguments-as-string|type-key|hand-fenced|unknown-name|without-index|invalid-for-type|bare-word|no-string-attribute|attribute-unescaping|"
    r"quote-styles"
)


def _cases(fmt: str) -> list[dict]:
    spec = tool_format(fmt)
    names = {spec.name, *spec.aliases}
    out = []
    for path in sorted(CASES.glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            if case["tools_format"] not in names or not case["expected"].get("tool_calls"):
                continue
            if (
                case.get("malformed")
                or case.get("truncated")
                or case.get("ids_only")
                or NOT_TEMPLATE.search(case["id"])
            ):
                continue
            out.append(case)
    return out


def _reasoning_mode(case: dict) -> bool | str:
    if not case["reasoning"]:
        return False
    think = reasoning_format(case["reasoning"])
    if "THINK_END" not in think.terminals or think.terminals["THINK_END"][0] not in case["output"]:
        return False
    start = think.terminals.get("THINK_START", ("",))[0]
    return True if start and case["output"].startswith(start) else "open"


def _calls(msg) -> list[tuple[str, dict]]:
    return [(c.name, json.loads(c.arguments)) for c in msg.tool_calls]


@pytest.mark.parametrize("fmt", SHAPED)
def test_rendered_calls_are_accepted_and_parse_back(fmt: str) -> None:
    proven = 0
    for case in _cases(fmt):
        parser = Parser(case["reasoning"], fmt)
        markers = _markers(parser.spec)
        tag = grammar.structural_tag(parser, case["tools"] or None, reasoning=_reasoning_mode(case))
        if _other_spelling(tag, case["output"]):
            continue  # another spelling the parser also reads; the grammar writes the canonical one
        proven += 1
        assert _accepts(_compile(tag, markers), case["output"], markers), f"{fmt}: rejected {case['id']}"
        msg = parser.parse(case["output"], **case["options"], tools=case["tools"])
        assert _calls(msg) == [(c["name"], c.get("arguments", {})) for c in case["expected"]["tool_calls"]]
    assert proven, f"{fmt}: no rendered case to prove the grammar on"


def _other_spelling(tag: dict, output: str) -> bool:
    """Does the text outside the grammar's blocks hold a marker the grammar keeps out of free
    text (a call opened by another spelling)?"""
    fmt = tag["format"]
    if fmt["type"] == "sequence":
        fmt = fmt["elements"][-1]
    excluded = fmt.get("excludes", [])
    blocks = [(t["begin"], t["end"]) for t in fmt.get("tags", [])]
    free, i = [], 0
    while i < len(output):
        hits = [(output.find(b, i), b, e) for b, e in blocks if output.find(b, i) >= 0]
        if not hits:
            free.append(output[i:])
            break
        at, begin, end = min(hits)
        free.append(output[i:at])
        close = output.find(end, at + len(begin)) if end else -1
        i = close + len(end) if close >= 0 else len(output)
    return any(m in text for text in free for m in excluded)


@pytest.mark.parametrize("fmt", SHAPED)
def test_malformed_calls_are_rejected(fmt: str) -> None:
    for case in _cases(fmt):
        parser = Parser(case["reasoning"], fmt)
        tag = grammar.structural_tag(parser, case["tools"], reasoning=_reasoning_mode(case))
        if not _other_spelling(tag, case["output"]):
            break
    markers = _markers(parser.spec)
    compiled = _compile(tag, markers)
    output = case["output"]
    shape = grammar.call_shape(tool_format(fmt))
    name = case["expected"]["tool_calls"][0]["name"]
    block = min((s for s in (shape, *shape.alternates) if s.trigger in output), key=lambda s: output.index(s.trigger))
    begin = block.trigger
    at = output.index(begin)
    bad = {
        "unknown tool": output[:at] + output[at:].replace(name, "no_such_tool", 1),
        "junk after the opening marker": output[: at + len(begin)] + "@@" + output[at + len(begin) :],
    }
    end = block.steps[-1].marker
    if end:
        last = output.rindex(end)
        bad["cut before the closing marker"] = output[:last]
    for label, text in bad.items():
        assert not _accepts(compiled, text, markers), f"{fmt}: accepted {label}: {text!r}"


def test_formats_without_a_structural_tag_say_why() -> None:
    for fmt in UNSHAPED:
        line = grammar.grammar_support(tool_format(fmt))
        assert line.startswith("no structural tag: ") and len(line) > 30
    for fmt in SHAPED:
        assert grammar.grammar_support(tool_format(fmt)).startswith("structural tag triggered by ")
    assert grammar.grammar_support(reasoning_format("qwen3")).startswith("reasoning block")


def test_the_first_formats_have_structural_tags() -> None:
    assert {"hermes", "qwen3_coder"} <= set(SHAPED)


# ---------------------------------------------------------------------------- strict levels


def _tool(name: str, props: dict, required: list[str], strict: bool | None = None) -> dict:
    function: dict = {"name": name, "parameters": {"type": "object", "properties": props, "required": required}}
    if strict is not None:
        function["strict"] = strict
    return {"type": "function", "function": function}


WEATHER = _tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}, ["city"])
TIME = _tool("get_time", {"tz": {"type": "string", "enum": ["UTC", "CET"]}}, [])
TOOLS = [WEATHER, TIME]

TYPED = {
    "hermes": (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n</tool_call>',
    ),
    "qwen3_coder": (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n"
        "</parameter>\n</function>\n</tool_call>",
        "<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
    ),
    "glm47": (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key>"
        "<arg_value>3</arg_value></tool_call>",
        "<tool_call>get_weather<arg_key>days</arg_key><arg_value>three</arg_value></tool_call>",
    ),
}


@pytest.mark.parametrize("fmt", sorted(TYPED))
def test_strict_levels(fmt: str) -> None:
    if fmt not in SHAPED:
        pytest.skip(f"{fmt} has no structural tag here")
    good, ill_typed = TYPED[fmt]
    parser = Parser(None, fmt)
    markers = _markers(parser.spec)
    loose = _compile(grammar.structural_tag(parser, TOOLS, strict_level="auto"), markers)
    typed = _compile(grammar.structural_tag(parser, TOOLS, strict_level="function"), markers)
    assert _accepts(loose, good, markers) and _accepts(typed, good, markers)
    assert _accepts(loose, ill_typed, markers)  # not strict: any arguments object
    assert not _accepts(typed, ill_typed, markers)
    strict_tools = [_tool("get_weather", WEATHER["function"]["parameters"]["properties"], ["city"], strict=True), TIME]
    per_tool = _compile(grammar.structural_tag(parser, strict_tools, strict_level="auto"), markers)
    assert not _accepts(per_tool, ill_typed, markers)
    closed = _compile(grammar.structural_tag(parser, TOOLS, strict_level="parameter"), markers)
    assert _accepts(closed, good, markers)
    assert _calls(parser.parse(good, tools=TOOLS)) == [("get_weather", {"city": "Paris", "days": 3})]


def test_strict_parameter_closes_objects_without_touching_the_tools() -> None:
    tools = copy.deepcopy(TOOLS)
    tag = grammar.structural_tag(Parser(None, "hermes"), tools, strict_level="parameter")
    assert tools == TOOLS
    assert '"additionalProperties": false' in json.dumps(tag)
    with pytest.raises(RequestError):
        grammar.structural_tag(Parser(None, "hermes"), tools, strict_level="always")


def test_tool_choice_in_the_structural_tag() -> None:
    parser = Parser(None, "hermes")
    markers = _markers(parser.spec)
    good = TYPED["hermes"][0]
    required = _compile(grammar.structural_tag(parser, TOOLS, tool_choice="required"), markers)
    assert _accepts(required, good, markers) and not _accepts(required, "no call", markers)
    named = {"type": "function", "function": {"name": "get_time"}}
    forced = _compile(grammar.structural_tag(parser, TOOLS, tool_choice=named), markers)
    assert not _accepts(forced, good, markers)
    assert _accepts(forced, '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>', markers)
    single = _compile(grammar.structural_tag(parser, TOOLS, parallel_tool_calls=False), markers)
    assert not _accepts(single, good + "\n" + good, markers) and _accepts(single, good, markers)
    none = _compile(grammar.structural_tag(parser, TOOLS, tool_choice="none"), markers)
    assert _accepts(none, "text only", markers)


def test_reasoning_before_the_calls() -> None:
    parser = Parser("qwen3", "qwen3_coder")
    markers = _markers(parser.spec)
    call = TYPED["qwen3_coder"][0]
    block = _compile(grammar.structural_tag(parser, TOOLS, reasoning=True), markers)
    assert _accepts(block, "<think>\nplan\n</think>\n\n" + call, markers)
    assert not _accepts(block, call, markers)
    opened = _compile(grammar.structural_tag(parser, TOOLS, reasoning="open"), markers)
    assert _accepts(opened, "plan\n</think>\n\n" + call, markers)
    msg = parser.parse("<think>\nplan\n</think>\n\n" + call, tools=TOOLS)
    assert msg.reasoning == "plan" and _calls(msg) == [("get_weather", {"city": "Paris", "days": 3})]


def test_formats_without_a_structural_tag_raise() -> None:
    for fmt in UNSHAPED[:3]:
        with pytest.raises(RequestError):
            grammar.structural_tag(Parser(None, fmt), TOOLS)


# ---------------------------------------------------------------------------- sampling


def _valid(args: dict, schema: dict) -> bool:
    props = schema.get("properties", {})
    if not set(schema.get("required", ())) <= set(args):
        return False
    types = {"string": str, "integer": int, "object": dict, "array": list, "boolean": bool}
    for key, value in args.items():
        prop = props.get(key)
        if prop is None:
            continue
        if "enum" in prop and value not in prop["enum"]:
            return False
        kind = types.get(prop.get("type"))
        if kind is not None and (not isinstance(value, kind) or kind is int and isinstance(value, bool)):
            return False
    return True


def _sample(compiled, markers: tuple[str, ...], rng: random.Random, limit: int = 1200) -> str | None:
    import torch

    vocab, _compiler = _vocab(markers)
    matcher = xgr.GrammarMatcher(compiled)
    bitmask = xgr.allocate_token_bitmask(1, len(vocab))
    out: list[str] = []
    weights = [40.0 if tok == STOP else 4.0 if tok in markers else 6.0 if tok in '"}]>\n,' else 1.0 for tok in vocab]
    for _ in range(limit):
        matcher.fill_next_token_bitmask(bitmask)
        bits = bitmask[0].to(torch.int64)
        allowed = [i for i in range(len(vocab)) if (int(bits[i // 32]) >> (i % 32)) & 1]
        token = rng.choices(allowed, weights=[weights[i] for i in allowed])[0]
        if token == len(vocab) - 1:
            return "".join(out)
        assert matcher.accept_token(token)
        out.append(vocab[token])
    return None


@pytest.mark.parametrize("fmt", SHAPED)
def test_text_the_grammar_accepts_parses_back_to_valid_calls(fmt: str) -> None:
    parser = Parser(None, fmt)
    markers = _markers(parser.spec)
    compiled = _compile(grammar.structural_tag(parser, TOOLS, tool_choice="required", strict_level="function"), markers)
    shape = grammar.call_shape(tool_format(fmt))
    openers = {s.trigger for s in (shape, *shape.alternates)}
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    rng = random.Random(fmt)
    done = 0
    for _attempt in range(40):
        text = _sample(compiled, markers, rng)
        if text is None:
            continue
        msg = parser.parse(text, tools=TOOLS)
        assert msg.tool_calls, f"{fmt}: no call in {text!r}"
        for call in msg.tool_calls:
            args = json.loads(call.arguments)
            if shape.args not in ("json", "json_envelope"):
                # xgrammar's XML styles allow whitespace around a value; the parser keeps it in
                # a string (trimming only the template's own newline): compare without it
                args = {k: v.strip() if isinstance(v, str) else v for k, v in args.items()}
            assert _valid(args, schemas[call.name]), f"{fmt}: {call} from {text!r}"
        for opener in openers:
            if opener not in ("{", "["):  # bare-JSON openers are ordinary characters of free text too
                assert opener not in (msg.content or ""), f"{fmt}: a call was left as text: {text!r}"
        streamed = trisect.MessageBuilder()
        stream = parser.stream(tools=TOOLS, atomic_tool_calls=True)
        for ch in text:
            streamed.add(stream.feed(ch))
        streamed.add(stream.finish())
        assert _calls(streamed.message()) == _calls(msg)
        done += 1
        if done == 6:
            break
    assert done >= 3, f"{fmt}: the sampler finished only {done} outputs"


# ---------------------------------------------------------------------------- JSON schema


DEFS_A = _tool("a", {"p": {"$ref": "#/$defs/Point"}}, ["p"])
DEFS_A["function"]["parameters"]["$defs"] = {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}}
DEFS_B = _tool("b", {"q": {"$ref": "#/$defs/Point"}}, ["q"])
DEFS_B["function"]["parameters"]["$defs"] = copy.deepcopy(DEFS_A["function"]["parameters"]["$defs"])
DEFS_C = _tool("c", {"r": {"$ref": "#/$defs/Point"}}, [])
DEFS_C["function"]["parameters"]["$defs"] = {"Point": {"type": "string"}}


def test_json_schema_required_is_one_branch_per_tool_with_defs_merged() -> None:
    tools = [DEFS_A, DEFS_B]
    before = copy.deepcopy(tools)
    schema = grammar.json_schema(tools, "required")
    assert tools == before
    assert schema["type"] == "array" and schema["minItems"] == 1
    branches = schema["items"]["anyOf"]
    assert [b["properties"]["name"]["enum"] for b in branches] == [["a"], ["b"]]
    assert '"$defs":' not in json.dumps(branches) and schema["$defs"] == DEFS_A["function"]["parameters"]["$defs"]
    assert grammar.json_schema(tools, "required", parallel_tool_calls=False)["maxItems"] == 1
    with pytest.raises(ToolSchemaError):
        grammar.json_schema([DEFS_A, DEFS_C], "required")
    assert grammar.json_schema(tools, "auto") is None and grammar.json_schema(tools, "none") is None
    named = grammar.json_schema(tools, {"type": "function", "function": {"name": "b"}})
    assert named == DEFS_B["function"]["parameters"]
    with pytest.raises(RequestError):
        grammar.json_schema(tools, {"type": "function", "function": {"name": "zz"}})


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder"])
def test_json_schema_round_trip(fmt: str) -> None:
    _vocab_list, compiler = _vocab(())
    parser = Parser("qwen3", fmt)
    tools = [*TOOLS, DEFS_A]
    required = compiler.compile_json_schema(json.dumps(grammar.json_schema(tools, "required")))
    good = (
        '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}, '
        '{"name": "a", "parameters": {"p": {"x": 1}}}]'
    )
    for text, ok in [
        (good, True),
        ('[{"name": "nope", "parameters": {}}]', False),
        ('[{"name": "get_weather", "parameters": {"days": 3}}]', False),
        ('[{"name": "a", "parameters": {"p": {"x": "1"}}}]', False),
        ("[]", False),
    ]:
        assert _accepts(required, text, ()) == ok, text
    msg = parser.parse("<think>x</think>" + good, tools=tools, tool_choice="required")
    assert _calls(msg) == [("get_weather", {"city": "Paris", "days": 3}), ("a", {"p": {"x": 1}})]
    named = {"type": "function", "function": {"name": "get_weather"}}
    forced = compiler.compile_json_schema(json.dumps(grammar.json_schema(tools, named)))
    assert _accepts(forced, '{"city": "Paris"}', ()) and not _accepts(forced, '{"days": 1}', ())
    msg = parser.parse('<think>x</think>{"city": "Paris"}', tools=tools, tool_choice=named)
    assert _calls(msg) == [("get_weather", {"city": "Paris"})]


def test_for_request() -> None:
    parser = Parser("qwen3", "hermes")
    assert grammar.for_request(parser, tools=TOOLS, tool_choice="none") is None
    assert "json_schema" in grammar.for_request(parser, tools=TOOLS, tool_choice="required")
    assert "structural_tag" in grammar.for_request(parser, tools=TOOLS)
    assert grammar.for_request(Parser("qwen3", "pythonic"), tools=TOOLS) is None
