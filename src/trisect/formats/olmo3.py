"""OLMo 3 Think reasoning: ``<think>`` … ``</think>`` written as ordinary text.

Wire format::

    <think>REASONING</think>CONTENT

The markers are not special tokens: they are matched as text even when token ids are given.
Thinking on unless ``enable_thinking`` (or ``thinking``) is false; the output may or may not
repeat the ``<think>`` the prompt opened. A duplicate ``</think>`` is absorbed.

Reference: vLLM 0.33 ``vllm/reasoning/olmo3_reasoning_parser.py`` (``<think>`` / ``</think>``
found in the decoded text, a missing ``<think>`` allowed). No OLMo 3 template or tokenizer is
staged.
"""

from __future__ import annotations

from ._think import think_format, thinking_switch

FORMATS = [
    think_format(
        "olmo3",
        special=False,
        initial=thinking_switch("enable_thinking", "thinking", default=True),
        turn_markers=("<|im_start|>", "<|im_end|>"),
        models=("Olmo-3-7B-Think", "Olmo-3-32B-Think"),
        reference="vLLM 0.33 olmo3_reasoning_parser.py",
    ),
]
