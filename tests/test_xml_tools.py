"""Targeted tests of the XML-parameter, DSML and Gemma tool-call formats beyond the case files:
codec options, typed values that never retract, reasoning interplay with every reasoning
format of the same family, and hostile argument text that must never raise."""

from __future__ import annotations

import json
import random

import pytest

from trisect import Parser
from trisect.codecs import JSON_TEXT, XmlParams
from trisect.codecs.gemma_args import GemmaArgsCodec

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string"},
                "days": {"type": "integer"},
                "note": {"type": ["string", "null"]},
            },
        },
    },
}
TOOLS = [WEATHER]


def _stream_args(parser: Parser, text: str) -> list[str]:
    """Argument deltas of call 0, fed one character at a time."""
    stream = parser.stream(tools=TOOLS)
    pieces = []
    for ch in text:
        delta = stream.feed(ch)
        if delta is not None:
            pieces += [c.arguments for c in delta.tool_calls if c.index == 0 and c.arguments]
    delta = stream.finish()
    if delta is not None:
        pieces += [c.arguments for c in delta.tool_calls if c.index == 0 and c.arguments]
    return pieces


@pytest.mark.parametrize(
    ("tools", "text"),
    [
        (
            "glm47",
            "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Paris</arg_value>"
            "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>",
        ),
        (
            "minimax_m2",
            '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="location">Paris'
            '</parameter>\n<parameter name="days">3</parameter>\n</invoke>\n</minimax:tool_call>',
        ),
        (
            "deepseek_v32",
            '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter '
            'name="location" string="true">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name="days" '
            'string="false">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
        ),
        ("gemma4", '<|tool_call>call:get_weather{location:<|"|>Paris<|"|>,days:3}<tool_call|>'),
    ],
)
def test_strings_stream_by_character_typed_values_once_complete(tools: str, text: str) -> None:
    pieces = _stream_args(Parser(None, tools), text)
    assert json.loads("".join(pieces)) == {"location": "Paris", "days": 3}
    # "Paris" arrives in several pieces; 3 arrives whole, never as a prefix that is retracted
    assert sum(1 for p in pieces if p in "Paris") >= 3
    assert any(p.endswith("3") or p.startswith("3") for p in pieces)
    assert not any(p.rstrip().endswith('"3') for p in pieces)


def test_xml_codec_json_text_values_and_unwrap() -> None:
    tools = {"f": {"type": "object", "properties": {"x": {"type": "string"}}}}

    def run(params: list[tuple[str, str]], unwrap: tuple[str, ...] = ()) -> str:
        codec = XmlParams(
            param_start="P",
            param_end="E",
            trim="none",
            unwrap=unwrap,
            parse_key=lambda k: (k.split("|")[0], JSON_TEXT if k.endswith("|json") else ("string",)),
        )(tools)
        codec.set_name("f")
        out = []
        for key, value in params:
            codec.marker("P")
            codec.feed(key + ">" + value, 0, len(key) + 1 + len(value))
            out.append(codec.take())
            codec.marker("E")
            out.append(codec.take())
        rest = codec.close()
        assert rest is not None
        return "".join(out) + rest

    assert json.loads(run([("x|json", " [1, 2] ")])) == {"x": [1, 2]}
    assert json.loads(run([("x|json", "NaN")])) == {"x": "NaN"}
    assert json.loads(run([("x", " a ")])) == {"x": " a "}
    assert json.loads(run([("arguments|json", '{"x": "a"}')], unwrap=("arguments",))) == {"x": "a"}
    assert json.loads(run([("arguments|json", "[1]")], unwrap=("arguments",))) == {"arguments": [1]}
    assert json.loads(run([("arguments|json", "{}"), ("x", "b")], unwrap=("arguments",))) == {"arguments": {}, "x": "b"}


