"""StepFun Step-3 and Step-3.5 reasoning.

Wire format, Step-3 (end marker only; there is no start marker)::

    REASONING</think>CONTENT

Step-3.5 (``<think>`` in the output is absorbed)::

    <think>
    REASONING
    </think>
    CONTENT

Both start in reasoning: everything before ``</think>`` is reasoning, no ``</think>`` means
the output was cut off while thinking. For Step-3 a ``<think>`` is reasoning text. A duplicate
``</think>`` is absorbed. Newlines around ``</think>`` are formatting (Step-3.5 trims them).

Reference: vLLM 0.33 ``vllm/reasoning/step3_reasoning_parser.py`` (everything before the
``</think>`` token is reasoning: ``(.*?)</think>``) and ``vllm/parser/step3p5.py`` (the Qwen3
grammar; the template always pre-fills ``<think>\\n`` and ``enable_thinking`` is ignored).
"""

from __future__ import annotations

from ._think import always_reasoning, think_format

FORMATS = [
    think_format(
        "step3",
        start=(),
        initial=always_reasoning,
        models=("step3",),
        reference="vLLM 0.33 step3_reasoning_parser.py",
    ),
    think_format(
        "step3p5",
        initial=always_reasoning,
        models=("Step-3.5",),
        reference="vLLM 0.33 parser/step3p5.py",
    ),
]
