"""GigaChat 3 tool calls: ``function call<|role_sep|>`` (GigaChat 3.1: ``<|function_call|>``) then
one JSON envelope.

Wire format (vLLM's GigaChat3 parser: content ends at ``<|message_sep|>``, the call follows)::

    Let me check.<|message_sep|>function call<|role_sep|>
    {"name": "get_weather", "arguments": {"location": "Paris"}}

    Let me check.<|function_call|>{"name": "get_weather", "arguments": {"location": "Paris"}}

One call per message; it ends where its JSON ends. ``<|message_sep|>`` is dropped. A call
whose JSON is invalid is content, its opener included.

Reference: vLLM 0.33 ``gigachat3`` tool parser (``(?:function call<\\|role_sep\\|>\\n|<\\|function_call\\|>)(.*)``,
``^(.*?)(?:<\\|message_sep\\|>|<\\|function_call\\|>)`` for the content); the GigaChat3.1-10B-A1.8B chat
template (tests/data/detect/heldout) writes ``<|function_call|>``.
"""

from __future__ import annotations

from ..codecs import ENVELOPE
from ..engine.spec import ARGS_DONE, CONTENT, Act, FormatSpec, Region, rules

FORMATS = [
    FormatSpec(
        name="gigachat3",
        kind="tools",
        terminals={
            "CALL_START": ("function call<|role_sep|>", "<|function_call|>"),
            "MESSAGE_SEP": ("<|message_sep|>",),
        },
        regions={CONTENT: Region.CONTENT, "CALL": Region.ARGS},
        table=rules(
            (CONTENT, "MESSAGE_SEP", CONTENT, ()),
            (CONTENT, "CALL_START", "CALL", (Act.CALL_START,)),
            ("CALL", ARGS_DONE, CONTENT, (Act.CALL_END,)),
        ),
        codec=ENVELOPE,
        models=("GigaChat3-702B-A36B-preview", "GigaChat3-10B-A1.8B", "GigaChat3.1-10B-A1.8B"),
        reference="vLLM gigachat3 tool parser",
    ),
]
