"""Grammars from the formats, proven with the real xgrammar on the CPU (the ``[xgrammar]`` extra).

The same round trips as ``tests/test_grammar_llguidance.py``, through xgrammar's own reading of
the structural tag and its XML argument styles: (1) the calls the cases render are accepted and
parse back to the same calls; (2) malformed calls are rejected; (3) text sampled from the
grammar token by token parses back to valid calls with nothing left over as text; the JSON
schema for ``required`` / named accepts what ``Parser.parse(..., tool_choice=...)`` reads back.

xgrammar imports torch, so this suite is not portable: without xgrammar it skips, and under
``CI=true`` a skip here is a failure (``tests/conftest.py``), so ``.ci/run`` cannot lose it.
"""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

import pytest

import trisect
from support.extras import require
from support.grammar_cases import (
    DEFS_A,
    REQUIRED_GOOD,
    REQUIRED_TEXTS,
    SHAPED,
    STRICT_TOOLS,
    TOOLS,
    TYPED,
    calls,
    expected_calls,
    malformed,
    markers,
    proof_cases,
    valid_args,
)
from trisect import Parser, grammar
from trisect.formats import tool_format

pytestmark = pytest.mark.xgrammar

STOP = "<|trisect-stop|>"


xgr: Any = None  # set by the fixture below, per test: a missing xgrammar is each test's skip


@pytest.fixture(autouse=True)
def _requires_xgrammar() -> None:
    global xgr
    xgr = require("xgrammar", "xgrammar")


# ---------------------------------------------------------------------------- xgrammar set-up


@cache
def _vocab(m: tuple[str, ...]) -> tuple[list[str], Any]:
    """Single characters plus the format's markers as tokens (a sampler emits whole markers)."""
    chars = sorted({chr(i) for i in range(32, 127)} | {c for marker in m for c in marker})
    vocab = [*chars, "\n", *m, STOP]
    info = xgr.TokenizerInfo(vocab, vocab_type=xgr.VocabType.RAW, stop_token_ids=[len(vocab) - 1])
    return vocab, xgr.GrammarCompiler(info)


def _compile(tag: dict[str, Any], m: tuple[str, ...]) -> Any:
    return _vocab(m)[1].compile_structural_tag(json.dumps(tag))


def _accepts(compiled: Any, text: str, m: tuple[str, ...]) -> bool:
    vocab, _compiler = _vocab(m)
    matcher = xgr.GrammarMatcher(compiled)
    return bool(matcher.accept_string(text) and matcher.accept_token(len(vocab) - 1))


# ---------------------------------------------------------------------------- the formats


@pytest.mark.parametrize("fmt", SHAPED)
def test_rendered_calls_are_accepted_and_parse_back(fmt: str) -> None:
    proven = 0
    for case, parser, tag in proof_cases(fmt):
        m = markers(parser.spec)
        assert _accepts(_compile(tag, m), case["output"], m), f"{fmt}: rejected {case['id']}"
        msg = parser.parse(case["output"], **case["options"], tools=case["tools"])
        assert calls(msg) == expected_calls(case)
        proven += 1
    assert proven, f"{fmt}: no rendered case to prove the grammar on"


@pytest.mark.parametrize("fmt", SHAPED)
def test_malformed_calls_are_rejected(fmt: str) -> None:
    case, parser, tag = proof_cases(fmt)[0]
    m = markers(parser.spec)
    compiled = _compile(tag, m)
    for label, text in malformed(fmt, case).items():
        assert not _accepts(compiled, text, m), f"{fmt}: accepted {label}: {text!r}"


# ---------------------------------------------------------------------------- strict levels


