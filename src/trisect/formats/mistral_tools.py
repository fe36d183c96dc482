"""Mistral tool calls, every tokenizer generation, behind ``[TOOL_CALLS]``.

Wire formats, by chat template::

    [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2C3d4E"}]
                                                    (Mistral-7B-v0.3, Mistral-Nemo: a JSON list)
    [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}   (v11: Devstral, Magistral, Ministral 3)
    [TOOL_CALLS]get_weather[CALL_ID]a1b2C3d4E[ARGS]{"city": "Paris"}   (v13: Mistral Small 3.2)
    [TOOL_CALLS]get_weather{"city": "Paris"}         (``[ARGS]`` left out; accepted)

Parallel calls: several objects in the list, or one ``[TOOL_CALLS]`` per call. ``[TOOL_CALLS]``,
``[ARGS]`` and ``[CALL_ID]`` are control tokens (``[TOOL_CALLS]`` = 5 in the v3 SentencePiece
vocabulary), matched by id when ids are given. The JSON decides where each call ends, so a
``[TOOL_CALLS]`` inside a string argument is text. The call id is the one the model wrote (the
``[CALL_ID]`` region, or an ``"id"`` key written before ``"name"``); otherwise 9 random letters
and digits, Mistral's own id style. A list object that is not a call ends where its JSON breaks
and its text becomes content; the list markers are dropped.

Reference: mistralai Mistral-Nemo-Instruct-2407, Mistral-Small-3.2-24B-Instruct-2506 and
Devstral-Small-2507 chat templates (llama.cpp ``models/templates``); mistral-common test sample
``parallel_calls`` (v3 token ids); vLLM ``mistral`` tool parser.
"""

from __future__ import annotations

from ..codecs import MistralCallCodec
from ..engine.spec import ARGS_DONE, CONTENT, Act, FormatSpec, Region, rules
from ._json_tools import alnum_id

FORMATS = [
    FormatSpec(
        name="mistral",
        kind="tools",
        terminals={
            "TOOL_CALLS": ("[TOOL_CALLS]",),
            "ARGS": ("[ARGS]",),
            "CALL_ID": ("[CALL_ID]",),
            "OPEN_BRACKET": ("[",),
            "CLOSE_BRACKET": ("]",),
            "OPEN_BRACE": ("{",),
            "COMMA": (",",),
        },
        special=frozenset({"TOOL_CALLS", "ARGS", "CALL_ID"}),
        regions={
            CONTENT: Region.CONTENT,
            "TOOL_NAME": Region.NAME,
            "TOOL_CALL_ID": Region.CALL_ID,
            "TOOL_ARGS": Region.ARGS,
            "LIST": Region.SKIP,
            "LIST_ITEM": Region.ARGS,
            "LIST_NEXT": Region.SKIP,
        },
        table=rules(
            # one call per [TOOL_CALLS]: name, optional [CALL_ID] id, [ARGS] (or directly the JSON)
            (CONTENT, "TOOL_CALLS", "TOOL_NAME", (Act.CALL_START,)),
            ("TOOL_NAME", "ARGS", "TOOL_ARGS", (Act.NAME_END,)),
            ("TOOL_NAME", "CALL_ID", "TOOL_CALL_ID", ()),
            ("TOOL_CALL_ID", "ARGS", "TOOL_ARGS", (Act.NAME_END,)),
            ("TOOL_NAME", "OPEN_BRACE", "TOOL_ARGS", (Act.NAME_END, Act.ARG_MARKER)),
            ("TOOL_ARGS", ARGS_DONE, CONTENT, (Act.CALL_END,)),
            # [TOOL_CALLS] then a JSON list of envelopes
            # a "[" in the name region opens the list only before its first object (or its end):
            # "[TOOL_CALLS] b[/INST]c" is a name region holding "[", not a list
            ("TOOL_NAME", "OPEN_BRACKET", "LIST", (Act.CALL_DROP,), ("{", "]")),
            ("LIST", "OPEN_BRACE", "LIST_ITEM", (Act.CALL_START, Act.ARG_MARKER)),
            ("LIST", "CLOSE_BRACKET", CONTENT, ()),
            ("LIST_ITEM", ARGS_DONE, "LIST_NEXT", (Act.CALL_END,)),
            ("LIST_NEXT", "COMMA", "LIST", ()),
            ("LIST_NEXT", "OPEN_BRACE", "LIST_ITEM", (Act.CALL_START, Act.ARG_MARKER)),
            ("LIST_NEXT", "CLOSE_BRACKET", CONTENT, ()),
            ("LIST_NEXT", "TOOL_CALLS", "TOOL_NAME", (Act.CALL_START,)),
        ),
        codec=MistralCallCodec,
        call_id=alnum_id,
        models=(
            "Mistral-7B-Instruct-v0.3",
            "Mistral-Nemo",
            "Mistral Small 3.x",
            "Mistral Large 2",
            "Devstral",
            "Magistral",
            "Ministral 3",
        ),
        reference="Mistral Nemo / Small 3.2 / Devstral chat templates; mistral-common samples; vLLM mistral",
    ),
]
