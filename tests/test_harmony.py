"""gpt-oss Harmony: the header mechanism, the tokenizer against openai/harmony's ids, strict mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import tok_gpt_oss
from trisect import Parser
from trisect.errors import MalformedOutputError
from trisect.formats.harmony import read_header

DATA = Path(__file__).resolve().parent / "data" / "outputs" / "gpt-oss-harmony"


@pytest.mark.parametrize("name", ["test_simple_tool_call.txt", "test_simple_reasoning_response.txt"])
def test_tokenizer_reproduces_harmony_ids(name: str) -> None:
    ids = [int(x) for x in (DATA / name).read_text().split()]
    tok = tok_gpt_oss.load()
    assert tok.encode(tok.decode(ids), allowed_special="all") == ids
    specials = tok_gpt_oss.special_tokens()
    assert specials["<|start|>"] == 200006 and specials["<|call|>"] == 200012 and specials["<|return|>"] == 200002


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("<|channel|>analysis", ("analysis", None)),
        ("<|start|>assistant<|channel|>final", ("final", None)),
        (
            "<|start|>assistant to=functions.get_weather<|channel|>commentary json",
            ("commentary", "functions.get_weather"),
        ),
        (" to=functions.f<|channel|>commentary <|constrain|>json", ("commentary", "functions.f")),
        ("<|channel|>commentary to=browser.search <|constrain|>json", ("commentary", "browser.search")),
        ("<|start|>assistant to=lookup_weather<|channel|>analysis code", ("analysis", "lookup_weather")),
        ("<|start|>assistant", None),  # no channel
        ("<|channel|>bogus", None),  # unknown channel
        ("<|start|>user<|channel|>final", None),  # not the assistant
        ("<|start|>functions.f to=assistant<|channel|>commentary", None),  # a tool's message
        ("<|channel|>commentary to=a to=b", None),  # two recipients
        ("<|channel|>commentary to=", None),  # empty recipient
        ("<|channel|>final<|channel|>final", None),
    ],
)
def test_read_header(header: str, expected: tuple[str, str | None] | None) -> None:
    assert read_header(header) == expected


def test_ids_alone_per_token() -> None:
    """Harmony from token ids alone, one id per delta: the official completion + <|call|>."""
    tok = tok_gpt_oss.load()
    ids = [int(x) for x in (DATA / "test_simple_tool_call.txt").read_text().split()] + [200012]
    stream = Parser("openai_gptoss", "openai", tokenizer=tok).stream()
    deltas = [stream.feed(None, [i]) for i in ids] + [stream.finish()]
    reasoning = "".join(d.reasoning or "" for d in deltas if d is not None)
    calls = [c for d in deltas if d is not None for c in d.tool_calls]
    assert reasoning == 'User asks: "What is the weather in Tokyo?" We need to use lookup_weather tool.'
    assert calls[0].name == "lookup_weather"
    assert "".join(c.arguments for c in calls) == '{"location": "Tokyo"}'


def test_malformed_header_strict_raises_and_degrades_otherwise() -> None:
    output = "<|channel|>bogus<|message|>hi<|end|>"
    parser = Parser("openai_gptoss", "openai")
    assert parser.parse(output).content == "<|channel|>bogus<|message|>hi"
    with pytest.raises(MalformedOutputError):
        parser.parse(output, strict=True)


def test_reasoning_format_alone_routes_by_channel() -> None:
    output = (
        "<|channel|>analysis<|message|>think<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.f json<|message|>{}<|call|>"
    )
    msg = Parser("openai_gptoss", None).parse(output)
    assert msg.reasoning == "think" and msg.content == "{}" and not msg.tool_calls


def test_each_analysis_message_is_a_reasoning_block() -> None:
    stream = Parser("openai_gptoss", "openai").stream()
    assert stream.reasoning_ended  # a header first: nothing is reasoning yet
    stream.feed("<|channel|>analysis<|message|>think")
    assert not stream.reasoning_ended
    stream.feed("<|end|><|start|>assistant<|channel|>final<|message|>ok")
    assert stream.reasoning_ended
    stream.feed("<|end|><|start|>assistant<|channel|>analysis<|message|>more")
    assert not stream.reasoning_ended


@pytest.mark.parametrize(
    ("prompt", "reasoning", "content"),
    [
        ("<|start|>user<|message|>hi<|end|><|start|>assistant", None, "<|channel|>final<|message|>x"),
        ("<|start|>assistant<|channel|>analysis<|message|>", "x", None),
        ("<|start|>assistant<|channel|>final<|message|>", None, "x"),
        ("<|start|>assistant<|channel|>analysis<|message|>done<|end|>", None, "x"),  # closed: a header next
    ],
)
def test_prompt_that_opened_a_body(prompt: str, reasoning: str | None, content: str | None) -> None:
    msg = Parser("openai_gptoss", "openai").parse("x", prompt_text=prompt)
    if content is not None and content.startswith("<|channel|>"):
        msg = Parser("openai_gptoss", "openai").parse("<|channel|>final<|message|>x", prompt_text=prompt)
        content = "x"
    assert (msg.reasoning, msg.content) == (reasoning, content)


def test_grammar_waits_for_a_harmony_header_unless_the_prompt_opened_a_final_message() -> None:
    """An analysis message may come first: a grammar must not apply from the first token."""
    import trisect

    parser = trisect.Parser("openai_gptoss", "openai")
    assert not parser.reasoning_ended_at_start(prompt_text="<|start|>user<|message|>hi<|end|><|start|>assistant")
    assert not parser.reasoning_ended_at_start(prompt_text="<|start|>assistant<|channel|>analysis<|message|>")
    assert parser.reasoning_ended_at_start(prompt_text="<|start|>assistant<|channel|>final<|message|>")
