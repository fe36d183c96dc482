"""Kimi K2 / K2.5 / K2-Thinking reasoning: ``<think>`` … ``</think>``, thinking on by default.

Wire format (Kimi-K2-Thinking chat template; the generation prompt ends
``<|im_assistant|>assistant<|im_middle|>`` and the model writes the block)::

    <think>REASONING</think>CONTENT<|tool_calls_section_begin|>…

Thinking on unless ``chat_template_kwargs.thinking`` (or ``enable_thinking``) is false. The
block may be empty (``<think></think>``, as the template renders past turns) and may open even
when thinking is off (then ``<think>`` still starts a block). ``<|tool_calls_section_begin|>``
met while thinking ends reasoning: with the Kimi K2 tool format combined it opens the tool
section, without it the marker is dropped and the rest is content. A duplicate ``</think>`` is
absorbed. All markers are added tokens of the Kimi vocabulary (tests: synthetic tokenizer).

Reference: moonshotai Kimi-K2-Thinking chat template (tests/data/templates/Kimi-K2-Thinking.jinja);
vLLM 0.33 ``vllm/parser/kimi_k2.py`` (``KimiK2Parser``: thinking on when neither ``thinking`` nor
``enable_thinking`` is given, else when either is truthy; ``(REASONING, TOOL_SECTION_START)`` ends
reasoning; ``(CONTENT, THINK_END)`` absorbed). With thinking off vLLM's config has no think
terminals at all, so there a ``<think>`` the model writes is content text; trisect opens a block.
"""

from __future__ import annotations

from ._think import think_format, thinking_switch

KIMI_TURN_MARKERS = ("<|im_system|>", "<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|im_end|>")

FORMATS = [
    think_format(
        "kimi_k2",
        initial=thinking_switch("thinking", "enable_thinking", default=True),
        model_opens=True,
        opens_in_content=True,
        tool_start_ends_reasoning=True,
        ends_on={"SECTION_BEGIN": ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>")},
        turn_markers=KIMI_TURN_MARKERS,
        models=("Kimi-K2-Instruct", "Kimi-K2-Thinking", "Kimi-K2.5"),
        reference="Kimi-K2-Thinking chat template; vLLM kimi_k2 reasoning parser",
    ),
]
