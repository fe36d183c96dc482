"""Start state: every reasoning format whose chat template is staged in
tests/data/templates starts where that template's generation prompt leaves the model, thinking
on and off (the same switch passed to the template and to the parser, as vLLM passes
``chat_template_kwargs`` to both).

The prompt's tail is classified here from the rendered text alone (not by trisect):

* ``open``: it ends with the block's start marker (QwQ, R1 distills, DeepSeek V3.x thinking,
  GLM-4.7, MiniMax-M2): the output starts in reasoning;
* ``closed``: it ends with the end marker (an empty block: Qwen3 / GLM-4.6 / DeepSeek V3.x
  thinking off; GLM-4.7 off: a lone ``</think>``): content;
* ``header``: it ends at the assistant header. Families whose reasoning is opted into by a
  marker the output writes (Mistral ``[THINK]``, Granite) start in content. Where the model
  writes the start marker itself (Qwen3, GLM-4.6, Kimi K2), the prompt does not decide; the switch
  does, as in vLLM 0.33 (docs/formats/vllm-engine.md, "Start state": glm45 / qwen3 / kimi_k2 start
  in REASONING when thinking is on, the ``<think>`` the model writes is absorbed), GLM-4.6
  included. Either way, the first output (``<think>plan</think>Hi``) parses the same.

Each row checks the stream's initial state and a short first output through ``parse()``.
"""

from __future__ import annotations

from typing import Any

import pytest

from support.render_reasoning import render_mutable
from trisect import Parser

USER = {"role": "user", "content": "What's the weather like in Paris today?"}
DS = {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}
ON: dict[str, Any] = {"enable_thinking": True, "thinking": True}
OFF: dict[str, Any] = {"enable_thinking": False, "thinking": False}
R, C = "REASONING", "CONTENT"

# (reasoning format, template, start marker, end marker, thinking on/off, tail, initial state)
ROWS: list[tuple[str, str, str, str, dict[str, Any], str, str]] = [
    ("qwen3", "Qwen-Qwen3-0.6B.jinja", "<think>", "</think>", ON, "header", R),
    ("qwen3", "Qwen-Qwen3-0.6B.jinja", "<think>", "</think>", OFF, "closed", C),
    ("qwen3", "Qwen-QwQ-32B.jinja", "<think>", "</think>", ON, "open", R),
    ("qwen3", "Qwen-Qwen3-Coder-30B-A3B-Instruct.jinja", "<think>", "</think>", ON, "header", R),
    ("qwen3", "Qwen-Qwen3-Coder-30B-A3B-Instruct.jinja", "<think>", "</think>", OFF, "header", C),
    ("deepseek_r1", "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", "<think>", "</think>", ON, "open", R),
    ("deepseek_r1", "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", "<think>", "</think>", OFF, "open", R),
    ("deepseek_r1", "llama-cpp-deepseek-r1.jinja", "<think>", "</think>", ON, "open", R),
    ("deepseek_r1", "llama-cpp-deepseek-r1.jinja", "<think>", "</think>", OFF, "open", R),
    ("deepseek_v3", "deepseek-ai-DeepSeek-V3.1.jinja", "<think>", "</think>", ON, "open", R),
    ("deepseek_v3", "deepseek-ai-DeepSeek-V3.1.jinja", "<think>", "</think>", OFF, "closed", C),
    ("deepseek_v3", "deepseek-ai-DeepSeek-V3.2.jinja", "<think>", "</think>", ON, "open", R),
    ("deepseek_v3", "deepseek-ai-DeepSeek-V3.2.jinja", "<think>", "</think>", OFF, "closed", C),
    ("glm45", "GLM-4.6.jinja", "<think>", "</think>", ON, "header", R),
    ("glm45", "GLM-4.6.jinja", "<think>", "</think>", OFF, "closed", C),
    ("glm47", "GLM-4.7-Flash.jinja", "<think>", "</think>", ON, "open", R),
    ("glm47", "GLM-4.7-Flash.jinja", "<think>", "</think>", OFF, "closed", C),
    ("kimi_k2", "Kimi-K2-Thinking.jinja", "<think>", "</think>", ON, "header", R),
    ("kimi_k2", "Kimi-K2-Thinking.jinja", "<think>", "</think>", OFF, "header", C),
    ("kimi_k2", "Kimi-K2-Instruct.jinja", "<think>", "</think>", ON, "header", R),
    ("kimi_k2", "Kimi-K2-Instruct.jinja", "<think>", "</think>", OFF, "header", C),
    ("minimax_m2", "MiniMax-M2.jinja", "<think>", "</think>", ON, "open", R),
    ("minimax_m2", "MiniMax-M2.jinja", "<think>", "</think>", OFF, "open", R),
    ("mistral", "mistralai-Ministral-3-14B-Reasoning-2512.jinja", "[THINK]", "[/THINK]", ON, "header", C),
    ("mistral", "unsloth-Magistral-Small-2509.jinja", "[THINK]", "[/THINK]", ON, "header", C),
    ("mistral", "unsloth-Magistral-Small-2509.jinja", "[THINK]", "[/THINK]", OFF, "header", C),
    ("granite", "ibm-granite-granite-3.3-2B-Instruct.jinja", "<think>", "</think>", ON, "header", C),
    ("granite", "ibm-granite-granite-4.0.jinja", "<think>", "</think>", ON, "header", C),
    ("granite", "ibm-granite-granite-4.1.jinja", "<think>", "</think>", OFF, "header", C),
]


