"""Calls that are not calls, markers that leak, shapes a reference parser names.

Expected values are vLLM 0.33's (read from its source, the lines cited per family) or,
where vLLM loses or garbles text, trisect's rules for malformed output (cited per test):

* Kimi-K2 (``parser/kimi_k2.py:49``, ``:179-216``): a header must begin with ``…:N``; the id is
  that text, the name the id before its first ``:`` without a leading ``functions.``. Any other
  header names no tool (``functions.invalid.0``): not a call (vLLM skips it; here its block is
  content, all of it). trisect also keeps ``functions.NAME`` without an index (its own rule).
* llama3_json / llama4_json (``tool_parsers/llama_tool_parser.py:104-110``): an object needs
  ``parameters`` or ``arguments``; ``{"name": "Bob"}`` is not a call.
* DSML (``parser/deepseek_v4.py:44-52``): a self-closing invoke is a call with no arguments
  (vLLM reads the name up to the next ``">`` and returns ``submit"/>…``: garbage).
* Gemma 4 (``parser/gemma4.py:438-442``, ``(CONTENT, TOOL_END)`` absorbed): a closer repeated
  right after a call's closer is absorbed; one after text is text.
* Harmony (``parser/harmony.py:60-76``, ``harmony_utils.py:33-61``): a message on ``analysis``
  to a built-in tool (``python``, ``browser.*``, ``container.*``) is reasoning, not a call.

Every case runs through the replay harness under every chunking, with the family's tokenizer
where one is staged.
"""

from __future__ import annotations

import pytest

from support import tokenizers as tk
from trisect.testing import Case, check_case

WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
KIMI = (
    "<|tool_calls_section_begin|><|tool_call_begin|>{}<|tool_call_argument_begin|>"
    '{{"city": "Paris"}}<|tool_call_end|><|tool_calls_section_end|>'
)
PARIS = {"city": "Paris"}


def _check(cid: str, fmt: str, tok: str | None, output: str, *, with_reasoning: str | None = None, **expected: object):
    expected.setdefault("tool_calls", [])
    case = Case(
        id=cid,
        output=output,
        reasoning=with_reasoning,
        tools_format=fmt,
        tools=WEATHER,
        tokenizer=tk.load(tok) if tok else None,
        expected=expected,
    )
    assert check_case(case) > 0


@pytest.mark.parametrize(
    ("header", "name", "call_id"),
    [
        ("functions.get_weather:0", "get_weather", "functions.get_weather:0"),
        ("functions.a.b:1", "a.b", "functions.a.b:1"),
        (" functions.get_weather:0 ", "get_weather", "functions.get_weather:0"),
    ],
)
def test_kimi_k2_reads_the_header_as_the_template_writes_it(header: str, name: str, call_id: str) -> None:
    out = KIMI.format(header)
    _check(
        "k2-header",
        "kimi_k2",
        "kimi_k2",
        out,
        content=None,
        tool_calls=[{"name": name, "arguments": PARIS, "id": call_id}],
    )


# the Kimi-K2 templates write 'functions.' + name + ':' + counter; an id of another shape is no
# name to read a fragment of (vLLM's (.+:\d+) prefix match names call_abc123:0 "call_abc123")
@pytest.mark.parametrize(
    "header",
    [
        "functions.invalid.0",
        "functions.a.b",
        "functions.",
        ":1x",
        "call_abc123:0",
        "get_weather:3",
        "functions.get_weather:0x",
        "x:y:2",
        "tool_0:get_weather",
    ],
)
def test_kimi_k2_a_header_that_names_no_tool_is_not_a_call(header: str) -> None:
    out = "Let me check." + KIMI.format(header)
    _check("k2-no-tool", "kimi_k2", "kimi_k2", out, content=out)


@pytest.mark.parametrize("fmt", ["llama3_json", "llama4_json"])
@pytest.mark.parametrize(
    "output",
    [
        'Hi {"name": "Bob"} there',
        '{"name": "get_weather"}',
        '{"name": "Bob"} is a name',
        'x {"name": "get_weather", "id": 1}',
    ],
)
def test_llama_json_an_object_without_arguments_is_not_a_call(fmt: str, output: str) -> None:
    _check("llama-no-args", fmt, "llama3" if fmt == "llama3_json" else None, output, content=output)


@pytest.mark.parametrize("fmt", ["llama3_json", "llama4_json"])
@pytest.mark.parametrize("key", ["parameters", "arguments"])
def test_llama_json_either_arguments_key_makes_a_call(fmt: str, key: str) -> None:
    out = '{"name": "get_weather", "' + key + '": {"city": "Paris"}}'
    _check("llama-args", fmt, None, out, content=None, tool_calls=[{"name": "get_weather", "arguments": PARIS}])


@pytest.mark.parametrize(("fmt", "block"), [("deepseek_v4", "tool_calls"), ("deepseek_v32", "function_calls")])
def test_dsml_a_self_closing_invoke_is_a_call_without_arguments(fmt: str, block: str) -> None:
    d = "｜DSML｜"
    lone = f'<{d}{block}>\n<{d}invoke name="submit"/>\n</{d}{block}>'
    _check(
        "dsml-self-closing", fmt, "deepseek_v3", lone, content=None, tool_calls=[{"name": "submit", "arguments": {}}]
    )
    two = (
        f'<{d}{block}>\n<{d}invoke name="submit"/>\n<{d}invoke name="get_weather">\n'
        f'<{d}parameter name="city" string="true">Paris</{d}parameter>\n</{d}invoke>\n</{d}{block}>'
    )
    calls = [{"name": "submit", "arguments": {}}, {"name": "get_weather", "arguments": PARIS}]
    _check("dsml-self-closing-then-invoke", fmt, "deepseek_v3", two, content=None, tool_calls=calls)


@pytest.mark.parametrize(
    ("output", "content", "calls"),
    [
        ('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><tool_call|>Done', "Done", 1),
        ('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><tool_call|><tool_call|>', None, 1),
        ('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>Done <tool_call|>x', "Done <tool_call|>x", 1),
    ],
)
def test_gemma4_a_closer_repeated_after_a_call_is_absorbed(output: str, content: str | None, calls: int) -> None:
    _check(
        "gemma4-repeated-closer",
        "gemma4",
        "gemma4",
        output,
        content=content,
        tool_calls=[{"name": "get_weather", "arguments": PARIS}] * calls,
    )


@pytest.mark.parametrize(
    ("header", "body"),
    [
        ("analysis to=python <|constrain|>code", "print(1)"),
        ("analysis to=browser.search <|constrain|>json", '{"query": "weather"}'),
        ("analysis to=container.exec json", '{"cmd": ["ls"]}'),
    ],
)
def test_harmony_a_built_in_tool_request_while_thinking_is_reasoning(header: str, body: str) -> None:
    out = f"<|channel|>{header}<|message|>{body}<|call|><|start|>assistant<|channel|>final<|message|>Done<|return|>"
    _check("harmony-builtin", "openai", "gpt_oss", out, with_reasoning="openai_gptoss", reasoning=body, content="Done")


def test_harmony_a_function_recipient_while_thinking_is_still_a_call() -> None:
    out = '<|channel|>analysis to=functions.get_weather json<|message|>{"city": "Paris"}<|call|>'
    _check(
        "harmony-function",
        "openai",
        "gpt_oss",
        out,
        with_reasoning="openai_gptoss",
        content=None,
        tool_calls=[{"name": "get_weather", "arguments": PARIS}],
    )
