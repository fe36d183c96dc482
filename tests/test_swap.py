"""Nemotron 3 / Granite 4.2's swap when the reasoning ended with no content after it.

vLLM 0.33 ``parser/nemotron_v3.py`` ``extract_reasoning``: with ``enable_thinking: false`` or
``force_nonempty_content: true``, when the content is None or blank the reasoning and the content
are swapped — also when ``</think>`` came (``R</think>`` gives content ``R``), not only when
the output ended inside reasoning. Streams hold the ended block until something follows it
(then it is reasoning) or the output ends (then it is the content). Every case runs through the
replay harness under every chunking, with the family's tokenizer.
"""

from __future__ import annotations

import pytest

from support import tokenizers as tk
from trisect.testing import Case, check_case

FORCE = {"chat_template_kwargs": {"force_nonempty_content": True}}
ROWS = [
    # (output, options, reasoning, content)
    ("R</think>", FORCE, None, "R"),
    ("R</think>\n\n", FORCE, None, "R"),
    ("<think>R</think>", FORCE, None, "R"),
    ("R only", FORCE, None, "R only"),
    ("R</think>Hi", FORCE, "R", "Hi"),
    ("R</think>\n\nHi", FORCE, "R", "Hi"),
    ("R</think>", {}, "R", None),  # no switch: no swap
]


@pytest.mark.parametrize(("fmt", "tok"), [("nemotron_v3", "nemotron_v3"), ("granite_thinking_parser", "granite4")])
@pytest.mark.parametrize("row", ROWS, ids=lambda r: repr(r[0]) + ("-force" if r[1] else ""))
def test_the_swap_when_nothing_follows_the_reasoning(fmt: str, tok: str, row: tuple) -> None:
    output, options, reasoning, content = row
    case = Case(
        id=f"{fmt}-swap",
        output=output,
        reasoning=fmt,
        tokenizer=tk.load(tok),
        options=options,
        truncated=reasoning is None and "</think>" not in output,
        expected={"reasoning": reasoning, "content": content, "tool_calls": []},
    )
    assert check_case(case) > 0
