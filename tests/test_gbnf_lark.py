"""GBNF (llama.cpp) and Lark (llguidance) grammars from the formats, proven with llguidance.

llguidance compiles both: Lark natively, GBNF through its own GBNF reader
(``llguidance.grammar_from("gbnf", …)``, which turns terminal-only rules into lexemes). For every
tool format with a structural tag: the lazy GBNF grammar accepts each rendered case from its
first call opener on (when only calls follow: a lazy grammar ends after the last call) and the
Lark grammar accepts the whole output; malformed calls are rejected; text sampled from each
grammar parses back to valid calls of the offered tools. The JSON-schema converter is checked
feature by feature against the same texts llguidance's own JSON-schema support accepts.
The real llama.cpp grammar engine reads the same GBNF in ``tests/test_embedded_model.py``.
"""

from __future__ import annotations

import json
import random
import re
from functools import cache
from typing import Any

import llguidance
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trisect
from support import llg
from support.grammar_cases import (
    DEFS_A,
    REQUIRED_GOOD,
    REQUIRED_TEXTS,
    SHAPED,
    TOOLS,
    TYPED,
    UNSHAPED,
    calls,
    case_grammar,
    expected_calls,
    malformed,
    markers,
    proof_cases,
    valid_args,
)
from trisect import Parser, RequestError, grammar
from trisect.formats import tool_format
from trisect.grammar.ebnf import GrammarSyntaxError, Rules, Until, regex_expr, write_gbnf
from trisect.grammar.jsonschema import json_rules


@cache
def compile_gbnf(text: str, m: tuple[str, ...] = ()) -> str:
    """The llguidance grammar of a GBNF text, validated; once per text and vocabulary."""
    compiled = llguidance.grammar_from("gbnf", text)
    error = llguidance.LLMatcher.validate_grammar(compiled, llg.tokenizer(m)[0])
    if error and not error.startswith("WARNING"):
        raise ValueError(f"{error}\n{text}")
    return compiled


def lazy_part(parser: Parser, g: grammar.Grammar, case: dict[str, Any]) -> str | None:
    """The text a lazy grammar constrains: from the first trigger on, when only calls (and
    whitespace) follow it; ``None`` otherwise."""
    output = case["output"]
    found = [output.index(t) for t in g.triggers if t in output]
    if not found:
        return None
    text = output[min(found) :].rstrip()
    rest = Parser(None, parser.tools).parse(text, tools=case["tools"] or None)  # after reasoning
    if (rest.content or "").strip() or calls(rest) != expected_calls(case):
        return None
    return text


# cases whose calls a lazy grammar cannot write: a separator the template does not write
# between calls, a wrapper marker after the call
NOT_LAZY = {"l3-hand-after-empty-args-47901", "l4-hand-python-start-wrapper"}


# ---------------------------------------------------------------------------- the formats


@pytest.mark.parametrize("fmt", SHAPED)
def test_rendered_calls_are_accepted(fmt: str) -> None:
    lazy_proven = whole_proven = 0
    for case, parser, _tag in proof_cases(fmt):
        m = markers(parser.spec)
        g = case_grammar("gbnf", parser, case)
        assert g is not None and g.lazy and g.syntax == "gbnf"
        text = lazy_part(parser, g, case)
        if text is not None and case["id"] not in NOT_LAZY:
            assert llg.accepts(compile_gbnf(g.text, m), text, m), f"{fmt}: GBNF rejected {case['id']}: {text!r}"
            lazy_proven += 1
        whole = case_grammar("lark", parser, case)
        assert whole is not None and not whole.lazy
        assert llg.accepts(llg.compile_lark(whole.text, m), case["output"], m), f"{fmt}: Lark rejected {case['id']}"
        whole_proven += 1
    assert lazy_proven and whole_proven, f"{fmt}: no rendered case to prove the grammars on"


