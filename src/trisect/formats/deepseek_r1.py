"""DeepSeek-R1 reasoning: the template pre-fills ``<think>\\n``, so the output usually holds
only the end marker.

Wire format (DeepSeek-R1 and R1-Distill templates, prompt ends ``<｜Assistant｜><think>\\n``)::

    REASONING
    </think>

    CONTENT

Everything before ``</think>`` is reasoning, with or without a ``<think>`` in the output (older
templates left it to the model, #13125 / #13375); no ``</think>`` at all means the whole output
is reasoning (the model was cut off while thinking). A prompt that already closed the block
starts in content. A second ``<think>`` block after content, its ``<think>`` given by id as the
special token, is reasoning too, appended to the first: the template never writes the markers
inside content (it cuts a history message's content at its ``</think>``). Written as text, such
a block is content text; so is a ``</think>`` where no block is open (docs/rules.md).

``step5`` (StepFun Step-5) is this format under its own name: vLLM 0.33 registers it as
``DeepSeekR1ReasoningParser`` (``vllm/reasoning/__init__.py``).

Reference: deepseek-ai/DeepSeek-R1-Distill-Qwen-32B and -Llama-8B chat templates; vLLM
``deepseek_r1`` reasoning parser (``vllm/reasoning/deepseek_r1_reasoning_parser.py``: start
``<think>``, end ``</think>``).
"""

from __future__ import annotations

from ._think import always_reasoning, think_format

DEEPSEEK_TURN_MARKERS = ("<｜Assistant｜>", "<｜User｜>", "<｜end▁of▁sentence｜>")

FORMATS = [
    think_format(
        "deepseek_r1",
        initial=always_reasoning,
        reopens_by_id=True,
        turn_markers=DEEPSEEK_TURN_MARKERS + ("<|im_start|>", "<|im_end|>"),
        models=("DeepSeek-R1", "DeepSeek-R1-Distill-Qwen", "DeepSeek-R1-Distill-Llama", "QwQ-32B"),
        reference="DeepSeek-R1-Distill chat templates; vLLM deepseek_r1 reasoning parser",
    ),
    think_format(
        "step5",
        initial=always_reasoning,
        reopens_by_id=True,
        turn_markers=("<|im_start|>", "<|im_end|>"),
        models=("Step-5",),
        reference="vLLM 0.33 step5 = DeepSeekR1ReasoningParser (vllm/reasoning/__init__.py)",
    ),
]
