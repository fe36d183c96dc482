"""Cohere Command A Reasoning / Command A Plus: ``<|START_THINKING|>`` … ``<|END_THINKING|>``.

Wire format::

    <|START_THINKING|>REASONING<|END_THINKING|><|START_RESPONSE|>CONTENT<|END_RESPONSE|>

Thinking on unless ``thinking`` / ``enable_thinking`` is false; the block may also open in
content. ``<|START_RESPONSE|>`` ends reasoning too; the response markers are absorbed. A tool
action (``<|START_ACTION|>``) while thinking ends reasoning when the Cohere tool format is
combined. The markers are special tokens of the Cohere vocabulary (tests: synthetic tokenizer).

Reference: FORMATS.md ``cohere_command3`` / ``cohere_command4`` (markers marked "mem" there:
not verified against a template in this repository).
"""

from __future__ import annotations

from typing import Any

from ._think import think_format, thinking_switch

_COMMON: dict[str, Any] = {
    "start": ("<|START_THINKING|>",),
    "end": ("<|END_THINKING|>",),
    "initial": thinking_switch("thinking", "enable_thinking", default=True),
    "opens_in_content": True,
    "answer": (("<|START_RESPONSE|>",), ("<|END_RESPONSE|>",)),
    "tool_start_ends_reasoning": True,
    "turn_markers": ("<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>"),
}

FORMATS = [
    think_format(
        "cohere_command3",
        models=("command-a-reasoning-08-2025",),
        reference="vLLM cohere_command3 reasoning parser (FORMATS.md)",
        **_COMMON,
    ),
    think_format(
        "cohere_command4",
        models=("Command A Plus",),
        reference="vLLM cohere_command4 reasoning parser (FORMATS.md)",
        **_COMMON,
    ),
]
