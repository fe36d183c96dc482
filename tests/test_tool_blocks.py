"""Blocks of calls read as their templates write them (issue 20 §2): each rule here is a class the
inversion tests (tests/inversion) or held-out tests found, stated on a minimal output and replayed
under every chunking by ``trisect.testing.check_case``."""

from __future__ import annotations

import json

import pytest

from trisect import Parser
from trisect.testing import Case, check_case, check_output

WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]


def _case(
    reasoning: str | None, tools: str, output: str, expected: dict[str, object], *, malformed: bool = False
) -> Case:
    # malformed: an incremental stream may send a call that then aborts
    return Case(
        id=tools,
        output=output,
        expected=expected,
        reasoning=reasoning,
        tools_format=tools,
        tools=WEATHER,
        truncated=malformed,
    )


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


def test_a_raw_string_template_is_read_as_it_writes_strings() -> None:
    # OLMo 3 and LFM2.5 write `key='` + value + `'` (tests/data/detect/heldout:
    # vllm-tool_chat_template_olmo3.jinja:61-62, LFM2.5-8B-A1B.jinja:5-6): a newline and a
    # backslash inside '…' are the value's own (vLLM's parsers read them as Python escapes: a
    # path `C:\path\to` got a tab, and a raw newline dropped the block into content)
    value = "    if x:\n        return 'C:\\path\\to'\n".replace("'", '"')
    for tools, (start, end) in {
        "olmo3": ("<function_calls>\n", "\n</function_calls>"),
        "lfm2": ("<|tool_call_start|>[", "]<|tool_call_end|>"),
    }.items():
        output = f"{start}get_weather(city='{value}', days=2){end}"
        expected = {"tool_calls": [{"name": "get_weather", "arguments": {"city": value, "days": 2}}]}
        check_case(_case(None, tools, output, expected))


def test_a_raw_string_template_keeps_python_escapes_where_it_writes_none() -> None:
    # what the template never writes raw keeps Python's reading: "…" strings, and strings
    # inside a list or dict (the template writes those with tojson)
    output = '<function_calls>\nget_weather(city="a\\tb", days=2)\n</function_calls>'
    expected = {"tool_calls": [{"name": "get_weather", "arguments": {"city": "a\tb", "days": 2}}]}
    check_case(_case(None, "olmo3", output, expected))


def test_a_list_of_calls_with_a_call_that_does_not_read_is_all_content() -> None:
    # a block is all of its text or none (DESIGN, contract 10): the calls before the bad one do
    # not stand (a stream that sent them reports them aborted) and the list's text, opener
    # included, is content; before, they were returned and the rest was content without `[`
    for tools in ("pythonic", "llama4_pythonic"):
        output = "Here: [get_weather(city='Paris'), get_weather(city=Rome)] done"
        check_case(_case(None, tools, output, {"content": output}, malformed=True))
        stream, sent = Parser(None, tools).stream(), []
        for ch in output:
            delta = stream.feed(ch)
            sent += [] if delta is None else delta.aborted
        assert sorted(sent) == [0, 1]  # the streamed first call is reported aborted, and the bad one


@pytest.mark.parametrize(
    ("tools", "output", "content", "calls"),
    [
        # a bad call after a good one: the block, its markers included, is content
        ("lfm2", "<|tool_call_start|>[get_weather(city='Paris'), 'bad']<|tool_call_end|> done", None, []),
        ("olmo3", "<function_calls>\nget_weather(city='Paris')\n'bad'\n</function_calls> done", None, []),
        # its first call that does not read too, the output ending there (no closer)
        ("lfm2", "<|tool_call_start|>[get_weather|", None, []),
        # a word between its calls breaks the list too
        ("lfm2", "<|tool_call_start|>[get_weather(city='Paris') x]<|tool_call_end|>", None, []),
        ("olmo3", "<function_calls>\nget_weather(city='Paris') x\n</function_calls>", None, []),
        # the output ends inside the list: all of the block is the unfinished call
        ("lfm2", "<|tool_call_start|>[get_weather(city='Paris'), get_weather(ci", "", []),
        # a list that closed stands, whatever follows it in the block
        ("lfm2", "<|tool_call_start|>[get_weather(city='Paris')]later", "later", ["Paris"]),
        # a list that reads: its calls stand
        (
            "lfm2",
            "<|tool_call_start|>[get_weather(city='Paris'), get_weather(city='Rome')]<|tool_call_end|>",
            "",
            ["Paris", "Rome"],
        ),
    ],
)
def test_a_block_list_of_calls_is_all_of_its_text_or_none(
    tools: str, output: str, content: str | None, calls: list[str]
) -> None:
    """LFM2 and OLMo 3 write one list of calls between their markers, as a pythonic list bare
    (``FormatSpec.whole_list``): a list that does not read is content whole, its opener, closer
    and the whitespace before it included (before, the calls before the bad one stood and the
    rest was content without its opener, and the closer was dropped); cut off, it is all the
    unfinished call's."""
    msg = Parser(None, tools).parse(output, tools=WEATHER)
    want = output if content is None else content or None
    assert msg.content == want
    assert [json.loads(c.arguments)["city"] for c in msg.tool_calls] == calls
    if content == "" and not calls:
        assert msg.unfinished_call is not None and msg.unfinished_call.text == output
    check_output(Parser(None, tools), output, tools=WEATHER, cuts=6)
