"""MiniCPM5 tool calls (``minicpm5``): XML functions with named parameters.

Wire format::

    <function name="get_weather">
    <param name="city">Shanghai</param>
    <param name="date">2024-06-27</param>
    </function>

Several ``<function>`` blocks may follow each other; text around them is content, and an
optional ``<|tool_call_start|>`` … ``<|tool_call_end|>`` wrapper around the blocks is dropped.
Names and keys are quoted with ``"`` or ``'`` (extra attributes after the name are ignored).
Names must be among the request's tools (``validate_names``: vLLM drops a block naming an
unknown tool); that call's text is content. Values are stripped of surrounding whitespace and
typed by the tool schema (``codecs/schema.py``: string-typed values stay strings, others become
JSON when valid for their type). Where vLLM differs: it drops parameters the schema does not
declare, unwraps an OpenAI-style ``arguments`` / ``properties`` parameter into the arguments,
and maps a table of MiniCPM5 alias tool names onto the request's tools; trisect keeps
undeclared parameters as strings (its rule for every format), unwraps and renames nothing.
CDATA sections are kept as written.

Marker text inside a value: ``</param>`` ends a value only when what follows, after
whitespace, is ``<param name=``, ``</function>``, ``<function name=`` or ``<|tool_call_end|>``
(or the output ends); ``</function>`` only before ``<function name=`` or ``<|tool_call_end|>``.

Reference: vLLM ``vllm/tool_parsers/minicpm5xml_tool_parser.py`` (regexes
``<function\\s+name=['"]…['"][^>]*>`` and ``<param\\s+name=['"]…['"]>…</param>``, start token
``<function``, values stripped, names validated); the wrapper tokens as described in vLLM's
tool-parser catalogue. No MiniCPM5 chat template or tokenizer is available here.
"""

from __future__ import annotations

import re
from functools import partial

from ..codecs import XmlParamsCodec
from ..engine.spec import CONTENT, Act, FormatSpec, Region, rules

W, N, A = "TOOL_WRAPPER", "TOOL_NAME", "TOOL_ARGS"
START, END, NAME_END, MARK = Act.CALL_START, Act.CALL_END, Act.NAME_END, Act.ARG_MARKER

WRAP_START, WRAP_END = "<|tool_call_start|>", "<|tool_call_end|>"
FUNC, PARAM = "<function name=", "<param name="
AFTER_FUNCTION = (FUNC, WRAP_END)
AFTER_VALUE = (PARAM, "</function>", *AFTER_FUNCTION)

_QUOTED = re.compile(r"""\s*(["'])(.*?)\1""", re.S)


def _first_quoted(text: str) -> str:
    """``"get_weather" extra="x"`` -> ``get_weather``; unquoted text is taken as it stands."""
    m = _QUOTED.match(text)
    return m.group(2).strip() if m else text.strip()


def _parse_name(text: str) -> tuple[str, str | None]:
    return _first_quoted(text), None


def _parse_key(text: str) -> tuple[str, tuple[str, ...] | None]:
    return _first_quoted(text), None


FORMATS = [
    FormatSpec(
        name="minicpm5",
        kind="tools",
        terminals={
            "WRAP_START": (WRAP_START,),
            "WRAP_END": (WRAP_END,),
            "FUNC": (FUNC,),
            "FUNC_END": ("</function>",),
            "PARAM_START": (PARAM,),
            "PARAM_END": ("</param>",),
            "CLOSE_ANGLE": (">",),
        },
        special=frozenset({"WRAP_START", "WRAP_END"}),
        regions={CONTENT: Region.CONTENT, W: Region.SKIP, N: Region.NAME, A: Region.ARGS},
        table=rules(
            (CONTENT, "WRAP_START", W, ()),
            (CONTENT, "WRAP_END", CONTENT, ()),
            (CONTENT, "FUNC", N, (START,)),
            (W, "FUNC", N, (START,)),
            (W, "WRAP_END", CONTENT, ()),
            (N, "CLOSE_ANGLE", A, (NAME_END,)),
            (N, "FUNC_END", W, (END,)),
            (A, "PARAM_START", A, (MARK,)),
            (A, "PARAM_END", A, (MARK,), AFTER_VALUE),
            (A, "FUNC_END", W, (END,), AFTER_FUNCTION),
            (A, "FUNC", N, (START,)),
            (A, "WRAP_END", CONTENT, (END,)),
        ),
        codec=partial(
            XmlParamsCodec,
            param_start="PARAM_START",
            param_end="PARAM_END",
            parse_key=_parse_key,
            trim="strip",
        ),
        validate_names=True,
        parse_name=_parse_name,
        models=("MiniCPM5-1B", "MiniCPM5"),
        reference="vLLM minicpm5xml_tool_parser.py (regexes, start token, stripping, name validation)",
    ),
]
