"""MiniMax-M3 tool calls (``minimax_m3``): the M2 invoke grammar, every tag prefixed by the
namespace marker ``]<]minimax[>[``, parameters named by their tag.

Wire format::

    ]<]minimax[>[<tool_call>
    ]<]minimax[>[<invoke name="search">
    ]<]minimax[>[<query>北京天气</query>
    ]<]minimax[>[<limit>6]<]minimax[>[</limit>
    ]<]minimax[>[</invoke>
    ]<]minimax[>[</tool_call>

A block holds one or more invokes; text before it is content. A parameter opens with the
namespace marker and ``<KEY>``; its value ends at the namespace marker of the closer
``]<]minimax[>[</KEY>`` (or of the next parameter, an invoke end or a block end: a value left
open is closed by what follows). A bare ``</KEY>`` without the namespace marker, seen in some
third-party reports, is value text here: the namespaced closer is the documented one. Names quoted
with ``"``, ``'`` or not at all; names must be among the request's tools (``validate_names``, as
for M2). Values are stripped and typed by the tool schema (``codecs/schema.py``).

Reference: vLLM's ``minimax_m3`` parser lives in Rust (``vllm._rust_tool_parser``) and is not
available here; the grammar is taken from FORMATS.md (start token
``]<]minimax[>[<tool_call>``, "prefixes each structural tag with the MiniMax namespace marker,
allows multiple ``<invoke>``, parameter-name XML tags") and from published descriptions of
M3 outputs (AMD's port notes and client-side parsers). No template or tokenizer is here.
"""

from __future__ import annotations

from ..codecs import XmlParamsCodec
from ..engine.spec import CONTENT, Act, FormatSpec, Region, rules
from .minimax_tools import unquote

B, N, A = "TOOL_BLOCK", "TOOL_NAME", "TOOL_ARGS"
START, END, NAME_END, MARK = Act.CALL_START, Act.CALL_END, Act.NAME_END, Act.ARG_MARKER

NS = "]<]minimax[>["


def _parse_name(text: str) -> tuple[str, str | None]:
    return unquote(text), None


def _codec(tools):  # type: ignore[no-untyped-def]
    """Keys are the tag names: ``<KEY>`` is read up to ``>`` with no attributes."""
    return XmlParamsCodec(
        tools, param_start="PARAM_OPEN", param_end="PARAM_CLOSE", parse_key=lambda t: (t.strip(), None), trim="strip"
    )


FORMATS = [
    FormatSpec(
        name="minimax_m3",
        kind="tools",
        terminals={
            "TOOL_START": (NS + "<tool_call>",),
            "TOOL_END": (NS + "</tool_call>",),
            "INVOKE": (NS + "<invoke name=",),
            "INVOKE_END": (NS + "</invoke>",),
            "PARAM_OPEN": (NS + "<",),
            "PARAM_CLOSE": (NS + "</",),
            "CLOSE_ANGLE": (">",),
        },
        regions={CONTENT: Region.CONTENT, B: Region.SKIP, N: Region.NAME, A: Region.ARGS},
        table=rules(
            (CONTENT, "TOOL_START", B, ()),
            (CONTENT, "TOOL_END", CONTENT, ()),
            (B, "INVOKE", N, (START,)),
            (B, "TOOL_END", CONTENT, ()),
            (N, "CLOSE_ANGLE", A, (NAME_END,)),
            (N, "PARAM_OPEN", A, (NAME_END, MARK)),
            (N, "INVOKE_END", B, (END,)),
            (A, "PARAM_OPEN", A, (MARK,)),
            (A, "PARAM_CLOSE", A, (MARK,)),
            (A, "INVOKE_END", B, (END,)),
            (A, "INVOKE", N, (START,)),
            (A, "TOOL_END", CONTENT, (END,)),
        ),
        codec=_codec,
        validate_names=True,
        parse_name=_parse_name,
        extra={"grammar_unsupported": "parameters are named by their own tags, which no xgrammar style writes"},
        models=("MiniMax-M3",),
        reference="FORMATS.md (vLLM minimax_m3, Rust); published descriptions of MiniMax-M3 outputs",
    ),
]
