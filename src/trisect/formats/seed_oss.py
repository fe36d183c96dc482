"""ByteDance Seed-OSS reasoning: the Qwen3 grammar with ``<seed:think>`` markers.

Wire format::

    <seed:think>REASONING</seed:think>CONTENT

Thinking on unless ``enable_thinking`` (or ``thinking``) is false; a Seed-OSS tool call
(``<seed:tool_call>``) while thinking ends reasoning when the tool format is combined; a
duplicate ``</seed:think>`` is absorbed. The markers are added tokens of the Seed-OSS
vocabulary (tests use a synthetic tokenizer with them).

Reference: vLLM 0.33 ``vllm/parser/seed_oss.py`` (``SeedOssParser(Qwen3Parser)``: only the four
wrapper tokens and the turn boundaries ``<seed:bos>`` / ``<seed:eos>`` differ from Qwen3).
"""

from __future__ import annotations

from ._think import think_format, thinking_switch

FORMATS = [
    think_format(
        "seed_oss",
        start=("<seed:think>",),
        end=("</seed:think>",),
        initial=thinking_switch("enable_thinking", "thinking", default=True),
        model_opens=True,
        plain_when_off=True,
        tool_start_ends_reasoning=True,
        turn_markers=("<seed:bos>", "<seed:eos>"),
        models=("Seed-OSS-36B-Instruct",),
        reference="vLLM 0.33 parser/seed_oss.py (the Qwen3 grammar, <seed:think> markers)",
    ),
]
