"""A reasoning format used without a tool format meets a tool-call marker inside open reasoning.

Rule (vLLM 0.33's reasoning pass, ``parser/engine/streaming_parser_engine.py:443-459``: a tool
terminal whose transition ends reasoning re-emits the marker as text): reasoning ends at the
marker, and the marker and everything after it are content, as written. The expected values are
the rows of the qwen3 / glm45 / glm47 / kimi_k2 / mistral reasoning tables (``parser/qwen3.py:199-203``,
``parser/glm47_moe.py:204-207``, ``parser/kimi_k2.py:103-106``, ``parser/mistral.py:216-220``;
docs/formats/vllm-engine.md, "A tool marker inside open reasoning"). With a tool format the same marker opens
the call. Every case runs through the replay harness under every chunking, with the family's
tokenizer (the marker matched by its id).
"""

from __future__ import annotations

import pytest

from support import tokenizers as tk
from trisect import Parser
from trisect.testing import Case, check_case

QWEN_CALL = "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"
GLM_CALL = "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>"
KIMI_CALL = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
    '{"a": 1}<|tool_call_end|><|tool_calls_section_end|>'
)
MISTRAL_CALL = '[TOOL_CALLS]f[ARGS]{"a": 1}'

CASES = [
    # (reasoning format, tokenizer, output, the call's text, the tool format that reads it)
    ("qwen3", "qwen3", f"<think>plan{QWEN_CALL}after", QWEN_CALL, "qwen3_coder"),
    ("glm45", "glm", f"<think>plan{GLM_CALL}after", GLM_CALL, "glm45"),
    ("glm47", "glm", f"plan{GLM_CALL}after", GLM_CALL, "glm47"),
    ("kimi_k2", "kimi_k2", f"<think>plan{KIMI_CALL}after", KIMI_CALL, "kimi_k2"),
    ("mistral", "magistral", f"[THINK]plan{MISTRAL_CALL}after", MISTRAL_CALL, None),  # by id only (below)
]
TOOLS = [
    {
        "type": "function",
        "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}},
    }
]


@pytest.mark.parametrize("row", CASES, ids=lambda r: r[0])
def test_the_tool_marker_ends_reasoning_and_stays_content(row: tuple[str, str, str, str, str | None]) -> None:
    reasoning, tok, output, call, _tools = row
    case = Case(
        id=f"{reasoning}-tool-marker-without-a-tool-format",
        output=output,
        reasoning=reasoning,
        tokenizer=tk.load(tok),
        expected={"reasoning": "plan", "content": f"{call}after", "tool_calls": []},
        # Mistral's [TOOL_CALLS] ends an explicit [THINK] block only as its special token
        ids_only=reasoning == "mistral",
    )
    assert check_case(case) > 0


def test_mistral_a_tool_marker_written_as_text_inside_think_is_reasoning() -> None:
    """Only [/THINK] ends an explicitly opened block when the output is text: the
    text [TOOL_CALLS] is reasoning text; by id the special token ends the block (above)."""
    out = f"[THINK]plan{MISTRAL_CALL}[/THINK]after"
    for tools in (None, "mistral"):
        msg = Parser("mistral", tools).parse(out, tools=TOOLS)
        assert (msg.reasoning, msg.content, msg.tool_calls) == (f"plan{MISTRAL_CALL}", "after", ())


@pytest.mark.parametrize("row", [r for r in CASES if r[4] is not None], ids=lambda r: r[0])
def test_with_the_tool_format_the_marker_opens_the_call(row: tuple[str, str, str, str, str | None]) -> None:
    reasoning, _tok, output, _call, tools = row
    msg = Parser(reasoning, tools).parse(output, tools=TOOLS)
    assert msg.reasoning == "plan"
    assert [(c.name, c.arguments) for c in msg.tool_calls] == [("f", '{"a": 1}')]
    assert msg.content == "after"
