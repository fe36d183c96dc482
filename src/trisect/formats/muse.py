"""Muse (``muse``, alias ``musespark1x``) and Muse Glimmer (``muse_glimmer``): messages addressed
to a recipient, tool calls in ATEM XML inside messages addressed to a tool.

Wire format (the prompt ends with ``<|start|>assistant``, so the first header has no
``<|start|>``)::

     to=self<|message|>REASONING<|eom|>
    <|start|>assistant to=weather.get<|message|><atem:function_calls>
    <atem:invoke name="weather.get">
    <atem:parameter name="city">Paris</atem:parameter>
    </atem:invoke>
    </atem:function_calls><|eom|>
    <|start|>assistant to=user<|message|>CONTENT<|eot|>

A header (``[<|start|>[assistant]] [to=RECIPIENT]`` up to ``<|message|>``) decides the body,
which ends at ``<|eom|>`` / ``<|eot|>`` (or where the next message starts):

* ``muse`` (Muse Spark): no recipient or ``self`` is reasoning; ``user`` and ``commentary`` are
  content; ``developer`` messages, which vLLM drops, are reasoning here (never content, no text
  lost); any other recipient is a tool channel.
* ``muse_glimmer`` (the Glimmer profile): ``self`` is reasoning; no recipient and ``user`` are
  content; any other recipient (``commentary`` and ``developer`` included) is a tool channel.

Without the tool format a tool channel's body is content. With it, the body's
``<atem:function_calls>`` block holds one or more ``<atem:invoke name="NAME">`` calls with
``<atem:parameter name="KEY">VALUE</atem:parameter>`` arguments (names as written, dots
included); an invoke quoted in reasoning or in the answer is text (channel scoping). Values:
``muse`` keeps a value raw where the tool's schema types the key as a string and reads it as
JSON otherwise (a string when it is not valid JSON); ``muse_glimmer`` reads every value as JSON
when it is valid JSON. A closing tag inside a value counts only where the structure goes on
after it; ``<|eom|>`` / ``<|eot|>`` inside a value end it only before the next message. An
unreadable or cut-off header is content, markers included. The framing tokens are text
here (they are not guaranteed to be single tokens in every checkpoint's vocabulary).

Not done here: vLLM maps an invoke named ``get_weather.get_weather`` to a registered
``get_weather`` (its template renders the recipient as ``NAME.*``); names are kept as written.
ATEM markup with no message framing at all (framing stripped upstream by
``skip_special_tokens``) is not read.

Reference: vLLM 0.33 ``vllm/reasoning/muse_reasoning_parser.py`` and
``muse_glimmer_reasoning_parser.py`` (headers, recipient routing, the Glimmer profile),
``vllm/tool_parsers/muse_tool_parser.py`` and ``muse_glimmer_tool_parser.py`` (``_MSG_HEADER_RE``,
``_iter_messages``, the recipient sets, ``_INVOKE_RE`` / ``_PARAM_RE``, ``_decode_value``,
``_preserve_string_parameters``). No template or tokenizer is staged here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..codecs import JSON_TEXT
from ..engine.spec import CONTENT, REASONING, Act, FormatSpec, Region, rules
from ..engine.stream_options import StreamOptions
from ._xml_invoke import invoke_format, unquote

START, MESSAGE, EOM, EOT = "<|start|>", "<|message|>", "<|eom|>", "<|eot|>"
HEADER, BETWEEN, CHANNEL = "HEADER", "BETWEEN", "TOOL_CHANNEL"
TERMINALS = {"START": (START,), "MESSAGE": (MESSAGE,), "EOM": (EOM,), "EOT": (EOT,)}
_ENDS = ("EOM", "EOT")
_HEADER = re.compile(r"(?:<\|start\|>\s*(?:assistant)?)?[^\S\n]*(?:to=([A-Za-z0-9_.\-]+))?[^\S\n]*")

Router = Callable[[str | None], str]


def read_header(text: str) -> tuple[str | None] | None:
    """``(recipient,)`` of a header's text (markers included), or ``None`` if it is not one."""
    m = _HEADER.fullmatch(text)
    return None if m is None else (m.group(1),)


def _spark(recipient: str | None, tools: bool) -> str:
    if recipient in (None, "self", "developer"):
        return REASONING
    if recipient in ("user", "commentary") or not tools:
        return CONTENT
    return CHANNEL


def _glimmer(recipient: str | None, tools: bool) -> str:
    if recipient == "self":
        return REASONING
    if recipient in (None, "user") or not tools:
        return CONTENT
    return CHANNEL


def _header(route: Callable[[str | None, bool], str], tools: bool) -> Callable[[str], tuple[str, str | None] | None]:
    def header(text: str) -> tuple[str, str | None] | None:
        read = read_header(text)
        return None if read is None else (route(read[0], tools), None)

    return header


