"""Llama 3.x / Llama 4 JSON tool calls: a bare JSON envelope, no end marker.

Wire format (Llama 3.1 / 3.2 / 3.3 chat templates, Llama 4 JSON template)::

    {"name": "get_weather", "parameters": {"location": "Paris"}}

Meta's Llama 3.1 prompt-format document shows a real response with the optional
``<|python_tag|>`` (128010) before the JSON and a ``"type": "function"`` key::

    <|python_tag|>{
        "type": "function",
        "name": "trending_songs",
        "parameters": {
            "n": "10",
            "genre": "all"
        }
    }<|eom_id|>

A call ends where its JSON ends: there is no end marker. Several calls follow each other
directly (the Llama 4 JSON template) or separated by ``;`` (accepted only between calls).
``parameters`` or ``arguments`` (the first one given counts) is required, as in vLLM's parser
(``obj["arguments"] if "arguments" in obj else obj["parameters"]``): ``{"name": "Bob"}`` is not a
call; arguments given as a JSON string are decoded once. Text before the first ``{`` is content;
text that starts with ``{`` but is not a call (no ``name``, no arguments, invalid JSON, or — when
the request has tools — a name that is not one of them) is content, and so is ``<|python_tag|>``
followed by code. Llama 4 may wrap calls in ``<|python_start|>`` … ``<|python_end|>`` (200016 /
200017), which are dropped.

Reference: meta-llama Llama-3.1-8B / 3.2-3B / 3.3-70B-Instruct chat templates (llama.cpp
``models/templates``); meta-llama/llama-models ``models/llama3_1/prompt_format.md``; vLLM
``examples/tool_chat_template_llama4_json.jinja`` and the ``llama3_json`` / ``llama4_json`` parser.
"""

from __future__ import annotations

from typing import Any

from ..codecs import JsonEnvelope
from ..engine.spec import ARGS_DONE, ARGS_FAILED, CONTENT, Act, FormatSpec, Region, rules


def _llama(name: str, extra: dict[str, tuple[str, ...]], models: tuple[str, ...], reference: str) -> FormatSpec:
    terminals = {"OPEN_BRACE": ("{",), "SEMICOLON": (";",), **extra}
    rows: list[tuple[Any, ...]] = []
    for state in (CONTENT, "AFTER_CALL"):
        rows.append((state, "OPEN_BRACE", "CALL", (Act.CALL_START, Act.ARG_MARKER)))
        if "PYTHON_TAG" in extra:
            rows.append((state, "PYTHON_TAG", "CALL", (Act.CALL_START,)))
        if "PYTHON_START" in extra:
            rows.append((state, "PYTHON_START", state, ()))
            rows.append((state, "PYTHON_END", state, ()))
    follow = ("{", *extra.get("PYTHON_TAG", ()), *extra.get("PYTHON_START", ()))
    rows += [
        ("CALL", ARGS_DONE, "AFTER_CALL", (Act.CALL_END,)),
        ("CALL", ARGS_FAILED, CONTENT, (Act.CALL_END,)),  # not a call: no separator may follow
        ("AFTER_CALL", "SEMICOLON", "AFTER_CALL", (), follow),
    ]
    return FormatSpec(
        name=name,
        kind="tools",
        terminals=terminals,
        special=frozenset(extra),
        regions={CONTENT: Region.CONTENT, "CALL": Region.ARGS, "AFTER_CALL": Region.CONTENT},
        table=rules(*rows),
        codec=JsonEnvelope(args_keys=("parameters", "arguments"), requires_args=True),
        validate_names=True,
        models=models,
        reference=reference,
    )


FORMATS = [
    _llama(
        "llama3_json",
        {"PYTHON_TAG": ("<|python_tag|>",)},
        ("Llama 3.1", "Llama 3.2", "Llama 3.3"),
        "Llama 3.1/3.2/3.3 chat templates; llama-models llama3_1 prompt_format.md; vLLM llama3_json",
    ),
    _llama(
        "llama4_json",
        {"PYTHON_START": ("<|python_start|>",), "PYTHON_END": ("<|python_end|>",)},
        ("Llama 4 Scout", "Llama 4 Maverick"),
        "vLLM tool_chat_template_llama4_json.jinja; llama-models llama4 prompt_format.md; vLLM llama4_json",
    ),
]
