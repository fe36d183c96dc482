"""A missing closer that the structure makes certain is recovered.

Inside a raw value, the closer of the element the calls live in (``Rule.follow_end``) ends the
value and the call before what may follow a call, the end of the output included: nothing but
the call's end can follow it (GLM ``<arg_value>Berlin</tool_call>``). An inner closer at the end
of the output does not: the model still owes the outer one, so the value may have been cut off
(``<parameter=city>Berlin</function>``, no ``</tool_call>``): not a call. Each case runs through
the replay harness under every chunking, with token ids where the family has a tokenizer.
"""

from __future__ import annotations

import pytest

from support import tokenizers as tk
from trisect import Parser
from trisect.testing import Case, check_case

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]
BERLIN = [{"name": "get_weather", "arguments": {"city": "Berlin"}}]

RECOVERED = [
    ("glm47", "glm", "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Berlin</tool_call>", BERLIN),
    ("glm47", "glm", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Berlin</tool_call>\n", BERLIN),
    (
        "glm47",
        "glm",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Berlin</tool_call>"
        "<tool_call>get_weather<arg_key>days</arg_key><arg_value>2</arg_value></tool_call>",
        [*BERLIN, {"name": "get_weather", "arguments": {"days": 2}}],
    ),
    (
        "hy_v3",
        "hy",
        "<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Berlin</tool_calls>",
        BERLIN,
    ),
    ("qwen3_coder", "qwen3", "<tool_call>\n<function=get_weather>\n<parameter=city>\nBerlin\n</tool_call>", BERLIN),
    (
        "minimax_m2",
        "minimax",
        '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Berlin</minimax:tool_call>',
        BERLIN,
    ),
    (
        "deepseek_v32",
        "deepseek_v3",
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">Berlin</｜DSML｜function_calls>',
        BERLIN,
    ),
]


@pytest.mark.parametrize(("name", "tok", "output", "calls"), RECOVERED, ids=lambda v: v if isinstance(v, str) else "")
def test_the_outermost_closer_ends_the_value(name: str, tok: str, output: str, calls: list[dict[str, object]]) -> None:
    case = Case(
        id=f"{name}-missing-closer",
        output=output,
        tools_format=name,
        tools=TOOLS,
        tokenizer=tk.load(tok),
        expected={"reasoning": None, "content": None, "tool_calls": calls},
        truncated=True,  # malformed: an incremental stream shows the call before its closer comes
    )
    check_case(case)


@pytest.mark.parametrize(
    ("name", "output"),
    [
        ("qwen3_coder", "<tool_call>\n<function=get_weather>\n<parameter=city>\nBerlin\n</function>"),
        ("qwen3_coder", "<tool_call>\n<function=get_weather>\n<parameter=city>\nBerlin\n</parameter>"),
        ("minimax_m2", '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Berlin</invoke>'),
        ("hy_v3", "<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Berlin</tool_call>"),
        ("glm47", "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Berlin</tool_call> and more"),
    ],
)
def test_an_inner_closer_at_the_end_is_value_text(name: str, output: str) -> None:
    assert not Parser(None, name).parse(output, tools=TOOLS).tool_calls
