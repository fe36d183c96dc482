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

Reference: FORMATS.md ``step3`` (vLLM Step3ReasoningParser: ``</think>`` only; marked "(mem)"
there) and ``step3p5`` (Step3p5ReasoningParser, markers verified @7875fdb2). Not replicated:
Step-3.5's streaming ``is_reasoning_end`` waiting one token after ``</think>``.
"""

from __future__ import annotations

from ._think import always_reasoning, think_format

FORMATS = [
    think_format(
        "step3",
        start=(),
        initial=always_reasoning,
        models=("step3",),
        reference="vLLM step3 reasoning parser (FORMATS.md)",
    ),
    think_format(
        "step3p5",
        initial=always_reasoning,
        models=("Step-3.5",),
        reference="vLLM step3p5 reasoning parser (FORMATS.md)",
    ),
]
