"""Kimi K3's tools section (vLLM 0.33 ``kimi_k3_tool_parser.py``, the wire format quoted in
``trisect.formats.kimi_k3``): its markers never reach content, a section written inside the think
channel is the call, and a call body holds only ``argument key="…"`` elements. The DSML
invokes (DeepSeek V3.2 / V4) hold only parameter elements the same way."""

from __future__ import annotations

import json

import pytest

from trisect import Message, MessageBuilder, Parser

TOOLS = [
    {
        "type": "function",
        "function": {"name": "python", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}},
    }
]
CALL = (
    '<|open|>call tool="python" index="1"<|sep|>'
    '<|open|>argument key="code" type="string"<|sep|>print(1)<|close|>argument<|sep|><|close|>call<|sep|>'
)
SECTION = "<|open|>tools<|sep|>" + CALL + "<|close|>tools<|sep|>"
END = "<|close|>message<|sep|>"
THINK_END = "<|close|>think<|sep|>"


def _both(output: str) -> tuple[Message, Message]:
    parser = Parser("kimi_k3", "kimi_k3")
    stream = parser.stream(tools=TOOLS)
    built = MessageBuilder()
    for ch in output:
        built.add(stream.feed(ch))
    built.add(stream.finish())
    return parser.parse(output, tools=TOOLS), built.message()


def _calls(message: Message) -> list[tuple[str, dict[str, str]]]:
    return [(c.name, json.loads(c.arguments)) for c in message.tool_calls]


@pytest.mark.parametrize(
    "output",
    [
        "R" + THINK_END + SECTION.replace("<|close|>tools<|sep|>", "") + END,  # section left open at the turn's end
        # a second tools opener inside the section, before or after a call: a marker of the section
        "R" + THINK_END + SECTION.replace(CALL, "<|open|>tools<|sep|>" + CALL),
        "R" + THINK_END + SECTION.replace(CALL, CALL + "<|open|>tools<|sep|>"),
    ],
    ids=["turn-end-in-open-section", "second-opener-before-the-call", "second-opener-after-the-call"],
)
def test_a_tools_section_marker_never_reaches_content(output: str) -> None:
    for message in _both(output):
        assert _calls(message) == [("python", {"code": "print(1)"})]
        assert message.reasoning == "R"
        assert message.content is None


def test_a_malformed_call_is_its_own_text_and_the_sections_markers_stay_markers() -> None:
    bad = '<|open|>call tool="python" index="0"<|sep|>junk<|close|>call<|sep|>'
    output = "R" + THINK_END + "<|open|>tools<|sep|>" + bad + CALL + "<|close|>tools<|sep|>" + END
    for message in _both(output):
        assert _calls(message) == [("python", {"code": "print(1)"})]
        assert message.content == bad  # the malformed call, markers included; nothing else


def test_a_tools_section_before_the_think_close_is_the_call() -> None:
    for message in _both("R" + SECTION + THINK_END + END):
        assert _calls(message) == [("python", {"code": "print(1)"})]
        assert message.reasoning == "R"
        assert message.content is None


@pytest.mark.parametrize(
    "body",
    [
        '<|open|>json<|sep|>{"code": "x"}<|close|>json<|sep|>',
        '<|open|>argument type="object"<|sep|>{"code": "x"}<|close|>argument<|sep|>',
        '<|open|>argument key=""<|sep|>x<|close|>argument<|sep|>',
        '<|open|>arguments<|sep|>{"code": "x"}<|close|>arguments<|sep|>',
    ],
)
def test_a_call_body_element_other_than_a_keyed_argument_makes_the_call_malformed(body: str) -> None:
    section = '<|open|>tools<|sep|><|open|>call tool="python" index="1"<|sep|>' + body + "<|close|>call<|sep|>"
    section += "<|close|>tools<|sep|>"
    for message in _both("R" + THINK_END + section + END):
        assert message.tool_calls == ()  # never {} nor a key ""
        assert message.content == section


@pytest.mark.parametrize(("fmt", "block"), [("deepseek_v32", "function_calls"), ("deepseek_v4", "tool_calls")])
def test_a_dsml_invoke_with_a_json_body_is_content(fmt: str, block: str) -> None:
    """The DeepSeek-V3.2 template writes an invoke's arguments only as ``<｜DSML｜parameter …>``
    elements (tests/data/templates/deepseek-ai-DeepSeek-V3.2.jinja): a JSON body does not read."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    block_text = f'<｜DSML｜{block}>\n<｜DSML｜invoke name="f">\n{{"a": 1}}\n</｜DSML｜invoke>\n</｜DSML｜{block}>'
    message = Parser(tools=fmt).parse("\n\n" + block_text, tools=tools)
    assert message.tool_calls == ()
    assert message.content == block_text
