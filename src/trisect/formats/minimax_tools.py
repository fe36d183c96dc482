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
text, kept byte for byte (the template writes a string as it is, with nothing around it:
indentation and end newlines are the value's), and typed by the tool schema: the template
writes everything but strings with ``tojson``. Whitespace
between the tags is formatting. A stray ``</minimax:tool_call>`` in content is absorbed.

Recovered malformed shapes: a missing ``</invoke>`` before the next ``<invoke``, a missing
``</parameter>`` before the next ``<parameter``, a name not among the tools (that call's text
is content). An unfinished call is not a call.

Marker text inside a value: ``</parameter>`` ends a value only when what follows, after
whitespace, is ``<parameter name=``, ``</invoke>``, ``<invoke name=`` or
``</minimax:tool_call>``; ``</invoke>`` inside an open value only before ``<invoke name=`` or
``</minimax:tool_call>``; ``</minimax:tool_call>`` only before ``<minimax:tool_call>`` or at the
end of the output. Any other closer the output ends with inside a value is value text (a
cut-off value never completes a call). ``<parameter name=`` inside a value ends it only before
a new key of the tool; ``<invoke name=`` there is value text.
``<minimax:tool_call>`` / ``</minimax:tool_call>`` are special tokens (the template names them
so); the rule applies to them too, since the template tokenizes that text inside a value as the
same tokens.

Reasoning: ``minimax_m2`` (the prompt opens ``<think>``; the output closes it).

Reference: MiniMax-M2 chat template (tests/data/templates/MiniMax-M2.jinja, from llama.cpp);
vLLM 0.33 ``vllm/parser/minimax_m2.py`` (``minimax_m2_config``: ``<invoke name=`` with ``"``, ``'``
or no quote, the name ending at ``">``, ``'>`` or ``>``; ``validate_tool_names=True``;
``(CONTENT, TOOL_END)`` absorbed). vLLM 0.33 keeps values verbatim too (``_minimax_m2_parse_args``);
older vLLM parsers stripped them, which loses a code value's indentation.
"""

from __future__ import annotations

from ._xml_invoke import invoke_format

FORMATS = [
    invoke_format(
        "minimax_m2",
        invoke=("<invoke name=", "</invoke>"),
        param=("<parameter name=", "</parameter>"),
        block=("<minimax:tool_call>", "</minimax:tool_call>"),
        opens="invoke",
        stray_end=True,
        trim="none",
        style="minimax_xml",
        validate_names=True,
        models=("MiniMax-M2", "MiniMax-M2.1", "MiniMax-M2.5"),
        reference="MiniMax-M2 chat template; vLLM minimax_m2 engine parser",
    ),
]
