"""Reasoning blocks that are not where the template puts them: a closer where no block is open,
and a second block after content (issue 20 §2).

The rules (docs/rules.md, "Reasoning blocks out of place"):

* a closer where no block is open is content text as written: the Qwen3 / R1 / MiniMax-M2 / GLM
  templates write an assistant message's content verbatim after ``</think>``, so a ``</think>``
  inside content renders as that text; nothing of the model's output is dropped;
* a second ``<think>`` block after content, its opener given by id as the special token, is
  reasoning, appended to the first; written as text (no ids, or ordinary tokens) it is content
  text, both markers included, since text alone cannot tell a thought from an answer that
  mentions the tags.
"""

from __future__ import annotations

import pytest

from support import tokenizers
from support.render_cases import qwen3_turn
from trisect import MessageBuilder, Parser
from trisect.testing import check_output

QWEN_PROMPT = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def _streamed(parser: Parser, text: str, **options: object) -> tuple[str | None, str | None]:
    stream, builder = parser.stream(**options), MessageBuilder()
    for ch in text:
        builder.add(stream.feed(ch))
    builder.add(stream.finish())
    msg = builder.message()
    return msg.reasoning, msg.content


def test_a_closer_inside_content_is_what_the_qwen3_template_writes() -> None:
    out, _ = qwen3_turn("Think.", "b</think>c")  # the template writes the content verbatim
    assert out.endswith("</think>\n\nb</think>c")
    msg = Parser("qwen3").parse(out)
    assert (msg.reasoning, msg.content) == ("Think.", "b</think>c")


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"prompt_text": QWEN_PROMPT},
        {"prompt_token_ids": tokenizers.encode("qwen3", QWEN_PROMPT)},
    ],
)
def test_a_stray_closer_is_never_deleted(options: dict[str, object]) -> None:
    """Whole, streamed per character, with and without the prompt: the closer of a block that is
    already closed stays in content. A first closer with no prompt given ends the reasoning that
    thinking-on starts in (what precedes it is reasoning); after a prompt that left the opener to
    the model (Qwen3's generation prompt ends ``<|im_start|>assistant\n``), an output that does
    not begin with ``<think>`` is content, its closer included (FormatSpec.model_opens)."""
    parser = Parser("qwen3", tokenizer=tokenizers.load("qwen3"))
    first = "plan</think>Hi"
    twice = "<think>a</think>b</think>c"
    read_first = ("plan", "Hi") if not options else (None, "plan</think>Hi")
    for text, want in [(first, read_first), (twice, ("a", "b</think>c"))]:
        msg = parser.parse(text, **options)
        assert (msg.reasoning, msg.content) == want
        assert _streamed(parser, text, **options) == want
        ids = tokenizers.encode("qwen3", text)
        msg = parser.parse(text, token_ids=ids, **options)
        assert (msg.reasoning, msg.content) == want
        check_output(parser, text, ids, **options)


def test_a_closer_after_a_prompt_that_starts_in_content_is_content_text() -> None:
    """Hidden reasoning under a constrained tool_choice with the prompt given starts in content
    (the grammar applies from the first token): a closer there is text, not a deletion."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    msg = Parser("qwen3", "hermes").parse(
        "plan</think>Hi", prompt_text=QWEN_PROMPT, tool_choice="required", include_reasoning=False, tools=tools
    )
    assert msg.content == "plan</think>Hi"


@pytest.mark.parametrize("fmt", ["deepseek_v3", "poolside_v1"])
def test_a_closer_with_thinking_off_is_content_text(fmt: str) -> None:
    assert Parser(fmt).parse("plan</think>Hi").content == "plan</think>Hi"


SECOND = "<think>\nFirst.\n</think>\n\nPartial.<think>\nSecond.\n</think>\n\nFinal."


@pytest.mark.parametrize(
    ("fmt", "tokenizer"),
    [("qwen3", "qwen3"), ("deepseek_r1", "deepseek_v3"), ("minimax_m2", "minimax"), ("glm45", "glm"), ("glm47", "glm")],
)
def test_a_second_block_given_by_id_is_reasoning_appended(fmt: str, tokenizer: str) -> None:
    parser = Parser(fmt, tokenizer=tokenizers.load(tokenizer))
    ids = tokenizers.encode(tokenizer, SECOND)
    msg = parser.parse(SECOND, token_ids=ids)
    # each field is the text of its pieces in order, stripped as a whole (engine rule: fields)
    assert (msg.reasoning, msg.content) == ("First.\n\nSecond.", "Partial.\n\nFinal.")
    assert parser.parse(token_ids=ids).reasoning == "First.\n\nSecond."
    check_output(parser, SECOND, ids)


@pytest.mark.parametrize("fmt", ["qwen3", "deepseek_r1", "minimax_m2", "glm45", "glm47"])
def test_a_second_block_as_text_is_content_with_both_markers(fmt: str) -> None:
    msg = Parser(fmt).parse(SECOND)
    assert (msg.reasoning, msg.content) == ("First.", "Partial.<think>\nSecond.\n</think>\n\nFinal.")
    assert _streamed(Parser(fmt), SECOND) == (msg.reasoning, msg.content)


def test_the_closer_of_a_block_a_call_interrupted_is_consumed() -> None:
    """The Qwen3 template ends a block with ``</think>``; a model that calls a tool from inside
    its reasoning still writes that closer after the call: it closes the block, it is no content.
    A second closer after it closes nothing and is text."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    call = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    parser = Parser("qwen3", "hermes")
    for output, content in (
        (f"<think>\nCheck.\n{call}\n</think>\n\nDone.", "Done."),
        (f"<think>\nCheck.\n{call}\n</think>\n\nDone.</think>x", "Done.</think>x"),
    ):
        whole = parser.parse(output, tools=tools)
        assert (whole.reasoning, whole.content) == ("Check.", content)
        assert [c.name for c in whole.tool_calls] == ["f"]
        assert _streamed(parser, output, tools=tools) == ("Check.", content)
