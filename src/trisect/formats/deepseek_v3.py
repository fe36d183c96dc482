"""DeepSeek V3.1 / V3.2 hybrid reasoning, and Holo2: ``<think>`` … ``</think>`` only when asked.

Wire format (DeepSeek-V3.1 and V3.2 chat templates). Thinking on (``thinking`` or
``enable_thinking`` true) — the generation prompt ends ``<｜Assistant｜><think>``::

    REASONING</think>CONTENT

Thinking off — the prompt ends ``<｜Assistant｜><think></think>`` (V3.2 also after tool
results: ``\\n\\n<think></think>``) and the whole output is content::

    CONTENT

``deepseek_v3`` thinks only when the request says so (default off, as both templates);
``holo2`` is the same format with thinking on by default; ``poolside_v1`` (poolside Laguna) is
``deepseek_v3`` whose prompt verdict only looks back to the current assistant turn's
``<assistant>`` token (a ``</think>`` in an earlier turn or a tool description never decides).
With thinking on, everything before
``</think>`` is reasoning (the start marker is in the prompt); no ``</think>`` means the output
was cut off while thinking. A stray ``</think>`` in content is absorbed. ``<think>`` /
``</think>`` are added tokens 128798 / 128799 of the DeepSeek V3 vocabulary.

Reference: deepseek-ai/DeepSeek-V3.1 and DeepSeek-V3.2 chat templates
(tests/data/templates/deepseek-ai-DeepSeek-V3.1.jinja, -V3.2.jinja); vLLM ``deepseek_v3`` /
``holo2`` reasoning parsers (DeepSeekV3ReasoningParser, …WithThinkingParser: thinking from
``thinking`` or ``enable_thinking``); ``poolside_v1`` from
``vllm/reasoning/poolside_v1_reasoning_parser.py`` (a ``deepseek_v3`` subclass whose
``is_reasoning_end`` stops at ``<assistant>``).
"""

from __future__ import annotations

from ._think import think_format, thinking_switch
from .deepseek_r1 import DEEPSEEK_TURN_MARKERS

FORMATS = [
    think_format(
        "deepseek_v3",
        initial=thinking_switch("thinking", "enable_thinking", default=False),
        turn_markers=DEEPSEEK_TURN_MARKERS,
        models=("DeepSeek-V3.1", "DeepSeek-V3.1-Terminus", "DeepSeek-V3.2", "DeepSeek-V3.2-Exp"),
        reference="DeepSeek-V3.1 / V3.2 chat templates; vLLM deepseek_v3 reasoning parser",
    ),
    think_format(
        "holo2",
        initial=thinking_switch("thinking", "enable_thinking", default=True),
        turn_markers=DEEPSEEK_TURN_MARKERS + ("<|im_start|>", "<|im_end|>"),
        models=("Holo2",),
        reference="vLLM holo2 reasoning parser (DeepSeekV3ReasoningWithThinkingParser: thinking default on)",
    ),
    think_format(
        "poolside_v1",
        initial=thinking_switch("thinking", "enable_thinking", default=False),
        turn_markers=("<assistant>",),
        models=("poolside Laguna",),
        reference="vLLM 0.33 poolside_v1_reasoning_parser.py (deepseek_v3, scoped to the <assistant> turn)",
    ),
]
