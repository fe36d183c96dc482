"""PLaMo 3 (``plamo3``): ``<|plamo:begin_think:plamo|>`` reasoning and JSON tool requests.

Wire format (one line on the wire; wrapped here)::

    <|plamo:begin_think:plamo|>REASONING<|plamo:end_think:plamo|>CONTENT
    <|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>
    <|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|>
    <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{"city": "Paris"}
    <|plamo:end_tool_arguments:plamo|>
    <|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>

Reasoning: on unless ``enable_thinking`` is false; the output starts inside the block; a start
marker in content opens one again; the tool-request block while thinking ends reasoning.
``<|plamo:tag|>`` (end of turn) ends reasoning and is dropped wherever it appears. Tool calls:
a block of requests, each a name element and an arguments element whose body is the JSON
arguments object; the call ends at ``<|plamo:end_tool_request:plamo|>``. The markers are split
into several tokens by the PLaMo tokenizer, so they are matched as text; ``<|plamo:tag|>`` is
one special token.

Reference: vLLM 0.33 ``vllm/parser/plamo3.py`` (``plamo3_config``: terminals, transitions,
``enable_thinking`` default true, ``tool_args_json``). No template or tokenizer is staged.
"""

from __future__ import annotations

from ..codecs import JsonArgsCodec
from ..engine.spec import CONTENT, Act, FormatSpec, Region, rules
from ._think import think_format, thinking_switch

EOT = "<|plamo:tag|>"
TOOL_REQUESTS_START = "<|plamo:begin_tool_requests:plamo|>"
P, Q, N, H, A, B = "TOOL_PREAMBLE", "TOOL_REQUEST", "TOOL_NAME", "TOOL_NAMED", "TOOL_ARGS", "TOOL_BETWEEN"

_TERMINALS = {
    "TOOL_REQUESTS_START": (TOOL_REQUESTS_START,),
    "TOOL_REQUESTS_END": ("<|plamo:end_tool_requests:plamo|>",),
    "TOOL_REQUEST_START": ("<|plamo:begin_tool_request:plamo|>",),
    "TOOL_REQUEST_END": ("<|plamo:end_tool_request:plamo|>",),
    "TOOL_NAME_START": ("<|plamo:begin_tool_name:plamo|>",),
    "TOOL_NAME_END": ("<|plamo:end_tool_name:plamo|>",),
    "TOOL_ARGS_START": ("<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>",),
    "TOOL_ARGS_END": ("<|plamo:end_tool_arguments:plamo|>",),
    "EOT": (EOT,),
}

FORMATS = [
    think_format(
        "plamo3",
        start=("<|plamo:begin_think:plamo|>",),
        end=("<|plamo:end_think:plamo|>",),
        special=frozenset({"EOT"}),
        opens_in_content=True,
        initial=thinking_switch("enable_thinking", default=True),
        ends_on={"TOOL_REQUESTS_START": (TOOL_REQUESTS_START,), "EOT": (EOT,)},
        drop_in_content=("EOT",),
        models=("PLaMo 3",),
        reference="vLLM 0.33 parser/plamo3.py",
    ),
    FormatSpec(
        name="plamo3",
        kind="tools",
        terminals=_TERMINALS,
        special=frozenset({"EOT"}),
        regions={
            CONTENT: Region.CONTENT,
            P: Region.SKIP,
            Q: Region.SKIP,
            N: Region.NAME,
            H: Region.SKIP,
            A: Region.ARGS,
            B: Region.SKIP,
        },
        table=rules(
            (CONTENT, "TOOL_REQUESTS_START", P, ()),
            (CONTENT, "EOT", CONTENT, ()),
            # a request opens the call (its text is content if it is not one); vLLM opens it at the
            # name, which may also come without the request's opener
            (P, "TOOL_REQUEST_START", Q, (Act.CALL_START,)),
            (P, "TOOL_NAME_START", N, (Act.CALL_START,)),
            (Q, "TOOL_NAME_START", N, ()),
            (N, "TOOL_NAME_END", H, (Act.NAME_END,)),
            (H, "TOOL_ARGS_START", A, ()),
            (A, "TOOL_ARGS_END", B, (Act.ARGS_END,)),
            (B, "TOOL_REQUEST_END", P, (Act.CALL_END,)),
            (H, "TOOL_REQUEST_END", P, (Act.CALL_END,)),
            (P, "TOOL_REQUESTS_END", CONTENT, ()),
            *[(state, "EOT", CONTENT, (Act.CALL_END,)) for state in (Q, N, H, A, B)],
            (P, "EOT", CONTENT, ()),
        ),
        codec=JsonArgsCodec,
        models=("PLaMo 3",),
        reference="vLLM 0.33 parser/plamo3.py",
    ),
]
