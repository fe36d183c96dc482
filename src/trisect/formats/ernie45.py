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

Reference: FORMATS.md ``ernie45`` (vLLM Ernie45ReasoningParser). The markers are marked
"(mem)" there and no ERNIE template or tokenizer was available to verify them: the examples
above are documented, not rendered.
"""

from __future__ import annotations

from ._think import always_reasoning, think_format

FORMATS = [
    think_format(
        "ernie45",
        initial=always_reasoning,
        answer=(("<response>",), ("</response>",)),
        models=("ERNIE-4.5-21B-A3B-Thinking", "ERNIE-4.5-VL-28B-A3B-Thinking"),
        reference="vLLM ernie45 reasoning parser (FORMATS.md)",
    ),
]
