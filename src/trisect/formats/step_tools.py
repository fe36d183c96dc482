"""StepFun tool calls: Step-3 (``step3``, steptml) and Step-3.5 (``step3p5``, Qwen3-Coder XML).

Step-3 wire format (FORMATS.md, recorded from memory)::

    <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">
    <steptml:parameter name="location">Paris</steptml:parameter></steptml:invoke><｜tool_call_end｜>
    <｜tool_calls_end｜>

(one line on the wire; wrapped here). A call opens at ``<｜tool_call_begin｜>``; the call type
(``function``) before ``<｜tool_sep｜>`` is envelope. Parameter names may be quoted with ``"``,
``'`` or not at all; values are kept verbatim and typed by the tool schema (no template is
available to say which whitespace is formatting, and the wire format puts none inside a
value). Recovered: a missing ``</steptml:invoke>`` before ``<｜tool_call_end｜>``, a missing
``<｜tool_call_end｜>`` before the next ``<｜tool_call_begin｜>`` or the section's end, a missing
``</steptml:parameter>`` before the next parameter. A closing tag inside a value counts only
where the structure goes on after it. The ``｜…｜`` markers are special tokens.

Step-3.5 uses the Qwen3-Coder grammar unchanged (``<tool_call>`` / ``<function=…>`` /
``<parameter=…>``; see ``qwen3_coder``).

Reference: no Step-3 or Step-3.5 chat template or tokenizer is staged here. FORMATS.md: vLLM
``step3`` (Step3ToolParser; markers "(mem)") and ``step3p5`` ("Qwen3-Coder-style XML (mem,
unverified)"). Both are built from those records and should be checked against the models'
templates.
"""

from __future__ import annotations

from functools import partial

from ..codecs import XmlParamsCodec
from ..engine.spec import CONTENT, Act, FormatSpec, Region, rules
from .minimax_tools import unquote
from .qwen3_coder import function_xml_format

S, H, N, A, E = "TOOL_SECTION", "TOOL_HEADER", "TOOL_NAME", "TOOL_ARGS", "TOOL_AFTER"
START, END, NAME_END, MARK, ARGS_END = Act.CALL_START, Act.CALL_END, Act.NAME_END, Act.ARG_MARKER, Act.ARGS_END

SECTION_START, SECTION_END = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool_call_begin｜>", "<｜tool_call_end｜>", "<｜tool_sep｜>"
INVOKE, INVOKE_END = "<steptml:invoke name=", "</steptml:invoke>"
PARAM, PARAM_END = "<steptml:parameter name=", "</steptml:parameter>"
AFTER_CALL = (CALL_BEGIN, SECTION_END)
AFTER_INVOKE = (CALL_END, *AFTER_CALL)
AFTER_VALUE = (PARAM, INVOKE_END, *AFTER_INVOKE)


def _parse_key(text: str) -> tuple[str, tuple[str, ...] | None]:
    return unquote(text), None


def _parse_name(text: str) -> tuple[str, str | None]:
    return unquote(text), None


FORMATS = [
    FormatSpec(
        name="step3",
        kind="tools",
        terminals={
            "SECTION_START": (SECTION_START,),
            "SECTION_END": (SECTION_END,),
            "TOOL_START": (CALL_BEGIN,),
            "TOOL_END": (CALL_END,),
            "TOOL_SEP": (SEP,),
            "INVOKE": (INVOKE,),
            "INVOKE_END": (INVOKE_END,),
            "PARAM_START": (PARAM,),
            "PARAM_END": (PARAM_END,),
            "CLOSE_ANGLE": (">",),
        },
        special=frozenset({"SECTION_START", "SECTION_END", "TOOL_START", "TOOL_END", "TOOL_SEP"}),
        regions={
            CONTENT: Region.CONTENT,
            S: Region.SKIP,
            H: Region.SKIP,
            N: Region.NAME,
            A: Region.ARGS,
            E: Region.SKIP,
        },
        table=rules(
            (CONTENT, "SECTION_START", S, ()),
            (S, "TOOL_START", H, (START,)),
            (S, "SECTION_END", CONTENT, ()),
            (H, "TOOL_SEP", H, ()),
            (H, "INVOKE", N, ()),
            (H, "TOOL_END", S, (END,)),
            (N, "CLOSE_ANGLE", A, (NAME_END,)),
            (N, "PARAM_START", A, (NAME_END, MARK)),
            (A, "PARAM_START", A, (MARK,)),
            (A, "PARAM_END", A, (MARK,), AFTER_VALUE),
            (A, "INVOKE_END", E, (ARGS_END,), AFTER_INVOKE),
            (A, "TOOL_END", S, (END,), AFTER_CALL),
            (E, "TOOL_END", S, (END,)),
            (E, "TOOL_START", H, (START,)),
            (E, "SECTION_END", CONTENT, (END,)),
        ),
        codec=partial(
            XmlParamsCodec, param_start="PARAM_START", param_end="PARAM_END", parse_key=_parse_key, trim="none"
        ),
        parse_name=_parse_name,
        models=("Step-3",),
        reference="FORMATS.md step3 (vLLM Step3ToolParser; markers recorded from memory)",
    ),
    function_xml_format(
        "step3p5",
        models=("Step-3.5",),
        reference="FORMATS.md step3p5 (Qwen3-Coder-style XML, unverified)",
    ),
]
