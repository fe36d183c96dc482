"""Qwen3-Coder XML tool calls (also ``qwen3_xml``).

Wire format (Qwen3-Coder chat template)::

    <tool_call>
    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    <parameter=days>
    3
    </parameter>
    </function>
    </tool_call>

Values are raw text: exactly one leading and one trailing newline (the template's) is removed,
and each value is typed by the tool's JSON schema (``3`` is ``3`` for an integer, ``"3"`` for a
string; objects and arrays are JSON, as the template renders them with ``tojson``).
String values stream as they arrive; others are written once complete.

Recovered malformed shapes: a name not closed by ``>`` (ends at the first ``<parameter=`` or
``</function>``), a parameter left open (closed by the next ``<parameter=`` or the end of the
function), a missing ``</function>``, a missing ``</tool_call>`` between calls, a bare
``<function=`` without ``<tool_call>``, several functions in one block. An empty block is not a
call; its text stays content.

Marker text inside a value: a closing tag inside a value (``</parameter>``, ``</function>``,
``</tool_call>``) ends it only when what follows, after whitespace, is the next structural tag
(``<parameter=``, ``</function>``, ``</tool_call>``, ``<tool_call>``, ``<function=``); anything
else means the model is writing the tag as part of the value, and so does a closing tag the
output ends with (a value cut off there never completes a call). The rule holds for the
special tokens ``<tool_call>`` / ``</tool_call>`` (151657 / 151658) too: the template tokenizes
such text inside a value as those very tokens.

Reference: Qwen/Qwen3-Coder-30B-A3B-Instruct chat template; vLLM ``qwen3_coder`` engine tool
parser.
"""

from __future__ import annotations

from functools import partial

from ..codecs import XmlParamsCodec
from ..engine.spec import CONTENT, Act, FormatSpec, Region, rules

P, N, A, B = "TOOL_PREAMBLE", "TOOL_NAME", "TOOL_ARGS", "TOOL_BETWEEN"
START, END, NAME_END, MARK, ARGS_END = Act.CALL_START, Act.CALL_END, Act.NAME_END, Act.ARG_MARKER, Act.ARGS_END


def function_xml_format(
    name: str,
    *,
    tool_start: str = "<tool_call>",
    tool_end: str = "</tool_call>",
    models: tuple[str, ...],
    reference: str,
    aliases: tuple[str, ...] = (),
) -> FormatSpec:
    """The ``<function=NAME><parameter=K>V</parameter></function>`` grammar inside the family's
    call wrapper (``<tool_call>`` for Qwen3-Coder, ``<seed:tool_call>`` for Seed-OSS)."""
    # Inside a value, a closing tag written as text ends the value only when the structure goes
    # on after it: a file that mentions "</parameter>" mid-line stays value.
    after_call = (tool_start, "<function=")
    after_function = (tool_end, *after_call)
    after_value = ("<parameter=", "</function>", *after_function)
    return FormatSpec(
        name=name,
        kind="tools",
        aliases=aliases,
        terminals={
            "TOOL_START": (tool_start,),
            "TOOL_END": (tool_end,),
            "FUNC_PREFIX": ("<function=",),
            "FUNC_END": ("</function>",),
            "PARAM_START": ("<parameter=",),
            "PARAM_END": ("</parameter>",),
            "CLOSE_ANGLE": (">",),
        },
        special=frozenset({"TOOL_START", "TOOL_END"}),
        regions={CONTENT: Region.CONTENT, P: Region.SKIP, N: Region.NAME, A: Region.ARGS, B: Region.SKIP},
        table=rules(
            (CONTENT, "TOOL_START", P, (START,)),
            (CONTENT, "FUNC_PREFIX", N, (START,)),
            (CONTENT, "TOOL_END", CONTENT, ()),
            (P, "FUNC_PREFIX", N, ()),
            (P, "TOOL_END", CONTENT, (END,)),
            (N, "CLOSE_ANGLE", A, (NAME_END,)),
            (N, "PARAM_START", A, (NAME_END, MARK)),
            (N, "FUNC_END", B, (NAME_END, ARGS_END)),
            (N, "TOOL_END", CONTENT, (END,)),
            (A, "PARAM_START", A, (MARK,)),
            (A, "PARAM_END", A, (MARK,), after_value),
            (A, "FUNC_END", B, (ARGS_END,), after_function),
            (A, "TOOL_END", CONTENT, (END,), after_call),
            (A, "TOOL_START", P, (START,)),
            (B, "TOOL_END", CONTENT, (END,)),
            (B, "TOOL_START", P, (START,)),
            (B, "FUNC_PREFIX", N, (START,)),
        ),
        codec=partial(XmlParamsCodec, param_start="PARAM_START", param_end="PARAM_END", trim="newline"),
        models=models,
        reference=reference,
    )


FORMATS = [
    function_xml_format(
        "qwen3_coder",
        aliases=("qwen3_xml",),
        models=("Qwen3-Coder", "Qwen3.5", "Qwen3.6", "MiMo"),
        reference="Qwen3-Coder-30B-A3B-Instruct chat template; vLLM qwen3_coder engine parser",
    ),
]
