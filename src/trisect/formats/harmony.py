"""gpt-oss Harmony: messages on channels, tool calls addressed to a recipient.

Wire format (the prompt ends with ``<|start|>assistant``, so the output begins in the first
message's header; a prompt that already opened an analysis / final message body, given as
``prompt_text``, starts there)::

    <|channel|>analysis<|message|>REASONING<|end|>
    <|start|>assistant<|channel|>final<|message|>CONTENT<|return|>

    <|channel|>analysis<|message|>REASONING<|end|>
    <|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"location": "Tokyo"}<|call|>
    <|start|>assistant<|channel|>commentary to=browser.search <|constrain|>json<|message|>{"query": "x"}<|call|>

A header (from ``<|start|>`` or ``<|channel|>`` to ``<|message|>``) names the role
(``assistant``, optional), the channel and optionally a recipient ``to=NAME`` (in the role part
or after the channel) and a content type (``json``, ``code``, ``<|constrain|>json``). The
header decides the body: ``analysis`` is reasoning; ``final`` and ``commentary`` are content;
any message with a recipient is a tool call named after it (``functions.NAME`` -> ``NAME``;
built-in tools such as ``browser.search`` or ``python`` keep the name as written) — except a
message to a built-in tool (``python``, ``browser.*``, ``container.*``) or ``assistant`` on the
``analysis`` channel, which is reasoning (the model's own tool use while thinking: vLLM 0.33
``HarmonyParser``, whose ``is_function_recipient`` excludes them; openai/harmony's format
document sends built-in tool requests on ``analysis``) — whose body
is the JSON arguments, ended by ``<|call|>`` (or ``<|end|>`` / ``<|return|>``). A body that is
not one JSON object is not a call (a ``python`` call with code: its text is content). Several
messages may follow each other; the text of each field is concatenated. A header that cannot
be read (no channel, an unknown channel, a role other than assistant, two recipients) or
that is cut off is content, markers included; it never raises. A call's header cut off by the
end of the output (``<|start|>assistant to=functions.f<|channel|>commentary <|constrain|>json``)
is that call cut off: ``unfinished_call``. Inside an analysis message only ``<|end|>`` ends it:
``<|call|>`` and ``<|return|>`` count only where a message may end (before ``<|start|>`` or at
the end of the output: a built-in tool's request on ``analysis`` ends with ``<|call|>``), and
``<|channel|>`` only as its special token given by id; otherwise they are reasoning text.

All markers are special tokens of ``o200k_harmony`` (``<|start|>`` 200006, ``<|channel|>``
200005, ``<|message|>`` 200008, ``<|end|>`` 200007, ``<|call|>`` 200012, ``<|return|>``
200002, ``<|constrain|>`` 200003), so from token ids a marker string inside a JSON argument
or written as ordinary text stays text. ``openai_gptoss`` (reasoning) and ``openai`` (tools)
share the grammar; without the tool format a message with a recipient goes by its channel.

Reference: gpt-oss chat template (tests/data/templates/openai-gpt-oss-120b.jinja), openai/harmony
test data (``test_simple_tool_call``, ``test_simple_reasoning_response``,
``test_streamable_parser``, ``test_keep_analysis_between_finals``); vLLM ``openai_gptoss`` /
``openai`` (HarmonyParser).
"""

from __future__ import annotations

from typing import Any

from ..codecs import JsonArgsCodec
from ..engine.spec import CONTENT, REASONING, Act, FormatSpec, GrammarFacts, Region, rules
from ..engine.stream_options import StreamOptions

START, CHANNEL, CONSTRAIN, MESSAGE = "<|start|>", "<|channel|>", "<|constrain|>", "<|message|>"
TERMINALS = {
    "START": (START,),
    "CHANNEL": (CHANNEL,),
    "CONSTRAIN": (CONSTRAIN,),
    "MESSAGE": (MESSAGE,),
    "END": ("<|end|>",),
    "CALL": ("<|call|>",),
    "RETURN": ("<|return|>",),
}
CHANNELS = {"analysis": REASONING, "final": CONTENT, "commentary": CONTENT}
HEADER = "HEADER"
BETWEEN = "BETWEEN"
CALL_BODY = "CALL_BODY"


def read_header(text: str) -> tuple[str, str | None] | None:
    """``(channel, recipient)`` of a header's text (markers included), or None if malformed."""
    if text.startswith(START):
        text = text[len(START) :]
    role, sep, rest = text.partition(CHANNEL)
    if not sep or START in text or CHANNEL in rest or CONSTRAIN in role or MESSAGE in text:
        return None
    recipient: str | None = None
    role_words = role.split()
    if role_words and role_words[0] == "assistant":
        role_words = role_words[1:]
    words = rest.replace(CONSTRAIN, " ").split()
    if not words or words[0] not in CHANNELS:
        return None
    if any(not word.startswith("to=") for word in role_words):
        return None  # the role part holds the role and a recipient, nothing else
    for word in role_words + words[1:]:
        if word.startswith("to="):  # other words after the channel: the content type (json, code)
            if recipient is not None or len(word) == 3:
                return None
            recipient = word[3:]
    return words[0], recipient


