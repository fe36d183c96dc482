"""Characters never disappear (issue 10 §2): the outputs that lost text on the way.

* Mistral: a ``[`` in the name region opens the list of calls only before its first object
  (``Rule.follow`` in a name region); ``[TOOL_CALLS] b[/INST]c`` is a name region holding the
  ``[``, not a list whose ``]`` the envelope swallows.
* Gemma 4: the channel label ``thought`` counts only as the block's first text (the ``FIRST_TEXT``
  pseudo-terminal leaves the header state at the first other text); ``I thought about it``
  keeps its word.
* DeepSeek V3 / V3.1: the block of calls opens as the envelope of its calls, so a block in
  which no call begins keeps its text with its marker (all of it, or none).

Every case runs through the replay harness under every chunking, with the family's tokenizer.
"""

from __future__ import annotations

import pytest

from support import tokenizers as tk
from trisect.engine.spec import CONTENT, FIRST_TEXT, FormatSpec, Region
from trisect.errors import FormatError
from trisect.testing import Case, check_case

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
BEGIN = "<｜tool▁calls▁begin｜>"

CASES = [
    # (id, reasoning, tools, tokenizer, output, expected reasoning, content, calls, truncated)
    # [/INST] is a control token of the Mistral vocabulary (no text when ids are decoded): text only
    (
        "mistral-bracket-in-name",
        None,
        "mistral",
        None,
        "[TOOL_CALLS] b[/INST]c",
        None,
        "[TOOL_CALLS] b[/INST]c",
        [],
        True,
    ),
    (
        "mistral-bracket-in-name-ids",
        None,
        "mistral",
        "magistral",  # tekken (byte-level); the v3 SentencePiece adapter re-adds a dummy prefix
        "[TOOL_CALLS]b[x]c",
        None,
        "[TOOL_CALLS]b[x]c",
        [],
        True,
    ),
    (
        "mistral-list-still-a-list",
        None,
        "mistral",
        "mistral",
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {}}]',
        None,
        None,
        [{"name": "get_weather", "arguments": {}}],
        False,
    ),
    (
        "gemma4-thought-in-text",
        "gemma4",
        None,
        "gemma4",
        "<|channel>I thought about it<channel|>Hi",
        "I thought about it",
        "Hi",
        [],
        False,
    ),
    (
        "gemma4-label-then-thought",
        "gemma4",
        None,
        "gemma4",
        "<|channel>thought\nI thought about it, thought\nagain<channel|>Hi",
        "I thought about it, thought\nagain",
        "Hi",
        [],
        False,
    ),
    (
        "deepseek_v31-block-without-a-call",
        None,
        "deepseek_v31",
        "deepseek_v3",
        f"Let me look that up.{BEGIN}get_weather",
        None,
        f"Let me look that up.{BEGIN}get_weather",
        [],
        True,
    ),
    (
        "deepseek_v3-closed-block-without-a-call",
        None,
        "deepseek_v3",
        "deepseek_v3",
        f"Let me look.{BEGIN}nothing here<｜tool▁calls▁end｜> Done.",
        None,
        f"Let me look.{BEGIN}nothing here<｜tool▁calls▁end｜> Done.",
        [],
        True,
    ),
]


@pytest.mark.parametrize("row", CASES, ids=lambda r: r[0])
def test_no_character_disappears(row: tuple[object, ...]) -> None:
    cid, reasoning, tools, tok, output, want_reasoning, want_content, calls, truncated = row
    assert isinstance(output, str)
    case = Case(
        id=str(cid),
        output=output,
        reasoning=reasoning,  # type: ignore[arg-type]
        tools_format=tools,  # type: ignore[arg-type]
        tools=TOOLS,
        tokenizer=tk.load(tok) if isinstance(tok, str) else None,
        expected={"reasoning": want_reasoning, "content": want_content, "tool_calls": calls},
        truncated=bool(truncated),
    )
    check_case(case)


def test_a_marker_may_not_be_named_like_a_pseudo_terminal() -> None:
    with pytest.raises(FormatError, match="pseudo-terminal"):
        FormatSpec(
            name="x", kind="reasoning", terminals={FIRST_TEXT: ("<t>",)}, regions={CONTENT: Region.CONTENT}, table={}
        )
