"""DeepSeek V3 / V3.1 tool calls: a block of calls between DeepSeek's special tokens.

Wire formats::

    deepseek_v3 (DeepSeek-V3, R1; tokenizer_config.json chat template):
    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
    ```json
    {"location": "Paris"}
    ```<｜tool▁call▁end｜>
    <｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time
    ```json
    {"timezone": "UTC"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

    deepseek_v31 (DeepSeek-V3.1 chat template; one line, wrapped here):
    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"location": "Paris"}
    <｜tool▁call▁end｜><｜tool▁calls▁end｜>

The markers are added tokens 128806-128810 of the DeepSeek V3 vocabulary (matched by id when
ids are given). Content may precede the block and follow it. The arguments are JSON, which
decides where they end; a call whose JSON is invalid is not a call and its text, from
``<｜tool▁call▁begin｜>`` on, is content; so is a V3.1 call whose name the separator never
follows (the call's or the block's end comes first), rather than a name that runs on to the end
of the output. A block that yields no call is content whole, its
markers included (the engine's rule for blocks of calls). In V3 the call type before
``<｜tool▁sep｜>`` (``function``) is markup (``FormatSpec.call_markup``), and arguments written
without the ```json fence (the name, a newline, the JSON) are accepted; other text in a call's
markup (a broken marker, a type that is not ``function``) makes the call malformed.

Reference: deepseek-ai DeepSeek-V3 ``tokenizer_config.json`` chat template, DeepSeek-V3.1 chat
template (llama.cpp ``models/templates``); vLLM ``deepseek_v3`` / ``deepseek_v31`` parsers.
"""

from __future__ import annotations

from ..codecs import JsonArgsCodec
from ..engine.spec import ARGS_DONE, CONTENT, Act, FormatSpec, GrammarFacts, Region, rules

# the grammar cannot write what the template puts where the table skips
_CALL_TYPE = GrammarFacts(unsupported="the template writes the call type ('function') in a region the table skips")

_MARKERS = {
    "CALLS_BEGIN": ("<｜tool▁calls▁begin｜>",),
    "CALLS_END": ("<｜tool▁calls▁end｜>",),
    "CALL_BEGIN": ("<｜tool▁call▁begin｜>",),
    "CALL_END": ("<｜tool▁call▁end｜>",),
    "SEP": ("<｜tool▁sep｜>",),
}
_SPECIAL = frozenset(_MARKERS)
_MODELS_V3 = ("DeepSeek-V3", "DeepSeek-V3-0324", "DeepSeek-R1", "DeepSeek-R1-0528")

FORMATS = [
    FormatSpec(
        name="deepseek_v3",
        kind="tools",
        terminals={**_MARKERS, "FENCE_OPEN": ("```json",), "FENCE_CLOSE": ("```",), "OPEN_BRACE": ("{",)},
        special=_SPECIAL,
        regions={
            CONTENT: Region.CONTENT,
            "CALLS": Region.SKIP,
            "CALL_TYPE": Region.SKIP,
            "NAME": Region.NAME,
            "ARGS": Region.ARGS,
            "ARGS_AFTER": Region.SKIP,
        },
        table=rules(
            (CONTENT, "CALLS_BEGIN", "CALLS", ()),
            (CONTENT, "CALLS_END", CONTENT, ()),  # a stray closer is absorbed
            ("CALLS", "CALL_BEGIN", "CALL_TYPE", (Act.CALL_START,)),
            ("CALLS", "CALLS_END", CONTENT, ()),
            ("CALL_TYPE", "SEP", "NAME", ()),
            ("NAME", "FENCE_OPEN", "ARGS", (Act.NAME_END,)),
            ("NAME", "OPEN_BRACE", "ARGS", (Act.NAME_END, Act.ARG_MARKER)),  # the fence left out
            ("ARGS", ARGS_DONE, "ARGS_AFTER", ()),
            ("ARGS_AFTER", "FENCE_CLOSE", "ARGS_AFTER", ()),
            ("ARGS_AFTER", "CALL_END", "CALLS", (Act.CALL_END,)),
            ("ARGS_AFTER", "CALLS_END", CONTENT, (Act.CALL_END,)),
            ("ARGS_AFTER", "CALL_BEGIN", "CALL_TYPE", (Act.CALL_START,)),
        ),
        codec=JsonArgsCodec,
        call_markup=("function",),  # the call type, as the template writes it
        grammar=_CALL_TYPE,
        models=_MODELS_V3,
        reference="DeepSeek-V3 tokenizer_config.json chat template; vLLM deepseek_v3",
    ),
    FormatSpec(
        name="deepseek_v31",
        kind="tools",
        terminals=_MARKERS,
        special=_SPECIAL,
        regions={CONTENT: Region.CONTENT, "CALLS": Region.SKIP, "NAME": Region.NAME, "ARGS": Region.ARGS},
        table=rules(
            (CONTENT, "CALLS_BEGIN", "CALLS", ()),
            (CONTENT, "CALLS_END", CONTENT, ()),
            ("CALLS", "CALL_BEGIN", "NAME", (Act.CALL_START,)),
            ("CALLS", "CALLS_END", CONTENT, ()),
            ("NAME", "SEP", "ARGS", (Act.NAME_END,)),
            # a name the separator never follows: the call ends there and does not read
            ("NAME", "CALL_END", "CALLS", (Act.NAME_END, Act.CALL_END)),
            ("NAME", "CALLS_END", CONTENT, (Act.NAME_END, Act.CALL_END)),
            ("ARGS", "CALL_END", "CALLS", (Act.CALL_END,)),
            ("ARGS", "CALLS_END", CONTENT, (Act.CALL_END,)),
            ("ARGS", "CALL_BEGIN", "NAME", (Act.CALL_START,)),
        ),
        codec=JsonArgsCodec,
        grammar=_CALL_TYPE,
        models=("DeepSeek-V3.1", "DeepSeek-V3.1-Terminus"),
        reference="DeepSeek-V3.1 chat template; vLLM deepseek_v31",
    ),
]
