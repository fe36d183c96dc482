"""Kimi K3 tool calls: XTML elements ``<|open|>NAME attrs<|sep|>`` … ``<|close|>NAME<|sep|>``.

Wire format (the only source is the catalogue, FORMATS.md ``kimi_k3``; no chat template,
tokenizer or model output of Kimi K3 was available)::

    <|open|>tools<|sep|>
    <|open|>call tool="python" index="1"<|sep|>
    <|open|>argument key="code" type="string"<|sep|>print(1)<|close|>argument<|sep|>
    <|close|>call<|sep|>
    <|close|>tools<|sep|>

A ``tools`` element holds one or more ``call`` elements; the call's name is its ``tool``
attribute; each ``argument`` element is one argument, named by ``key``. Attribute values are
HTML-unescaped (``&quot;``, ``&amp;`` …). A ``type="string"`` value is the raw text between
``<|sep|>`` and ``<|close|>argument<|sep|>`` (kept verbatim, whitespace included, streamed as it
arrives); any other value is JSON text, kept as written when it is valid JSON and a string
otherwise. A call counts only once ``<|close|>call<|sep|>`` is seen (as in vLLM); a call cut
off or without a ``tool`` is content, markers included. Text outside ``tools`` is content.

Markers inside a value (text only: the XTML markers are single special tokens in Kimi's
vocabulary, but the element markers here are matched as text): ``<|close|>argument<|sep|>``
ends the value only when the next argument or the call's end follows it (or the output ends);
``<|open|>argument`` opens one only before ``key=``; ``<|close|>call<|sep|>`` ends the call only
before the next call or the end of ``tools``.

Reference: FORMATS.md ``kimi_k3`` (vLLM KimiK3ToolParser); unverified against a primary source.
The Kimi K3 reasoning channels are not implemented here (their channel names are not recorded).
"""

from __future__ import annotations

import html
import re

from ..codecs import JSON_TEXT, XmlParams
from ..engine.spec import CONTENT, Act, FormatSpec, GrammarFacts, Region, rules

_ATTR = re.compile(r'([A-Za-z_][\w-]*)\s*=\s*"([^"]*)"')


def attributes(text: str) -> dict[str, str]:
    """``key="v"`` pairs of an element header, HTML-unescaped."""
    return {k: html.unescape(v) for k, v in _ATTR.findall(text)}


def _parse_call(raw: str) -> tuple[str, str | None]:
    return attributes(raw).get("tool", "").strip(), None


def _parse_argument(raw: str) -> tuple[str, tuple[str, ...] | None]:
    attrs = attributes(raw)
    return attrs.get("key", ""), ("string",) if attrs.get("type") == "string" else JSON_TEXT


_ARG_OPEN, _ARG_CLOSE = "<|open|>argument", "<|close|>argument<|sep|>"
_CALL_OPEN, _CALL_CLOSE = "<|open|>call", "<|close|>call<|sep|>"
_TOOLS_CLOSE = "<|close|>tools<|sep|>"

FORMATS = [
    FormatSpec(
        name="kimi_k3",
        kind="tools",
        terminals={
            "TOOLS_OPEN": ("<|open|>tools<|sep|>",),
            "TOOLS_CLOSE": (_TOOLS_CLOSE,),
            "CALL_OPEN": (_CALL_OPEN,),
            "CALL_CLOSE": (_CALL_CLOSE,),
            "ARG_OPEN": (_ARG_OPEN,),
            "ARG_CLOSE": (_ARG_CLOSE,),
            "SEP": ("<|sep|>",),
        },
        regions={
            CONTENT: Region.CONTENT,
            "TOOLS": Region.SKIP,
            "CALL_HEAD": Region.NAME,
            "ARGS": Region.ARGS,
            "ARG_HEAD": Region.ARGS,
        },
        table=rules(
            (CONTENT, "TOOLS_OPEN", "TOOLS", ()),
            ("TOOLS", "CALL_OPEN", "CALL_HEAD", (Act.CALL_START,)),
            ("TOOLS", "TOOLS_CLOSE", CONTENT, ()),
            ("CALL_HEAD", "SEP", "ARGS", (Act.NAME_END,)),
            ("ARGS", "ARG_OPEN", "ARG_HEAD", (Act.ARG_MARKER,), ("key=",)),
            ("ARG_HEAD", "SEP", "ARGS", (Act.ARG_MARKER,)),
            ("ARGS", "ARG_CLOSE", "ARGS", (Act.ARG_MARKER,), (_ARG_OPEN, _CALL_CLOSE)),
            ("ARGS", "CALL_CLOSE", "TOOLS", (Act.CALL_END,), (_CALL_OPEN, _TOOLS_CLOSE)),
        ),
        codec=XmlParams(
            param_start="ARG_OPEN",
            param_end="ARG_CLOSE",
            key_marker="SEP",
            parse_key=_parse_argument,
            trim="none",
            style="kimi_k3_xml",
        ),
        parse_name=_parse_call,
        # the call header as a grammar writes it (trisect.grammar): the tool and its index
        grammar=GrammarFacts(name_pattern=r' tool="{name}" index="[0-9]+"'),
        models=("Kimi K3",),
        reference="FORMATS.md kimi_k3 (vLLM KimiK3ToolParser); no primary source available",
    ),
]
