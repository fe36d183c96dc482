"""Pythonic tool calls: a Python list of calls with literal keyword arguments.

Wire formats::

    [get_weather(city="San Francisco", metric="celsius"), get_time(tz='UTC')]       pythonic
    <|python_tag|>[get_weather(city="San Francisco")]                                 pythonic (Llama 3.2)
    [get_weather(city="San Francisco"), get_weather(city="Seattle")]                  llama4_pythonic
    <|python_start|>[get_weather(city="Paris")]<|python_end|>                         llama4_pythonic
    <|tool_call_start|>[get_status(id="1"), get_time()]<|tool_call_end|>              lfm2
    <function_calls>
    get_weather(city="Paris")
    get_time(tz="UTC")
    </function_calls>                                                                 olmo3

The table owns the list (``[`` opens the first call, ``,`` the next, ``]`` closes the list;
OLMo 3: ``<function_calls>`` opens the first call and a newline before a name the next) and
``PythonicCallCodec`` reads each ``name(key=literal, …)``: literals only, never evaluated (see
``trisect.codecs.pythonic``). A ``[`` that does not begin a call (``[1]``, ``[link](url)``)
is content with everything after it; so is a call that breaks off (its text, markers
included). A list is all of its text or none (``FormatSpec.whole_list``, bare or between
markers): one with a call that does not read, or text other than whitespace between its calls,
is content whole, markers included; one the output ends inside (``[f(a=1), g(b="Ro``) is the
message's ``unfinished_call``, all of it; none of their calls stand. ``pythonic`` and
``llama4_pythonic`` read a list anywhere in the content, as the model writes it bare; ``lfm2``
and ``olmo3`` only inside their markers. Llama 3.2's
``<|python_tag|>`` before a list, Llama 4's ``<|python_start|>`` / ``<|python_end|>`` around it
are dropped. Names are not validated against the tools (as in vLLM).

Reference: Meta's prompt-format documents with real model responses
(``llama3_2_text_prompt_format.md``, ``llama3_3_prompt_format.md``,
``llama4_prompt_format.md`` of meta-llama/llama-models; Llama 4 tokenizer:
``<|python_start|>`` = 200016, ``<|python_end|>`` = 200017); vLLM ``pythonic``,
``llama4_pythonic`` tool parsers; vLLM 0.33 ``vllm/tool_parsers/lfm2_tool_parser.py``
(``<|tool_call_start|>`` / ``<|tool_call_end|>``, special tokens of the LFM2 tokenizer) and
``olmo3_tool_parser.py`` (``<function_calls>(.*?)</function_calls>``, one call per non-empty
line joined into a list). No chat template or model output of OLMo 3 or LFM2 is staged.

OLMo 3 and LFM2 read each argument's ``'…'`` string raw (``RawStringCallCodec``): their templates
write ``key='`` + value + ``'`` with no escaping (``vllm-tool_chat_template_olmo3.jinja`` lines
61-62, ``LFM2.5-8B-A1B.jinja`` lines 5-6, in ``tests/data/detect/heldout``), so a backslash and a
newline there are the value's characters. vLLM 0.33's ``olmo3`` and ``lfm2`` parsers read them as
Python escapes (``ast.literal_eval``), which turns the ``\\t`` of ``C:\\path\\to`` into a tab and
drops a block with a raw newline into content: trisect follows the template, not vLLM, there.
"""

from __future__ import annotations

import string
from typing import Any

from ..codecs.pythonic import PythonicCallCodec, RawStringCallCodec
from ..engine.spec import ARGS_DONE, ARGS_FAILED, CONTENT, STRAY_TEXT, Act, FormatSpec, Region, rules

_LIST = {"LIST_START": ("[",), "SEP": (",",), "LIST_END": ("]",)}
_CALL_ENDS = (("CALL", ARGS_DONE, "AFTER", (Act.CALL_END,)),)
# a newline opens the next OLMo 3 call only before a name (not before </function_calls>)
_NAME_START = tuple(string.ascii_letters + "_")