@pytest.mark.parametrize("fmt", SHAPED)
def test_malformed_calls_are_rejected(fmt: str) -> None:
    for case, parser, _tag in proof_cases(fmt):
        m = markers(parser.spec)
        g = case_grammar("gbnf", parser, case)
        assert g is not None
        if lazy_part(parser, g, case) is None:
            continue
        lazy = compile_gbnf(g.text, m)
        whole_grammar = case_grammar("lark", parser, case)
        assert whole_grammar is not None
        whole = llg.compile_lark(whole_grammar.text, m)
        for label, text in malformed(fmt, case).items():
            at = min(text.index(t) for t in g.triggers if t in text)
            assert not llg.accepts(lazy, text[at:].rstrip(), m), f"{fmt}: GBNF accepted {label}: {text!r}"
            assert not llg.accepts(whole, text, m), f"{fmt}: Lark accepted {label}: {text!r}"
        return
    pytest.fail(f"{fmt}: no case to break")


@pytest.mark.parametrize("fmt", SHAPED)
def test_text_the_grammars_allow_parses_back_to_valid_calls(fmt: str) -> None:
    """Sampled token by token (markers as whole tokens): the GBNF call blocks (what a lazy
    grammar writes once triggered) and the Lark whole output under ``required``."""
    parser = Parser(None, fmt)
    m = markers(parser.spec)
    lazy = grammar.gbnf(parser, TOOLS, strict_level="function")
    whole = grammar.lark(parser, TOOLS, tool_choice="required", strict_level="function")
    assert lazy is not None and whole is not None
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    shape = grammar.call_shape(tool_format(fmt))
    assert not isinstance(shape, str)
    rng = random.Random(fmt)
    sampler = llg.Sampler(m)
    for compiled, choice in ((compile_gbnf(lazy.text, m), "auto"), (llg.compile_lark(whole.text, m), "required")):
        done = 0
        for _attempt in range(30):
            text = sampler.sample(compiled, rng)
            if text is None:
                continue
            msg = parser.parse(text, tools=TOOLS, tool_choice=choice)
            assert msg.tool_calls, f"{fmt}: no call in {text!r}"
            for call in msg.tool_calls:
                args = json.loads(call.arguments)
                if shape.args not in ("json", "json_envelope"):  # XML values keep spacing the parser keeps
                    args = {k: v.strip() if isinstance(v, str) else v for k, v in args.items()}
                assert valid_args(args, schemas[call.name]), f"{fmt}: {call} from {text!r}"
            done += 1
            if done == 4:
                break
        assert done >= 2, f"{fmt}: the sampler finished only {done} outputs"


def test_formats_without_a_call_shape() -> None:
    for fmt in UNSHAPED[:3]:
        with pytest.raises(RequestError):
            grammar.gbnf(Parser(None, fmt), TOOLS)
        # required / named need no call shape: the constrained JSON
        required = grammar.gbnf(Parser(None, fmt), TOOLS, tool_choice="required")
        assert required is not None and not required.lazy


# ---------------------------------------------------------------------------- request semantics


