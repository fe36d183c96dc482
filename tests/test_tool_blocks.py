"""Blocks of calls read as their templates write them (issue 20 §2): each rule here is a class the
inversion tests (tests/inversion) or held-out tests found, stated on a minimal output and replayed
under every chunking by ``trisect.testing.check_case``."""

from __future__ import annotations

import json

from trisect import Parser
from trisect.testing import Case, check_case

WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]


def _case(reasoning: str | None, tools: str, output: str, expected: dict[str, object]) -> Case:
    return Case(id=tools, output=output, expected=expected, reasoning=reasoning, tools_format=tools, tools=WEATHER)


def test_each_granite_call_may_carry_its_own_start_marker() -> None:
    # Granite 3 writes `<|tool_call|>` then the calls; a model that writes one marker per call
    # (`<|tool_call|> {…}` twice, as granite-20b-fc writes `<function_call> {…}`) makes one block of
    # two calls: the second marker opens the second call, it is never content
    output = (
        'Sure.<|tool_call|> {"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        '<|tool_call|> {"name": "get_weather", "arguments": {"city": "Rome", "days": 2}}'
    )
    expected = {
        "content": "Sure.",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "get_weather", "arguments": {"city": "Rome", "days": 2}},
        ],
    }
    check_case(_case(None, "granite", output, expected))
    msg = Parser(None, "granite").parse(output, tools=WEATHER)
    assert [json.loads(c.arguments) for c in msg.tool_calls] == [{"city": "Paris"}, {"city": "Rome", "days": 2}]
