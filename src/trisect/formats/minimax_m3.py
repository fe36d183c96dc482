"""MiniMax-M3 (``minimax_m3``): ``<mm:think>`` reasoning, and the M2 invoke grammar with every
tag prefixed by the namespace marker ``]<]minimax[>[`` and parameters named by their own tags.

Wire format::

    <mm:think>REASONING</mm:think>CONTENT
    ]<]minimax[>[<tool_call>
    ]<]minimax[>[<invoke name="search">
    ]<]minimax[>[<query>北京天气]<]minimax[>[</query>
    ]<]minimax[>[<limit>6]<]minimax[>[</limit>
    ]<]minimax[>[</invoke>
    ]<]minimax[>[</tool_call>

Reasoning: the output starts in content unless ``chat_template_kwargs.thinking_mode`` is
``"enabled"`` (the template then pre-fills ``<mm:think>``); ``<mm:think>`` anywhere in content
opens a block. The markers are matched as text (the tokenizer has them as vocabulary entries,
but generated marker text may be split into smaller tokens). A stray ``</mm:think>`` in content
is content text, as vLLM keeps it (vLLM drops one at the very start of an output that did not
start in reasoning; here that one is content text too).

Tool calls: a block holds one or more invokes; text before it is content. A parameter opens
with the namespace marker and ``<KEY>``; its value ends at the namespace marker of the closer
``]<]minimax[>[</KEY>`` (or of the next parameter, an invoke end or a block end: a value left
open is closed by what follows); the ``KEY>`` after ``]<]minimax[>[</`` is formatting. A bare
``</KEY>`` without the namespace marker is value text. Names quoted with ``"``, ``'`` or not at
all, and they must be among the request's tools. Values are kept verbatim (vLLM coerces the
raw element text by the schema) and typed by the tool schema (``codecs/schema.py``). Not read
here: parameters whose elements nest (an object or array rendered as child elements, list
items as ``<item>``), which vLLM converts by the schema.

Reference: vLLM 0.33 ``vllm/reasoning/minimax_m3_reasoning_parser.py`` (``<mm:think>`` /
``</mm:think>``, ``thinking_mode == "enabled"``) and ``vllm/parser/minimax_m3.py`` (namespace,
the three ``<invoke name=`` quote styles, elements named after the argument, values coerced
from raw text). No template or tokenizer is staged here.
"""

from __future__ import annotations

from ..engine.spec import CONTENT, REASONING, GrammarFacts
from ..engine.stream_options import StreamOptions
from ._think import think_format
from ._xml_invoke import Quote, invoke_format

NS = "]<]minimax[>["


def _thinking_mode(request: StreamOptions) -> str:
    """thinking when chat_template_kwargs thinking_mode is "enabled" (the template pre-fills the start)"""
    return REASONING if request.chat_template_kwargs.get("thinking_mode") == "enabled" else CONTENT


FORMATS = [
    think_format(
        "minimax_m3",
        start=("<mm:think>",),
        end=("</mm:think>",),
        special=False,
        opens_in_content=True,
        initial=_thinking_mode,
        models=("MiniMax-M3",),
        reference="vLLM 0.33 minimax_m3_reasoning_parser.py",
    ),
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
        trim="none",
        validate_names=True,
        grammar=GrammarFacts(unsupported="parameters are named by their own tags, which no xgrammar style writes"),
        models=("MiniMax-M3",),
        reference="vLLM 0.33 parser/minimax_m3.py",
    ),
]