@pytest.mark.parametrize(
    ("reasoning", "tools", "opener", "block"),
    [
        (
            "glm45",
            "glm45",
            "\n<think>",
            "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Paris</arg_value></tool_call>",
        ),
        (
            "glm47",
            "glm47",
            "<think>",
            "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Paris</arg_value></tool_call>",
        ),
        (
            "ling3",
            "ling3",
            "<think>",
            "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Paris</arg_value></tool_call>",
        ),
        (
            "seed_oss",
            "seed_oss",
            "<seed:think>",
            # the Seed-OSS template's spelling: nothing around a value
            "<seed:tool_call>\n<function=get_weather>\n<parameter=location>"
            "Paris</parameter>\n</function>\n</seed:tool_call>",
        ),
        (
            "deepseek_v4",
            "deepseek_v4",
            "",
            '\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n'
            '<｜DSML｜parameter name="location" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
            "</｜DSML｜tool_calls>",
        ),
        (
            "deepseek_v41",
            "deepseek_v41",
            "",
            '\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_weather">\n'
            '<｜DSML｜ parameter name="location" string="true">Paris</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n'
            "</｜DSML｜ calls>",
        ),
        (
            "gemma4",
            "gemma4",
            "<|channel>thought\n",
            '<|tool_call>call:get_weather{location:<|"|>Paris<|"|>}<tool_call|>',
        ),
    ],
)
def test_call_opener_ends_unterminated_reasoning(reasoning: str, tools: str, opener: str, block: str) -> None:
    msg = Parser(reasoning, tools).parse(opener + "I should look it up." + block, tools=TOOLS)
    assert msg.reasoning == "I should look it up."
    assert [(c.name, json.loads(c.arguments)) for c in msg.tool_calls] == [("get_weather", {"location": "Paris"})]


@pytest.mark.parametrize(("reasoning", "tools"), [("minimax_m2", "minimax_m2"), ("deepseek_v3", "deepseek_v32")])
def test_families_whose_reasoning_a_call_does_not_end(reasoning: str, tools: str) -> None:
    """MiniMax-M2 and DeepSeek V3.2 reasoning ends only at '</think>'. DeepSeek V3.2: vLLM 0.33's ``deepseek_v3``
    reasoning is the R1 parser's, which has no tool terminal. MiniMax-M2: as vLLM 0.33's
    ``MiniMaxM2ReasoningParser`` docstring says ("All content before </think> is reasoning",
    ``reasoning/minimax_m2_reasoning_parser.py``), though the engine table under it, ``parser/minimax_m2.py``,
    has a ``(REASONING, TOOL_START)`` row that ends reasoning at ``<minimax:tool_call>``."""
    block = (
        '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="location">Paris</parameter>\n'
        "</invoke>\n</minimax:tool_call>"
        if tools == "minimax_m2"
        else '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="location" '
        'string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>'
    )
    msg = Parser(reasoning, tools).parse(
        "Thinking about " + block, tools=TOOLS, chat_template_kwargs={"thinking": True}
    )
    assert msg.tool_calls == () and msg.content is None and msg.reasoning is not None


GEMMA_ALPHABET = [
    '<|"|>',
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "a",
    "1",
    " ",
    "\n",
    "true",
    "-",
    ".",
    "<",
    "|",
    "<tool_call|>",
    "call:",
]


@pytest.mark.parametrize("fmt", ["gemma4", "functiongemma"])
def test_hostile_gemma_arguments_never_raise(fmt: str) -> None:
    gemma = fmt == "gemma4"
    start, end = ("<|tool_call>", "<tool_call|>") if gemma else ("<start_function_call>", "<end_function_call>")
    alphabet = [t.replace('<|"|>', "<escape>") if fmt == "functiongemma" else t for t in GEMMA_ALPHABET]
    parser = Parser(None, fmt)
    rng = random.Random(5)
    for _ in range(300):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        text = f"x {start}call:get_weather{{{body}{end} y"
        for msg in (parser.parse(text, tools=TOOLS), _whole_by_char(parser, text)):
            for c in msg.tool_calls:
                assert isinstance(json.loads(c.arguments), dict)
    deep = f"{start}call:get_weather{{a:" + "[" * 50000 + "]" * 50000 + f"}}{end}"  # no recursion in the codec
    msg = parser.parse(deep, tools=TOOLS)
    assert len(msg.tool_calls) == 1 and msg.tool_calls[0].arguments == '{"a": ' + "[" * 50000 + "]" * 50000 + "}"


def _whole_by_char(parser: Parser, text: str):
    from trisect.message import MessageBuilder

    stream = parser.stream(atomic_tool_calls=True, tools=TOOLS)
    builder = MessageBuilder()
    for ch in text:
        builder.add(stream.feed(ch))
    builder.add(stream.finish())
    return builder.message()


def test_gemma_codec_split_delimiter() -> None:
    codec = GemmaArgsCodec(quote='<|"|>')
    text = '{k:<|"|>a}b<|"|>,n:-2.5e3,z:nul}'
    out = []
    for i in range(len(text)):
        j = codec.feed(text, i, i + 1)
        assert j == i + 1
        out.append(codec.take())
    assert codec.done and json.loads("".join(out)) == {"k": "a}b", "n": -2.5e3, "z": "nul"}


def test_minicpm5_and_minimax_m3_case_files_are_fresh() -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent / "support" / "render_more_xml.py"
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
