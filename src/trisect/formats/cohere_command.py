"""Cohere Command A Reasoning / Command A Plus: ``<|START_THINKING|>`` … ``<|END_THINKING|>``.

Wire format::

    <|START_THINKING|>REASONING<|END_THINKING|><|START_RESPONSE|>CONTENT<|END_RESPONSE|>

Thinking on unless ``thinking`` / ``enable_thinking`` is false; the block may also open in
content. ``<|START_RESPONSE|>`` ends reasoning too; the response markers are absorbed. A tool
action (``<|START_ACTION|>``) while thinking ends reasoning when the Cohere tool format is
combined. The markers are special tokens of the Cohere vocabulary (tests: synthetic tokenizer).

Reference: vLLM 0.33 ``vllm/reasoning/cohere_command_reasoning_parser.py`` (``<|START_THINKING|>``
/ ``<|END_THINKING|>``; ``is_reasoning_end`` stops at ``<|CHATBOT_TOKEN|>``, the start of the
model's turn) and ``vllm/parser/cohere_command.py`` (``<|START_RESPONSE|>`` / ``<|END_RESPONSE|>``,
``<|START_ACTION|>`` / ``<|END_ACTION|>``). vLLM runs the output through the ``cohere_melody``
filter, which is not staged here: the markers are verified, the filter's finer rules are not.
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
    "turn_markers": ("<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>", "<|CHATBOT_TOKEN|>"),
}

FORMATS = [
    think_format(
        "cohere_command3",
        models=("command-a-reasoning-08-2025",),
        reference="vLLM 0.33 cohere_command_reasoning_parser.py, parser/cohere_command.py",
        **_COMMON,
    ),
    think_format(
        "cohere_command4",
        models=("Command A Plus",),
        reference="vLLM 0.33 cohere_command_reasoning_parser.py, parser/cohere_command.py",
        **_COMMON,
    ),
]
