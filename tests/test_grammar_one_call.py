"""``parallel_tool_calls=False`` (and a named ``tool_choice``) is a grammar for exactly one call,
also in formats whose one call block can hold several calls (a list of calls, a block of
invokes): every rendered case with two or more calls in a block is accepted by the parallel
grammar and rejected by the single one, through llguidance (structural tag, GBNF and Lark)."""

from __future__ import annotations

from typing import Any

import pytest

from support import llg
from support.grammar_cases import expected_calls, markers, proof_cases, reasoning_mode
from trisect import grammar
from trisect.formats import all_formats
from trisect.grammar.shape import call_shape
from trisect.request.choice import keeps_native_markers


def _repeating() -> list[str]:
    out = []
    for spec in all_formats():
        shape = call_shape(spec) if spec.kind == "tools" else "not tools"
        if not isinstance(shape, str) and any(s.repeat for s in (shape, *shape.alternates)):
            out.append(spec.name)
    return out


REPEATING = _repeating()
NO_SINGLE_CASE: set[str] = set()  # formats whose rendered cases all have several calls


def _stars(node: Any) -> int:
    if isinstance(node, dict):
        return (node.get("type") == "star") + sum(_stars(v) for v in node.values())
    if isinstance(node, list):
        return sum(_stars(v) for v in node)
    return 0


def test_some_formats_hold_several_calls_in_one_block() -> None:
    assert {"kimi_k2", "deepseek_v32", "xlam", "minimax_m2"} <= set(REPEATING)


@pytest.mark.parametrize("fmt", REPEATING)
def test_one_call_only_is_a_grammar_for_exactly_one_call(fmt: str) -> None:
    proven = accepted = 0
    for case, parser, tag in proof_cases(fmt):
        if case["tools"] is None:
            continue
        if len(expected_calls(case)) == 1:  # the single grammar still takes one call
            m = markers(parser.spec)
            reasoning = reasoning_mode(case)
            single = grammar.structural_tag(parser, case["tools"], parallel_tool_calls=False, reasoning=reasoning)
            assert llg.accepts(llg.structural_tag(single, m), case["output"], m), case["id"]
            accepted += 1
            continue
        if len(expected_calls(case)) < 2:
            continue
        tools, reasoning = case["tools"], reasoning_mode(case)
        m = markers(parser.spec)
        single = grammar.structural_tag(parser, tools, parallel_tool_calls=False, reasoning=reasoning)
        assert _stars(single) == 0 < _stars(tag)
        assert llg.accepts(llg.structural_tag(tag, m), case["output"], m)
        assert not llg.accepts(llg.structural_tag(single, m), case["output"], m), case["id"]
        if keeps_native_markers(parser.tools_spec):  # required writes the markers: Lark from the tag
            many = grammar.lark(parser, tools, tool_choice="required", reasoning=reasoning)
            one = grammar.lark(parser, tools, tool_choice="required", parallel_tool_calls=False, reasoning=reasoning)
            assert many is not None and one is not None
            assert llg.accepts(llg.compile_lark(many.text, m), case["output"], m), case["id"]
            assert not llg.accepts(llg.compile_lark(one.text, m), case["output"], m), case["id"]
        proven += 1
    assert proven, f"{fmt}: no rendered case with several calls in one block"
    assert accepted or fmt in NO_SINGLE_CASE, f"{fmt}: no rendered case with one call"
