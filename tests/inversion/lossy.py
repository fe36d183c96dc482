"""Where a chat template loses what the turn said: the one table the inversion tests read.

Each entry is a rule of one target (``targets.py``) and one field: what the template does, the
line that does it, and how the generator and the checker apply it. Nothing else is tolerated:
a turn the template writes whole must come back whole (``turns.expected``). docs/inversion.md
lists the same table (``tests/inversion/test_table.py`` checks they agree).

Rules (``Loss.rule``). Checker rules (``CHECKER``): the turn as the template keeps it.

* ``content dropped with calls``: a turn with calls is written as its calls only.
* ``content trimmed`` / ``reasoning trimmed``: Jinja's ``trim`` / ``str.strip()`` (every Unicode space);
  ``content trimmed with calls``: so, in a turn with calls only.
* ``reasoning dropped without calls``: a turn without calls is written with empty reasoning.
* ``calls dropped``: no call of the turn is written.
* ``content is reasoning with calls``: a turn with calls writes its content as reasoning.

Generator rules (``GENERATOR``): turns the template refuses, or whose render does not continue the
prompt, are not made: ``no reasoning``, ``reasoning required``, ``one call``, ``no calls`` (the
calls the template writes read back as nothing: Python's repr, bare strings), ``not empty``,
``not a continuation`` (no turn continues the prompt: the target is skipped, with this reason),
``no quote in strings`` (an argument's string is written raw between single quotes: one that holds
a quote cannot be told from its end), ``content or reasoning with calls`` (a turn with calls has
one of the two: with reasoning, its content is empty).

The convention of every target (docs/CONTRIBUTING-FORMATS.md, "Rules the expected values
follow"): reasoning and content are each compared stripped as a whole field, empty is null.
"""

# ruff: noqa: E501  (a table of prose: each reason reads on one line, as docs/inversion.md shows it)
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Calls = list[tuple[str, dict[str, Any]]]
Apply = Callable[[str | None, str | None, Calls], tuple[str | None, str | None, Calls]]


def _same(reasoning: str | None, content: str | None, calls: Calls) -> tuple[str | None, str | None, Calls]:
    return reasoning, content, calls


@dataclass(frozen=True)
class Loss:
    rule: str
    field: str  # reasoning, content, tool_calls, arguments
    reason: str  # what the template does
    cite: str  # template file:line
    apply: Apply = _same  # the turn as the template keeps it (generator-side rules need none)


LOSSES: dict[str, tuple[Loss, ...]] = {}


# ---------------------------------------------------------------------- how each rule is applied
# checker side: the turn as the template keeps it (the render is of the whole turn)


def _content_dropped_with_calls(reasoning: str | None, content: str | None, calls: Calls) -> tuple[Any, Any, Calls]:
    return reasoning, (None if calls else content), calls


def _content_trimmed(reasoning: str | None, content: str | None, calls: Calls) -> tuple[Any, Any, Calls]:
    return reasoning, (content or "").strip(), calls  # Jinja's trim / str.strip: every Unicode space


def _content_trimmed_with_calls(reasoning: str | None, content: str | None, calls: Calls) -> tuple[Any, Any, Calls]:
    return reasoning, ((content or "").strip() if calls else content), calls


def _reasoning_trimmed(reasoning: str | None, content: str | None, calls: Calls) -> tuple[Any, Any, Calls]:
    return (reasoning or "").strip(), content, calls


def _reasoning_dropped_without_calls(
    reasoning: str | None, content: str | None, calls: Calls
) -> tuple[Any, Any, Calls]:
    return (reasoning if calls else None), content, calls


def _content_is_reasoning_with_calls(
    reasoning: str | None, content: str | None, calls: Calls
) -> tuple[Any, Any, Calls]:
    return (content if calls and content else reasoning), (None if calls else content), calls


def _calls_dropped(reasoning: str | None, content: str | None, calls: Calls) -> tuple[Any, Any, Calls]:
    return reasoning, content, []


CHECKER: dict[str, Apply] = {
    "content dropped with calls": _content_dropped_with_calls,
    "content trimmed": _content_trimmed,
    "content trimmed with calls": _content_trimmed_with_calls,
    "reasoning trimmed": _reasoning_trimmed,
    "reasoning dropped without calls": _reasoning_dropped_without_calls,
    "calls dropped": _calls_dropped,
    "content is reasoning with calls": _content_is_reasoning_with_calls,
}
# generator side: turns the template refuses or cannot continue the prompt with are not made
GENERATOR = (
    "no quote in strings",
    "no reasoning",
    "reasoning required",
    "one call",
    "no calls",
    "not empty",
    "not a continuation",
    "content or reasoning with calls",
)


