"""GLM-4.5 / 4.6 / 4.7 / 5.x reasoning: ``<think>`` … ``</think>``, thinking on by default.

Wire format, GLM-4.5/4.6 (``glm45``; the generation prompt ends ``<|assistant|>``)::

    <think>REASONING</think>
    CONTENT

GLM-4.7 (``glm47``; the prompt ends ``<|assistant|><think>``, the output has only the end)::

    REASONING</think>CONTENT

Thinking on unless ``enable_thinking`` (or ``thinking``) is false; then the GLM-4.6 prompt
ends ``<|assistant|>\\n<think></think>`` and GLM-4.7's ``<|assistant|></think>``, and the output
is content. A ``<tool_call>`` met while thinking ends reasoning (GLM-5 emits calls inside
``<think>``, vLLM #42400 / #46040): with the GLM tool format combined it opens the call, without
it the marker and the rest are content, as written (vLLM's glm45 reasoning pass). A
``<think>`` after content, given by id as its special token, opens a second block, read as
reasoning (appended to it; vLLM's ``(CONTENT, THINK_START)`` opens one too); written as text it
is content text; a ``</think>`` where no block is open is content text (the template writes
content verbatim after ``</think>``).

Reference: zai-org GLM-4.6 and GLM-4.7-Flash chat templates (tests/data/templates/GLM-4.6.jinja,
GLM-4.7-Flash.jinja); vLLM 0.33 ``vllm/parser/glm47_moe.py`` (``glm45`` and ``glm47`` are both
``Glm47MoeParser``: thinking on unless ``thinking`` / ``enable_thinking`` say otherwise,
``(REASONING, TOOL_START)`` ends reasoning, ``(CONTENT, THINK_START)`` opens reasoning; its
``(CONTENT, THINK_END)`` absorbs the closer, which trisect keeps as text: nothing is dropped).
"""

from __future__ import annotations

from ..engine.spec import FormatSpec
from ._think import think_format, thinking_switch

GLM_TURN_MARKERS = ("<|system|>", "<|user|>", "<|assistant|>", "<|observation|>")
GLM_TOOL_START = {"TOOL_START": ("<tool_call>",)}


def glm_like(
    name: str,
    *,
    models: tuple[str, ...],
    reference: str,
    turn_markers: tuple[str, ...] = GLM_TURN_MARKERS,
    reopens_by_id: bool = False,
    model_opens: bool = False,
) -> FormatSpec:
    return think_format(
        name,
        initial=thinking_switch("enable_thinking", "thinking", default=True),
        tool_start_ends_reasoning=True,
        ends_on=GLM_TOOL_START,
        plain_when_off=True,
        reopens_by_id=reopens_by_id,
        model_opens=model_opens,
        turn_markers=turn_markers,
        models=models,
        reference=reference,
    )


FORMATS = [
    glm_like(
        "glm45",
        reopens_by_id=True,
        model_opens=True,
        models=("GLM-4.5", "GLM-4.5-Air", "GLM-4.6"),
        reference="GLM-4.6 chat template; vLLM glm45 reasoning parser",
    ),
    glm_like(
        "glm47",
        reopens_by_id=True,
        models=("GLM-4.7", "GLM-4.7-Flash", "GLM-5"),
        reference="GLM-4.7-Flash chat template; vLLM glm47 reasoning parser",
    ),
]
