"""Xiaomi MiMo reasoning: the Qwen3 grammar under its own name.

Wire format::

    <think>
    REASONING
    </think>

    CONTENT

Thinking on unless ``enable_thinking`` (or ``thinking``) is false; ``<tool_call>`` while
thinking ends reasoning when a tool format is combined; a duplicate ``</think>`` is absorbed.
MiMo uses the Qwen2 vocabulary (``<think>`` / ``</think>`` = 151667 / 151668).

Reference: vLLM 0.33 ``vllm/parser/mimo.py`` (``MiMoParser(Qwen3Parser)`` on ``qwen3_config``:
thinking from ``enable_thinking``, default on) and ``vllm/reasoning/mimo_engine_reasoning_parser.py``;
Qwen3 chat template for the markers.
"""

from __future__ import annotations

from ._think import think_format, thinking_switch
from .qwen3 import QWEN_TURN_MARKERS

FORMATS = [
    think_format(
        "mimo",
        initial=thinking_switch("enable_thinking", "thinking", default=True),
        plain_when_off=True,
        tool_start_ends_reasoning=True,
        turn_markers=QWEN_TURN_MARKERS,
        models=("MiMo-7B-RL", "MiMo-7B-SFT", "MiMo-V2-Flash"),
        reference="vLLM 0.33 parser/mimo.py (the Qwen3 grammar)",
    ),
]
