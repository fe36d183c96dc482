"""Hermes tool calls: a JSON envelope between ``<tool_call>`` and ``</tool_call>``.

Wire format (Hermes 2 Pro / Hermes 3 and Qwen2.5 / Qwen3 templates)::

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

Several blocks may follow each other; text before, between and after them is content.
``parameters`` is accepted for ``arguments``, and arguments written as a JSON string are decoded
once. The JSON decides where the call ends, so ``</tool_call>`` inside a string argument is
argument text; a block whose JSON is invalid, or that is cut off, is not a call and its text
stays content. A ``<tool_call>`` that follows a complete envelope without ``</tool_call>`` starts
the next call. ``<tool_call>`` / ``</tool_call>`` are added tokens 151657 / 151658 in Qwen's
tokenizer (matched by id when ids are given); in Hermes-on-Llama vocabularies they are text.

``qwen3_json`` is this format under vLLM's other name (vLLM 0.33 registers it as
``Hermes2ProToolParser``).

Reference: NousResearch Hermes-2-Pro-Llama-3-8B and Hermes-3-Llama-3.1-8B tool_use templates,
Qwen3 chat template; vLLM ``hermes`` tool parser.
"""

from __future__ import annotations

from ..codecs import JsonEnvelopeCodec
from ..engine.spec import CONTENT, Act, FormatSpec, Region, rules

FORMATS = [
    FormatSpec(
        name="hermes",
        kind="tools",
        terminals={"TOOL_START": ("<tool_call>",), "TOOL_END": ("</tool_call>",)},
        special=frozenset({"TOOL_START", "TOOL_END"}),
        regions={CONTENT: Region.CONTENT, "TOOL_BODY": Region.ARGS},
        table=rules(
            (CONTENT, "TOOL_START", "TOOL_BODY", (Act.CALL_START,)),
            (CONTENT, "TOOL_END", CONTENT, ()),  # a stray closer is absorbed
            ("TOOL_BODY", "TOOL_END", CONTENT, (Act.CALL_END,)),
            ("TOOL_BODY", "TOOL_START", "TOOL_BODY", (Act.CALL_START,)),
        ),
        codec=JsonEnvelopeCodec,
        aliases=("qwen3_json",),
        models=("Hermes 2 Pro", "Hermes 3", "Qwen2.5", "Qwen3 (JSON tool calls)", "QwQ-32B"),
        reference="Hermes-2-Pro / Hermes-3 tool_use templates; Qwen3 chat template; vLLM hermes",
    ),
]