def test_tool_choice_shapes_the_grammar() -> None:
    parser = Parser("qwen3", "hermes")
    good = TYPED["hermes"][0]
    m = markers(parser.spec)
    assert grammar.gbnf(parser, TOOLS, tool_choice="none") is None
    assert grammar.lark(parser, TOOLS, tool_choice="none") is None
    auto = grammar.gbnf(parser, TOOLS, strict_level="function")
    assert auto is not None and auto.triggers == ("<tool_call>",) and auto.lazy
    assert auto.text.startswith("root ::= ")
    lazy = compile_gbnf(auto.text, m)
    assert llg.accepts(lazy, good, m) and llg.accepts(lazy, good + "\n" + good, m)
    assert not llg.accepts(lazy, TYPED["hermes"][1], m)  # "days": "3" is not an integer
    assert not llg.accepts(lazy, good + "\nDone.", m)  # the generation ends after the calls
    single = grammar.gbnf(parser, TOOLS, parallel_tool_calls=False)
    assert single is not None and not llg.accepts(compile_gbnf(single.text, m), good + "\n" + good, m)
    named = grammar.gbnf(parser, TOOLS, tool_choice={"type": "function", "function": {"name": "get_time"}})
    assert named is not None and not named.lazy
    forced = compile_gbnf(named.text, m)
    assert llg.accepts(forced, '{"tz": "UTC"}') and not llg.accepts(forced, '{"tz": "PST"}')
    assert not llg.accepts(forced, good, m)


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
def test_required_is_the_json_array_the_parser_reads(syntax: str) -> None:
    parser = Parser("qwen3", "hermes")
    tools = [*TOOLS, DEFS_A]
    make = grammar.gbnf if syntax == "gbnf" else grammar.lark
    g = make(parser, tools, tool_choice="required")
    assert g is not None and not g.lazy
    compiled = compile_gbnf(g.text) if syntax == "gbnf" else llg.compile_lark(g.text)
    for text, ok in REQUIRED_TEXTS:
        assert llg.accepts(compiled, text) == ok, text
    msg = parser.parse("<think>x</think>" + REQUIRED_GOOD, tools=tools, tool_choice="required")
    assert calls(msg) == [("get_weather", {"city": "Paris", "days": 3}), ("a", {"p": {"x": 1}})]
    one = make(parser, tools, tool_choice="required", parallel_tool_calls=False)
    assert one is not None
    compiled_one = compile_gbnf(one.text) if syntax == "gbnf" else llg.compile_lark(one.text)
    assert not llg.accepts(compiled_one, REQUIRED_GOOD)


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
def test_reasoning_before_the_grammar(syntax: str) -> None:
    parser = Parser("qwen3", "hermes")
    m = markers(parser.spec)
    make = grammar.gbnf if syntax == "gbnf" else grammar.lark
    named = {"type": "function", "function": {"name": "get_weather"}}
    args = '{"city": "Paris"}'

    def compiled(**options: Any) -> str:
        g = make(parser, TOOLS, tool_choice=named, **options)
        assert g is not None
        return compile_gbnf(g.text, m) if syntax == "gbnf" else llg.compile_lark(g.text, m)

    block = compiled(reasoning=True)
    assert llg.accepts(block, "<think>\nplan <b>bold</b> </thin\n</think>\n\n" + args, m)
    assert not llg.accepts(block, args, m) and not llg.accepts(block, "<think>a</think>b</think>" + args, m)
    opened = compiled(reasoning="open")
    assert llg.accepts(opened, "plan\n</think>\n\n" + args, m) and not llg.accepts(opened, "<think>" + args, m)
    assert llg.accepts(compiled(), args, m)
    msg = parser.parse("<think>\nplan\n</think>\n\n" + args, tools=TOOLS, tool_choice=named)
    assert msg.reasoning == "plan" and calls(msg) == [("get_weather", {"city": "Paris"})]


def test_a_lazy_grammar_ignores_reasoning() -> None:
    parser = Parser("qwen3", "hermes")
    assert grammar.gbnf(parser, TOOLS, reasoning=True) == grammar.gbnf(parser, TOOLS)


# ---------------------------------------------------------------------------- JSON schema -> GBNF


def schema_accepts(schema: Any, text: str) -> bool:
    return llg.accepts(compile_gbnf(grammar.schema_gbnf(schema).text), text)