def _tail(prompt: str, start: str, end: str) -> str:
    """What the rendered prompt leaves open, read from its text (see the module docstring)."""
    text = prompt.rstrip()
    if text.endswith(start):
        return "open"
    if text.endswith(end):  # an empty block, or GLM-4.7's lone "</think>"
        return "closed"
    return "header"


@pytest.mark.parametrize(("fmt", "template", "start", "end", "switch", "tail", "want"), ROWS)
def test_start_state_follows_the_generation_prompt(
    fmt: str, template: str, start: str, end: str, switch: dict[str, Any], tail: str, want: str
) -> None:
    prompt = render_mutable(template, [USER], add_generation_prompt=True, **DS, **switch)
    assert _tail(prompt, start, end) == tail, prompt[-80:]
    options: dict[str, Any] = {"prompt_text": prompt, "chat_template_kwargs": switch}
    parser = Parser(fmt)
    assert parser.stream(**options).state == want
    if want == R and tail == "open":
        msg = parser.parse(f"plan{end}Hi", **options)
        assert (msg.reasoning, msg.content) == ("plan", "Hi")
    elif want == R:  # the model writes the start marker itself: absorbed
        msg = parser.parse(f"{start}plan{end}Hi", **options)
        assert (msg.reasoning, msg.content) == ("plan", "Hi")
    else:
        msg = parser.parse("Hi", **options)
        assert (msg.reasoning, msg.content) == (None, "Hi")


@pytest.mark.parametrize("switch", [{}, ON, OFF])
def test_hunyuan_a13b_starts_in_content(switch: dict[str, Any]) -> None:
    """No Hunyuan template is staged; vLLM 0.33's parser is the source
    (``reasoning/hunyuan_a13b_reasoning_parser.py``: state ``idle``, content, until
    ``<think>\\n``; no switch): the output starts in content and the model's ``<think>`` opens
    reasoning; an answer written without it is content, an end marker in it content text."""
    parser = Parser("hunyuan_a13b")
    options: dict[str, Any] = {"chat_template_kwargs": switch}
    assert parser.stream(**options).state == C
    msg = parser.parse("<think>\nplan\n</think>\n<answer>\nHi\n</answer>", **options)
    assert (msg.reasoning, msg.content) == ("plan", "Hi")
    assert parser.parse("plan</think>Hi", **options).content == "plan</think>Hi"