def _in_header(_request: StreamOptions) -> str:
    """the output starts in the first message's header (the prompt ends ``<|start|>assistant``)"""
    return HEADER


_GRAMMAR: list[tuple[Any, ...]] = [
    (HEADER, "START", HEADER, (Act.HEADER_START,)),
    (HEADER, "MESSAGE", CONTENT, (Act.HEADER_END,)),  # CONTENT if the header is malformed
    *[(HEADER, end, BETWEEN, ()) for end in _ENDS],  # a header without a body: kept as text
    *[(CONTENT, end, BETWEEN, ()) for end in _ENDS],
    *[(REASONING, end, BETWEEN, (Act.REASONING_END,)) for end in _ENDS],
    *[(state, "START", HEADER, (Act.HEADER_START,)) for state in (CONTENT, BETWEEN)],
    (REASONING, "START", HEADER, (Act.REASONING_END, Act.HEADER_START)),
]
_REGIONS = {HEADER: Region.HEADER, REASONING: Region.REASONING, CONTENT: Region.CONTENT, BETWEEN: Region.SKIP}


def _spark_key(text: str) -> tuple[str, tuple[str, ...] | None]:
    """``name="k"``: the schema types the value (a string-typed key stays raw)."""
    return _attribute(text), None


def _glimmer_key(text: str) -> tuple[str, tuple[str, ...] | None]:
    """``name="k"``: the value is JSON when it is valid JSON, else a string."""
    return _attribute(text), JSON_TEXT


_NAME_ATTR = re.compile(r"""\bname\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")


def _attribute(text: str) -> str:
    m = _NAME_ATTR.search(text)
    return next(g for g in m.groups() if g is not None) if m else unquote(text)


def _reasoning(name: str, route: Callable[[str | None, bool], str], models: tuple[str, ...], ref: str) -> FormatSpec:
    return FormatSpec(
        name=name,
        kind="reasoning",
        aliases=("musespark1x",) if name == "muse" else (),
        terminals=TERMINALS,
        regions=_REGIONS,
        table=rules(*_GRAMMAR),
        header=_header(route, tools=False),
        header_states=(REASONING, CONTENT),
        initial=_in_header,
        models=models,
        reference=ref,
    )


def _tools(
    name: str,
    route: Callable[[str | None, bool], str],
    key: Callable[[str], tuple[str, tuple[str, ...] | None]],
    models: tuple[str, ...],
    ref: str,
) -> FormatSpec:
    atem = invoke_format(
        name,
        invoke=("<atem:invoke name=", "</atem:invoke>"),
        param=("<atem:parameter", "</atem:parameter>"),
        block=("<atem:function_calls>", "</atem:function_calls>"),
        opens="block",
        special=False,
        keys=key,
        trim="none",
        home=CHANNEL,
        models=models,
        reference=ref,
    )
    # the tool channel ends like any message; so does an invoke or block left open there (a
    # message end inside a value ends it only before the next message)
    calls = ("TOOL_NAME", "TOOL_ARGS")
    rows = [
        *_GRAMMAR,
        *[(CHANNEL, end, BETWEEN, ()) for end in _ENDS],
        (CHANNEL, "START", HEADER, (Act.HEADER_START,)),
        *[("TOOL_BLOCK", end, BETWEEN, (Act.CALL_END,)) for end in _ENDS],
        *[("TOOL_BETWEEN", end, BETWEEN, ()) for end in _ENDS],
        *[(state, end, BETWEEN, (Act.CALL_END,), (START,)) for state in calls for end in _ENDS],
    ]
    return replace(
        atem,
        aliases=("musespark1x",) if name == "muse" else (),
        terminals={**atem.terminals, **TERMINALS},
        regions={**atem.regions, **_REGIONS},
        table={**atem.table, **rules(*rows)},
        header=_header(route, tools=True),
        header_states=(REASONING, CONTENT, CHANNEL),
        initial=_in_header,
    )


_SPARK_REF = "vLLM 0.33 muse_reasoning_parser.py / muse_tool_parser.py (Muse Spark profile)"
_GLIMMER_REF = "vLLM 0.33 muse_reasoning_parser.py / muse_tool_parser.py (_glimmer_compat profile)"

FORMATS = [
    _reasoning("muse", _spark, ("Muse Spark",), _SPARK_REF),
    _reasoning("muse_glimmer", _glimmer, ("MuseGlimmer",), _GLIMMER_REF),
    _tools("muse", _spark, _spark_key, ("Muse Spark",), _SPARK_REF),
    _tools("muse_glimmer", _glimmer, _glimmer_key, ("MuseGlimmer",), _GLIMMER_REF),
]