SCHEMA_TEXTS: list[tuple[str, Any, list[str], list[str]]] = [
    ("any value", {}, ['{"a": [1, null, "x"]}', "3.5", '"s"', "true", "[]"], ["", "tru", "{a: 1}"]),
    ("string", {"type": "string"}, ['"a\\"b\\u00e9"', '""', '"München"'], ["1", '"a', "'a'"]),
    ("string lengths", {"type": "string", "minLength": 2, "maxLength": 3}, ['"ab"', '"abc"'], ['"a"', '"abcd"']),
    ("integer", {"type": "integer"}, ["0", "-12", "42"], ["1.5", "01", "+1", '"1"']),
    ("non-negative", {"type": "integer", "minimum": 0}, ["0", "7"], ["-1"]),
    ("number", {"type": "number"}, ["-0.5", "1e10", "2E-3", "7"], [".5", "1.", "NaN"]),
    ("boolean and null", {"type": ["boolean", "null"]}, ["true", "false", "null"], ["0", '"true"']),
    ("nullable", {"type": "string", "nullable": True}, ['"x"', "null"], ["1"]),
    ("enum", {"enum": ["a", 1, None, {"k": [True]}]}, ['"a"', "1", "null", '{"k": [true]}'], ['"b"', "2"]),
    ("const", {"const": "fixed"}, ['"fixed"'], ['"other"']),
    (
        "object",
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
            "required": ["b"],
        },
        ['{"b": "x"}', '{"a": 1, "b": "x"}', '{"a": 1, "b": "x", "c": true}', '{ "b" : "x" , "c" : false }'],
        ["{}", '{"a": 1}', '{"b": "x", "a": 1}', '{"b": "x", "d": 1}', '{"b": "x",}'],
    ),
    (
        "additional properties",
        {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
        ['{"a": 1}', '{"a": 1, "z": "s"}', '{"z": "s", "y": "t"}', "{}"],
        ['{"z": 1}'],
    ),
    ("open object", {"type": "object"}, ["{}", '{"x": {"y": [1]}}'], ["[]", '{"x"}']),
    (
        "array",
        {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
        ["[1]", "[1, 2]"],
        ["[]", "[1, 2, 3]", '["a"]'],
    ),
    (
        "tuple",
        {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
        ['["a", 1]', '["a"]', "[]"],
        ['[1, "a"]', '["a", 1, 2]'],
    ),
    (
        "anyOf",
        {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"x": {"type": "integer"}}}]},
        ['"s"', '{"x": 1}', "{}"],
        ["1", '{"x": "1"}'],
    ),
    (
        "allOf",
        {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                {"properties": {"b": {"type": "string"}}, "required": ["b"]},
            ]
        },
        ['{"a": 1, "b": "x"}'],
        ['{"a": 1}', '{"b": "x"}'],
    ),
    (
        "recursive $ref",
        {
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "v": {"type": "integer"},
                        "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]},
                    },
                    "required": ["v"],
                }
            },
            "$ref": "#/$defs/node",
        },
        ['{"v": 1}', '{"v": 1, "next": {"v": 2, "next": null}}'],
        ['{"v": 1, "next": {"next": null}}'],
    ),
]


@pytest.mark.parametrize(("label", "schema", "good", "bad"), SCHEMA_TEXTS, ids=[t[0] for t in SCHEMA_TEXTS])
def test_schema_features(label: str, schema: Any, good: list[str], bad: list[str]) -> None:
    """Each text is judged the same way by llguidance's own JSON schema support, so the
    expectations are the JSON schema's, not this converter's."""
    reference = llg.json_schema(grammar.cfg._closed(schema)) if label != "nullable" else None  # OpenAPI's
    for text in good:
        assert schema_accepts(schema, text), f"{label}: rejected {text!r}"
        if reference is not None:
            assert llg.accepts(reference, text), f"{label}: llguidance itself rejects {text!r}"
    for text in bad:
        assert not schema_accepts(schema, text), f"{label}: accepted {text!r}"
        if reference is not None:
            assert not llg.accepts(reference, text), f"{label}: llguidance itself accepts {text!r}"
    assert not grammar.schema_gbnf(schema).notes


def test_what_the_converter_cannot_express_is_noted_and_loosened() -> None:
    schema = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "n": {"type": "integer", "minimum": 5, "maximum": 9},
            "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["code"],
    }
    g = grammar.schema_gbnf(schema)
    notes = "\n".join(g.notes)
    assert "#/properties/code: pattern" in notes and "#/properties/n: maximum" in notes
    assert "minimum 5" in notes and "oneOf read as anyOf" in notes
    compiled = compile_gbnf(g.text)
    assert llg.accepts(compiled, '{"code": "lowercase", "n": 100, "pick": 1}')  # looser, never stricter
    assert not llg.accepts(compiled, '{"n": 1}')
    fallback = grammar.schema_gbnf({"type": "object", "properties": {"x": {"$ref": "http://x/y"}}})
    assert any("$ref" in n for n in fallback.notes)
    assert llg.accepts(compile_gbnf(fallback.text), '{"x": [1, {"y": null}]}')


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z]{1,6}", fullmatch=True),
        st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"enum": ["x", "y"]}]),
        min_size=1,
        max_size=4,
    ),
    st.data(),
)
def test_objects_match_llguidance_json(props: dict[str, Any], data: st.DataObject) -> None:
    """Random objects and random texts: the converter's GBNF and llguidance's JSON schema
    agree on every text."""
    required = data.draw(st.lists(st.sampled_from(sorted(props)), unique=True))
    schema = {"type": "object", "properties": props, "required": required}
    ours = compile_gbnf(grammar.schema_gbnf(schema).text)
    reference = llg.json_schema(grammar.cfg._closed(schema))
    values = {"string": ['"s"', "1"], "integer": ["3", '"3"'], "boolean": ["true", "null"]}
    for _ in range(6):
        keys = data.draw(st.lists(st.sampled_from([*sorted(props), "zz"]), unique=True, max_size=5))
        keys = data.draw(st.sampled_from([keys, [k for k in props if k in keys]]))  # declared order, or not
        parts = []
        for key in keys:
            kind = props.get(key, {}).get("type", "string")
            value = data.draw(st.sampled_from(values.get(kind, ['"x"', '"q"'])))
            parts.append(f'"{key}": {value}')
        text = "{" + ", ".join(parts) + "}"
        assert llg.accepts(ours, text) == llg.accepts(reference, text), text


