"""Kimi K3 (``kimi_k3``): XTML channels, ``<|open|>NAME attrs<|sep|>`` … ``<|close|>NAME<|sep|>``.

Wire format (thinking on; the generation prefix usually pre-fills ``<|open|>think<|sep|>``)::

    <|open|>think<|sep|>REASONING<|close|>think<|sep|>
    <|open|>response<|sep|>CONTENT<|close|>response<|sep|>
    <|open|>tools<|sep|>
    <|open|>call tool="python" index="1"<|sep|>
    <|open|>argument key="code" type="string"<|sep|>print(1)<|close|>argument<|sep|>
    <|close|>call<|sep|>
    <|close|>tools<|sep|><|close|>message<|sep|>

Reasoning: the ``think`` channel. Thinking is on unless ``thinking`` (or, when that is not
given, ``enable_thinking``) is false; on, the output starts inside the channel (its open marker,
if the model writes it, is dropped) and ``<|close|>think<|sep|>`` ends it. Off (instruct mode),
everything is content. The ``response`` channel is the content: its markers are dropped, and
its opener while thinking ends reasoning (an output with a response channel and no think markers
has no reasoning). ``<|close|>message<|sep|>`` is dropped. A prompt that already opened the
response channel (``prompt_text`` ending in ``<|open|>response<|sep|>``) starts the output in
content; one that opened the think channel starts it in reasoning.

Tool calls: a ``tools`` channel holds one or more ``call`` elements; the call's name is its
``tool`` attribute; each ``argument`` element is one argument, named by ``key``. Attribute
values are unescaped (``&quot;`` then ``&amp;``, the reverse of the template's encoding). A
``type="string"`` value (also when ``type`` is missing) is the raw text between ``<|sep|>`` and
``<|close|>argument<|sep|>`` (kept verbatim, streamed as it arrives); any other value is JSON
text, kept as written when it is valid JSON and a string otherwise. A call counts only once
``<|close|>call<|sep|>`` is seen (as in vLLM); a call cut off or without a ``tool`` is content,
markers included, and so is one whose body holds anything but ``argument key="…"`` elements
(``<|open|>json<|sep|>…``, an argument without a key): it is never ``{}``. ``<|close|>message<|sep|>``
closes a section left open, and a second tools opener inside one opens nothing more: markers,
never content. A tools opener inside the think channel ends the reasoning (a
section written before ``<|close|>think<|sep|>`` is the call, as a call opener ends unterminated
reasoning in the other families); the think closer after it is a stray marker. The tool format
also unwraps the response channel, so it reads the content without the reasoning format too.

Markers inside a value: ``<|open|>``, ``<|close|>`` and ``<|sep|>`` are special tokens of the
Kimi vocabulary, but each marker here is three tokens (``<|open|>`` ``think`` ``<|sep|>``) and
is matched as text. ``<|close|>argument<|sep|>`` ends a value only when the next argument or the
call's end follows it (or the output ends); ``<|open|>argument`` opens one only before ``key=``;
``<|close|>call<|sep|>`` ends the call only before the next call or the end of ``tools``.

Reference: vLLM 0.33 ``vllm/reasoning/kimi_k3_reasoning_parser.py`` (the think / response /
message markers, ``thinking`` then ``enable_thinking``, a missing open marker means reasoning
starts at offset 0, a response opener without think markers means no reasoning) and
``vllm/tool_parsers/kimi_k3_tool_parser.py`` (the tools / call / argument elements, ``_attrs``
unescaping, ``type`` default ``string``, calls decoded only once closed). No Kimi K3 template or
tokenizer is staged here.
"""

from __future__ import annotations

from ..codecs import JSON_TEXT, XmlParams
from ..codecs.xml_params import only_attributes
from ..engine.spec import CONTENT, Act, FormatSpec, GrammarFacts, Region, rules
from ._think import think_format, thinking_switch

THINK_OPEN, THINK_CLOSE = "<|open|>think<|sep|>", "<|close|>think<|sep|>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<|open|>response<|sep|>", "<|close|>response<|sep|>"
MESSAGE_CLOSE = "<|close|>message<|sep|>"
TOOLS_OPEN = "<|open|>tools<|sep|>"


def attributes(text: str) -> dict[str, str]:
    """``key="v"`` pairs of an element header, unescaped as vLLM does; none when the header holds
    text that is no attribute (``tool="g"s``) or an attribute no element reads (``x="y"``), so
    the element does not read."""
    pairs = only_attributes(text, reads=("tool", "key", "type")) or ()
    return {k: v.replace("&quot;", '"').replace("&amp;", "&") for k, quote, v in pairs if quote == '"'}


