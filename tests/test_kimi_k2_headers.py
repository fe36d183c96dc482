"""Kimi-K2 and DeepSeek V3.1 call headers (issue 20): the Kimi-K2 templates
(tests/data/templates/Kimi-K2-Instruct.jinja, Kimi-K2-Thinking.jinja) write each call's header
as ``'functions.' + name + ':' + counter`` before ``<|tool_call_argument_begin|>``; the
DeepSeek-V3.1 template writes ``NAME<｜tool▁sep｜>ARGS``. A header of another shape names no tool,
and a header its arguments marker never follows is a call that does not read: either way the
block yields no call and all of its text is content, never a name made of an id fragment and
never the rest of the output swallowed as a cut-off name."""

from __future__ import annotations

import pytest

from trisect import Parser

SB, SE = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
CB, AB, CE = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
TOOLS = [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}]


@pytest.mark.parametrize("header", ["call_abc123:0", "get_time:0", "functions.get_time:0 x", "tool_0:get_time"])
def test_a_kimi_k2_header_not_shaped_functions_name_index_is_no_call(header: str) -> None:
    block = f"{SB}{CB}{header}{AB}{{}}{CE}{SE}"
    message = Parser(tools="kimi_k2").parse("Checking. " + block, tools=TOOLS)
    assert message.tool_calls == ()
    assert message.content == "Checking. " + block


def test_a_kimi_k2_header_the_arguments_marker_never_follows_is_content() -> None:
    block = f"{SB}{CB}functions.get_time:0 {{}}{CE}{SE}"
    message = Parser(tools="kimi_k2").parse(block + " Done.", tools=TOOLS)
    assert (message.tool_calls, message.unfinished_call) == ((), None)
    assert message.content == block + " Done."


def test_a_deepseek_v31_name_the_separator_never_follows_is_content() -> None:
    block = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time {}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    message = Parser(tools="deepseek_v31").parse(block + " Done.", tools=TOOLS)
    assert (message.tool_calls, message.unfinished_call) == ((), None)
    assert message.content == block + " Done."


def test_text_between_kimi_k2_section_markers_is_content_in_order() -> None:
    good = f"{CB}functions.get_time:0{AB}{{}}{CE}"
    message = Parser(tools="kimi_k2").parse(f"A {SB}then{good}and{SE} B", tools=TOOLS)
    assert [(c.id, c.name) for c in message.tool_calls] == [("functions.get_time:0", "get_time")]
    assert message.content == "A thenand B"  # nothing is deleted (vLLM drops it)
