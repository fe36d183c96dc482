"""Characters never disappear: outputs whose text a marker, a label or a block could swallow.

* Mistral: a ``[`` in the name region opens the list of calls only before its first object
  (``Rule.follow`` in a name region); ``[TOOL_CALLS] b[/INST]c`` is a name region holding the
  ``[``, not a list whose ``]`` the envelope swallows.
* Gemma 4: the channel label ``thought`` counts only as the block's first text (the ``FIRST_TEXT``
  pseudo-terminal leaves the header state at the first other text); ``I thought about it``
  keeps its word.
* Blocks of calls (every family, the engine's rule): a block that yields no call is content
  whole, its markers included (its content waits until the block decides: all of its text, or
  none); the output ending inside one makes its text the unfinished call's (DeepSeek V3 / V3.1).

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
    # (id, reasoning, tools, tokenizer, output, expected reasoning, content, calls, unfinished call)
    # (an output that ends inside a call or a block of calls is truncated: its text is the unfinished call's)
    # [/INST] is a control token of the Mistral vocabulary (no text when ids are decoded): text only
    (
        "mistral-bracket-in-name",
        None,
        "mistral",
        None,
        "[TOOL_CALLS] b[/INST]c",
        None,
        None,
        [],
        "[TOOL_CALLS] b[/INST]c",
    ),
    (
        "mistral-bracket-in-name-ids",
        None,
        "mistral",
        "magistral",  # tekken (byte-level); the v3 SentencePiece adapter re-adds a dummy prefix
        "[TOOL_CALLS]b[x]c",
        None,
        None,
        [],
        "[TOOL_CALLS]b[x]c",
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
        None,
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
        None,
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
        None,
    ),
    (
        "deepseek_v31-block-without-a-call",
        None,
        "deepseek_v31",
        "deepseek_v3",
        f"Let me look that up.{BEGIN}get_weather",
        None,
        "Let me look that up.",
        [],
        f"{BEGIN}get_weather",
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
        None,
    ),
]


@pytest.mark.parametrize("row", CASES, ids=lambda r: r[0])
def test_no_character_disappears(row: tuple[object, ...]) -> None:
    cid, reasoning, tools, tok, output, want_reasoning, want_content, calls, unfinished = row
    assert isinstance(output, str)
    case = Case(
        id=str(cid),
        output=output,
        reasoning=reasoning,  # type: ignore[arg-type]
        tools_format=tools,  # type: ignore[arg-type]
        tools=TOOLS,
        tokenizer=tk.load(tok) if isinstance(tok, str) else None,
        expected={
            "reasoning": want_reasoning,
            "content": want_content,
            "tool_calls": calls,
            "unfinished_call": unfinished,
        },
        truncated=unfinished is not None,
    )
    check_case(case)


def test_a_marker_may_not_be_named_like_a_pseudo_terminal() -> None:
    with pytest.raises(FormatError, match="pseudo-terminal"):
        FormatSpec(
            name="x", kind="reasoning", terminals={FIRST_TEXT: ("<t>",)}, regions={CONTENT: Region.CONTENT}, table={}
        )
