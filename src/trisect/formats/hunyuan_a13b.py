"""Hunyuan-A13B reasoning: ``<think>`` … ``</think>`` then ``<answer>`` … ``</answer>``.

Wire format::

    <think>
    REASONING
    </think>
    <answer>
    CONTENT
    </answer>

The output starts in content, whatever the switch: reasoning is opted into by the model's
``<think>`` (vLLM's parser stays ``idle``, content, until it sees ``<think>\\n``; there is no
switch). With ``enable_thinking`` false the model writes an empty block
(``<think>\\n\\n</think>``), which opens and closes in content. ``<answer>`` also ends
reasoning; the answer markers are absorbed. An end marker with no block open is content text
(vLLM keeps it). The markers are ordinary token sequences of the
Hunyuan vocabulary (``<think>\\n`` is ids 14023, 771, 397), so they are matched as text.

Reference: vLLM 0.33 ``vllm/reasoning/hunyuan_a13b_reasoning_parser.py`` (``<think>\\n``,
``\\n</think>\\n<answer>\\n``, ``\\n</answer>`` and their token-id sequences). No Hunyuan
template or tokenizer is staged.
"""

from __future__ import annotations

from ._think import think_format


def _content(_request: object) -> str:
    """the output starts in content; <think> opens reasoning"""
    return "CONTENT"


FORMATS = [
    think_format(
        "hunyuan_a13b",
        initial=_content,
        opens_in_content=True,
        special=False,
        answer=(("<answer>",), ("</answer>",)),
        models=("Hunyuan-A13B-Instruct",),
        reference="vLLM 0.33 hunyuan_a13b_reasoning_parser.py",
    ),
]
