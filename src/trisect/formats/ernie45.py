"""ERNIE-4.5 thinking: ``</think>`` ends the reasoning, ``<response>`` may wrap the answer.

Wire format::

    REASONING
    </think>

    <response>
    CONTENT
    </response>

or ``REASONING\\n</think>\\nCONTENT``. The output starts in reasoning (a ``<think>`` the model
writes is absorbed); no ``</think>`` means it was cut off while thinking. ``<response>`` also
ends reasoning; ``<response>`` / ``</response>`` are absorbed in content.

Reference: vLLM 0.33 ``vllm/reasoning/ernie45_reasoning_parser.py`` (``<think>`` / ``</think>``,
``<response>`` / ``</response>`` and the two output shapes above, quoted from its docstring; all
four markers are vocabulary tokens there). No ERNIE template or tokenizer is staged.
"""

from __future__ import annotations

from ._think import always_reasoning, think_format

FORMATS = [
    think_format(
        "ernie45",
        initial=always_reasoning,
        answer=(("<response>",), ("</response>",)),
        models=("ERNIE-4.5-21B-A3B-Thinking", "ERNIE-4.5-VL-28B-A3B-Thinking"),
        reference="vLLM 0.33 ernie45_reasoning_parser.py",
    ),
]
