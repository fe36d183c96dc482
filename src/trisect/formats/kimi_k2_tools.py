"""Kimi-K2 tool calls: a section of calls whose headers are the call ids.

Wire format (Kimi-K2-Instruct chat template; one line, wrapped here)::

    <|tool_calls_section_begin|>
    <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>
    <|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|>
    <|tool_calls_section_end|>

The header is the call id, written by the model as the template writes it:
``'functions.' + name + ':' + counter`` (stripped). The name is what lies between ``functions.``
and the last ``:`` (``functions.a.b:1`` is ``a.b``); ``N`` counts every tool call of the
conversation (the template numbers them across turns). trisect also takes a header
``functions.NAME`` or ``NAME`` without ``:N`` (a name with no ``.`` or ``:``), whose id is
``functions.NAME:K`` with ``K`` = the request's ``history_tool_calls`` + the call's index (vLLM
skips it). Any other header names no tool and the call is malformed (its text is content): an
id of another shape (``call_abc123:0``, ``functions.f:0 extra``, ``functions.invalid.0``) is not
a name to read a fragment of (vLLM's ``(.+:[0-9]+)`` prefix match names such a call ``call_abc123``).
A header the arguments marker never follows (the call's or the section's end comes first) is a
malformed call too, not a name that runs on to the end of the output.
The arguments are JSON, which decides where they end (a marker inside a string is text).
Text before and after the section is content. The singular ``<|tool_call_section_begin|>`` /
``<|tool_call_section_end|>`` spellings are accepted, and so is a call without the section.
All markers are special tokens in Kimi's vocabulary (matched by id when ids are given).

Reference: moonshotai Kimi-K2-Instruct chat template (llama.cpp ``models/templates``); vLLM
``kimi_k2`` tool parser (id from the header, ``count_history_tool_calls``).
"""

from __future__ import annotations

import re
from typing import Any

from ..codecs import JsonArgsCodec
from ..engine.spec import CONTENT, Act, FormatSpec, GrammarFacts, Region, rules

_ID = re.compile(r"functions\.([^:\s]+):[0-9]+")  # the template's 'functions.' + name + ':' + counter


def _split_header(header: str) -> tuple[str, str | None]:
    """``functions.get_weather:0`` -> (``get_weather``, ``functions.get_weather:0``); ``("",
    None)``: the header names no tool (the call is malformed)."""
    header = header.strip()
    m = _ID.fullmatch(header)
    if m is not None:
        return m.group(1), header
    name = header.removeprefix("functions.")
    if name and not any(ch in name for ch in ".:"):
        return name, None  # no index: the id is made from the history (_kimi_id)
    return "", None


def _kimi_id(request: Any, index: int, name: str) -> str:
    return f"functions.{name}:{request.history_tool_calls + index}"


FORMATS = [
    FormatSpec(
        name="kimi_k2",
        kind="tools",
        terminals={
            "SECTION_BEGIN": ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"),
            "SECTION_END": ("<|tool_calls_section_end|>", "<|tool_call_section_end|>"),
            "CALL_BEGIN": ("<|tool_call_begin|>",),
            "ARG_BEGIN": ("<|tool_call_argument_begin|>",),
            "CALL_END": ("<|tool_call_end|>",),
        },
        special=frozenset({"SECTION_BEGIN", "SECTION_END", "CALL_BEGIN", "ARG_BEGIN", "CALL_END"}),
        regions={CONTENT: Region.CONTENT, "SECTION": Region.SKIP, "CALL_HEADER": Region.NAME, "ARGS": Region.ARGS},
        table=rules(
            (CONTENT, "SECTION_BEGIN", "SECTION", ()),
            (CONTENT, "CALL_BEGIN", "CALL_HEADER", (Act.CALL_START,)),  # a call without its section
            (CONTENT, "SECTION_END", CONTENT, ()),  # a stray closer is absorbed
            ("SECTION", "CALL_BEGIN", "CALL_HEADER", (Act.CALL_START,)),
            ("SECTION", "SECTION_END", CONTENT, ()),
            ("CALL_HEADER", "ARG_BEGIN", "ARGS", (Act.NAME_END,)),
            # a header with no arguments marker: the call ends there and does not read
            ("CALL_HEADER", "CALL_END", "SECTION", (Act.NAME_END, Act.CALL_END)),
            ("CALL_HEADER", "SECTION_END", CONTENT, (Act.NAME_END, Act.CALL_END)),
            ("ARGS", "CALL_END", "SECTION", (Act.CALL_END,)),
            ("ARGS", "SECTION_END", CONTENT, (Act.CALL_END,)),  # <|tool_call_end|> left out
            ("ARGS", "CALL_BEGIN", "CALL_HEADER", (Act.CALL_START,)),
        ),
        codec=JsonArgsCodec,
        parse_name=_split_header,
        call_id=_kimi_id,
        # the name region as a grammar writes it (trisect.grammar): the header carries the id
        grammar=GrammarFacts(name_pattern=r"functions\.{name}:[0-9]+"),
        models=("Kimi-K2-Instruct", "Kimi-K2-Thinking", "Kimi-K2.5"),
        reference="Kimi-K2-Instruct chat template; vLLM kimi_k2 tool parser",
    ),
]
