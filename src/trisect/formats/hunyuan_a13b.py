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
reasoning; the answer markers are absorbed. The markers are ordinary token sequences of the
Hunyuan vocabulary (``<think>\\n`` is ids 14023, 771, 397), so they are matched as text.

Reference: vLLM 0.33 ``vllm/reasoning/hunyuan_a13b_reasoning_parser.py`` (``<think>\\n``,
``\\n</think>\\n<answer>\\n``, ``\\n</answer>`` and their token-id sequences). No Hunyuan
template or tokenizer is staged.
"""

from __future__ import annotations

from ._think import think_format, thinking_switch

FORMATS = [
    think_format(
        "hunyuan_a13b",
        initial=thinking_switch("enable_thinking", "thinking", default=True),
        opens_in_content=True,
        special=False,
        answer=(("<answer>",), ("</answer>",)),
        models=("Hunyuan-A13B-Instruct",),
        reference="vLLM 0.33 hunyuan_a13b_reasoning_parser.py",
    ),
]
