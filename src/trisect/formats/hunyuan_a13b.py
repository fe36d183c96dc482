"""Hunyuan-A13B reasoning: ``<think>`` … ``</think>`` then ``<answer>`` … ``</answer>``.

Wire format::

    <think>
    REASONING
    </think>
    <answer>
    CONTENT
    </answer>

Thinking on unless ``enable_thinking`` is false; the model then writes an empty block
(``<think>\\n\\n</think>``), which opens and closes even in content. ``<answer>`` also ends
reasoning; the answer markers are absorbed.

Reference: FORMATS.md ``hunyuan_a13b`` (vLLM HunyuanA13BReasoningParser). The markers are
marked "(mem)" there and no Hunyuan template or tokenizer was available to verify them.
"""

from __future__ import annotations

from ._think import think_format, thinking_switch

FORMATS = [
    think_format(
        "hunyuan_a13b",
        initial=thinking_switch("enable_thinking", "thinking", default=True),
        opens_in_content=True,
        answer=(("<answer>",), ("</answer>",)),
        models=("Hunyuan-A13B-Instruct",),
        reference="vLLM hunyuan_a13b reasoning parser (FORMATS.md)",
    ),
]