@pytest.mark.parametrize("fmt", sorted(TYPED))
def test_strict_levels(fmt: str) -> None:
    good, ill_typed = TYPED[fmt]
    parser = Parser(None, fmt)
    m = markers(parser.spec)

    def compiled(tools: list[dict[str, Any]], level: str) -> Any:
        return _compile(grammar.structural_tag(parser, tools, strict_level=level), m)

    loose, typed = compiled(TOOLS, "auto"), compiled(TOOLS, "function")
    assert _accepts(loose, good, m) and _accepts(typed, good, m)
    assert _accepts(loose, ill_typed, m)  # not strict: any arguments object
    assert not _accepts(typed, ill_typed, m)
    assert not _accepts(compiled(STRICT_TOOLS, "auto"), ill_typed, m)
    assert _accepts(compiled(TOOLS, "parameter"), good, m)


def test_tool_choice_in_the_structural_tag() -> None:
    parser = Parser(None, "hermes")
    m = markers(parser.spec)
    good = TYPED["hermes"][0]

    def compiled(**options: Any) -> Any:
        return _compile(grammar.structural_tag(parser, TOOLS, **options), m)

    required = compiled(tool_choice="required")
    assert _accepts(required, good, m) and not _accepts(required, "no call", m)
    forced = compiled(tool_choice={"type": "function", "function": {"name": "get_time"}})
    assert not _accepts(forced, good, m)
    assert _accepts(forced, '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>', m)
    single = compiled(parallel_tool_calls=False)
    assert not _accepts(single, good + "\n" + good, m) and _accepts(single, good, m)
    assert _accepts(compiled(tool_choice="none"), "text only", m)


def test_reasoning_before_the_calls() -> None:
    parser = Parser("qwen3", "qwen3_coder")
    m = markers(parser.spec)
    call = TYPED["qwen3_coder"][0]
    block = _compile(grammar.structural_tag(parser, TOOLS, reasoning=True), m)
    assert _accepts(block, "<think>\nplan\n</think>\n\n" + call, m)
    assert not _accepts(block, call, m)
    opened = _compile(grammar.structural_tag(parser, TOOLS, reasoning="open"), m)
    assert _accepts(opened, "plan\n</think>\n\n" + call, m)


# ---------------------------------------------------------------------------- sampling


def _sample(compiled: Any, m: tuple[str, ...], rng: random.Random, limit: int = 1200) -> str | None:
    torch = require("torch", "xgrammar")

    vocab, _compiler = _vocab(m)
    matcher = xgr.GrammarMatcher(compiled)
    bitmask = xgr.allocate_token_bitmask(1, len(vocab))
    out: list[str] = []
    weights = [40.0 if tok == STOP else 4.0 if tok in m else 6.0 if tok in '"}]>\n,' else 1.0 for tok in vocab]
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
    m = markers(parser.spec)
    compiled = _compile(grammar.structural_tag(parser, TOOLS, tool_choice="required", strict_level="function"), m)
    shape = grammar.call_shape(tool_format(fmt))
    assert not isinstance(shape, str)
    openers = {s.trigger for s in (shape, *shape.alternates)}
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    rng = random.Random(fmt)
    done = 0
    for _attempt in range(40):
        text = _sample(compiled, m, rng)
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


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder"])
def test_json_schema_round_trip(fmt: str) -> None:
    _vocab_list, compiler = _vocab(())
    parser = Parser("qwen3", fmt)
    tools = [*TOOLS, DEFS_A]
    required = compiler.compile_json_schema(json.dumps(grammar.json_schema(tools, "required")))
    for text, ok in REQUIRED_TEXTS:
        assert _accepts(required, text, ()) == ok, text
    msg = parser.parse("<think>x</think>" + REQUIRED_GOOD, tools=tools, tool_choice="required")
    assert calls(msg) == [("get_weather", {"city": "Paris", "days": 3}), ("a", {"p": {"x": 1}})]
    named = {"type": "function", "function": {"name": "get_weather"}}
    forced = compiler.compile_json_schema(json.dumps(grammar.json_schema(tools, named)))
    assert _accepts(forced, '{"city": "Paris"}', ()) and not _accepts(forced, '{"days": 1}', ())
