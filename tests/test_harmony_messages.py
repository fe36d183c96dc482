"""Harmony: a call cut off inside its header, and markers written inside an analysis message
(issue 20 §2, conformance corpus). Rules: docs/rules.md, "Harmony messages".

openai/harmony's format: a message is ``<|start|>HEADER<|message|>BODY`` ended by ``<|end|>``,
``<|call|>`` (a tool call, the stop token) or ``<|return|>`` (the final answer, the stop
token); an analysis message ends with ``<|end|>`` (gpt-oss chat template:
``'<|channel|>analysis<|message|>' + thinking + '<|end|>'``).
"""

from __future__ import annotations

import pytest

from support import tokenizers
from trisect import MalformedOutputError, Parser
from trisect.testing import check_output

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
ANALYSIS = "<|channel|>analysis<|message|>think<|end|>"
HEADER = "<|start|>assistant to=functions.f<|channel|>commentary <|constrain|>json"


def _parser(ids: bool) -> Parser:
    return Parser("openai_gptoss", "openai", tokenizer=tokenizers.load("gpt_oss") if ids else None)


@pytest.mark.parametrize("ids", [False, True])
def test_a_call_cut_off_inside_its_header_is_an_unfinished_call(ids: bool) -> None:
    parser = _parser(ids)
    text = ANALYSIS + HEADER
    options = {"token_ids": tokenizers.encode("gpt_oss", text)} if ids else {}
    msg = parser.parse(text, tools=TOOLS, **options)
    assert (msg.reasoning, msg.content, msg.tool_calls) == ("think", None, ())
    assert msg.unfinished_call is not None and msg.unfinished_call.text == HEADER
    check_output(parser, text, options.get("token_ids"), tools=TOOLS)
    with pytest.raises(MalformedOutputError):
        parser.parse(text, tools=TOOLS, strict=True)


def test_a_cut_off_header_that_names_no_call_is_still_content() -> None:
    text = ANALYSIS + "<|start|>assistant<|channel|>final"
    msg = _parser(False).parse(text, tools=TOOLS)
    assert (msg.reasoning, msg.content, msg.unfinished_call) == ("think", "<|start|>assistant<|channel|>final", None)


MENTION = "I could write <|call|> here, or <|channel|> there, or <|return|>."


def test_only_end_ends_an_analysis_message_written_as_text() -> None:
    text = f"<|channel|>analysis<|message|>{MENTION}<|end|><|start|>assistant<|channel|>final<|message|>Hi<|return|>"
    parser = _parser(False)
    msg = parser.parse(text, tools=TOOLS)
    assert (msg.reasoning, msg.content) == (MENTION, "Hi")
    check_output(parser, text, tools=TOOLS)


@pytest.mark.parametrize("ids", [False, True])
def test_a_built_in_tool_request_on_analysis_still_ends_at_its_call(ids: bool) -> None:
    """``<|call|>`` where a message may end (the end of the output, or before ``<|start|>``)
    ends the analysis message it closes: a built-in tool's request while thinking."""
    parser = _parser(ids)
    for text, want in [
        ("<|channel|>analysis to=python code<|message|>print(1)<|call|>", ("print(1)", None)),
        ("<|channel|>analysis<|message|>a<|call|><|start|>assistant<|channel|>final<|message|>b<|return|>", ("a", "b")),
    ]:
        options = {"token_ids": tokenizers.encode("gpt_oss", text)} if ids else {}
        msg = parser.parse(text, tools=TOOLS, **options)
        assert (msg.reasoning, msg.content) == want
