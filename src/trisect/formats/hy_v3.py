"""Tencent HY v3 reasoning: ``<think>`` … ``</think>``, chosen by ``reasoning_effort``.

Wire format (with a thinking effort)::

    <think>REASONING</think>CONTENT

``reasoning_effort`` from ``chat_template_kwargs`` or the request; the default ``"no_think"``
means no reasoning block (all content). Any other effort starts in reasoning, with or without
a ``<think>`` in the output.

Reference: FORMATS.md ``hy_v3`` (vLLM HYV3ReasoningParser, markers verified @0847a95f).
"""

from __future__ import annotations

from ._think import effort_switch, think_format

FORMATS = [
    think_format(
        "hy_v3",
        initial=effort_switch(off=("no_think",), default="no_think"),
        models=("Tencent HY v3",),
        reference="vLLM hy_v3 reasoning parser (FORMATS.md)",
    ),
]
