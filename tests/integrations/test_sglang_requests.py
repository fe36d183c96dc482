"""Each request field and switch SGLang 0.5.23 passes through to its parsers, and what the
plugin does with it (docs/engines.md, SGLang: "Request fields and switches"), through SGLang's
own serving code (``sglang_serving``), each against trisect alone on the same output.

* ``reasoning_default``: what SGLang's ``_get_reasoning_from_request`` computes from the declared
  mode when the template gave it no reasoning config is trisect's own answer (can the output
  start inside reasoning) for no switch and for the switch the mode names, for every format.
* the thinking switches SGLang does not read, and a block the model opens itself, come out as
  trisect alone gives them (the held-out failures: DeepSeek V4 and Kimi K3 thinking off, Magistral,
  DeepSeek V3.2 thinking on, Gemma 4);
* ``continue_final_message``, ``force_nonempty_content``, ``reasoning_effort`` (SGLang's levels
  and numbers), ``parallel_tool_calls``, ``tool_choice="none"``, ``separate_reasoning``.
"""

from __future__ import annotations

from typing import Any

import pytest
import sglang_serving as sg
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.plugins import load_plugins

import trisect
from trisect.integrations._sglang_detectors import sglang_reasoning_default

load_plugins()

WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
        },
    }
]
REASONING_FORMATS = sorted(s.name for s in trisect.formats() if s.kind == "reasoning")
SWITCHES = [{}, *({name: value} for name in ("thinking", "enable_thinking") for value in (True, False))]


def alone(reasoning: str | None, tool_format: str | None, text: str, **options: Any) -> dict[str, Any]:
    message = trisect.Parser(reasoning, tool_format).parse(text, **options)
    return {
        "reasoning": message.reasoning or None,
        "content": message.content or None,
        "tool_calls": [(c.name, c.arguments) for c in message.tool_calls],
    }


def served(
    reasoning: str | None, tool_format: str | None, text: str, template: sg.Template = sg.UNKNOWN, **body: Any
) -> list[dict[str, Any]]:
    """The client's view, not streamed and streamed (3 characters a chunk)."""
    tool_parser = f"trisect_{tool_format}" if tool_format else None
    srv = sg.Server(f"trisect_{reasoning}" if reasoning else None, tool_parser, template)
    request_tools = body.pop("tools", None)
    replies = [
        srv.whole(sg.request(request_tools, **body), text),
        srv.stream(sg.request(request_tools, stream=True, **body), [text[k : k + 3] for k in range(0, len(text), 3)]),
    ]
    return [{k: v for k, v in r.view().items() if k != "finish_reason"} for r in replies]


# ---------------------------------------------------------------------------------------- defaults


@pytest.mark.parametrize("fmt", REASONING_FORMATS)
def test_sglangs_thinking_mode_from_the_declared_default_is_trisects(fmt: str) -> None:
    parser = trisect.Parser(fmt)
    detector = ReasoningParser(f"trisect_{fmt}").detector
    mode = detector.reasoning_default
    assert mode == sglang_reasoning_default(parser)
    srv = sg.Server(f"trisect_{fmt}", None, sg.UNKNOWN)
    read = [{}]  # the requests whose switches SGLang's mode reads
    if mode is not None and mode.removeprefix("explicit_") in ("thinking", "enable_thinking"):
        read += [{mode.removeprefix("explicit_"): value} for value in (True, False)]
    for kwargs in read:
        body = {"chat_template_kwargs": kwargs} if kwargs else {}
        trisect_on = not parser.reasoning_ended_at_start(**body)
        assert srv._get_reasoning_from_request(sg.request(**body)) is trisect_on, kwargs
    if mode == "mistral":
        assert srv._get_reasoning_from_request(sg.request(reasoning_effort="high")) is True
        assert not parser.reasoning_ended_at_start(reasoning_effort="high")


