"""Qwen3 reasoning: ``<think>`` … ``</think>``, thinking on unless ``enable_thinking`` is false.

Wire format (Qwen3 chat template, generation prompt ``<|im_start|>assistant\\n``)::

    <think>
    REASONING
    </think>

    CONTENT

With ``enable_thinking=False`` the template renders ``<think>\\n\\n</think>\\n\\n`` into the
prompt and the output is all content. ``<tool_call>`` inside unterminated reasoning ends it
(the model moved on to calling a tool): with a tool format it opens the call, without one the
marker and what follows are content, as written (vLLM's qwen3 reasoning pass).

A second ``<think>`` block after content, its ``<think>`` given by id as the special token, is
reasoning, appended to the first: the markers are added tokens that the template never writes
inside content (it reads a ``</think>`` in a
history message's content as the end of that message's reasoning), so they are no content
text, and a thought the model writes after it began answering stays hidden where reasoning is
hidden. Written as text (no ids, or ordinary tokens) such a ``<think>`` is content text, as is
its closer: text alone cannot tell a thought from an answer that mentions the tag. A
``</think>`` where no block is open is content text, as the template writes content
verbatim after ``</think>`` (vLLM's qwen3 parser drops it; trisect drops no text). ``<think>`` and
``</think>`` are added tokens 151667 / 151668 of the Qwen2/Qwen3 tokenizer.

Reference: Qwen/Qwen3-0.6B chat template (tests/data/templates/Qwen-Qwen3-0.6B.jinja); vLLM
``qwen3`` engine reasoning parser.
"""

from __future__ import annotations

from ._think import think_format, thinking_switch

QWEN_TURN_MARKERS = ("<|im_start|>", "<|im_end|>")

FORMATS = [
    think_format(
        "qwen3",
        initial=thinking_switch("enable_thinking", "thinking", default=True),
        model_opens=True,
        tool_start_ends_reasoning=True,
        reopens_by_id=True,
        ends_on={"TOOL_OPENER": ("<tool_call>",)},
        plain_when_off=True,  # named apart: granite-20b-fc's TOOL_START is another marker
        turn_markers=QWEN_TURN_MARKERS,
        models=("Qwen3", "Qwen3.5", "Qwen3.6", "QwQ-32B", "Qwen3-Coder (thinking variants)"),
        reference="Qwen3 chat template; vLLM qwen3 reasoning parser",
    ),
]
