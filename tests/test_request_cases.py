"""tool_choice, parallel_tool_calls and include_reasoning through the shared replay harness:
whole, per character, split everywhere, and from the real Qwen3 tokenizer's ids in random
groups with detokenizer hold-back (trisect.testing.check_case), plus every truncation.

Outputs are written in the exact spelling of the Qwen3 / Qwen3-Coder templates (hermes_block
and coder_block of tests/support/render_cases.py); what each option must do to them is the
OpenAI / vLLM request semantics (DESIGN.md, "Request semantics")."""

from __future__ import annotations

import pytest

from support import tokenizers
from support.render_cases import GET_TIME, GET_WEATHER, coder_block, hermes_block
from trisect.testing import Case, check_case, check_truncations

TOOLS = [GET_WEATHER, GET_TIME]
NAMED = {"type": "function", "function": {"name": "get_weather"}}
PARIS = {"location": "Paris", "unit": "celsius"}
UTC = {"timezone": "UTC"}
H = (
    hermes_block("get_weather", '{"location": "Paris", "unit": "celsius"}')
    + "\n"
    + hermes_block("get_time", '{"timezone": "UTC"}')
)
C = (
    coder_block("get_weather", [("location", "Paris"), ("unit", "celsius")])
    + "\n"
    + coder_block("get_time", [("timezone", "UTC")])
)
THINK = "<think>\nThe user wants the weather.\n</think>\n\n"
REQUIRED = '[{"name": "get_weather", "parameters": {"location": "Paris", "unit": "celsius"}}, {"name": "get_time", "parameters": {"timezone": "UTC"}}]'  # noqa: E501
NAMED_OUT = '{"location": "Paris", "unit": "celsius"}'
BOTH = [{"name": "get_weather", "arguments": PARIS}, {"name": "get_time", "arguments": UTC}]


def _case(id: str, fmt: str, output: str, options: dict, *, reasoning, content, calls, **flags) -> dict:
    return {
        "id": id,
        "source": "template spelling (render_cases.hermes_block / coder_block); OpenAI request semantics",
        "reasoning": "qwen3",
        "tools_format": fmt,
        "tokenizer": "qwen3",
        "output": output,
        "tools": TOOLS,
        "options": options,
        "expected": {"reasoning": reasoning, "content": content, "tool_calls": calls},
        **flags,
    }


CASES = []
for fmt, native in [("hermes", H), ("qwen3_coder", C)]:
    CASES += [
        _case(
            f"{fmt}-none",
            fmt,
            THINK + native,
            {"tool_choice": "none"},
            reasoning="The user wants the weather.",
            content=native,
            calls=[],
        ),
        _case(
            f"{fmt}-none-marker-in-reasoning",
            fmt,
            "<think>\nmaybe " + native,
            {"tool_choice": "none"},
            # the marker ends reasoning and, no tool format reading it, stays content (vLLM's qwen3
            # reasoning pass re-emits it as text: docs/formats/vllm-engine.md)
            reasoning="maybe",
            content=native,
            calls=[],
        ),
        _case(
            f"{fmt}-required",
            fmt,
            THINK + REQUIRED,
            {"tool_choice": "required"},
            reasoning="The user wants the weather.",
            content=None,
            calls=BOTH,
        ),
        _case(
            f"{fmt}-named",
            fmt,
            THINK + NAMED_OUT,
            {"tool_choice": NAMED},
            reasoning="The user wants the weather.",
            content=None,
            calls=BOTH[:1],
        ),
        _case(
            f"{fmt}-single-call",
            fmt,
            THINK + native,
            {"parallel_tool_calls": False},
            reasoning="The user wants the weather.",
            content=None,
            calls=BOTH[:1],
        ),
        _case(
            f"{fmt}-required-single-call",
            fmt,
            THINK + REQUIRED,
            {"tool_choice": "required", "parallel_tool_calls": False},
            reasoning="The user wants the weather.",
            content=None,
            calls=BOTH[:1],
        ),
        _case(
            f"{fmt}-hidden-reasoning",
            fmt,
            THINK + "Checking.\n" + native,
            {"include_reasoning": False},
            reasoning=None,
            content="Checking.",
            calls=BOTH,
        ),
        _case(
            f"{fmt}-hidden-reasoning-required",
            fmt,
            THINK + REQUIRED,
            {"tool_choice": "required", "include_reasoning": False},
            reasoning=None,
            content=None,
            calls=BOTH,
        ),
    ]


def _load(data: dict) -> Case:
    return Case.from_dict(data, tokenizers.load)


@pytest.mark.parametrize("data", CASES, ids=[c["id"] for c in CASES])
def test_request_case_replays(data: dict) -> None:
    assert check_case(_load(data)) > 0


@pytest.mark.parametrize("data", [c for c in CASES if c["expected"]["tool_calls"]], ids=lambda c: c["id"])
def test_request_case_truncated_everywhere(data: dict) -> None:
    assert check_truncations(_load(data)) > 0
