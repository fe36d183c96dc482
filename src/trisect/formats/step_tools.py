"""StepFun tool calls: Step-3 (``step3``, steptml) and Step-3.5 (``step3p5``, Qwen3-Coder XML).

Step-3 wire format::

    <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">
    <steptml:parameter name="location">Paris</steptml:parameter></steptml:invoke><｜tool_call_end｜>
    <｜tool_calls_end｜>

(one line on the wire; wrapped here). A call opens at ``<｜tool_call_begin｜>``; the call type
(``function``) before ``<｜tool_sep｜>`` is envelope. Parameter names may be quoted with ``"``,
``'`` or not at all; a value is the text between its tags, byte for byte (the markup writes
nothing around it), typed by the tool schema. vLLM ``.strip()``-s every value, which loses a code
value's indentation and end newline. Recovered: a missing ``</steptml:invoke>`` before
``<｜tool_call_end｜>``, a missing ``<｜tool_call_end｜>`` before the next ``<｜tool_call_begin｜>``
or the section's end, a missing ``</steptml:parameter>`` before the next parameter. A closing
tag inside a value counts only where the structure goes on after it. The ``｜…｜`` markers are special tokens.

Step-3.5 uses the Qwen3-Coder grammar unchanged (``<tool_call>`` / ``<function=…>`` /
``<parameter=…>``; see ``qwen3_coder``).

Reference: vLLM 0.33 ``vllm/tool_parsers/step3_tool_parser.py`` (the ``｜…｜`` tokens, the
``function<｜tool_sep｜>`` call type, ``<steptml:invoke name="…">`` /
``<steptml:parameter name="…">(.*?)</steptml:parameter>``, values cast by the schema) and
``step3p5_tool_parser.py`` (the Qwen3-Coder engine grammar). No Step template or
tokenizer is staged here.
"""

from __future__ import annotations

from ._xml_invoke import invoke_format
from .qwen3_coder import function_xml_format

FORMATS = [
    invoke_format(
        "step3",
        invoke=("<steptml:invoke name=", "</steptml:invoke>"),
        param=("<steptml:parameter name=", "</steptml:parameter>"),
        block=("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"),
        call=("<｜tool_call_begin｜>", "<｜tool_call_end｜>"),
        call_type_sep="<｜tool_sep｜>",
        opens="call",
        trim="none",
        models=("Step-3",),
        reference="vLLM 0.33 step3_tool_parser.py",
    ),
    function_xml_format(
        "step3p5",
        models=("Step-3.5",),
        reference="vLLM 0.33 step3p5_tool_parser.py (the Qwen3-Coder grammar)",
    ),
]
