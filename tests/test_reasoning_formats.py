"""Targeted tests of the reasoning formats' own rules (the case files cover the common shapes)."""

from __future__ import annotations

import pytest

import trisect
from support import tokenizers
from trisect import Parser, ReasoningEnd

WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
        },
    }
]

REASONING_FORMATS = [
    "deepseek_r1", "deepseek_v3", "holo2", "deepseek_v4", "deepseek_v41", "qwen3", "mimo", "seed_oss", "nemotron_v3",
    "glm45", "glm47", "ling3", "kimi_k2", "minimax_m2", "minimax_m2_append_think", "mistral", "gemma4", "granite",
    "ernie45", "hunyuan_a13b", "hy_v3", "olmo3", "step3", "step3p5", "cohere_command3", "cohere_command4", "identity",
]  # fmt: skip


def test_formats_lists_every_reasoning_format_with_its_models() -> None:
    listed = {f.name: f for f in trisect.formats() if f.kind == "reasoning"}
    for name in REASONING_FORMATS:
        assert name in listed, name
        assert listed[name].models, name
        assert listed[name].reference, name


@pytest.mark.parametrize("name", REASONING_FORMATS)
def test_module_docstring_shows_wire_format_reference_and_models(name: str) -> None:
    import inspect

    from support.format_modules import module_of

    spec = trisect.Parser(name).spec
    doc = inspect.getdoc(module_of(spec)) or ""
    assert "Wire format" in doc and "Reference:" in doc, name
    assert spec.models


# ---------------------------------------------------------------------- combined with tool formats


@pytest.mark.parametrize(
    ("reasoning", "tools", "output"),
    [
        (
            "kimi_k2",
            "kimi_k2",
            "<think>Need the weather.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
            '<|tool_call_argument_begin|>{"location": "Paris"}<|tool_call_end|><|tool_calls_section_end|>',
        ),
        ("mistral", "mistral", '[THINK]Need the weather.[TOOL_CALLS]get_weather[ARGS]{"location": "Paris"}'),
        (
            "glm47",
            "glm47",
            "Need the weather.<tool_call>get_weather<arg_key>location</arg_key>"
            "<arg_value>Paris</arg_value></tool_call>",
        ),
        (
            "qwen3",
            "hermes",
            '<think>Need the weather.<tool_call>{"name": "get_weather", "arguments": {"location": "Paris"}}',
        ),
    ],
)
def test_a_tool_marker_ends_reasoning_and_opens_the_call(reasoning: str, tools: str, output: str) -> None:
    # Mistral's [TOOL_CALLS] ends an explicit [THINK] block only as its special token (by id)
    tok = tokenizers.load("magistral") if reasoning == "mistral" else None
    ids = {"token_ids": tokenizers.encode("magistral", output)} if tok is not None else {}
    text = None if tok is not None else output
    msg = Parser(reasoning, tools, tokenizer=tok).parse(text, tools=WEATHER, **ids)
    assert msg.reasoning == "Need the weather."
    assert [(c.name, c.arguments.replace(" ", "")) for c in msg.tool_calls] == [("get_weather", '{"location":"Paris"}')]
    # without the tool format the marker only ends reasoning (and stays, as content)
    alone = Parser(reasoning, tokenizer=tok).parse(text, **ids)
    assert alone.reasoning == "Need the weather." and not alone.tool_calls


# ---------------------------------------------------------------------- family rules


def test_nemotron_swap_streams_nothing_until_it_knows() -> None:
    p = Parser("nemotron_v3")
    force = {"chat_template_kwargs": {"force_nonempty_content": True}}
    s = p.stream(**force)
    assert s.feed("<think>\nthinking about") is None
    assert s.feed(" it") is None
    d = s.finish()
    assert d is not None and d.content == "thinking about it" and d.reasoning is None
    s = p.stream(**force)
    assert s.feed("<think>\nthinking") is None
    d = s.feed("</think>\nAnswer")
    assert d is not None and d.reasoning == "thinking" and d.content == "Answer"
    # without the switches reasoning streams at once
    s = p.stream()
    d = s.feed("<think>\nthinking")
    assert d is not None and d.reasoning == "thinking"


def test_append_think_prefix_comes_first_even_in_streams() -> None:
    p = Parser("minimax_m2_append_think")
    s = p.stream()
    d = s.feed("hmm\n</think>\n\nok")
    assert d is not None and d.content == "<think>hmm\n</think>\n\nok"
    assert p.parse("").content == "<think>"


def test_mistral_spelling_is_decided_by_the_tokenizer() -> None:
    out = "[THINK]Tags like <think> and </think> are text here.[/THINK]Answer."
    v13 = Parser("mistral", tokenizer=tokenizers.load("magistral"))
    msg = v13.parse(out, token_ids=tokenizers.encode("magistral", out))
    assert msg.reasoning == "Tags like <think> and </think> are text here." and msg.content == "Answer."
    v11 = Parser("mistral", tokenizer=tokenizers.load("magistral_v11"))
    out = "<think>Plan.</think>Answer."
    msg = v11.parse(out, token_ids=tokenizers.encode("magistral_v11", out))
    assert (msg.reasoning, msg.content) == ("Plan.", "Answer.")


def test_opt_in_blocks_end_reasoning_again_each_time() -> None:
    p = Parser("gemma4")
    s = p.stream()
    assert s.reasoning_ended  # starts in content
    events = s.events("Hi <|channel>thought\nhmm")
    assert not s.reasoning_ended and not any(isinstance(e, ReasoningEnd) for e in events)
    events = s.events("<channel|>Answer")
    assert s.reasoning_ended and sum(isinstance(e, ReasoningEnd) for e in events) == 1
    events = s.events("<|channel>thought\nagain<channel|>!")
    assert sum(isinstance(e, ReasoningEnd) for e in events) == 1
    d = p.parse("Hi <|channel>thought\nhmm<channel|>Answer<|channel>thought\nagain<channel|>!")
    assert (d.reasoning, d.content) == ("hmmagain", "Hi Answer!")


@pytest.mark.parametrize("cut", range(1, 24))
def test_gemma_channel_name_split_anywhere(cut: int) -> None:
    out = "<|channel>thought\nhmm<channel|>Answer"
    s = Parser("gemma4").stream()
    b = trisect.MessageBuilder()
    b.add(s.feed(out[:cut]))
    b.add(s.feed(out[cut:]))
    b.add(s.finish())
    msg = b.message()
    assert (msg.reasoning, msg.content) == ("hmm", "Answer")


def test_effort_switches() -> None:
    hy = Parser("hy_v3")
    # no_think: the markers are text (vLLM 0.33: hy_v3 with no_think is the identity parser)
    assert hy.parse("a</think>b").content == "a</think>b"
    assert hy.parse("plain").content == "plain"
    assert hy.parse("a</think>b", reasoning_effort="high").reasoning == "a"
    v4 = Parser("deepseek_v4")
    assert v4.parse("a</think>b").reasoning == "a"
    assert v4.parse("a", reasoning_effort="none").content == "a"
    assert v4.parse("a", chat_template_kwargs={"thinking": False}).content == "a"


def test_reasoning_case_files_are_fresh() -> None:
    """tests/cases/*/reasoning*.jsonl are exactly what tests/support/render_reasoning.py writes."""
    from support import render_reasoning

    assert render_reasoning.main(["--check"]) == 0
