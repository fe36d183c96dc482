"""Inkling: a turn of messages, each ``<|message_model|>`` + a content-type marker + body + ``<|end_message|>``.

Wire format::

    <|content_thinking|>REASONING<|end_message|>
    <|message_model|><|content_text|>CONTENT<|end_message|>
    <|message_model|><|content_invoke_tool_json|>{"name": "get_weather", "args": {"city": "Paris"}}<|end_message|>

The prompt ends with ``<|message_model|>``, so the output begins at the first message's
content-type marker (``initial``: the message header; a prompt ending in
``<|content_thinking|>`` or ``<|content_text|>`` starts inside that body instead, read from
``prompt_text``). ``<|content_thinking|>`` bodies are reasoning, ``<|content_text|>`` bodies
content, ``<|content_invoke_tool_json|>`` bodies one tool call as a JSON envelope with ``name``
and ``args`` (``arguments`` / ``parameters`` accepted too); text messages may follow tool
messages. ``<|content_invoke_tool_text|>`` (a raw tool block) and ``<|content_tool_error|>``
bodies render as content; ``<|content_model_end_sampling|>`` ends a block like
``<|end_message|>``, and is the turn's end where no block is open (after the last
``<|end_message|>``, the normal end of a turn, or right after ``<|message_model|>``): framing
there, never content; a content-kind marker inside a text body is dropped and
``<|content_thinking|>`` there opens reasoning; a tool block opened while thinking ends
reasoning. The JSON decides where a call ends (a marker inside a JSON string is string text);
an envelope that is not valid is content, markers included. Without the tool format a
tool message is text. The markers are matched as text (vLLM keeps Inkling on its text
grammar: ``token_id_terminals={}``).

Not done here: an optional function name vLLM's header carries between ``<|message_model|>``
and the content-kind marker is metadata there; here such text is content.

Reference: vLLM 0.33 ``vllm/parser/inkling.py`` (``inkling_config``: the markers, transitions,
initial state ``MESSAGE_HEADER``, ``token_id_terminals={}``, ``_inkling_arg_converter`` carving
``args``; ``adjust_initial_state_from_prompt``). No template or tokenizer is staged here.
"""

from __future__ import annotations

from typing import Any

from ..codecs import JsonEnvelope
from ..engine.spec import CONTENT, REASONING, Act, FormatSpec, GrammarFacts, Region, rules
from ..engine.stream_options import StreamOptions

MESSAGE = "<|message_model|>"
THINKING = "<|content_thinking|>"
TEXT = "<|content_text|>"
INVOKE = "<|content_invoke_tool_json|>"
END = "<|end_message|>"
RAW_TEXT = "<|content_invoke_tool_text|>"
ERROR = "<|content_tool_error|>"
END_SAMPLING = "<|content_model_end_sampling|>"
HEADER = "MESSAGE_HEADER"
BETWEEN = "BETWEEN"

TERMINALS = {
    "MESSAGE": (MESSAGE,),
    "THINKING": (THINKING,),
    "TEXT": (TEXT,),
    "RAW_TEXT": (RAW_TEXT,),
    "ERROR": (ERROR,),
    "END": (END,),
    "END_SAMPLING": (END_SAMPLING,),
}


def _from_prompt(request: StreamOptions) -> str:
    """the message header, or the body the prompt's last marker opened (``prompt_text``)"""
    tail = (request.prompt_text or "").rstrip()
    if tail.endswith(THINKING):
        return REASONING
    if tail.endswith(TEXT):
        return CONTENT
    return HEADER


_ENDS = ("END", "END_SAMPLING")
_GRAMMAR = [
    (HEADER, "THINKING", REASONING, ()),
    *[(HEADER, kind, CONTENT, ()) for kind in ("TEXT", "RAW_TEXT", "ERROR")],
    *[(CONTENT, kind, CONTENT, ()) for kind in ("TEXT", "RAW_TEXT", "ERROR")],
    (CONTENT, "THINKING", REASONING, ()),
    (REASONING, "THINKING", REASONING, ()),
    (HEADER, "MESSAGE", HEADER, ()),
    *[(body, end, BETWEEN, ()) for body in (REASONING, CONTENT) for end in _ENDS],
    # the turn's end: after the last message's <|end_message|> (the normal end of a turn), or as
    # a message of its own kind after <|message_model|>; framing, never text of a field
    (BETWEEN, "END_SAMPLING", BETWEEN, ()),
    (HEADER, "END_SAMPLING", BETWEEN, ()),
    *[(state, "MESSAGE", HEADER, ()) for state in (REASONING, CONTENT, BETWEEN)],
]
_REGIONS = {HEADER: Region.SKIP, REASONING: Region.REASONING, CONTENT: Region.CONTENT, BETWEEN: Region.SKIP}
_COMMON: dict[str, Any] = {
    "initial": _from_prompt,
    "models": ("Inkling",),
    "reference": "vLLM 0.33 parser/inkling.py (inkling_config)",
}

FORMATS = [
    FormatSpec(
        name="inkling",
        kind="reasoning",
        terminals=TERMINALS,
        regions=_REGIONS,
        table=rules(*_GRAMMAR),
        **_COMMON,
    ),
    FormatSpec(
        name="inkling",
        kind="tools",
        terminals={**TERMINALS, "INVOKE": (INVOKE,)},
        regions={**_REGIONS, "CALL": Region.ARGS},
        table=rules(
            *_GRAMMAR,
            (HEADER, "INVOKE", "CALL", (Act.CALL_START,)),
            (CONTENT, "INVOKE", "CALL", (Act.CALL_START,)),
            (REASONING, "INVOKE", "CALL", (Act.REASONING_END, Act.CALL_START)),
            *[("CALL", end, BETWEEN, (Act.CALL_END,)) for end in _ENDS],
            ("CALL", "MESSAGE", HEADER, (Act.CALL_END,)),
        ),
        codec=JsonEnvelope(args_keys=("args", "arguments", "parameters")),
        grammar=GrammarFacts(
            unsupported="a call is a message whose header marker decides the body; the end marker closes every message"
        ),
        **_COMMON,
    ),
]
