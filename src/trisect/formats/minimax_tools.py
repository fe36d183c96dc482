"""MiniMax-M2 / M2.1 / M2.5 tool calls (``minimax_m2``).

Wire format (MiniMax-M2 chat template)::

    <minimax:tool_call>
    <invoke name="get_weather">
    <parameter name="location">Paris</parameter>
    <parameter name="unit">celsius</parameter>
    </invoke>
    <invoke name="get_time">
    <parameter name="timezone">Asia/Tokyo</parameter>
    </invoke>
    </minimax:tool_call>

One block holds one or more ``<invoke>`` calls. Names and parameter keys may be quoted with
``"``, with ``'`` or not at all (``<invoke name=get_weather>``); the quotes are not part of the
name. Names must be among the request's tools (``validate_names``, as vLLM). Values are raw
text, stripped of surrounding whitespace (vLLM strips them), and typed by the tool schema:
the template writes strings as they are and everything else with ``tojson``. Whitespace
between the tags is formatting. A stray ``</minimax:tool_call>`` in content is absorbed.

Recovered malformed shapes: a missing ``</invoke>`` before the next ``<invoke``, a missing
``</parameter>`` before the next ``<parameter``, a name not among the tools (that call's text
is content). An unfinished call is not a call.

Marker text inside a value: ``</parameter>`` ends a value only when what follows, after
whitespace, is ``<parameter name=``, ``</invoke>``, ``<invoke name=`` or
``</minimax:tool_call>``; ``</invoke>`` inside an open value only before ``<invoke name=`` or
``</minimax:tool_call>``; ``</minimax:tool_call>`` only before ``<minimax:tool_call>``. A closer
the output ends with inside a value is value text (a cut-off value never completes a call).
``<minimax:tool_call>`` / ``</minimax:tool_call>`` are special tokens (the template names them
so); the rule applies to them too, since the template tokenizes that text inside a value as the
same tokens.

Reasoning: ``minimax_m2`` (the prompt opens ``<think>``; the output closes it).

Reference: MiniMax-M2 chat template (tests/data/templates/MiniMax-M2.jinja, from llama.cpp);
vLLM ``minimax_m2`` engine config (FORMATS.md: three quote styles, values stripped, names
validated, ``CONTENT+TOOL_END`` absorbed).
"""

from __future__ import annotations

from functools import partial

from ..codecs import XmlParamsCodec
from ..engine.spec import CONTENT, Act, FormatSpec, Region, rules

P, N, A = "TOOL_BLOCK", "TOOL_NAME", "TOOL_ARGS"
START, END, NAME_END, MARK = Act.CALL_START, Act.CALL_END, Act.NAME_END, Act.ARG_MARKER

TOOL_START, TOOL_END = "<minimax:tool_call>", "</minimax:tool_call>"
INVOKE, PARAM = "<invoke name=", "<parameter name="
AFTER_BLOCK = (TOOL_START,)
AFTER_INVOKE = (INVOKE, TOOL_END)
AFTER_VALUE = (PARAM, "</invoke>", *AFTER_INVOKE)


def unquote(text: str) -> str:
    """``"k"``, ``'k'`` or ``k`` -> ``k``."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _parse_name(text: str) -> tuple[str, str | None]:
    return unquote(text), None


def _parse_key(text: str) -> tuple[str, tuple[str, ...] | None]:
    return unquote(text), None


FORMATS = [
    FormatSpec(
        name="minimax_m2",
        kind="tools",
        terminals={
            "TOOL_START": (TOOL_START,),
            "TOOL_END": (TOOL_END,),
            "INVOKE": (INVOKE,),
            "INVOKE_END": ("</invoke>",),
            "PARAM_START": (PARAM,),
            "PARAM_END": ("</parameter>",),
            "CLOSE_ANGLE": (">",),
        },
        special=frozenset({"TOOL_START", "TOOL_END"}),
        regions={CONTENT: Region.CONTENT, P: Region.SKIP, N: Region.NAME, A: Region.ARGS},
        table=rules(
            (CONTENT, "TOOL_START", P, ()),
            (CONTENT, "TOOL_END", CONTENT, ()),
            (P, "INVOKE", N, (START,)),
            (P, "TOOL_END", CONTENT, ()),
            (N, "CLOSE_ANGLE", A, (NAME_END,)),
            (N, "PARAM_START", A, (NAME_END, MARK)),
            (N, "INVOKE_END", P, (END,)),
            (A, "PARAM_START", A, (MARK,)),
            (A, "PARAM_END", A, (MARK,), AFTER_VALUE),
            (A, "INVOKE_END", P, (END,), AFTER_INVOKE),
            (A, "INVOKE", N, (START,)),
            (A, "TOOL_END", CONTENT, (END,), AFTER_BLOCK),
        ),
        codec=partial(
            XmlParamsCodec, param_start="PARAM_START", param_end="PARAM_END", parse_key=_parse_key, trim="strip"
        ),
        validate_names=True,
        parse_name=_parse_name,
        models=("MiniMax-M2", "MiniMax-M2.1", "MiniMax-M2.5"),
        reference="MiniMax-M2 chat template; vLLM minimax_m2 engine parser",
    ),
]
