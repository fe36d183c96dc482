"""Gemma 4 (``gemma4``) and FunctionGemma (``functiongemma``) tool calls: a custom argument
grammar (``trisect.codecs.gemma_args``), not JSON.

Gemma 4 wire format::

    <|tool_call>call:get_weather{location:<|"|>Paris<|"|>,days:3}<tool_call|>

FunctionGemma wire format::

    <start_function_call>call:get_weather{location:<escape>Paris<escape>,days:3}<end_function_call>

``call:`` introduces the name, which runs to the ``{`` that opens the arguments. Arguments are
``key:value`` pairs: strings between the family's delimiter (``<|"|>`` / ``<escape>``) are raw
text (streamed as they arrive; a marker or a ``}`` inside them is string text); bare values
(numbers, ``true``, ``false``, ``null``) are written once complete; objects and arrays nest.
The call ends at the ``}`` that closes its arguments (the closing marker that follows is
absorbed), so a call is complete without its closer and text after it is content. Arguments
that do not follow the grammar make the block no call (its text is content). Text between
blocks is content. In Gemma 4 a closer repeated right after a call's closer
(``…}<tool_call|><tool_call|>``) is absorbed too, as vLLM's table absorbs a closer in content;
one after text is text. The call markers are special tokens; a Gemma 4 call opener met inside
the thought channel ends reasoning (the ``gemma4`` reasoning format).

Reference: no Gemma 4 or FunctionGemma template or tokenizer is staged here. Gemma 4: vLLM 0.33
``vllm/parser/gemma4.py`` (``gemma4_config``: ``<|tool_call>``, ``<tool_call|>``, ``call:``, ``{``,
``(CONTENT, TOOL_END)`` absorbed; ``_parse_gemma4_args``: strings between ``<|"|>``, nested
objects and arrays, bare values withheld while partial). FunctionGemma: vLLM 0.33
``vllm/tool_parsers/functiongemma_tool_parser.py`` (``<start_function_call>call:NAME{…}
<end_function_call>``, ``key:<escape>value<escape>`` pairs). Neither source says whether a model
puts several ``call:`` in one block; trisect accepts it.
"""

from __future__ import annotations

from ..codecs import GemmaArgs
from ..engine.spec import ARGS_DONE, ARGS_FAILED, CONTENT, FIRST_TEXT, Act, FormatSpec, Region, rules

P, N, A, B = "TOOL_BLOCK", "TOOL_NAME", "TOOL_ARGS", "TOOL_AFTER"
CLOSED = "TOOL_CLOSED"  # right after a call's closer: more closers are absorbed until the first text
START, END, NAME_END, MARK, ARGS_END = Act.CALL_START, Act.CALL_END, Act.NAME_END, Act.ARG_MARKER, Act.ARGS_END


def gemma_format(
    name: str, *, start: str, end: str, quote: str, models: tuple[str, ...], reference: str, repeated_end: bool = False
) -> FormatSpec:
    """``repeated_end``: closers repeated right after a call's closer are absorbed."""
    regions = {CONTENT: Region.CONTENT, P: Region.SKIP, N: Region.NAME, A: Region.ARGS, B: Region.SKIP}
    after_close: tuple[tuple[str, str, str, tuple[Act, ...]], ...] = ()
    if repeated_end:
        regions[CLOSED] = Region.CONTENT
        after_close = (
            (CLOSED, "TOOL_END", CLOSED, ()),
            (CLOSED, "TOOL_START", P, (START,)),
            (CLOSED, FIRST_TEXT, CONTENT, ()),
        )
    return FormatSpec(
        name=name,
        kind="tools",
        terminals={"TOOL_START": (start,), "TOOL_END": (end,), "CALL_PREFIX": ("call:",), "OPEN_BRACE": ("{",)},
        special=frozenset({"TOOL_START", "TOOL_END"}),
        regions=regions,
        table=rules(
            (CONTENT, "TOOL_START", P, (START,)),
            (P, "CALL_PREFIX", N, ()),
            (P, "TOOL_END", CONTENT, (END,)),
            (N, "OPEN_BRACE", A, (NAME_END, MARK)),
            (N, "TOOL_END", CONTENT, (END,)),
            (A, ARGS_DONE, B, (ARGS_END, END)),
            (A, ARGS_FAILED, CONTENT, (END,)),  # not a call: the rest, closer included, is content
            (A, "TOOL_END", CONTENT, (END,)),
            (B, "TOOL_END", CLOSED if repeated_end else CONTENT, ()),
            (B, "TOOL_START", P, (START,)),
            (B, "CALL_PREFIX", N, (START,)),
            *after_close,
        ),
        codec=GemmaArgs(quote),
        models=models,
        reference=reference,
    )


FORMATS = [
    gemma_format(
        "gemma4",
        start="<|tool_call>",
        end="<tool_call|>",
        quote='<|"|>',
        repeated_end=True,  # vLLM parser/gemma4.py:438-442 absorbs a closer met in content
        models=("Gemma 4",),
        reference="vLLM 0.33 parser/gemma4.py",
    ),
    gemma_format(
        "functiongemma",
        start="<start_function_call>",
        end="<end_function_call>",
        quote="<escape>",
        models=("FunctionGemma",),
        reference="vLLM 0.33 functiongemma_tool_parser.py",
    ),
]