def test_the_declared_defaults_by_format() -> None:
    """The modes themselves, for the families the held-out measurement names (a change here is a
    change of what SGLang's grammar gate and thinking toggles do with trisect's formats)."""
    modes = {f: ReasoningParser(f"trisect_{f}").detector.reasoning_default for f in REASONING_FORMATS}
    assert modes["qwen3"] == "enable_thinking"
    assert modes["deepseek_v3"] == "explicit_thinking"
    assert modes["deepseek_v4"] == "thinking"
    assert modes["kimi_k3"] == "thinking"
    assert modes["deepseek_r1"] == "always"
    assert modes["mistral"] is None and modes["gemma4"] is None  # the model opens its block itself
    assert modes["openai_gptoss"] == "always"


# ---------------------------------------------------------------------------------------- switches

HELD_OUT = [
    # (reasoning, tools, output, request body): the classes the held-out measurement found
    ("deepseek_v4", None, "It is sunny.", {"chat_template_kwargs": {"enable_thinking": False}}),
    ("deepseek_v4", None, "It is sunny.", {"reasoning_effort": "none"}),
    ("deepseek_v41", None, "It is sunny.", {"chat_template_kwargs": {"thinking": False}}),
    ("kimi_k3", None, "It is sunny.", {"chat_template_kwargs": {"enable_thinking": False}}),
    ("mistral", "mistral", "[THINK]Check the forecast.[/THINK]It is sunny.", {}),
    ("mistral", "mistral", "[THINK]Check the forecast.[/THINK]It is sunny.", {"reasoning_effort": "high"}),
    ("deepseek_v3", "deepseek_v32", "Check.</think>It is sunny.", {"chat_template_kwargs": {"thinking": True}}),
    ("gemma4", "gemma4", "<|channel>thought\nCheck the forecast.<channel|>It is sunny.", {}),
    (
        "gemma4",
        "gemma4",
        "<|channel>thought\nCheck the forecast.<channel|>It is sunny.",
        {"chat_template_kwargs": {"enable_thinking": True}},
    ),
    ("qwen3", "hermes", "<think>plan</think>It is sunny.", {"chat_template_kwargs": {"thinking": False}}),
]
TEMPLATES = [
    sg.UNKNOWN,
    sg.Template("always", True, sg.rule_config("force_reasoning_pattern")),
    sg.Template("never", False, sg.rule_config("hunyuan_reasoning_effort")),
]


@pytest.mark.parametrize("row", HELD_OUT, ids=lambda r: f"{r[0]}-{r[3]}")
@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_a_switch_sglang_does_not_read_and_a_block_the_model_opens(row: tuple, template: sg.Template) -> None:
    reasoning, tools, text, body = row
    kwargs = dict(body.get("chat_template_kwargs") or {})
    if body.get("reasoning_effort"):  # SGLang's protocol sets both switches from the effort
        value = body["reasoning_effort"] != "none"
        kwargs = {"thinking": value, "enable_thinking": value, **kwargs}
    options: dict[str, Any] = {"tools": WEATHER, "chat_template_kwargs": kwargs}
    if body.get("reasoning_effort"):
        options["reasoning_effort"] = body["reasoning_effort"]
    want = alone(reasoning, tools, text, **options)
    for got in served(reasoning, tools, text, template, tools=WEATHER, **body):
        assert got == want


def test_the_held_out_classes_read_as_the_model_wrote_them() -> None:
    """What those rows mean (trisect alone, the reference above): thinking off is content; a
    block the model opens is reasoning without its label."""
    assert alone("deepseek_v4", None, "It is sunny.", chat_template_kwargs={"enable_thinking": False})["content"]
    assert alone("mistral", "mistral", HELD_OUT[4][2])["reasoning"] == "Check the forecast."
    gemma = alone("gemma4", "gemma4", HELD_OUT[7][2])
    assert (gemma["reasoning"], gemma["content"]) == ("Check the forecast.", "It is sunny.")


# ---------------------------------------------------------------------------------------- fields


