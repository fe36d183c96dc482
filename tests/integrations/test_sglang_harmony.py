"""Harmony (gpt-oss) inside SGLang 0.5.23's serving code, in each way the server can be set up
(``sglang_serving``), on every case of ``tests/cases/openai``: the analysis channel's reasoning
reaches ``reasoning_content`` wherever SGLang has a reasoning parser to carry it.

* ``--reasoning-parser trisect_openai_gptoss --tool-call-parser trisect_openai``: trisect alone
  (the two formats combined), on the chat path (reasoning parser built first) and in the order
  SGLang's Responses path builds them (tool parser first; ``test_sglang_serving`` checks that
  order in the installed source).
* ``--reasoning-parser trisect_openai_gptoss`` alone (or a request whose tools are not parsed):
  trisect's reasoning format alone, its reasoning and content.
* ``--tool-call-parser trisect_openai`` alone: SGLang's tool path has no reasoning field; the
  content and calls are trisect alone's, the analysis messages are not shown (as SGLang's own
  ``gpt-oss`` tool detector does: the analysis channel is not for the user).
* ``--reasoning-parser trisect_openai_gptoss --tool-call-parser gpt-oss`` (SGLang's detector for
  the calls): the reasoning of trisect's reasoning format alone; the whole text is handed on for
  SGLang's detector to parse.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import sglang_serving as sg
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.plugins import load_plugins

import trisect
from support.cases import load_cases

load_plugins()

CASES = [c for c in load_cases() if c["file"].startswith("openai/")]
REASONING, TOOLS = "trisect_openai_gptoss", "trisect_openai"


def _id(case: dict[str, Any]) -> str:
    return f"{case['file']}:{case['id']}"


def options(case: dict[str, Any]) -> dict[str, Any]:
    tools = case["tools"] or None
    return {"tools": tools, "tool_choice": "auto" if tools else "none"}


def view(message: trisect.Message, finish: str = "stop") -> dict[str, Any]:
    return {
        "reasoning": message.reasoning or None,
        "content": message.content or None,
        "tool_calls": [(c.name, c.arguments) for c in message.tool_calls],
        "finish_reason": "tool_calls" if message.tool_calls and finish == "stop" else finish,
    }


def replies(srv: sg.Server, case: dict[str, Any]) -> dict[str, sg.Reply]:
    tools = case["tools"] or None
    finish = "length" if case.get("truncated") else "stop"
    text = case["output"]
    out = {"whole": srv.whole(sg.request(tools), text, finish)}
    for per in (1, 5):
        out[f"streamed, {per} characters a chunk"] = srv.stream(
            sg.request(tools, stream=True), [text[k : k + per] for k in range(0, len(text), per)], finish
        )
    return out


def test_the_harmony_cases_were_found() -> None:
    assert len(CASES) > 40
    assert sum(1 for c in CASES if "<|channel|>analysis" in c["output"]) > 20


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_both_parsers_give_trisect_alone(case: dict[str, Any]) -> None:
    finish = "length" if case.get("truncated") else "stop"
    want = view(trisect.Parser("openai_gptoss", "openai").parse(case["output"], **options(case)), finish)
    for how, reply in replies(sg.Server(REASONING, TOOLS), case).items():
        assert reply.view() == want, how
        assert reply.backfill == [], how


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_reasoning_parser_alone_gives_trisects_reasoning_format(case: dict[str, Any]) -> None:
    finish = "length" if case.get("truncated") else "stop"
    want = view(trisect.Parser("openai_gptoss").parse(case["output"]), finish)
    for how, reply in replies(sg.Server(REASONING, None), case).items():
        assert reply.view() == want, how


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_tool_parser_alone_gives_trisects_content_and_calls(case: dict[str, Any]) -> None:
    finish = "length" if case.get("truncated") else "stop"
    want = view(trisect.Parser(None, "openai").parse(case["output"], **options(case)), finish)
    want["reasoning"] = None  # no reasoning parser: SGLang's tool path has no reasoning field
    for how, reply in replies(sg.Server(None, TOOLS), case).items():
        assert reply.view() == want, how


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_with_sglangs_tool_detector_the_reasoning_is_trisects(case: dict[str, Any]) -> None:
    """trisect's reasoning format alone reads the analysis channel (a call written to the
    analysis channel is reasoning to it: the calls are SGLang's detector's to find)."""
    want = trisect.Parser("openai_gptoss").parse(case["output"]).reasoning or None
    for how, reply in replies(sg.Server(REASONING, "gpt-oss"), case).items():
        assert reply.reasoning == want, how


@pytest.mark.parametrize("case", [c for c in CASES if c["tools"] and "<|call|>" in c["output"]], ids=_id)
def test_in_the_responses_order_both_parsers_give_trisect_alone(case: dict[str, Any]) -> None:
    """SGLang's Responses streaming path builds the tool parser, then the reasoning parser, and
    feeds each chunk to the reasoning parser first (``serving_responses.py``'s
    ``_responses_stream_generator_non_harmony``; the order is checked against the installed
    source in ``test_sglang_serving``)."""
    from sglang.srt.entrypoints.openai.protocol import Tool

    want = trisect.Parser("openai_gptoss", "openai").parse(case["output"], **options(case))
    tools = [Tool(**t) for t in case["tools"]]
    request = sg.request(case["tools"], stream=True)
    with sg.serving_config(REASONING, TOOLS):
        tool_parser = FunctionCallParser(tools, TOOLS, tokenizer=None, tool_choice=request.tool_choice)
        reasoning_parser = ReasoningParser(
            model_type=REASONING,
            stream_reasoning=True,
            force_reasoning=True,
            request=request,
            tokenizer=None,
            tool_call_parser_active=True,
        )
        text = case["output"]
        reasoning, content, calls = [], [], {}
        for k in range(0, len(text), 4):
            r, normal = reasoning_parser.parse_stream_chunk(text[k : k + 4])
            reasoning.append(r or "")
            got, items = tool_parser.parse_stream_chunk(normal or "")
            content.append(got or "")
            for item in items:
                calls.setdefault(item.tool_index, [item.name, ""])[1] += item.parameters
        r, normal = reasoning_parser.parse_stream_end()
        reasoning.append(r or "")
        got, items = tool_parser.parse_stream_chunk(normal or "")
        end, end_items = tool_parser.parse_stream_end()
        content += [got or "", end or ""]
        for item in [*items, *end_items]:
            calls.setdefault(item.tool_index, [item.name, ""])[1] += item.parameters
    assert "".join(reasoning) == (want.reasoning or "")
    assert "".join(content) == (want.content or "")
    assert [(n, json.loads(a)) for n, a in calls.values()] == [
        (c.name, json.loads(c.arguments)) for c in want.tool_calls
    ]
