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

Built by ``_xml_invoke.invoke_format`` (the call opens at ``<tool_call>``, one function per
call element; ``function_xml_format`` is the same grammar in another wrapper, for Seed-OSS and
Step-3.5). The same grammar under other names: ``mimo`` (Xiaomi MiMo: values kept verbatim, no
newline is trimmed; vLLM ``MiMoParser``) and ``step5`` (StepFun Step-5; vLLM ``Step5ToolParser``
only keeps content whitespace, which fields here are stripped of as a whole).

Reference: Qwen/Qwen3-Coder-30B-A3B-Instruct chat template; vLLM ``qwen3_coder`` engine tool
parser.
"""

from __future__ import annotations

from ..engine.spec import FormatSpec
from ._xml_invoke import Quote, invoke_format


def function_xml_format(
    name: str,
    *,
    tool_start: str = "<tool_call>",
    tool_end: str = "</tool_call>",
    trim: str = "newline",
    models: tuple[str, ...],
    reference: str,
    aliases: tuple[str, ...] = (),
) -> FormatSpec:
    """The ``<function=NAME><parameter=K>V</parameter></function>`` grammar inside the family's
    call wrapper (``<tool_call>`` for Qwen3-Coder, ``<seed:tool_call>`` for Seed-OSS); ``trim``:
    the value rule (``newline``: the template's wrapping newlines; MiMo keeps values verbatim)."""
    return invoke_format(
        name,
        invoke=("<function=", "</function>"),
        param=("<parameter=", "</parameter>"),
        call=(tool_start, tool_end),
        opens="call",
        bare=True,
        stray_end=True,
        names=Quote.NONE,
        keys=Quote.NONE,
        trim=trim,
        style="qwen_xml",
        models=models,
        reference=reference,
        aliases=aliases,
    )


FORMATS = [
    function_xml_format(
        "qwen3_coder",
        aliases=("qwen3_xml",),
        models=("Qwen3-Coder", "Qwen3.5", "Qwen3.6", "MiniCPM-V"),
        reference="Qwen3-Coder-30B-A3B-Instruct chat template; vLLM qwen3_coder engine parser",
    ),
    function_xml_format(
        "mimo",
        trim="none",
        models=("MiMo-7B-RL", "MiMo-V2-Flash"),
        reference="vLLM 0.33 parser/mimo.py (the Qwen3 grammar; values verbatim: trim_newlines=False)",
    ),
    function_xml_format(
        "step5",
        models=("Step-5",),
        reference="vLLM 0.33 tool_parsers/step5_tool_parser.py (the Qwen3-Coder grammar, content whitespace kept)",
    ),
]