def test_continue_final_message_reads_the_continued_message_as_the_prompts_end() -> None:
    prefix = "<think>\nLet me"
    body = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": prefix}],
        "continue_final_message": True,
        "chat_template_kwargs": {"enable_thinking": False},
    }
    text = " check.</think>Sunny."
    want = alone("qwen3", None, text, prompt_text=prefix, chat_template_kwargs={"enable_thinking": False})
    assert (want["reasoning"], want["content"]) == ("check.", "Sunny.")
    for got in served("qwen3", None, text, **body):
        assert got == want


@pytest.mark.parametrize(("fmt", "text"), [("nemotron_v3", "Only a plan"), ("qwen3", "Only a plan")])
def test_force_nonempty_content_is_trisects_rule(fmt: str, text: str) -> None:
    """Nemotron 3's own rule turns an unclosed block into the answer; a format without the rule
    keeps it as reasoning, as trisect alone (SGLang's own detectors apply the swap to every
    format)."""
    kwargs = {"force_nonempty_content": True}
    want = alone(fmt, None, text, chat_template_kwargs=kwargs)
    assert (want["content"] is not None) is (fmt == "nemotron_v3")
    for got in served(fmt, None, text, chat_template_kwargs=kwargs):
        assert got == want


@pytest.mark.parametrize("effort", ["ultra", 0.5, "low"])
def test_an_effort_trisect_does_not_take_is_no_effort(effort: Any) -> None:
    text = "plan</think>Sunny."
    request_effort = effort if effort == "low" else None
    value = effort != "none"
    kwargs = {"thinking": value, "enable_thinking": value}
    options: dict[str, Any] = {"chat_template_kwargs": kwargs}
    if request_effort:
        options["reasoning_effort"] = request_effort
    want = alone("deepseek_v4", None, text, **options)
    for got in served("deepseek_v4", None, text, reasoning_effort=effort):
        assert got == want


def test_parallel_tool_calls_false_lets_one_call_through() -> None:
    text = (
        '<tool_call>{"name": "get_weather", "arguments": {"location": "Paris"}}</tool_call>'
        '<tool_call>{"name": "get_weather", "arguments": {"location": "Rome"}}</tool_call>'
    )
    want = alone("qwen3", "hermes", text, tools=WEATHER, parallel_tool_calls=False)
    assert len(want["tool_calls"]) == 1
    for got in served("qwen3", "hermes", text, tools=WEATHER, parallel_tool_calls=False):
        assert got == want


def test_tool_choice_none_runs_the_reasoning_format_alone() -> None:
    text = '<think>plan</think><tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    want = alone("qwen3", "hermes", text, tools=WEATHER, tool_choice="none")
    assert want["tool_calls"] == []
    for got in served("qwen3", "hermes", text, tools=WEATHER, tool_choice="none"):
        assert got == want


def test_separate_reasoning_false_keeps_the_reasoning_in_the_content() -> None:
    """SGLang runs no reasoning parser then; the tool format alone reads the whole text, as with
    SGLang's own parsers: the reasoning stays in the content as the model wrote it."""
    text = '<think>plan</think>Sunny.<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    want = alone(None, "hermes", text, tools=WEATHER)
    assert want["content"] == "<think>plan</think>Sunny."
    for got in served("qwen3", "hermes", text, tools=WEATHER, separate_reasoning=False):
        assert got == want


def test_formats_that_do_not_combine_run_as_two_phases() -> None:
    """plamo3 and muse_glimmer spell a terminal differently, so they make no combined table:
    the reasoning detector hands the text after reasoning on, as with one of SGLang's detectors."""
    with pytest.raises(trisect.FormatError):
        trisect.Parser("plamo3", "muse_glimmer")
    text = "<|plamo:begin_think:plamo|>plan<|plamo:end_think:plamo|>Sunny."
    want = alone("plamo3", None, text)
    assert want["reasoning"] == "plan"
    for got in served("plamo3", "muse_glimmer", text, tools=WEATHER):
        assert (got["reasoning"], got["tool_calls"]) == (want["reasoning"], [])
