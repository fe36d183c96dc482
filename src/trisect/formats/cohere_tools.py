"""Cohere Command A tool calls: a JSON list of actions between ``<|START_ACTION|>`` and ``<|END_ACTION|>``.

Wire format (Command A / Command R7B / North chat templates, as quoted by the parsers built on
them)::

    <|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"location": "Paris"}}
    ]<|END_ACTION|>

``tool_name`` is the name, ``parameters`` the arguments and ``tool_call_id`` (written before
the name) the call id. The markers are special tokens of the Cohere vocabulary. A list entry
whose JSON is invalid ends there and its text is content; the list markers are dropped.
``cohere_command3`` and ``cohere_command4`` write the same action block.

Reference: transformers ``tests/utils/test_chat_parsing_utils.py`` (Cohere schema:
``<|START_ACTION|>[\\n    {"tool_call_id": "0", "tool_name": …, "parameters": …}\\n]<|END_ACTION|>``);
llama.cpp's Command R7B PEG mapper; vLLM ``cohere_command3`` / ``cohere_command4`` (melody filter).
"""

from __future__ import annotations

from ..codecs import JsonEnvelope
from ._json_tools import listed

_CODEC = JsonEnvelope(name_keys=("tool_name",), args_keys=("parameters",), id_keys=("tool_call_id",))

FORMATS = [
    listed(
        name,
        ("<|START_ACTION|>",),
        ("<|END_ACTION|>",),
        codec=_CODEC,
        special=frozenset({"LIST_START", "LIST_END"}),
        models=models,
        reference="transformers Cohere chat-parsing schema test; vLLM " + name,
    )
    for name, models in (
        ("cohere_command3", ("command-a-03-2025", "command-r7b-12-2024", "command-a-reasoning-08-2025")),
        ("cohere_command4", ("Command A Plus",)),
    )
]
