"""MiniCPM5 tool calls (``minicpm5``): XML functions with named parameters.

Wire format::

    <function name="get_weather">
    <param name="city">Shanghai</param>
    <param name="date">2024-06-27</param>
    </function>

Several ``<function>`` blocks may follow each other; text around them is content, and an
optional ``<|tool_call_start|>`` … ``<|tool_call_end|>`` wrapper around the blocks is dropped.
Names and keys are quoted with ``"`` or ``'`` (an ``id``, ``index`` or ``type`` attribute after them is
ignored; other text after them makes the call malformed: ``docs/rules.md``).
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

from ._xml_invoke import Quote, invoke_format

FORMATS = [
    invoke_format(
        "minicpm5",
        invoke=("<function name=", "</function>"),
        param=("<param name=", "</param>"),
        block=("<|tool_call_start|>", "<|tool_call_end|>"),
        opens="invoke",
        bare=True,
        stray_end=True,
        names=Quote.ALONE,
        keys=Quote.ALONE,
        trim="strip",
        validate_names=True,
        models=("MiniCPM5-1B", "MiniCPM5"),
        reference="vLLM minicpm5xml_tool_parser.py (regexes, start token, stripping, name validation)",
    ),
]
