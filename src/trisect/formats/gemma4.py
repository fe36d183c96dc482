"""Gemma 4 reasoning: a thought channel, ``<|channel>thought`` … ``<channel|>``.

Wire format::

    <|channel>thought
    REASONING<channel|>CONTENT

The output starts in content; ``<|channel>`` opens a reasoning block whose channel name
``thought`` (with the newline after it, in every block) is dropped where the block begins;
the text of any other channel name stays reasoning, and so does ``thought`` anywhere else
(``I thought about it``: the label is the block's first text or nothing). ``<channel|>`` ends
the block; a stray one in content is content text, as written (vLLM absorbs it; trisect drops
no text: docs/rules.md), except the closer of a block a tool call interrupted.
``enable_thinking`` decides whether the model is asked to think, not the initial state:
thinking is opted into by the channel.
``<|channel>`` / ``<channel|>`` are special tokens of the Gemma 4 vocabulary (tests: synthetic
tokenizer).

Reference: vLLM 0.33 ``vllm/parser/gemma4.py`` (``gemma4_config``: THINK_START ``<|channel>``,
THINK_END ``<channel|>``, both also token-id terminals, initial state CONTENT whatever
``enable_thinking`` says, which only decides whether the parser waits for reasoning (default
false there); its ``(CONTENT, THINK_END)`` absorbs the closer, which trisect keeps;
``Gemma4Parser`` strips ``thought\\n`` from the start of the reasoning). No Gemma 4 template or
tokenizer is staged.
"""

from __future__ import annotations

from ..engine.spec import CONTENT, FIRST_TEXT, REASONING, Act, FormatSpec, Region, rules

HEADER = "CHANNEL_HEADER"

FORMATS = [
    FormatSpec(
        name="gemma4",
        kind="reasoning",
        terminals={"THINK_START": ("<|channel>",), "THINK_END": ("<channel|>",), "THOUGHT": ("thought\n", "thought")},
        special=frozenset({"THINK_START", "THINK_END"}),
        # the header is part of the block: reasoning opens at '<|channel>' (text and token views agree)
        regions={CONTENT: Region.CONTENT, HEADER: Region.REASONING, REASONING: Region.REASONING},
        table=rules(
            (CONTENT, "THINK_START", HEADER, ()),
            # the closer of a block a tool call interrupted (Rule.after_interrupt); elsewhere text
            (CONTENT, "THINK_END", CONTENT, (), {"after_interrupt": True}),
            (HEADER, "THOUGHT", REASONING, ()),
            (HEADER, FIRST_TEXT, REASONING, ()),  # the label counts only where the block begins
            (HEADER, "THINK_START", HEADER, ()),
            (HEADER, "THINK_END", CONTENT, (Act.REASONING_END,)),
            (REASONING, "THINK_START", REASONING, ()),
            (REASONING, "THINK_END", CONTENT, (Act.REASONING_END,)),
        ),
        tool_start_ends_reasoning=True,
        models=("Gemma 4",),
        reference="vLLM 0.33 parser/gemma4.py",
    ),
]
