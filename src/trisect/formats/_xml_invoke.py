"""The one builder of the XML invoke family: ``<invoke NAME><param KEY>VALUE</param></invoke>``.

Qwen3-Coder (``<function=NAME>`` / ``<parameter=KEY>``), Seed-OSS, Step-3.5, MiniMax-M2 and M3
(``<invoke name="NAME">`` / ``<parameter name="KEY">``), MiniCPM5 (``<function name=…>`` /
``<param name=…>``), DeepSeek DSML and MuseGlimmer (``<｜DSML｜invoke name=…>``) and Step-3
(``<steptml:invoke name=…>``) write the same grammar. What differs is data, and the parameters
of ``invoke_format`` say it:

* the markers: the invoke's opener (up to its name) and closer, a parameter's opener (up to its
  key) and closer; the name and each key end at ``>``;
* the elements around the invokes: a ``block`` holding one or more calls (MiniMax
  ``<minimax:tool_call>``, DSML ``<｜DSML｜function_calls>``) and / or a ``call`` element around
  each call (Qwen3-Coder ``<tool_call>``, Step-3 ``<｜tool_call_begin｜>``, whose call type
  ``function<｜tool_sep｜>`` precedes the invoke: ``call_type_sep``); ``bare``: an invoke outside
  them opens a call too; ``special``: the element markers are special tokens;
* ``opens``: where a call opens (``Act.CALL_START``): at the ``block`` (DSML: the first call opens
  with the block, so an empty block is not a call and its text, markers included, is content),
  at each ``call`` element, or at each ``invoke``. Where a call opens also decides whether a
  state sits between calls: after an invoke closes, the block or call element that opened the
  call is still open (``TOOL_BETWEEN``); a call that opened at its invoke ends with it;
* ``stray_end``: the outermost element's closer met in content is absorbed;
* ``home``: the state the calls open from and return to (content by default; MuseGlimmer's
  tool channel is a state of its own, so an invoke quoted in reasoning or in the answer is text);
* ``follow``: the rules for marker text inside a value (below); ``False`` where the markers
  cannot be value text (MiniMax-M3's namespace marker);
* ``names`` / ``keys``: how the name and the keys are quoted (``Quote``), or a key reader that
  also types the value (DSML's ``string="true|false"``); ``trim``, ``unwrap``: the
  ``XmlParams`` value rules; ``style``: the xgrammar argument style of the parameter syntax.

Recovered malformed shapes, the same for every family: a name not closed by ``>`` (it ends at
the first parameter or at the invoke's closer), a parameter left open (closed by the next
parameter or the invoke's end), an invoke left open (closed by the next invoke where no call
element holds it, or by its call element's or block's end), a missing call element closer
before the next call element, several invokes in one call element. An unfinished call is not a
call.

Marker text inside a value, the same for every family: a closer ends the value only when what
follows it, after whitespace, is structure that may come next (``Rule.follow``); the end of the
output counts only after the closer of the element the calls live in (the block's, else the
call element's, else the invoke's: ``<parameter=city>Berlin</tool_call>`` ends the value with
the call), never after an inner one (a cut-off value is not a call). The next parameter's
opener ends a value whose closer is missing only before a new key the tool declares
(``Rule.key_end``; the key of a parameter the call has, or one the tool does not declare, is
value text: no call holds a key twice). A call's opener (invoke, call element) inside a value
is value text. Cost: building a table, once per format at import.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable
from typing import Any, Literal

from ..codecs import XmlParams
from ..codecs.xml_params import KeyReader, only_attributes
from ..engine.spec import CONTENT, NO_GRAMMAR_FACTS, Act, FormatSpec, GrammarFacts, Region, rules

BLOCK, PREAMBLE, NAME, ARGS, BETWEEN = "TOOL_BLOCK", "TOOL_PREAMBLE", "TOOL_NAME", "TOOL_ARGS", "TOOL_BETWEEN"
START, END, NAME_END, MARK, ARGS_END = Act.CALL_START, Act.CALL_END, Act.NAME_END, Act.ARG_MARKER, Act.ARGS_END


class Quote(enum.Enum):
    """How a name or key is written after its opener."""

    NONE = "none"  # as it stands (stripped): <function=get_weather>
    OPTIONAL = "optional"  # "k", 'k' or k: <invoke name="get_weather">
    FIRST = "first"  # the first quoted value; further attributes are ignored: name="k" extra="x"
    ALONE = "alone"  # the first quoted value; only a call's identity attributes may follow: name="k" id="1"


_QUOTED = re.compile(r"""\s*(["'])(.*?)\1""", re.S)


def unquote(text: str) -> str:
    """``"k"``, ``'k'`` or ``k`` -> ``k``."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def first_quoted(text: str, reads: tuple[str, ...] | None = None) -> str:
    """A name or key quoted first: ``"get_weather"``, ``'search' id='1'``, or a self-closing
    ``"submit"/``; unquoted text is taken as it stands. Any other text after it (``"t"r``,
    ``"=" 2``, or an attribute outside ``reads`` that is no call's identity: ``g="te"``) is
    text the call would not carry, so the name or key does not read (""): the call is
    malformed and its text is content, never dropped. ``reads``: the attributes that may
    follow besides a call's identity (``None``: any, as a user format or a synthesised one
    reads a template that writes others, ``string="true"``; ``Quote.FIRST``); ``Quote.ALONE``
    passes ``()``."""
    m = _QUOTED.match(text)
    if m is None:
        return text.strip()
    rest = text[m.end() :].strip().removesuffix("/")
    return m.group(2).strip() if only_attributes(rest, reads=reads) is not None else ""


_READ: dict[Quote, Callable[[str], str]] = {
    Quote.OPTIONAL: unquote,
    Quote.FIRST: first_quoted,
    Quote.ALONE: functools.partial(first_quoted, reads=()),
}
_QUOTES = ("'", '"')


def _name_reader(quote: Quote) -> Callable[[str], tuple[str, str | None]] | None:
    read = _READ.get(quote)
    if read is None:
        return None

    def parse_name(text: str) -> tuple[str, str | None]:
        # a quote left open ('"' alone, '"get_weather'): the name does not read, so there is
        # none and the call is malformed, never a call named with the quote
        name = read(text)
        return ("" if name[:1] in _QUOTES or name[-1:] in _QUOTES else name), None

    return parse_name


def _key_reader(quote: Quote | KeyReader) -> KeyReader | None:
    if not isinstance(quote, Quote):
        return quote
    read = _READ.get(quote)
    if read is None:
        return None

    def parse_key(text: str) -> tuple[str, tuple[str, ...] | None]:
        return read(text), None

    return parse_key


def invoke_format(
    name: str,
    *,
    invoke: tuple[str, str],
    param: tuple[str, str],
    opens: Literal["block", "call", "invoke"],
    block: tuple[str, str] | None = None,
    call: tuple[str, str] | None = None,
    call_type_sep: str | None = None,
    bare: bool = False,
    special: bool = True,
    stray_end: bool = False,
    follow: bool = True,
    names: Quote = Quote.OPTIONAL,
    keys: Quote | KeyReader = Quote.OPTIONAL,
    trim: str = "strip",
    unwrap: tuple[str, ...] = (),
    style: str | None = None,
    validate_names: bool = False,
    grammar: GrammarFacts = NO_GRAMMAR_FACTS,
    home: str = CONTENT,
    models: tuple[str, ...],
    reference: str,
    aliases: tuple[str, ...] = (),
) -> FormatSpec:
    """A format of the XML invoke family; see the module docstring for the parameters."""
    if (opens == "block" and block is None) or (opens == "call" and call is None):
        raise ValueError(f"{name}: calls open at the {opens}, which the format does not have")
    if call_type_sep is not None and call is None:
        raise ValueError(f"{name}: a call type separator needs a call element")
    terminals: dict[str, tuple[str, ...]] = {
        "INVOKE": (invoke[0],),
        "INVOKE_END": (invoke[1],),
        "PARAM_START": (param[0],),
        "PARAM_END": (param[1],),
        "CLOSE_ANGLE": (">",),
    }
    elements: list[str] = []
    if block is not None:
        terminals["BLOCK_START"], terminals["BLOCK_END"] = (block[0],), (block[1],)
        elements += ["BLOCK_START", "BLOCK_END"]
    if call is not None:
        terminals["TOOL_START"], terminals["TOOL_END"] = (call[0],), (call[1],)
        elements += ["TOOL_START", "TOOL_END"]
    if call_type_sep is not None:
        terminals["TOOL_SEP"] = (call_type_sep,)
        elements.append("TOOL_SEP")

    outer = BLOCK if block is not None else home  # where calls live
    between = opens != "invoke"  # the element that opened the call outlives its invoke
    ended = BETWEEN if between else outer  # the state after an invoke's closer
    invoke_end = (ARGS_END,) if call is not None else (END,)

    # what may follow a closer written inside a value, for it to end the value
    after_block = ("BLOCK_START",)
    if call is not None:
        after_call = ("TOOL_START", *(("INVOKE",) if bare else ()), *(("BLOCK_END",) if block else ()))
        after_invoke: tuple[str, ...] = ("TOOL_END", *after_call)
    else:
        after_call = ()
        after_invoke = ("INVOKE", *(("BLOCK_END",) if block else ()))
    after_value = ("PARAM_START", "INVOKE_END", *after_invoke)

    # the closer of the element the calls live in: nothing but the call's end can follow it,
    # so inside a value it counts at the end of the output too
    outermost = "BLOCK_END" if block is not None else "TOOL_END" if call is not None else "INVOKE_END"

    def when(closer: str, *terminals_: str) -> tuple[dict[str, Any], ...]:
        """The guard of a closer inside a value: the markers that may follow it, if the family
        has the rule."""
        if not follow:
            return ()
        return ({"follow": tuple(terminals[t][0] for t in terminals_), "follow_end": closer == outermost},)

    # inside a value, the next parameter's marker is a recovery only before a key the tool
    # can take; a call's opener there is value text
    new_key: tuple[dict[str, Any], ...] = ({"key_end": ">"},) if follow else ()
    text_in_value: tuple[dict[str, Any], ...] = ({"value_text": True},) if follow else ()

    rows: list[tuple[Any, ...]] = []
    if block is not None:
        rows.append((home, "BLOCK_START", BLOCK, (START,) if opens == "block" else ()))
        if stray_end:
            rows.append((home, "BLOCK_END", home, ()))
        if call is not None:
            rows.append((BLOCK, "BLOCK_END", home, ()))
        else:
            rows.append((BLOCK, "INVOKE", NAME, (START,) if opens == "invoke" else ()))
            rows.append((BLOCK, "BLOCK_END", home, (END,) if opens == "block" else ()))
    if call is not None:
        rows.append((outer, "TOOL_START", PREAMBLE, (START,)))
        if stray_end and block is None:
            rows.append((home, "TOOL_END", home, ()))
        if call_type_sep is not None:
            rows.append((PREAMBLE, "TOOL_SEP", PREAMBLE, ()))
        rows.append((PREAMBLE, "INVOKE", NAME, ()))
        rows.append((PREAMBLE, "TOOL_END", outer, (END,)))
    if bare:
        rows.append((home, "INVOKE", NAME, (START,)))
    rows += [
        (NAME, "CLOSE_ANGLE", ARGS, (NAME_END,)),
        (NAME, "PARAM_START", ARGS, (NAME_END, MARK)),
        (NAME, "INVOKE_END", ended, (NAME_END, ARGS_END) if call is not None else (END,)),
        (ARGS, "PARAM_START", ARGS, (MARK,), *new_key),
        (ARGS, "PARAM_END", ARGS, (MARK,), *when("PARAM_END", *after_value)),
        (ARGS, "INVOKE_END", ended, invoke_end, *when("INVOKE_END", *after_invoke)),
    ]
    if call is not None:
        rows += [
            (NAME, "TOOL_END", outer, (END,)),
            (ARGS, "TOOL_END", outer, (END,), *when("TOOL_END", *after_call)),
            (ARGS, "TOOL_START", PREAMBLE, (START,), *text_in_value),
            (BETWEEN, "TOOL_END", outer, (END,)),
            (BETWEEN, "TOOL_START", PREAMBLE, (START,)),
            (BETWEEN, "INVOKE", NAME, (START,)),
        ]
        if block is not None:
            rows.append((BETWEEN, "BLOCK_END", home, (END,)))
    else:
        rows.append((ARGS, "INVOKE", NAME, (START,), *text_in_value))
        if block is not None:
            rows.append((ARGS, "BLOCK_END", home, (END,), *when("BLOCK_END", *after_block)))
        if between:  # opens == "block": the block holds the next invoke
            rows += [(BETWEEN, "INVOKE", NAME, (START,)), (BETWEEN, "BLOCK_END", home, ())]

    regions = {CONTENT: Region.CONTENT, NAME: Region.NAME, ARGS: Region.ARGS}
    if home != CONTENT:
        regions[home] = Region.SKIP
    for state in (BLOCK if block is not None else None, PREAMBLE if call is not None else None):
        if state is not None:
            regions[state] = Region.SKIP
    if between:
        regions[BETWEEN] = Region.SKIP
    return FormatSpec(
        name=name,
        kind="tools",
        aliases=aliases,
        terminals=terminals,
        special=frozenset(elements) if special else frozenset(),
        regions=regions,
        table=rules(*rows),
        codec=XmlParams(
            param_start="PARAM_START",
            param_end="PARAM_END",
            parse_key=_key_reader(keys),
            trim=trim,
            unwrap=unwrap,
            style=style,
            closer_key=param[1].endswith("</"),  # </KEY>: the closer names its parameter
        ),
        validate_names=validate_names,
        parse_name=_name_reader(names),
        call_markup=("function",) if call_type_sep is not None else (),  # the call type before it
        grammar=grammar,
        models=models,
        reference=reference,
    )
