"""dots (``dots``) tool calls: MiniMax-M2-style invokes inside ``<dots_function_call>``.

Wire format::

    <dots_function_call>
    <invoke name="search">
    <parameter name="query">weather in Shanghai</parameter>
    </invoke>
    </dots_function_call>

Several blocks, and several invokes per block, may follow each other; text before, between and
after them is content, and a stray ``</dots_function_call>`` in content is dropped. Names and
keys may be quoted with ``"``, ``'`` or not at all; names must be among the request's tools (a
call naming another is no call: its text is content). Values are stripped of surrounding
whitespace and typed by the tool schema. A closing tag inside a value counts only where the
structure goes on after it.

Not read here: a block whose body is one JSON ``{"name": …, "arguments": …}`` object, which vLLM
accepts as a fallback.

Reference: vLLM 0.33 ``vllm/tool_parsers/dots_tool_parser.py`` (``tool_call_start_token`` /
``tool_call_end_token``, ``_invoke_regex`` / ``_parameter_regex``, ``_extract_name``, values
``strip()``-ed, ``_validated_call`` against the request's tools). No template or tokenizer is
staged here.
"""

from __future__ import annotations

from ._xml_invoke import invoke_format

FORMATS = [
    invoke_format(
        "dots",
        invoke=("<invoke name=", "</invoke>"),
        param=("<parameter name=", "</parameter>"),
        block=("<dots_function_call>", "</dots_function_call>"),
        opens="invoke",
        special=False,
        stray_end=True,
        trim="strip",
        style="minimax_xml",
        validate_names=True,
        models=("dots.llm",),
        reference="vLLM 0.33 tool_parsers/dots_tool_parser.py",
    ),
]