def _loss(rule: str, field: str, reason: str, cite: str) -> Loss:
    if rule not in CHECKER and rule not in GENERATOR:
        raise ValueError(f"unknown lossy rule {rule!r}")
    return Loss(rule, field, reason, cite, CHECKER.get(rule, _same))


QWEN3_NOTHINK = _loss(
    "no reasoning",
    "reasoning",
    "enable_thinking=false: the generation prompt closes the block (`<think>\\n\\n</think>\\n\\n`); a turn's reasoning would not continue it",
    "Qwen-Qwen3-0.6B.jinja:82-83",
)
LLAMA_TRIM = "message['content'] | trim"

LOSSES.update(
    {
        "lfm2.5": (
            _loss(
                "no quote in strings",
                "arguments",
                '`"\'" + arg_value + "\'"`: a string argument is written raw between single quotes',
                "LFM2.5-8B-A1B.jinja:5-6",
            ),
        ),
        "qwen3-coder": (
            _loss(
                "content trimmed with calls",
                "content",
                "a turn with tool_calls writes `message.content | trim`",
                "Qwen3-Coder.jinja:78-79",
            ),
        ),
        "qwen3-coder-30b": (
            _loss(
                "content trimmed with calls",
                "content",
                "a turn with tool_calls writes `message.content | trim`",
                "Qwen-Qwen3-Coder-30B-A3B-Instruct.jinja:92-93",
            ),
        ),
        "qwen3-nothink": (QWEN3_NOTHINK,),
        "hermes2pro": (
            _loss(
                "content dropped with calls",
                "content",
                "an assistant turn with tool_calls is written as its calls only",
                "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja:95-101",
            ),
        ),
        "hermes3": (
            _loss(
                "content dropped with calls",
                "content",
                "an assistant turn with tool_calls is written as its calls only",
                "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja:95-101",
            ),
        ),
        "glm46": (
            _loss("reasoning trimmed", "reasoning", "`reasoning_content.strip()`", "GLM-4.6.jinja:61"),
            _loss("content trimmed", "content", "`content.strip()`", "GLM-4.6.jinja:65-66"),
        ),
        "glm47-flash": (
            _loss(
                "reasoning required",
                "reasoning",
                "the generation prompt opens `<think>`; a turn without reasoning is written `</think>` alone, which does not continue it",
                "GLM-4.7-Flash.jinja:52-55,85",
            ),
            _loss("reasoning trimmed", "reasoning", "`reasoning_content.strip()`", "GLM-4.7-Flash.jinja:53"),
            _loss("content trimmed", "content", "`content.strip()`", "GLM-4.7-Flash.jinja:57-58"),
        ),
        "kimi-k2-thinking": (
            _loss(
                "reasoning dropped without calls",
                "reasoning",
                "an assistant turn without tool calls ends the history, which is written `<think></think>` + content",
                "Kimi-K2-Thinking.jinja:51,65",
            ),
        ),
        "minimax-m2": (
            _loss(
                "reasoning required",
                "reasoning",
                "the generation prompt opens `<think>\\n`; a turn without reasoning writes no block",
                "MiniMax-M2.jinja:98,158",
            ),
        ),
        "granite-3.3": (
            _loss(
                "calls dropped",
                "tool_calls",
                "an assistant turn is written as its content only (the system prompt asks for `<|tool_call|>` but no turn writes one)",
                "ibm-granite-granite-3.3-2B-Instruct.jinja",
            ),
        ),
        **{
            name: (
                _loss(
                    "one call",
                    "tool_calls",
                    "`raise_exception('This model only supports single tool-calls at once!')`",
                    f"{file}:{line}",
                ),
                _loss(
                    "content dropped with calls",
                    "content",
                    "a turn with tool_calls is written as its one call's JSON only",
                    f"{file}:{line - 2}",
                ),
                _loss("content trimmed", "content", f"`{LLAMA_TRIM}`", f"{file}:68"),
            )
            for name, file, line in (
                ("llama-3.1", "meta-llama-Llama-3.1-8B-Instruct.jinja", 71),
                ("llama-3.2", "meta-llama-Llama-3.2-3B-Instruct.jinja", 72),
                ("llama-3.3", "meta-llama-Llama-3.3-70B-Instruct.jinja", 71),
            )
        },
        "mistral-small-3.2": (
            _loss(
                "content dropped with calls",
                "content",
                "a turn with tool_calls is written `[TOOL_CALLS]…` only",
                "Mistral-Small-3.2-24B-Instruct-2506.jinja",
            ),
        ),
        "mistral-nemo": (
            _loss(
                "content dropped with calls",
                "content",
                "a turn with tool_calls is written `[TOOL_CALLS][…]` only",
                "mistralai-Mistral-Nemo-Instruct-2407.jinja:56-58",
            ),
        ),
        "ministral-3-reasoning": (
            _loss(
                "not empty",
                "content",
                "`raise_exception('Assistant message must have a string or a list of chunks in content or a list of tool calls.')`",
                "mistralai-Ministral-3-14B-Reasoning-2512.jinja:85",
            ),
        ),
        "magistral-2509": (
            _loss(
                "not empty",
                "content",
                "the template raises on an assistant turn with no content and no calls",
                "unsloth-Magistral-Small-2509.jinja",
            ),
        ),
        "gpt-oss": (
            _loss(
                "one call",
                "tool_calls",
                "`message.tool_calls[0]`: an assistant turn is written with its first call only",
                "openai-gpt-oss-120b.jinja:285",
            ),
            _loss(
                "content or reasoning with calls",
                "turn",
                '`raise_exception("Cannot pass both content and thinking in an assistant message with tool calls!")`',
                "openai-gpt-oss-120b.jinja:290",
            ),
            _loss(
                "content is reasoning with calls",
                "content",
                "a turn with tool_calls writes its content in the analysis channel (`<|channel|>analysis<|message|>` + content), where reasoning goes",
                "openai-gpt-oss-120b.jinja:291-292",
            ),
        ),
        "granite-20b-fc": (
            _loss(
                "not a continuation",
                "turn",
                "the generation prompt ends `ASSISTANT: ` but a turn is written after `ASSISTANT:` (no space), so no output continues the prompt",
                "vllm-tool_chat_template_granite_20b_fc.jinja:116,129",
            ),
        ),
        "minimax-m1": (
            _loss(
                "content dropped with calls",
                "content",
                "a turn with tool_calls is written `<tool_calls>…</tool_calls>` only",
                "vllm-tool_chat_template_minimax_m1.jinja:66-67",
            ),
            _loss(
                "content trimmed", "content", "`message['content']|trim`", "vllm-tool_chat_template_minimax_m1.jinja:58"
            ),
        ),
        "xlam-llama": (
            _loss(
                "content dropped with calls",
                "content",
                "a turn with tool_calls is written as the JSON list only",
                "vllm-tool_chat_template_xlam_llama.jinja:67-70",
            ),
            _loss(
                "content trimmed",
                "content",
                "`message['content'] | trim`",
                "vllm-tool_chat_template_xlam_llama.jinja:60",
            ),
        ),
        "internlm2": (
            _loss(
                "no calls",
                "arguments",
                "`function.arguments|string` writes the arguments with Python's repr (`{'city': 'Paris'}`), which is no JSON; no call reads back",
                "vllm-tool_chat_template_internlm2_tool.jinja:40",
            ),
        ),
        "nemotron-json": (
            _loss(
                "not a continuation",
                "turn",
                "the generation prompt opens `<think>\\n` but the last assistant turn is written as its content only, without reasoning or calls",
                "vllm-tool_chat_template_nemotron_json.jinja:106-125",
            ),
        ),
        "olmo3": (
            _loss(
                "no quote in strings",
                "arguments",
                '`"\'" + value + "\'"`: a string argument is written raw between single quotes',
                "vllm-tool_chat_template_olmo3.jinja:61-62",
            ),
            _loss(
                "content dropped with calls",
                "content",
                "a turn with tool_calls is written `<function_calls>…</function_calls>` only",
                "vllm-tool_chat_template_olmo3.jinja:48",
            ),
            _loss("content trimmed", "content", "`message.content|trim`", "vllm-tool_chat_template_olmo3.jinja:83"),
        ),
        "llama3.2-pythonic": (
            _loss(
                "content trimmed",
                "content",
                "`message['content'] | trim`",
                "vllm-tool_chat_template_llama3.2_pythonic.jinja:69",
            ),
            _loss(
                "no calls",
                "arguments",
                '`"%s" | format(value)` writes a string without quotes and a dict, list or boolean with Python\'s repr: no Python literal to read back',
                "vllm-tool_chat_template_llama3.2_pythonic.jinja:79",
            ),
        ),
    }
)
