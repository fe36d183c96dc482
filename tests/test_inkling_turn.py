"""Inkling: the end-of-sampling marker where no block is open (issue 20 §2). Rule: docs/rules.md,
"Inkling's end of turn"."""

from __future__ import annotations

import pytest

from trisect import Parser
from trisect.testing import check_output


@pytest.mark.parametrize("tools", ["inkling", None])
def test_inklings_end_of_sampling_after_the_last_message_is_no_content(tools: str | None) -> None:
    """vLLM 0.33 parser/inkling.py: <|content_model_end_sampling|> ends sampling; after the last
    <|end_message|> it closes the turn (Inkling's docs in that module: a standalone token)."""
    turn = "<|content_thinking|>r<|end_message|><|message_model|><|content_text|>Hi<|end_message|>"
    parser = Parser("inkling", tools)
    for text in (turn + "<|content_model_end_sampling|>", turn + "<|message_model|><|content_model_end_sampling|>"):
        msg = parser.parse(text)
        assert (msg.reasoning, msg.content) == ("r", "Hi")
        check_output(parser, text)