def _route_by_channel(text: str) -> tuple[str, str | None] | None:
    header = read_header(text)
    return None if header is None else (CHANNELS[header[0]], None)


BUILT_IN = frozenset({"python", "browser", "container"})  # gpt-oss's built-in tools


def is_function(recipient: str) -> bool:
    """A recipient that is a function of the request's tools (vLLM 0.33
    ``harmony_utils.is_function_recipient``): ``functions.NAME``, or a bare name that is not a
    built-in tool (``python``, ``browser.search``, ``container.exec``) nor ``assistant``."""
    if not recipient or recipient.startswith("<|") or recipient == "assistant":
        return False
    if recipient.startswith("functions."):
        return True
    return recipient not in BUILT_IN and recipient.partition(".")[0] not in BUILT_IN


def _route_calls(text: str) -> tuple[str, str | None] | None:
    header = read_header(text)
    if header is None:
        return None
    channel, recipient = header
    if recipient is None:
        return CHANNELS[channel], None
    if channel == "analysis" and not is_function(recipient):
        return REASONING, None  # a built-in tool's request while thinking: reasoning (vLLM, openai/harmony)
    return CALL_BODY, recipient.removeprefix("functions.")


def _in_header(request: StreamOptions) -> str:
    """the output starts in the header of a message (the prompt ends with ``<|start|>assistant``),
    or in the body of an analysis / final / commentary message the prompt (``prompt_text``)
    already opened"""
    prompt = request.prompt_text
    if prompt:
        last = prompt.rfind(START)
        tail = prompt[last:] if last >= 0 else ""
        head, sep, _body = tail.partition(MESSAGE)
        ended = any(m in tail for m in ("<|end|>", "<|call|>", "<|return|>"))
        header = read_header(head) if sep and not ended else None
        if header is not None and header[1] is None:
            return CHANNELS[header[0]]
    return HEADER


_ENDS = ("END", "CALL", "RETURN")
_GRAMMAR = [
    (HEADER, "START", HEADER, (Act.HEADER_START,)),
    (HEADER, "CHANNEL", HEADER, ()),
    (HEADER, "CONSTRAIN", HEADER, ()),
    (HEADER, "MESSAGE", CONTENT, (Act.HEADER_END,)),  # CONTENT if the header is malformed
    *[(HEADER, end, BETWEEN, ()) for end in _ENDS],  # a header without a body: kept as text
    *[(CONTENT, end, BETWEEN, ()) for end in _ENDS],
    # each analysis message is a block, and <|end|> ends it. <|call|> / <|return|> end one only
    # where a message can end (before the next message's <|start|> or at the end of the output:
    # a built-in tool's request on analysis ends with <|call|>); elsewhere in it they are text the
    # model wrote, as is <|channel|> unless given by id (text cannot open a header mid-message)
    (REASONING, "END", BETWEEN, (Act.REASONING_END,)),
    *[(REASONING, end, BETWEEN, (Act.REASONING_END,), (START,)) for end in ("CALL", "RETURN")],
    *[(state, m, HEADER, (Act.HEADER_START,)) for state in (CONTENT, BETWEEN) for m in ("START", "CHANNEL")],
    (REASONING, "START", HEADER, (Act.REASONING_END, Act.HEADER_START)),
    (REASONING, "CHANNEL", HEADER, (Act.REASONING_END, Act.HEADER_START), {"by_id": True}),
]
_REGIONS = {HEADER: Region.HEADER, REASONING: Region.REASONING, CONTENT: Region.CONTENT, BETWEEN: Region.SKIP}
_COMMON: dict[str, Any] = {
    "terminals": TERMINALS,
    "special": frozenset(TERMINALS),
    "initial": _in_header,
    "models": ("gpt-oss-20b", "gpt-oss-120b"),
    "reference": "gpt-oss chat template; openai/harmony test data; vLLM HarmonyParser",
}

FORMATS = [
    FormatSpec(
        name="openai_gptoss",
        kind="reasoning",
        regions=_REGIONS,
        table=rules(*_GRAMMAR),
        header=_route_by_channel,
        header_states=(REASONING, CONTENT),
        **_COMMON,
    ),
    FormatSpec(
        name="openai",
        kind="tools",
        regions={**_REGIONS, CALL_BODY: Region.ARGS},
        table=rules(
            *_GRAMMAR,
            *[(CALL_BODY, end, BETWEEN, (Act.CALL_END,)) for end in _ENDS],
            *[(CALL_BODY, m, HEADER, (Act.CALL_END, Act.HEADER_START)) for m in ("START", "CHANNEL")],
        ),
        codec=JsonArgsCodec,
        header=_route_calls,
        header_states=(REASONING, CONTENT, CALL_BODY),
        # under tool_choice required / named gpt-oss still writes Harmony messages (a constrained
        # decoder uses a Harmony structural tag), so those outputs parse as with auto
        grammar=GrammarFacts(native_under_constraint=True),
        **_COMMON,
    ),
]
