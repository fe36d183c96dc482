"""``ReasoningPhase`` (phase one of the engines' two-phase path) fed one character at a time
equals it fed the whole output: Nemotron's swap holds a block past its end marker, and the phase
must wait for the stream's ``ReasoningEnd`` (something followed: reasoning) or the end of the
output (nothing did: the block is the content), never hand over at ``reasoning_ended``."""

from __future__ import annotations

from typing import Any

import pytest

import trisect
from trisect.integrations._common import ReasoningPhase

SWAP: dict[str, Any] = {"chat_template_kwargs": {"force_nonempty_content": True}}


def fed(parser: trisect.Parser, text: str, step: int) -> tuple[str, str]:
    phase = ReasoningPhase(parser.stream(**SWAP), parser.spec)
    reasoning = rest = ""
    for i in range(0, len(text), step):
        r, c = phase.feed(text[i : i + step])
        reasoning, rest = reasoning + r, rest + c
    r, c = phase.finish()
    return reasoning + r, rest + c


@pytest.mark.parametrize("fmt", ["nemotron_v3", "granite_thinking_parser"])
@pytest.mark.parametrize(
    ("output", "want"),
    [
        # something after the end marker: the block was reasoning, the rest goes on as written
        ("R is long.</think>\n\nIt is sunny.", ("R is long.", "\n\nIt is sunny.")),
        ("R</think><tool_call>", ("R", "<tool_call>")),
        # nothing but whitespace after it: vLLM's swap, the block is the content
        ("R is long.</think>\n", ("", "R is long.")),
        ("R is long.</think>", ("", "R is long.")),
    ],
)
@pytest.mark.parametrize("step", [1, 3, 1000])
def test_held_block(fmt: str, output: str, want: tuple[str, str], step: int) -> None:
    parser = trisect.Parser(reasoning=fmt)
    assert fed(parser, output, step) == want
    reasoning, content = want
    message = parser.parse(output, **SWAP)
    assert (message.reasoning or "", message.content or "") == (reasoning, content.strip())
