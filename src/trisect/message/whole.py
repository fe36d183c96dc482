"""Whole outputs at C speed: ``Parser.parse(text)`` without the streaming machinery.

``parse_whole(compiled, options, state, text)`` walks the same ``CompiledFormat`` tables as the
engine, over the complete text at once:

* each state's markers are found with the state's compiled pattern (one C search per marker);
  the text between two markers goes to its field, its name or its codec in one piece;
* JSON arguments (the envelope and bare-object codecs of ``trisect.codecs.json_call``) are read by
  the standard library's C decoder: ``scanstring`` for the envelope's keys, ``scan_once`` for each
  value. The arguments are the span of text the model wrote, never a re-serialised value, so they
  are byte for byte what the stream emits. Every other codec is the format's own, fed whole
  segments (XML parameters quote a value with one C call);
* reasoning and content are each the concatenation of their pieces, stripped as a whole
  (``FormatSpec.strip``), which is what the engine's per-piece trimming amounts to.

Malformed calls follow the engine's rules here too: a call that is not a call (invalid arguments,
no name, an unknown tool where the family validates names, a name that is not valid Unicode, text
after the arguments) ends as
content, its exact text from its first marker. Where the C decoder refuses a call's JSON (invalid,
``NaN``, nested past the recursion limit, arguments written as a JSON string), the format's own
codec reads that one call, so where it stops and what it makes of it are the engine's.

It returns ``None``, and the caller runs the engine, for what it does not decide: an output that
ends inside a call or a block of calls (the engine's rule for cut-off calls), ``strict=True`` with
a malformed call (the engine raises), message headers (Harmony), reasoning held for
``reasoning_fallback`` (Nemotron). Token ids never come here (the parser only calls it for text).
The rules it applies are the engine's
(``trisect.engine``), in the same order; the replay harness checks ``parse()`` (this path)
against every stream (the engine's) on every case, and ``tests/test_whole.py`` counts the cases
it decides and compares it with the engine on mutated outputs.

Cost: O(len(text)) at C speed (pattern searches, the JSON decoder, slicing, one join and strip
per field) plus O(markers + envelope keys) steps of Python.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import partial
from typing import Any, cast

from ..codecs.json_call import ENVELOPE, JsonArgsCodec, JsonEnvelope, JsonEnvelopeCodec, NamedArgs
from ..engine.codec import CallCodec
from ..engine.compile import CompiledFormat, StateTable
from ..engine.guards import marker_counts
from ..engine.spec import REASONING, Act, Region, Rule
from ..engine.stream_options import StreamOptions
from ..engine.tracker import random_call_id, valid_unicode
from .types import Message, ToolCall

_WS = " \t\r\n"
# ``match`` of a pattern that matches the empty string never returns ``None``
_ws = cast(Callable[[str, int], "re.Match[str]"], re.compile(r"[ \t\r\n]*").match)

_REASONING = Region.REASONING
_CONTENT = Region.CONTENT
_NAME = Region.NAME
_CALL_ID = Region.CALL_ID
_ARGS = Region.ARGS
_SKIP = Region.SKIP
_MARKER, _SKIP_TEXT, _CONTENT_TEXT = 0, 1, 2  # kinds of a held block's text (the engine's)


class _Undecided(Exception):
    """This output is not one the whole path decides: the engine parses it."""


_UNDECIDED = _Undecided()


def _no_constant(_name: str) -> None:
    raise _UNDECIDED  # NaN / Infinity are Python's extension, not JSON


# the C scanner's entry points (typeshed does not declare them): a value at an index, a string
# body after its opening quote; each returns the value and the index after it
_scan_value = cast(
    Callable[[str, int], tuple[Any, int]],
    json.JSONDecoder(parse_constant=_no_constant).scan_once,  # type: ignore[attr-defined]
)
_scan_string = cast(Callable[[str, int], tuple[str, int]], json.decoder.scanstring)  # type: ignore[attr-defined]

# A JSON reader: (text, start, end of text) -> (end of the JSON, name, call id, arguments text);
# raises _Undecided where the codec would fail or not finish.
Reader = Callable[[str, int, int], tuple[int, str | None, str | None, str]]


def _skip(text: str, i: int) -> int:
    """The index after the JSON whitespace at ``i`` (most often none, or one space)."""
    if i < len(text) and text[i] in _WS:
        i += 1
        if i < len(text) and text[i] in _WS:
            i = _ws(text, i).end()
    return i


def _read_envelope(options: JsonEnvelope, text: str, i: int, n: int) -> tuple[int, str | None, str | None, str]:
    """``JsonEnvelopeCodec``'s rules: the first name key counts, an id key only before the name, the
    first arguments key (an object, or ``null`` for ``{}``); other keys are any JSON value."""
    if options.list_opener and i < n and text[i] == "[":
        i = _skip(text, i + 1)
    i = _skip(text, i)
    if i >= n or text[i] != "{":
        raise _UNDECIDED
    i = _skip(text, i + 1)
    name_keys, args_keys, id_keys = options.name_keys, options.args_keys, options.id_keys
    name: str | None = None
    call_id: str | None = None
    args: str | None = None
    args_seen = False
    while True:
        if i >= n or text[i] != '"':
            raise _UNDECIDED  # includes "{}": an envelope without a name is not a call
        key, i = _scan_string(text, i + 1)
        i = _skip(text, i)
        if i >= n or text[i] != ":":
            raise _UNDECIDED
        i = _skip(text, i + 1)
        if i >= n:
            raise _UNDECIDED
        first = text[i]
        value, j = _scan_value(text, i)
        if key in name_keys and name is None:
            if type(value) is not str or not value:
                raise _UNDECIDED
            name = value
        elif key in id_keys and call_id is None and name is None:
            if type(value) is str:
                call_id = value
        elif key in args_keys and not args_seen:
            args_seen = True
            if first == "{":
                args = text[i:j]
            elif first == "n":
                args = "{}"
            else:  # a JSON string of arguments (decoded by the engine) or not arguments at all
                raise _UNDECIDED
        i = _skip(text, j)
        if i >= n:
            raise _UNDECIDED
        c = text[i]
        if c == ",":
            i = _skip(text, i + 1)
        elif c == "}":
            break
        else:
            raise _UNDECIDED
    if name is None or (not args_seen and options.requires_args):
        raise _UNDECIDED  # not a call: the codec says so
    return i + 1, name, call_id, "{}" if args is None else args


def _read_object(name: str | None, text: str, i: int, n: int) -> tuple[int, str | None, str | None, str]:
    """``JsonArgsCodec``: the arguments object itself (``name``: the function a named choice forced)."""
    i = _ws(text, i).end()
    if i >= n or text[i] != "{":
        raise _UNDECIDED
    _value, j = _scan_value(text, i)
    return j, name, None, text[i:j]


def json_reader(factory: object) -> Reader | None:
    """The C-speed reader of a JSON codec factory, or ``None`` (the codec itself is used)."""
    if factory is JsonEnvelopeCodec:
        return partial(_read_envelope, ENVELOPE)
    if type(factory) is JsonEnvelope:
        return partial(_read_envelope, factory)
    if factory is JsonArgsCodec:
        return partial(_read_object, None)
    if type(factory) is NamedArgs:
        return partial(_read_object, factory.name)
    return None


# How a state finds its markers: its compiled pattern when they all begin with one character
# (the regex engine then scans for that character, about 2 GB/s) or when there are many, else one
# ``str.find`` per marker string (3-5 GB/s each, every marker's next position remembered), which
# spares the pattern's slow path for alternatives with different first characters (``{`` or ``<|``)
_FIND_MARKERS = 6


class _Plan:
    """What the whole path needs of one compiled format, computed once: the JSON reader, and per
    state its live marker strings, longest first (so a tie goes to the longest, as in the pattern)."""

    __slots__ = ("compiled", "reader", "markers")

    def __init__(self, compiled: CompiledFormat) -> None:
        self.compiled = compiled
        self.reader = json_reader(compiled.spec.codec)
        terminals = compiled.spec.terminals
        self.markers: dict[str, tuple[str, ...] | None] = {}
        for name, st in compiled.states.items():
            strings = sorted({s for t in st.rules for s in terminals[t]}, key=lambda s: (-len(s), s))
            finds = len(strings) <= _FIND_MARKERS and len({s[0] for s in strings}) > 1
            self.markers[name] = tuple(strings) if finds else None


_PLANS: dict[int, _Plan | None] = {}  # id(compiled) -> plan (the plan keeps `compiled` alive)


def _plan(compiled: CompiledFormat) -> _Plan | None:
    key = id(compiled)
    if key in _PLANS:
        plan = _PLANS[key]
        if plan is None or plan.compiled is compiled:
            return plan
    spec = compiled.spec
    decides = spec.header is None and not any(st.region is Region.HEADER for st in compiled.states.values())
    if len(_PLANS) >= 1024:
        _PLANS.clear()
    plan = _PLANS[key] = _Plan(compiled) if decides else None
    return plan


def parse_whole(
    compiled: CompiledFormat,
    options: StreamOptions,
    state: str,
    text: str,
    *,
    reasoning: bool = True,
    single_call: bool = False,
) -> Message | None:
    """The message of a whole ``text`` starting in ``state``, or ``None`` where the engine must
    decide. ``reasoning=False`` drops the reasoning, ``single_call`` keeps only the first call
    (``include_reasoning`` / ``parallel_tool_calls``, as the request's event filter does)."""
    plan = _plan(compiled)
    if plan is None:
        return None
    spec = compiled.spec
    if spec.reasoning_fallback is not None and state == REASONING and spec.reasoning_fallback(options):
        return None  # the engine holds this reasoning until it knows whether it is content
    try:
        walk = _Walk(plan, options, state)
        walk.run(text)
    except (_Undecided, ValueError, RecursionError, StopIteration):
        return None
    strip = spec.strip
    calls = walk.calls[:1] if single_call else walk.calls
    return Message(
        reasoning=("".join(walk.reasoning).strip(strip) or None) if reasoning else None,
        content="".join(walk.content).strip(strip) or None,
        tool_calls=tuple(calls),
    )


class _Call:
    """The open call: where it started, its codec (or JSON reader), name and id text, argument
    pieces, and why it is not a call (``bad``: the engine's first reason)."""

    __slots__ = (
        "codec",
        "start",
        "read",
        "json_at",
        "name_parts",
        "id_parts",
        "name",
        "id",
        "args",
        "args_closed",
        "bad",
    )

    def __init__(self, codec: CallCodec | None, start: int) -> None:
        self.codec = codec  # None: the plan's JSON reader reads the arguments
        self.start = start  # offset of the marker that opened it: its raw text starts there
        self.read = False  # the JSON reader has read them
        self.json_at = -1  # where the JSON starts when a marker is its first text (Act.ARG_MARKER)
        self.name_parts: list[str] = []
        self.id_parts: list[str] = []
        self.name: str | None = None
        self.id: str | None = None
        self.args: list[str] = []
        self.args_closed = False
        self.bad = ""


class _Walk:
    """One whole output through the tables (the engine's ``_process`` with nothing held back)."""

    __slots__ = (
        "spec",
        "states",
        "terminal_of",
        "options",
        "strict",
        "reader",
        "st",
        "call",
        "text",
        "reasoning",
        "content",
        "calls",
        "skip_ws",
        "markers",
        "next_at",
        "in_block",
        "spill",
    )

    def __init__(self, plan: _Plan, options: StreamOptions, state: str) -> None:
        compiled = plan.compiled
        self.spec = compiled.spec
        self.states = compiled.states
        self.terminal_of = compiled.terminal_of
        self.options = options
        self.strict = options.strict
        self.reader = plan.reader
        self.st: StateTable = compiled.states[state]
        self.call: _Call | None = None
        self.text = ""
        self.reasoning: list[str] = []
        self.content: list[str] = [self.spec.content_prefix] if self.spec.content_prefix else []
        self.calls: list[ToolCall] = []
        self.skip_ws = ""  # whitespace of a SKIP region, kept only if text follows it
        self.markers = plan.markers
        self.next_at: dict[str, int] = {}  # marker string -> its next position found (len(text): none)
        self.in_block = False  # inside a block of calls, none of whose text is content
        # the text of a block of calls that has yielded no call yet, as (text, kind), its content
        # held until the block decides (the engine's ``Machine._spill``); None: none held
        self.spill: list[tuple[str, int]] | None = None

    def _search(self, st: StateTable, text: str, scan: int, n: int) -> tuple[int, str] | None:
        """The earliest live marker at or after ``scan`` (the longest one there)."""
        strings = self.markers[st.name]
        if strings is None:
            pattern = st.text_lex.pattern
            assert pattern is not None
            m = pattern.search(text, scan)
            return None if m is None else (m.start(), m.group())
        next_at = self.next_at
        best = n
        found = ""
        for s in strings:
            at = next_at.get(s, -1)
            if at < scan:
                at = text.find(s, scan)
                if at < 0:
                    at = n
                next_at[s] = at
            if at < best:
                best = at
                found = s
        return (best, found) if found else None

    def run(self, text: str) -> None:
        self.text = text
        n = len(text)
        pos = scan = 0
        terminal_of = self.terminal_of
        while True:
            st = self.st
            call = self.call
            if st.region is _ARGS and call is not None and pos < n:
                codec = call.codec
                if codec is None:
                    if not call.read:
                        pos = scan = self._read(call, pos, n)
                        continue
                elif codec.structured and not (codec.done or codec.failed):
                    j = codec.feed(text, pos, n)
                    if j == pos and not (codec.done or codec.failed):
                        raise _UNDECIDED
                    pos = scan = j
                    self._after_codec(call, j)
                    continue
            hit = self._search(st, text, scan, n) if st.rules else None
            if st.text_rule is not None and (hit[0] if hit is not None else n) > pos:
                self._apply(st.text_rule, "", "", pos)  # the state's first text leaves it
                scan = pos
                continue
            if hit is None:
                if pos < n:
                    if self.in_block and self.call is None and st.region is _SKIP:
                        raise _UNDECIDED  # the output ends in a block's text: the engine keeps it apart
                    self._text(text[pos:] if pos else text)
                break
            a, marker = hit
            b = a + len(marker)
            terminal = terminal_of[marker]
            rule = st.rules[terminal]
            if rule.by_id:  # counts only as its special token; text never carries ids here
                scan = a + 1
                continue
            if rule.guarded:
                if a > pos:  # text before the marker is text whatever the marker turns out to be
                    self._text(text[pos:a])
                    pos = a
                call = self.call
                value = call.codec if call is not None and call.codec is not None and call.codec.in_value else None
                if call is None or value is not None or st.region is _NAME:
                    if not marker_counts(rule, value, text, b, n, True):
                        scan = a + 1
                        continue
            if a > pos:
                self._text(text[pos:a])
            self._apply(rule, terminal, marker, a)
            pos = scan = b
        call = self.call
        if call is None:
            if self.st.region is _SKIP or self.in_block:
                raise _UNDECIDED  # the output ended inside a block of calls: the engine's rule
            return
        codec = call.codec
        complete = call.args_closed or (call.read if codec is None else codec.structured and codec.done)
        if not complete or call.bad:
            raise _UNDECIDED  # a call cut off by the end of the output: the engine's rule
        self._end_call(n)
        if self.spill is not None:
            self._give_back()  # the output ended in a block that yielded no call

    # ------------------------------------------------------------------ text

    def _text(self, s: str) -> None:
        region = self.st.region
        call = self.call
        if region is _CONTENT:
            self.content.append(s)
        elif region is _REASONING:
            self.reasoning.append(s)
        elif region is _ARGS:
            if call is None:
                return
            codec = call.codec
            if codec is None or codec.structured:
                if s.strip(_WS) and not call.bad:
                    done = call.read if codec is None else codec.done
                    self._bad(call, "text after the arguments" if done else "invalid arguments")
            else:
                codec.feed(s, 0, len(s))
                self._after_codec(call, -1)
        elif region is _NAME:
            if call is not None:
                call.name_parts.append(s)
        elif region is _CALL_ID:
            if call is not None:
                call.id_parts.append(s)
        elif region is _SKIP:
            if call is None:
                if self.spill is not None:
                    self.spill.append((s, _SKIP_TEXT))  # content only if the block yields a call
                else:
                    self._skip_text(s)
        else:
            raise _UNDECIDED

    def _skip_text(self, s: str) -> None:
        """Text of a SKIP region outside a call: content, its whitespace kept only between text."""
        t = s.rstrip(_WS)
        if t:
            self.content.append(self.skip_ws + t)
            self.in_block = False  # part of the block is content: not a block after all
            self.skip_ws = s[len(t) :]
        else:
            self.skip_ws += s

    def _release(self) -> None:
        """The held block yields a call: its text that is not a marker is content, in order."""
        held, self.spill = self.spill or [], None
        for s, kind in held:
            if kind == _SKIP_TEXT:
                self._skip_text(s)
            elif kind == _CONTENT_TEXT:
                self.content.append(s)
                self.in_block = False

    def _give_back(self) -> None:
        """The held block ends without a call: all of its text is content, markers included
        (unless it is only markers and whitespace: then none of it is)."""
        held, self.spill = self.spill or [], None
        text = "".join(s for s, _kind in held)
        if any(kind != _MARKER for _s, kind in held) and text.strip():
            self.content.append(text)

    # ------------------------------------------------------------------ transitions

    def _apply(self, rule: Rule, terminal: str, marker: str, at: int) -> None:
        """A transition at offset ``at`` (``marker`` ends at ``at + len(marker)``)."""
        self.skip_ws = ""
        end = at + len(marker)
        if self.spill is not None and self.call is None and marker and Act.CALL_START not in rule.acts:
            self.spill.append((marker, _MARKER))
        for act in rule.acts:
            if act is Act.REASONING_END:
                continue
            if act is Act.CALL_START:
                if self.call is not None:
                    self._end_call(at)  # the new call's marker is not the old one's text
                self.call = self._open_call(at)
            elif act is Act.CALL_END:
                if self.call is not None:
                    self._end_call(end)
            elif act is Act.NAME_END:
                self._name_end()
            elif act is Act.ARG_MARKER:
                call = self.call
                if call is None:
                    continue
                codec = call.codec
                if codec is None:
                    if call.read or call.json_at >= 0:
                        raise _UNDECIDED
                    call.json_at = at  # the marker is the JSON's first text ("{")
                else:
                    if codec.structured:
                        codec.feed(marker, 0, len(marker))
                    else:
                        codec.marker(terminal)
                    self._after_codec(call, end)
            elif act is Act.ARGS_END:
                self._args_end()
            elif act is Act.MARKER_TEXT:
                continue  # read as text once the state has changed (below)
            elif act is Act.CALL_DROP:
                call = self.call
                if call is not None:
                    self.call = None
                    if "".join(call.name_parts).strip():  # it had a name: not an envelope after all
                        self._bad(call, "a name before a list of calls")
                        self._reject(call, end)
            else:  # message headers are not decided here
                raise _UNDECIDED
        st = self.states[rule.next]
        was_field = self.st.region is _REASONING or self.st.region is _CONTENT
        is_field = st.region is _REASONING or st.region is _CONTENT
        if was_field and not is_field:  # the engine's block of calls (``Machine._block``) opens
            self.in_block = Act.CALL_START in rule.acts or any(Act.CALL_START in r.acts for r in st.rules.values())
            if self.in_block:
                self.spill = [] if Act.CALL_START in rule.acts else [(marker, _MARKER)]
        elif is_field:
            if not was_field and self.spill is not None:
                self._give_back()
            self.in_block = False
        self.st = st
        if Act.MARKER_TEXT in rule.acts:
            self._text(marker)  # the marker is text of the state it leads to

    def _open_call(self, at: int) -> _Call:
        if self.reader is not None:
            return _Call(None, at)
        factory = self.spec.codec
        if factory is None:
            raise _UNDECIDED  # the engine reports it
        return _Call(factory(self.options.tool_index), at)

    def _read(self, call: _Call, pos: int, n: int) -> int:
        """The arguments' JSON at C speed; where the C decoder refuses it (invalid, cut off, a
        string of arguments, nested too deep), the format's own codec reads this call, so its
        stop and its rules are exactly the engine's."""
        reader = self.reader
        assert reader is not None
        start = call.json_at if call.json_at >= 0 else pos
        try:
            end, name, call_id, args = reader(self.text, start, n)
        except (_Undecided, ValueError, RecursionError, StopIteration):
            factory = self.spec.codec
            assert factory is not None
            codec = factory(self.options.tool_index)
            if call.name is not None:
                codec.set_name(call.name)
            call.codec = codec
            j = codec.feed(self.text, start, n)
            self._after_codec(call, j)
            return j
        call.read = True
        call.args.append(args)
        if call.name is None and name is not None:
            call.name = name
            call.id = call_id
            self._announce(call)
        done_rule = self.st.done_rule
        if done_rule is not None and self.call is call:
            self._apply(done_rule, "", "", end)
        return end

    def _after_codec(self, call: _Call, at: int) -> None:
        """After the codec read text up to ``at``: the engine's ``_after_codec``."""
        codec = call.codec
        assert codec is not None
        if call.name is None and codec.name is not None:
            call.name = codec.name
            call.id = codec.call_id
            self._announce(call)
        piece = codec.take()
        if piece:
            call.args.append(piece)
        if codec.failed and not call.bad:
            self._bad(call, "invalid arguments")
        if codec.structured and (codec.done or codec.failed):
            st = self.st
            rule = st.failed_rule if codec.failed else st.done_rule
            if rule is not None and self.call is call:
                # the format ends calls where their JSON ends (or breaks): the rest is scanned again
                self._apply(rule, "", "", at)

    def _name_end(self) -> None:
        call = self.call
        if call is None or call.name is not None:
            return
        raw = "".join(call.name_parts).strip()
        call_id = "".join(call.id_parts).strip() or None
        parse_name = self.spec.parse_name
        if parse_name is not None and raw:
            raw, parsed_id = parse_name(raw)
            call_id = call_id or parsed_id
        if not raw:
            self._bad(call, "no tool name")
            return
        call.name = raw
        call.id = call_id
        if call.codec is not None:
            call.codec.set_name(raw)
        self._announce(call)

    def _announce(self, call: _Call) -> None:
        index = self.options.tool_index
        name = call.name
        if name is not None and not name.isascii() and not valid_unicode(name):
            self._bad(call, f"the tool name {name!r} is not valid Unicode")
        elif self.spec.validate_names and index and name not in index:
            self._bad(call, f"unknown tool {name!r}")

    def _args_end(self) -> None:
        call = self.call
        if call is None or call.args_closed:
            return
        if call.name is None:
            self._name_end()
        call.args_closed = True
        codec = call.codec
        if codec is None:
            if not call.read:
                self._bad(call, "unfinished arguments")
            return
        rest = codec.close()
        if rest is None:
            self._bad(call, "invalid arguments" if codec.failed else "unfinished arguments")
        elif rest:
            call.args.append(rest)

    def _end_call(self, end: int) -> None:
        """The open call ends at offset ``end``: a tool call, or (not a call) its text is content."""
        call = self.call
        assert call is not None
        if not call.args_closed:
            self._args_end()
        self.call = None
        name = call.name
        if call.bad or name is None:
            self._reject(call, end)
            return
        index = len(self.calls)
        if self.spill is not None:
            self._release()  # the block yields a call: its markers were structure
        self.calls.append(ToolCall(id=call.id or self._new_id(index, name), name=name, arguments="".join(call.args)))

    def _bad(self, call: _Call, reason: str) -> None:
        if self.strict:
            raise _UNDECIDED  # strict=True: the engine raises MalformedOutputError
        if not call.bad:
            call.bad = reason

    def _reject(self, call: _Call, end: int) -> None:
        """Not a call after all: its exact text, markers included, is content."""
        if self.strict:
            raise _UNDECIDED
        if self.spill is not None:
            self.spill.append((self.text[call.start : end], _CONTENT_TEXT))  # held with its block
            return
        self.content.append(self.text[call.start : end])
        self.in_block = False  # part of the block is content: not a block after all

    def _new_id(self, index: int, name: str) -> str:
        """The engine's id rule for a call whose id the model did not write."""
        options = self.options
        if options.id_factory is not None:
            return options.id_factory(index)
        family = self.spec.call_id
        if family is not None:
            return family(options, index, name)
        return random_call_id(index)
