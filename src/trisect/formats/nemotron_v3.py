"""NVIDIA Nemotron 3 reasoning: the Qwen3 grammar plus the swap rule.

Wire format::

    <think>
    REASONING
    </think>
    CONTENT

Thinking on unless ``enable_thinking`` (or ``thinking``) is false. The swap rule: when
``enable_thinking`` is false or ``force_nonempty_content`` is true (``chat_template_kwargs``)
and the reasoning the output started in is all it has — it ends there, or after ``</think>``
with nothing but whitespace (vLLM swaps when the content is None or blank:
``parser/nemotron_v3.py``, ``extract_reasoning``) — that text is the content, not the
reasoning. Streams with the rule hold such reasoning until something follows its end (then it
is reasoning) or the output ends (then it is content), so a stream always equals ``parse()``.
With thinking off and no prompt saying otherwise the output starts in content, its markers
plain text (``plain_when_off``), and streams at once. ``<tool_call>`` while thinking ends reasoning when a tool format
is combined.

``granite_thinking_parser`` (Granite 4.2) is the same format under its own name: vLLM's
``GraniteThinkingParser`` reuses the Nemotron V3 config, strips the newline its template
writes after ``</think>`` (fields are stripped whole here) and swaps only when the content was
absent: ``R</think>`` is swapped there too (its content is None); trisect takes the rule above
for both (a blank content after that newline, which vLLM's Granite keeps, is dropped here).

Reference: vLLM 0.33 ``vllm/parser/nemotron_v3.py`` (``nemotron_v3_config``: ``qwen3_config``
renamed, trailing reasoning whitespace stripped; ``NemotronV3Parser.extract_reasoning``: the swap
when ``enable_thinking is False`` or ``force_nonempty_content is True`` and the content is None
or blank; ``get_streaming_fallback_content``: a stream's reasoning sent as content at the end)
and ``vllm/parser/granite_thinking.py``.
"""

from __future__ import annotations

from ..engine.stream_options import StreamOptions
from ._think import think_format, thinking_switch
from .qwen3 import QWEN_TURN_MARKERS


def _swap(request: StreamOptions) -> bool:
    kwargs = request.chat_template_kwargs
    return kwargs.get("enable_thinking") in (False, "false", "False", 0) or kwargs.get("force_nonempty_content") in (
        True,
        "true",
        "True",
        1,
    )


FORMATS = [
    think_format(
        "nemotron_v3",
        initial=thinking_switch("enable_thinking", "thinking", default=True),
        plain_when_off=True,
        tool_start_ends_reasoning=True,
        turn_markers=QWEN_TURN_MARKERS,
        reasoning_fallback=_swap,
        fallback_when_empty=True,
        models=("NVIDIA-Nemotron-3-Nano-30B-A3B", "Nemotron 3"),
        reference="vLLM 0.33 parser/nemotron_v3.py",
    ),
    think_format(
        "granite_thinking_parser",
        initial=thinking_switch("enable_thinking", "thinking", default=True),
        plain_when_off=True,
        tool_start_ends_reasoning=True,
        turn_markers=("<|start_of_role|>", "<|end_of_text|>", *QWEN_TURN_MARKERS),
        reasoning_fallback=_swap,
        fallback_when_empty=True,
        models=("Granite 4.2",),
        reference="vLLM 0.33 parser/granite_thinking.py (the Nemotron V3 format; swap only when content is absent)",
    ),
]