# ---------------------------------------------------------------------------- the pieces


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="<ab/>x", max_size=14), st.sampled_from([("<ab>", "</ab>"), ("aa", "ab"), ("</a>", "</a>")]))
def test_until_accepts_exactly_what_the_parser_reads(text: str, words: tuple[str, str]) -> None:
    """``Until(excludes, end)``: text, then end, where the first excluded string in
    ``text + end`` is ``end`` at its very end."""
    exclude, end = words
    rules = Rules()
    rules.root = Until((exclude,), end)
    full = text + end
    # the earliest-ending occurrence of an excluded string is end, at the very end
    ends = [full.find(w) + len(w) for w in {exclude, end} if w in full]
    expected = full.endswith(end) and min(ends) == len(full)
    assert llg.accepts(compile_gbnf(write_gbnf(rules, json_rules)), full) == expected, (text, words)


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        ("[ \\t\\r\\n]{0,4}", ["", " \n", "\t\t\t\t"], ["     ", "x"]),
        (
            "functions\\.get_weather:[0-9]+",
            ["functions.get_weather:0", "functions.get_weather:12"],
            ["functions.get_weather:"],
        ),
        ("(?:ab|c)*d?", ["", "abcab", "cd"], ["a", "dd"]),
        ("[^a-c\\]]x", ["dx", "-x"], ["ax", "]x"]),
        ("\\d\\w\\s.", ["1a z", "9_\t-"], ["a1 z", "1a z\n"]),
    ],
)
def test_regex_subset(pattern: str, good: list[str], bad: list[str]) -> None:
    rules = Rules()
    rules.root = regex_expr(pattern)
    compiled = compile_gbnf(write_gbnf(rules, json_rules))
    for text in good:
        assert re.fullmatch(pattern, text, re.S) and llg.accepts(compiled, text), text
    for text in bad:
        assert not re.fullmatch(pattern, text) and not llg.accepts(compiled, text), text


@pytest.mark.parametrize("pattern", ["^a", "a(?=b)", "a*?", "\\bx", "(?i:a)"])
def test_regex_features_without_gbnf_translation_raise(pattern: str) -> None:
    with pytest.raises(GrammarSyntaxError):
        regex_expr(pattern)


def test_grammars_are_valid_for_every_shaped_format_and_strict_level() -> None:
    for fmt in SHAPED:
        parser = Parser("qwen3", fmt)
        m = markers(parser.spec)
        for level in grammar.STRICT_LEVELS:
            for choice in ("auto", "required"):
                g = grammar.gbnf(parser, TOOLS, tool_choice=choice, strict_level=level, reasoning=True)
                assert g is not None
                compile_gbnf(g.text, m)
                assert re.fullmatch(r"(root|[a-z0-9-]+) ::= .+", g.text.splitlines()[0])
                lark = grammar.lark(parser, TOOLS, tool_choice=choice, strict_level=level, reasoning=True)
                assert lark is not None
                llg.compile_lark(lark.text, m)


def test_public_api() -> None:
    assert {"Grammar", "gbnf", "lark", "schema_gbnf"} <= set(grammar.__all__)
    assert trisect.grammar.Grammar is grammar.cfg.Grammar
