"""One turn, rendered, parsed and streamed: what the inversion tests assert about it."""

from __future__ import annotations

import json
from typing import Any

from trisect import Parser
from trisect.testing import Case, CaseFailure, check_case

from .targets import Target
from .turns import TOOLS, Turn, expected, prompt, render, same


def _tokenizer(target: Target) -> Any:
    if target.tokenizer is None:
        return None
    from support.tokenizers import load

    return load(target.tokenizer)


def check_turn(target: Target, turn: Turn, *, splits: int = 4) -> None:
    """``parse()`` of what the template wrote is the turn (``expected``): strings byte for byte,
    booleans never numbers; then the whole replay harness (``trisect.testing.check_case``): whole,
    per character, ``splits`` two-way cuts, and with the target's tokenizer per token, in token
    groups, with hold-back, ids alone."""
    output = render(target, turn)
    want = expected(target, turn)
    options = {"prompt_text": prompt(target), "chat_template_kwargs": dict(target.kwargs)}
    msg = Parser(target.reasoning, target.tools).parse(output, tools=TOOLS, **options)
    got = {
        "reasoning": msg.reasoning,
        "content": msg.content,
        "tool_calls": [{"name": c.name, "arguments": json.loads(c.arguments)} for c in msg.tool_calls],
    }
    if not same(got, want):
        raise CaseFailure(f"[{target.name}] output {output!r}:\n  parse()  {got!r}\n  expected {want!r}")
    step = max(1, len(output) // (splits + 1))
    case = Case(
        id=target.name,
        output=output,
        expected=want,
        reasoning=target.reasoning,
        tools_format=target.tools,
        tools=TOOLS,
        options=options,
        tokenizer=_tokenizer(target),
    )
    check_case(case, seeds=(0,), splits=range(step, len(output), step), nothing_lost=False)
