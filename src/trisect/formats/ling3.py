"""Ling 3 reasoning: the GLM-4.7 grammar (``<think>`` … ``</think>``, ``<tool_call>`` ends it).

Wire format::

    <think>REASONING</think>CONTENT

Thinking on unless ``enable_thinking`` (or ``thinking``) is false. A ``<tool_call>`` met while
thinking ends reasoning (opens the call with the GLM tool format combined; dropped without
it). No Ling 3 template was available: turn markers are not declared, so only the request
switch and the output's own markers decide.

Reference: vLLM 0.33 ``vllm/parser/ling3.py`` (``Ling3Parser(Glm47MoeParser)`` on the GLM-4.7 config:
thinking on when neither ``thinking`` nor ``enable_thinking`` is given, else when either is truthy).
"""

from __future__ import annotations

from .glm import glm_like

FORMATS = [
    glm_like(
        "ling3",
        models=("Ling 3", "Ring 3"),
        reference="vLLM 0.33 parser/ling3.py (the GLM-4.7 grammar)",
        turn_markers=(),
    ),
]