def _parse_call(raw: str) -> tuple[str, str | None]:
    return attributes(raw).get("tool", ""), None


def _parse_argument(raw: str) -> tuple[str, tuple[str, ...] | None]:
    attrs = attributes(raw)
    return attrs.get("key", ""), ("string",) if attrs.get("type", "string") == "string" else JSON_TEXT


_ARG_OPEN, _ARG_CLOSE = "<|open|>argument", "<|close|>argument<|sep|>"
_CALL_OPEN, _CALL_CLOSE = "<|open|>call", "<|close|>call<|sep|>"
_TOOLS_CLOSE = "<|close|>tools<|sep|>"
_WRAPPERS = {"ANSWER_START": (RESPONSE_OPEN,), "ANSWER_END": (RESPONSE_CLOSE,), "MESSAGE_CLOSE": (MESSAGE_CLOSE,)}

FORMATS = [
    think_format(
        "kimi_k3",
        start=(THINK_OPEN,),
        end=(THINK_CLOSE,),
        special=False,
        initial=thinking_switch("thinking", "enable_thinking", default=True),
        answer=((RESPONSE_OPEN,), (RESPONSE_CLOSE,)),
        absorb={"MESSAGE_CLOSE": (MESSAGE_CLOSE,)},
        # a tools section written before the think channel closes is the call, not reasoning
        ends_on={"TOOLS_OPEN": (TOOLS_OPEN,)},
        turn_markers=(MESSAGE_CLOSE,),
        models=("Kimi K3",),
        reference="vLLM 0.33 kimi_k3_reasoning_parser.py",
    ),
    FormatSpec(
        name="kimi_k3",
        kind="tools",
        terminals={
            "TOOLS_OPEN": (TOOLS_OPEN,),
            "TOOLS_CLOSE": (_TOOLS_CLOSE,),
            "CALL_OPEN": (_CALL_OPEN,),
            "CALL_CLOSE": (_CALL_CLOSE,),
            "ARG_OPEN": (_ARG_OPEN,),
            "ARG_CLOSE": (_ARG_CLOSE,),
            "SEP": ("<|sep|>",),
            **_WRAPPERS,
        },
        regions={
            CONTENT: Region.CONTENT,
            "TOOLS": Region.SKIP,
            "CALL_HEAD": Region.NAME,
            "ARGS": Region.ARGS,
            "ARG_HEAD": Region.ARGS,
        },
        table=rules(
            *[(CONTENT, wrapper, CONTENT, ()) for wrapper in _WRAPPERS],  # the response channel is content
            (CONTENT, "TOOLS_OPEN", "TOOLS", ()),
            ("TOOLS", "CALL_OPEN", "CALL_HEAD", (Act.CALL_START,)),
            ("TOOLS", "TOOLS_CLOSE", CONTENT, ()),
            # the turn's end closes a section left open: a marker, never content
            ("TOOLS", "MESSAGE_CLOSE", CONTENT, ()),
            # a second opener inside the section opens nothing more: a marker of it, never content
            ("TOOLS", "TOOLS_OPEN", "TOOLS", ()),
            ("CALL_HEAD", "SEP", "ARGS", (Act.NAME_END,)),
            ("ARGS", "ARG_OPEN", "ARG_HEAD", (Act.ARG_MARKER,), ("key=",)),
            ("ARG_HEAD", "SEP", "ARGS", (Act.ARG_MARKER,)),
            ("ARGS", "ARG_CLOSE", "ARGS", (Act.ARG_MARKER,), (_ARG_OPEN, _CALL_CLOSE)),
            ("ARGS", "CALL_CLOSE", "TOOLS", (Act.CALL_END,), (_CALL_OPEN, _TOOLS_CLOSE, TOOLS_OPEN)),
        ),
        codec=XmlParams(
            param_start="ARG_OPEN",
            param_end="ARG_CLOSE",
            key_marker="SEP",
            parse_key=_parse_argument,
            trim="none",
            style="kimi_k3_xml",
        ),
        parse_name=_parse_call,
        # the call header as a grammar writes it (trisect.grammar): the tool and its index
        grammar=GrammarFacts(name_pattern=r' tool="{name}" index="[0-9]+"'),
        models=("Kimi K3",),
        reference="vLLM 0.33 kimi_k3_tool_parser.py",
    ),
]
