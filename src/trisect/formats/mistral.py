"""Magistral / Mistral (tokenizer >= v11) reasoning: ``[THINK]`` … ``[/THINK]`` or ``<think>`` text.

Wire format (Magistral-Small-2509 / Ministral-3-Reasoning templates: the system prompt asks
for ``[THINK]…[/THINK]`` and the model writes the block itself after ``[/INST]``)::

    [THINK]REASONING[/THINK]CONTENT

Magistral 2506 and other v11 tokenizers spell the block ``<think>`` … ``</think>`` as text.
Both spellings are one terminal each; with a tokenizer, the spelling that is a special token
in its vocabulary is matched by id only (``[THINK]`` in v13+), the other is ordinary text —
that is the auto-detection. The output starts in content (thinking is opted into by the
marker, whatever the request says), so every block is explicitly opened, and only its end
marker ends it as text: ``[TOOL_CALLS]`` written as text inside it is reasoning text. Given
by id, the special token ``[TOOL_CALLS]`` ends reasoning (``Rule.by_id``): with the Mistral tool
format combined it opens the calls, without it the marker and the rest are content, as written
(vLLM parses the call there in either case). A duplicate end marker is absorbed.

Reference: mistralai Ministral-3-14B-Reasoning-2512 and unsloth Magistral-Small-2509 chat
templates (tests/data/templates/); vLLM 0.33 ``vllm/parser/mistral.py`` (``MistralParser``: initial
state CONTENT, ``[THINK]`` / ``[/THINK]`` as special tokens when the vocabulary has them, else
``<think>`` / ``</think>`` as text; ``(REASONING, TOOL_CALLS)`` ends reasoning).
"""

from __future__ import annotations

from ._think import think_format


def _content(_request: object) -> str:
    """the output starts in content; [THINK] opens reasoning"""
    return "CONTENT"


FORMATS = [
    think_format(
        "mistral",
        start=("[THINK]", "<think>"),
        end=("[/THINK]", "</think>"),
        initial=_content,
        opens_in_content=True,
        tool_start_ends_reasoning=True,
        ends_on={"TOOL_CALLS": ("[TOOL_CALLS]",)},
        ends_by_id=True,  # an explicit [THINK] block ends only at [/THINK]; [TOOL_CALLS] by id ends it too
        turn_markers=("[INST]", "[/INST]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "</s>"),
        models=("Magistral-Small-2506", "Magistral-Small-2509", "Magistral-Medium", "Ministral-3-Reasoning"),
        reference="Magistral / Ministral-3-Reasoning chat templates; vLLM mistral reasoning parser",
    ),
]
