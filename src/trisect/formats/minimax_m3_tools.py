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

from ..engine.spec import GrammarFacts
from ._xml_invoke import Quote, invoke_format

NS = "]<]minimax[>["

FORMATS = [
    invoke_format(
        "minimax_m3",
        # a parameter is <KEY>VALUE</KEY>: the key is read from its opener up to ">", and the
        # closer's "KEY>" after the namespaced "</" is formatting between parameters
        invoke=(NS + "<invoke name=", NS + "</invoke>"),
        param=(NS + "<", NS + "</"),
        block=(NS + "<tool_call>", NS + "</tool_call>"),
        opens="invoke",
        special=False,
        stray_end=True,
        follow=False,
        keys=Quote.NONE,
        trim="strip",
        validate_names=True,
        grammar=GrammarFacts(unsupported="parameters are named by their own tags, which no xgrammar style writes"),
        models=("MiniMax-M3",),
        reference="FORMATS.md (vLLM minimax_m3, Rust); published descriptions of MiniMax-M3 outputs",
    ),
]