def _bare_list(name: str, wrap: tuple[str, str] | None, **kw: Any) -> FormatSpec:
    """A list of calls anywhere in the content, optionally between two markers that are dropped."""
    terminals = dict(_LIST)
    rows: list[tuple[Any, ...]] = [
        (CONTENT, "LIST_START", "CALL", (Act.CALL_START,)),
        *_CALL_ENDS,
        ("CALL", ARGS_FAILED, CONTENT, (Act.CALL_END,)),
        ("AFTER", "SEP", "CALL", (Act.CALL_START,)),
        ("AFTER", "LIST_END", CONTENT, ()),
        # only a "," or the "]" may follow a call of the list: other text breaks it (content)
        ("AFTER", STRAY_TEXT, CONTENT, (Act.LIST_BREAK,)),
    ]
    special: set[str] = set()
    if wrap is not None:
        terminals["WRAP_START"] = (wrap[0],)
        rows.append((CONTENT, "WRAP_START", CONTENT, ()))
        special.add("WRAP_START")
        if wrap[1]:
            terminals["WRAP_END"] = (wrap[1],)
            special.add("WRAP_END")
            rows += [
                (CONTENT, "WRAP_END", CONTENT, ()),
                ("AFTER", "WRAP_END", CONTENT, ()),
                ("CALL", "WRAP_END", CONTENT, (Act.CALL_END,)),  # by id, outside a string: cut off
            ]
    return FormatSpec(
        name=name,
        kind="tools",
        terminals=terminals,
        special=frozenset(special),
        regions={CONTENT: Region.CONTENT, "CALL": Region.ARGS, "AFTER": Region.SKIP},
        table=rules(*rows),
        codec=PythonicCallCodec,
        whole_list=True,
        **kw,
    )


def _block_list(name: str, start: str, end: str, *, codec: Any = PythonicCallCodec, **kw: Any) -> FormatSpec:
    """A list of calls between two markers (text outside them is content)."""
    return FormatSpec(
        name=name,
        kind="tools",
        terminals={**_LIST, "BLOCK_START": (start,), "BLOCK_END": (end,)},
        special=frozenset({"BLOCK_START", "BLOCK_END"}),
        regions={CONTENT: Region.CONTENT, "BLOCK": Region.SKIP, "CALL": Region.ARGS, "AFTER": Region.SKIP},
        table=rules(
            (CONTENT, "BLOCK_START", "BLOCK", ()),
            (CONTENT, "BLOCK_END", CONTENT, ()),  # a stray closer is absorbed
            ("BLOCK", "LIST_START", "CALL", (Act.CALL_START,)),
            ("BLOCK", "BLOCK_END", CONTENT, ()),
            *_CALL_ENDS,
            ("CALL", ARGS_FAILED, "BLOCK", (Act.CALL_END,)),
            ("CALL", "BLOCK_END", CONTENT, (Act.CALL_END,)),  # by id, outside a string: cut off
            ("AFTER", "SEP", "CALL", (Act.CALL_START,)),
            ("AFTER", "LIST_END", "BLOCK", (Act.LIST_CLOSE,)),  # the list closed: its calls stand
            ("AFTER", "BLOCK_END", CONTENT, ()),
            ("AFTER", STRAY_TEXT, "BLOCK", (Act.LIST_BREAK,)),
        ),
        codec=codec,
        whole_list=True,
        **kw,
    )


FORMATS = [
    _bare_list(
        "pythonic",
        ("<|python_tag|>", ""),
        models=("Llama 3.2", "Llama 3.3", "ToolACE", "other pythonic fine-tunes"),
        reference="Meta llama3_2_text_prompt_format.md / llama3_3_prompt_format.md responses; vLLM pythonic",
    ),
    _bare_list(
        "llama4_pythonic",
        ("<|python_start|>", "<|python_end|>"),
        models=("Llama 4 Scout", "Llama 4 Maverick"),
        reference="Meta llama4_prompt_format.md responses and Llama 4 tokenizer; vLLM llama4_pythonic",
    ),
    _block_list(
        "lfm2",
        "<|tool_call_start|>",
        "<|tool_call_end|>",
        codec=RawStringCallCodec,  # the LFM2 / LFM2.5 templates write `key='` + value + `'`
        models=("Liquid LFM2",),
        reference="vLLM 0.33 lfm2_tool_parser.py",
    ),
    FormatSpec(
        name="olmo3",
        kind="tools",
        terminals={"BLOCK_START": ("<function_calls>",), "BLOCK_END": ("</function_calls>",), "NL": ("\n",)},
        regions={CONTENT: Region.CONTENT, "BLOCK": Region.SKIP, "CALL": Region.ARGS, "AFTER": Region.SKIP},
        table=rules(
            (CONTENT, "BLOCK_START", "CALL", (Act.CALL_START,)),
            (CONTENT, "BLOCK_END", CONTENT, ()),  # a stray closer is absorbed
            *_CALL_ENDS,
            ("CALL", ARGS_FAILED, "BLOCK", (Act.CALL_END,)),
            ("AFTER", "NL", "CALL", (Act.CALL_START,), _NAME_START),
            ("AFTER", "BLOCK_END", CONTENT, ()),
            ("AFTER", STRAY_TEXT, "BLOCK", (Act.LIST_BREAK,)),
            ("BLOCK", "BLOCK_END", CONTENT, ()),
        ),
        codec=RawStringCallCodec,  # the OLMo 3 template writes `key='` + value + `'`
        whole_list=True,
        models=("OLMo 3",),
        reference="vLLM 0.33 olmo3_tool_parser.py",
    ),
]
