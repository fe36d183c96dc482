"""DeepSeek V4 / V4.1 reasoning: ``<think>`` … ``</think>``, thinking on unless turned off.

Wire format (the generation prompt carries ``<think>`` when thinking)::

    REASONING</think>CONTENT

Thinking is on when neither ``thinking`` nor ``enable_thinking`` is given, off when either is
false or when ``reasoning_effort`` is ``"none"``; off, the output starts in content, and a
``<think>`` the model writes anyway still opens a block (vLLM's table has the row in both
modes: ``<think>hmm</think>Hello`` is reasoning ``hmm``, content ``Hello``). A DSML tool
block (``<｜DSML｜tool_calls>``, spaced ``<｜DSML｜ calls>`` in V4.1) met while thinking ends
reasoning when the DeepSeek V4 tool format is combined. ``<think>`` / ``</think>`` keep the
DeepSeek V3 added tokens (128798 / 128799; the V4 vocabulary was not available to verify).

Reference: vLLM 0.33 ``vllm/parser/deepseek_v4.py`` (``DeepSeekV4Parser.__init__``: thinking is
on when ``chat_template_kwargs`` has neither ``thinking`` nor ``enable_thinking``, else when either
is truthy, and off when its ``reasoning_effort`` is ``"none"``; ``deepseek_v4_config``: initial
state REASONING when thinking, the ``(CONTENT, THINK_START)`` row in both modes) and
``vllm/parser/deepseek_v41.py`` (the same reasoning, spaced DSML tool tags). vLLM reads
``reasoning_effort`` from ``chat_template_kwargs`` only; trisect also reads the request field.
"""

from __future__ import annotations

from ._think import effort_switch, think_format
from .deepseek_r1 import DEEPSEEK_TURN_MARKERS

_INITIAL = effort_switch(off=("none",), default=None, names=("thinking", "enable_thinking"))

FORMATS = [
    think_format(
        "deepseek_v4",
        initial=_INITIAL,
        opens_in_content=True,  # vLLM: (CONTENT, THINK_START) opens reasoning, thinking on or off
        tool_start_ends_reasoning=True,
        turn_markers=DEEPSEEK_TURN_MARKERS,
        models=("DeepSeek-V4",),
        reference="vLLM 0.33 parser/deepseek_v4.py",
    ),
    think_format(
        "deepseek_v41",
        initial=_INITIAL,
        opens_in_content=True,  # vLLM: (CONTENT, THINK_START) opens reasoning, thinking on or off
        tool_start_ends_reasoning=True,
        turn_markers=DEEPSEEK_TURN_MARKERS,
        models=("DeepSeek-V4.1",),
        reference="vLLM 0.33 parser/deepseek_v41.py",
    ),
]
