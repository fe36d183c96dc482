"""The machine: the format's table, interpreted over the text of one stream.

``Machine`` owns the current state (one ``StateTable`` of the compiled format), the stream's
``Phase``, the output offset and whether reasoning has ended. ``_process`` scans a delta for the
markers live in the current state, routes the text between them to the region of the state
(``_text``) and applies the table's rule at each marker (``_apply``). Its components own the
rest, each a small class with its own ``copy()`` and plain value (``engine.value``):

* ``Lexer`` (``lexer``): held-back text, token-id alignment;
* ``CallTracker`` (``tracker``): the calls streamed so far and the open ``Call`` with its codec;
* ``Fields`` (``fields``): whitespace of reasoning and content;
* ``Header`` (``headers``): an open message header;
* ``Block`` (``block``): a block or list of calls and the text it holds;
* ``Deferred`` (``deferred``): reasoning held while it may be content.

This is the reference behaviour: ``EventStream`` (``event_stream``) adds the public API and fast
paths that give the same events for the deltas they take. The rules are listed in the engine
package docstring (``trisect.engine``).

Invariant: only new text is scanned (plus at most one held marker prefix).

Cost: O(len(text) + markers in it) per ``_process``; memory O(open call + held text); ``copy()``
and ``to_value()`` O(that state).
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from ..errors import MalformedOutputError
from .block import BROKEN, CONTENT_TEXT, OUTSIDE, SKIP_TEXT, UNDECIDED, Block
from .call import Call
from .codec import CodecFactory
from .compile import NON_BLANK, CompiledFormat
from .deferred import Deferred
from .events import ContentText, Event, ReasoningEnd, ReasoningText, ToolCallAborted, ToolCallUnfinished
from .fields import Field, Fields, skip_lead
from .guards import marker_counts
from .headers import Header
from .lexer import TEXT, Lexer, holdback
from .spec import CONTENT, REASONING, Act, Region, Rule
from .spec import OPENING as OPENING_START
from .stream_options import StreamOptions
from .trace import Trace
from .tracker import CallTracker
from .value import Value, as_bool, as_enum, as_int, as_str, as_tuple
from .vocab import Vocab

Finder = Callable[[tuple[str, ...], str, int, int], tuple[int, str]]
"""Finds the earliest of some marker strings in ``data[scan:n]``: ``(its offset, the string)``,
``(-1, "")`` for none (``engine.whole.WholeFinder``)."""

_REASONING, _CONTENT, _NAME, _CALL_ID = Region.REASONING, Region.CONTENT, Region.NAME, Region.CALL_ID
_ARGS, _HEADER, _SKIP = Region.ARGS, Region.HEADER, Region.SKIP
_OPENS_REASONING = (_CONTENT, Region.SKIP, _HEADER)  # a transition from these into reasoning opens a block
_FIELDS = (_REASONING, _CONTENT)


class Phase(enum.Enum):
    """The stream's life. Only ``RUNNING`` takes the fast paths."""

    FRESH = "fresh"  # the format's content prefix is not emitted yet
    DEFERRING = "deferring"  # reasoning is held while it may turn out to be content (reasoning_fallback)
    # the held reasoning ended and nothing followed yet: text or a marker makes it reasoning; the
    # end of the output, with nothing after it, makes it the content (the swap: content empty)
    HOLDING = "holding"
    # the prompt left the opener to the model (``spec.OPENING``): the state is REASONING, and the
    # output's first non-blank text or marker decides. The opener keeps the block open, a closer
    # ends it empty; anything else makes the output content from its start (a thinking model
    # writes the opener first)
    OPENING = "opening"
    RUNNING = "running"
    FINISHED = "finished"


FRESH, DEFERRING, HOLDING, OPENING, RUNNING, FINISHED = Phase


class Machine:
    """The state of one stream and the table interpreter (see the module docstring).

    ``value``: start from the state a stream wrote (``to_value``) instead of ``initial_state``;
    ``codec``: the factory of each call's codec (default: the format's)."""

    __slots__ = (
        "_c",
        "_request",
        "_st",
        "_phase",
        "_offset",
        "reasoning_ended",
        "_interrupted",
        "_lex",
        "_calls",
        "_fields",
        "_header",
        "_block",
        "_deferred",
        "_out",
        "_at",
        "_find",
        "trace",
    )

    def __init__(
        self,
        compiled: CompiledFormat,
        request: StreamOptions,
        *,
        initial_state: str = "CONTENT",
        vocab: Vocab | None = None,
        atomic_tool_calls: bool = False,
        codec: CodecFactory | None = None,
        value: Value = None,
    ) -> None:
        spec = compiled.spec
        self._c = compiled
        self._request = request
        self._out: list[Event] = []  # the events of the feed being processed
        self._at = 0  # output offset of the marker being applied
        self._find: Finder | None = None  # how a whole text's markers are found (``engine.whole``)
        self.trace: Trace | None = None  # set to a Trace to record what the stream consumes
        if value is None:
            opening = initial_state == OPENING_START
            if opening:
                initial_state = REASONING
            self._st = compiled.states[initial_state]
            self._offset = 0  # characters of output processed before the current data
            self.reasoning_ended = initial_state != REASONING
            self._interrupted = False  # a tool call ended the reasoning block before its closer
            self._lex = Lexer(compiled, vocab)
            self._calls = CallTracker(spec, request, atomic=atomic_tool_calls, codec=codec)
            self._fields = Fields(Field(spec.strip), Field(spec.strip))
            self._header = Header()
            self._block = Block(spec.whole_list)
            self._deferred = Deferred()
            self._phase = (
                OPENING
                if opening
                else FRESH
                if spec.content_prefix
                else RUNNING
                if spec.reasoning_fallback is None
                else self._running_phase()
            )
            return
        state, phase, offset, ended, interrupted, lex, calls, fields, header, block, deferred = as_tuple(value, 11)
        name = as_str(state)
        if name not in compiled.states:
            raise ValueError(f"{spec.name} has no state {name!r}")
        self._st = compiled.states[name]
        self._phase = as_enum(phase, Phase)
        self._offset = as_int(offset)
        self.reasoning_ended = as_bool(ended)
        self._interrupted = as_bool(interrupted)
        self._lex = Lexer.from_value(compiled, vocab, lex)
        self._calls = CallTracker.from_value(spec, request, calls, atomic=atomic_tool_calls, codec=codec)
        self._fields = Fields.from_value(spec.strip, fields)
        self._header = Header.from_value(header)
        self._block = Block.from_value(spec.whole_list, block)
        self._deferred = Deferred.from_value(deferred)

    def to_value(self) -> Value:
        """``(state, phase, offset, reasoning_ended, interrupted, lexer, calls, fields, header,
        block, deferred)``: everything the stream holds but its configuration (the compiled format,
        the request's options, the tokenizer, the codec factory) and its trace."""
        return (
            self._st.name,
            self._phase,
            self._offset,
            self.reasoning_ended,
            self._interrupted,
            self._lex.to_value(),
            self._calls.to_value(),
            self._fields.to_value(),
            self._header.to_value(),
            self._block.to_value(),
            self._deferred.to_value(),
        )

    def _running_phase(self) -> Phase:
        fallback = self._c.spec.reasoning_fallback
        if fallback is not None and not self.reasoning_ended and fallback(self._request):
            return DEFERRING
        return RUNNING

    @property
    def in_reasoning(self) -> bool:
        """The current state's text is reasoning."""
        return self._st.region is _REASONING

    # ------------------------------------------------------------------ scanning

    def _text_events(self, text: str) -> list[Event]:
        self._out = []
        if text or self._lex.hold:
            self._process(text, final=False)
        return self._out

    def _process(self, text: str, final: bool) -> None:
        if self._phase is FRESH:
            self._phase = self._running_phase()
            prefix = self._c.spec.content_prefix
            self._field(_CONTENT, prefix, 0, len(prefix))
        lex = self._lex
        calls = self._calls
        terminal_of = self._c.terminal_of
        find = self._find
        data = lex.begin(text, self._offset)
        n = len(data)
        pos = scan = 0
        while pos < n:
            st = self._st
            call = calls.open
            if st.region is _ARGS and call is not None and call.codec.structured:
                codec = call.codec
                if not (codec.done or codec.failed):
                    hit = lex.next_special(st, data, pos, n, final) if lex.specials or lex.ahead else None
                    limit = hit[0] if hit is not None else n
                    if limit == pos and hit is not None and not hit[3]:
                        lex.hold = data[pos:]  # the text ran ahead of the marker's id: wait for it
                        break
                    if limit == pos and hit is not None and codec.in_string:
                        # a special token inside a JSON string is string text
                        lex.claim(hit[2], data, hit[0], hit[1])
                        limit = hit[1]
                    if limit > pos:
                        pos = scan = calls.args(data, pos, limit, self._out)
                        self._codec_step(call, self._offset + pos)
                        continue
            lexicon = st.text_lex if lex.mode is TEXT else lex.lexicon(st)
            strings = st.find_strings
            if find is not None and strings is not None:  # a whole text: one str.find per marker
                a, found = find(strings, data, scan, n)
            else:
                m = lexicon.pattern.search(data, scan) if lexicon.pattern is not None else None
                a, found = (m.start(), m.group()) if m is not None else (-1, "")
            if st.text_rule is not None or st.stray_rule is not None:
                text_end = a if a >= 0 else n if final else holdback(data, scan, n, lexicon)
                if st.text_rule is not None and text_end > pos:  # the first text leaves, read in the next
                    self._apply(st.text_rule, "", "")
                    scan = pos
                    continue
                stray_rule = st.stray_rule
                stray = NON_BLANK.search(data, pos, text_end) if stray_rule is not None else None
                if stray_rule is not None and stray is not None:  # other text than whitespace leaves
                    k = stray.start()
                    if k > pos:
                        self._text(data, pos, k)
                    self._at = self._offset + k
                    self._apply(stray_rule, "", "")
                    pos = scan = k
                    continue
            if a < 0:
                keep = n if final or lexicon.starts is None else holdback(data, scan, n, lexicon)
                if keep > pos:
                    if (
                        final
                        and self._block.open
                        and calls.open is None
                        and st.region is _SKIP
                        and lex.may_be_cut_marker(st, data[pos:keep])
                    ):
                        self._block.skip_text(data[pos:keep])  # the block's last text: cut-off markup
                    else:
                        self._text(data, pos, keep)
                lex.hold = data[keep:]
                break
            b = a + len(found)
            if not final and n - a <= lexicon.longest_prefix and data[a:n] in lexicon.prefixes:
                # a complete marker that may still grow into a longer one ("[" of "[ARGS]"): wait
                if a > pos:
                    self._text(data, pos, a)
                lex.hold = data[a:]
                break
            terminal = terminal_of[found]
            rule = st.rules.get(terminal)
            if rule is None:  # a special token with no entry in this state: text, its id used up here
                if lex.claim(terminal, data, a, b):
                    self._text(data, pos, b)
                    pos = b
                elif not final and lex.id_may_come(terminal, data, a):
                    if a > pos:
                        self._text(data, pos, a)
                    lex.hold = data[a:]  # the text ran ahead of its ids: wait for them
                    break
                scan = b if pos == b else a + 1
                continue
            real = lex.mode is not TEXT and terminal in self._c.special  # given by id (claimed when decided)
            if real and not lex.is_real(terminal, data, a):
                if not final and lex.id_may_come(terminal, data, a):
                    if a > pos:
                        self._text(data, pos, a)
                    lex.hold = data[a:]  # the text ran ahead of its ids: wait for them
                    break
                scan = a + 1
                continue
            if rule.by_id and not real:  # counts only as its special token: here it is text
                scan = a + 1
                continue
            if rule.after_interrupt and not self._interrupted:  # no interrupted block: text
                pos, scan = self._marker_text(real, terminal, data, pos, a, b)
                continue
            if rule.guarded:
                if a > pos:  # text before the marker is text whatever the marker turns out to be
                    self._text(data, pos, a)
                    pos = a
                # in a name region the marker could be name text: guarded as with no call open
                value = call.codec if call is not None and call.codec.in_value else None
                if call is None or value is not None or st.region is _NAME:
                    verdict = marker_counts(rule, value, data, b, n, final)
                    if verdict is None:  # wait for what comes after the marker (its id stays queued)
                        lex.hold = data[a:]
                        break
                    if not verdict:  # value text
                        pos, scan = self._marker_text(real, terminal, data, pos, a, b)
                        continue
            if self._block.phase is BROKEN and calls.open is None:
                # a block whose list did not read is content, markers included; no call opens in it
                if self._c.states[rule.next].region not in _FIELDS:
                    pos, scan = self._marker_text(real, terminal, data, pos, a, b)
                    continue
                if real:
                    lex.claim(terminal, data, a, b)
                if a > pos:
                    self._text(data, pos, a)
                self._content(self._fields.skip_ws + data[a:b])  # with the whitespace before it
                self._fields.skip_ws = ""
                self._at = self._offset + a
                self._apply(rule, terminal, "")  # the marker that leaves it, as content
                pos = scan = b
                continue
            if self._phase is OPENING:
                if a > pos:  # blank text is dropped; any other makes the output content
                    self._text(data, pos, a)
                    pos = a
                if self._phase is OPENING and (terminal == "THINK_START" or terminal == "THINK_END"):
                    self._phase = RUNNING  # the model opened the block (or closed an empty one)
                else:
                    self._as_content()
                    scan = pos  # the marker is read again, as content's
                    continue
            if real:
                lex.claim(terminal, data, a, b)
            if a > pos:
                self._text(data, pos, a)
            self._at = self._offset + a
            if rule.after_interrupt:
                self._interrupted = False  # the interrupted block's closer: it closes nothing more
            self._apply(rule, terminal, data[a:b])
            pos = scan = b
        used = n - len(lex.hold)
        self._offset += used
        if lex.mode is not TEXT:
            lex.bytes_at(data, used)

    def _marker_text(self, real: bool, terminal: str, data: str, pos: int, a: int, b: int) -> tuple[int, int]:
        """A marker at ``data[a:b]`` that is text where it stands: ``(pos, scan)`` after it. As
        its special token (``real``) its id is used up here and the text up to its end goes out;
        written as text the scanner looks again from the next character."""
        if not real:
            return pos, a + 1
        self._lex.claim(terminal, data, a, b)
        self._text(data, pos, b)
        return b, b

    # ------------------------------------------------------------------ text routing

    def _text(self, data: str, i: int, j: int) -> None:
        """``data[i:j]``, text of the current state. A field and raw-text arguments read it
        from ``data`` (a whole output's text between two markers can be most of it)."""
        region = self._st.region
        calls = self._calls
        if region is _REASONING and calls.open is None and self._phase is RUNNING:  # the commonest
            t = self._fields.reasoning.trim(data, i, j)
            if t:
                self._out.append(ReasoningText(t))
            return
        if region is _ARGS:
            call = calls.open
            if call is not None:
                if call.codec.structured:
                    calls.stray(data[i:j])
                else:
                    calls.args(data, i, j, self._out)
            return
        if calls.open is not None:
            s = data[i:j]
            if region is _NAME:
                calls.name_text(s)
                return
            if region is _CALL_ID:
                calls.id_text(s)
                return
            calls.note(s)
            if region is _SKIP:
                calls.markup_text(s)
        if region is _REASONING or region is _CONTENT:
            self._field(region, data, i, j)
        elif region is _HEADER:
            self._header.add(data[i:j])
        elif calls.open is None and region is _SKIP:
            s = data[i:j]
            if not self._block.skip_text(s):  # held: content only if the block yields a call
                self._content(self._fields.skip_text(s))

    def _field(self, region: Region, data: str, i: int, j: int) -> None:
        """``data[i:j]``, text of a field (reasoning or content)."""
        if region is _REASONING:
            if self._phase is OPENING:
                if skip_lead(data, i, j, self._c.spec.strip) == j:
                    return  # leading whitespace: either field drops it
                self._as_content()
                self._field(_CONTENT, data, i, j)
                return
            if self._phase is DEFERRING:
                self._deferred.add(data[i:j])
                return
            if self._phase is HOLDING:
                self._held_is_reasoning()
            t = self._fields.reasoning.trim(data, i, j)
            if t:
                self._out.append(ReasoningText(t))
            return
        if self._phase is HOLDING or self._st.region is not _CONTENT:
            s = data[i:j]
            blank = s.isspace()
            if self._phase is HOLDING and not blank:
                self._held_is_reasoning()
            if self._st.region is not _CONTENT:  # content that arises in a block of calls
                if self._block.holds_content(s):  # an undecided block holds it with its text
                    return
                if not blank:
                    self._block.spill()  # part of the block is content: the rest follows it (not a block after all)
                    if self.trace is not None:
                        self.trace.spill()
        t = self._fields.content.trim(data, i, j)
        if t:
            self._out.append(ContentText(t))

    def _content(self, text: str | None) -> None:
        if text:
            self._field(_CONTENT, text, 0, len(text))

    # ------------------------------------------------------------------ transitions

    def _apply(self, rule: Rule, terminal: str, marker: str) -> None:
        acts = rule.acts
        calls = self._calls
        if self._phase is HOLDING and marker:
            self._held_is_reasoning()  # something follows the held block: it was reasoning
        self._fields.skip_ws = ""  # whitespace of a SKIP region before a marker is dropped
        trace = self.trace
        if trace is not None and marker and not rule.kept and calls.open is None and self._st.region is not _HEADER:
            label = not acts and self._st.region is self._c.states[rule.next].region and terminal not in self._c.special
            trace.applied(marker, self._at, acts, label)
        if calls.open is None:
            if not rule.opens_call and self._block.phase is not OUTSIDE:
                self._block.marker(marker)
        elif rule.call_text:
            calls.note(marker)
            calls.markup_end()
        nxt = rule.next
        if self._st.region is _HEADER and not rule.header_marker:
            if self._c.states[nxt].region is _HEADER:
                self._header.add(marker)  # a marker inside the header is header text
            else:
                left = self._header.abandon(marker)
                if left is not None and left[: len(left) - len(marker)].strip():
                    self._content(left)  # a header that does not read is content, markers included
                elif trace is not None and marker:  # an empty message: its end marker is structure
                    trace.add("marker", self._at, self._at + len(marker))
        for act in acts:
            if act is Act.REASONING_END:
                if self._phase is DEFERRING:
                    if self._c.spec.fallback_when_empty:  # reasoning if anything follows: hold it till then
                        self._phase = HOLDING
                        self.reasoning_ended = True  # the block ended here (the token view's answer too)
                        continue
                    self._phase = RUNNING
                    for piece in self._deferred.take():  # reasoning after all: release it
                        self._field(_REASONING, piece, 0, len(piece))
                if not self.reasoning_ended:
                    self.reasoning_ended = True
                    self._out.append(ReasoningEnd())
                # ended by anything but its closer (a tool call): the closer may still come
                self._interrupted = acts != (Act.REASONING_END,) or self._c.states[nxt].region is not _CONTENT
            elif act is Act.CALL_START:
                if calls.open is not None:
                    self._end_call(self._at)
                calls.start(marker, self._at, self._st.name)
            elif act is Act.CALL_DROP:
                dropped = calls.open
                text = calls.drop(self._at + len(marker))
                if text:
                    self._content(text)
                elif dropped is not None and calls.open is None:
                    # the envelope's text opens the list: markup of its block, which gives it back
                    # with the rest if the list yields no call (all of a block's text or none)
                    self._block.marker(calls.raw(dropped, self._at + len(marker)))
                    if self.trace is not None:
                        self.trace.add("dropped", dropped.start, self._at + len(marker))
            elif act is Act.NAME_END:
                calls.name_end(self._out)
            elif act is Act.ARG_MARKER:
                calls.marker_args(terminal, marker, self._out, self._at)
                if calls.open is not None:
                    self._codec_step(calls.open, self._at + len(marker))
            elif act is Act.ARGS_END:
                calls.args_end(self._out)
            elif act is Act.CALL_END:
                if calls.open is not None:  # it ends after its marker, or before one that opens a header
                    self._end_call(self._at if Act.HEADER_START in acts else self._at + len(marker))
            elif act is Act.HEADER_START:
                self._content(self._header.start(marker))
                self._header.at = self._at
            elif act is Act.HEADER_END:
                nxt = self._header_end(marker, nxt)
            elif act is Act.LIST_CLOSE:
                self._block.close_list(self._out)
            elif act is Act.LIST_BREAK:
                if self._block.list_open:  # its text since its last call too
                    self._content(self._break_list(self._block.text()))
        region = self._st.region
        st = self._c.states[nxt]
        if st.region is _REASONING and region in _OPENS_REASONING:
            self.reasoning_ended = False  # a new reasoning block opens
            self._interrupted = False
        if st.region is _HEADER and region is not _HEADER and Act.HEADER_START not in acts:
            self._header.at = self._at + len(marker)
        if (region in _FIELDS) is not (st.region in _FIELDS):
            if region not in _FIELDS:
                if self._block.phase is UNDECIDED:
                    self._give_back()
                self._block.leave(self._out)  # a list closed: its calls stand
                if self.trace is not None:
                    self.trace.leave(self._at + len(marker))
            elif rule.opens_call or st.opens_calls:
                # a block of calls opens
                # (not a message's end marker, such as Harmony's <|end|>); a call's marker is its own
                self._block.begin("" if rule.opens_call else marker)
                if self.trace is not None:
                    self.trace.enter(self._at)
        self._st = st
        if rule.kept:
            self._text(marker, 0, len(marker))  # the marker is text of the state it leads to

    def _as_content(self) -> None:
        """The output did not begin with the opener (``OPENING``): it is content from its start."""
        self._st = self._c.states[CONTENT]
        self._phase = RUNNING
        self.reasoning_ended = True

    def _held_is_reasoning(self) -> None:
        """Something followed the held reasoning block (HOLDING): it is reasoning, and it ended."""
        self._phase = RUNNING
        for piece in self._deferred.take():
            self._field(_REASONING, piece, 0, len(piece))
        self._out.append(ReasoningEnd())

    def _codec_step(self, call: Call, at: int) -> None:
        """After argument text (the codec stopped at output offset ``at``): a structured codec
        that ended or failed fires the state's rule (the format ends calls where their JSON
        ends; a failed one is not a call, and what the codec did not consume is scanned again
        in the next state)."""
        codec = call.codec
        if codec.structured and (codec.done or codec.failed) and self._calls.open is call:
            rule = self._st.failed_rule if codec.failed else self._st.done_rule
            if rule is not None:
                self._at = at
                self._apply(rule, "", "")

    def _end_call(self, end: int) -> None:
        """The open call ends at output offset ``end``."""
        call = self._calls.open
        block = self._block
        block.call_ends()  # the block's text starts again after the call
        k = len(self._out)
        text = self._calls.end(self._out, end)
        if block.listing and call is not None and text is None:
            if self._calls.atomic:  # held until the list closes
                block.call_stands(self._calls.raw(call, end), call.index, self._out[k:])
                del self._out[k:]
            else:
                block.call_stands(self._calls.raw(call, end), call.index, None)
        if text is None and block.phase is UNDECIDED:
            self._release()  # the block yields a call: its markers were structure
        if text is not None:
            if block.list_open:  # its first call too: the list, opener included, is content
                text = self._break_list(text)
            self._content(text)
        elif self.trace is not None and call is not None:
            self.trace.call(call.start, end)

    def _break_list(self, text: str) -> str:
        """A call of a list that must close does not read, after calls that did
        (``FormatSpec.whole_list``): a block is all of its text or none, so none of its calls
        stand (those streamed are reported aborted) and its text from its opener is content,
        before the bad call's ``text``. Its held calls were never sent: their indexes are free."""
        streamed, head, held = self._block.break_list()
        if held is not None:
            self._calls.unsend(held)
        if self.trace is not None:
            self.trace.break_list()
        self._out += [ToolCallAborted(i, "a call of its list of calls does not read") for i in streamed]
        return head + text

    def _cut_list(self) -> None:
        """The output ended inside a list of calls that must close (``FormatSpec.whole_list``):
        it is not a list. None of its calls stand (those already streamed are reported aborted),
        and all of its text, from its opener, is the unfinished call."""
        out = self._out
        tail, index = "", None
        if self._calls.open is not None:
            k = len(out)
            self._calls.unfinished(out, self._offset)  # raises under strict
            ev = out.pop(k)
            assert isinstance(ev, ToolCallUnfinished)
            tail, index = ev.text, ev.index
        elif self._request.strict:
            raise MalformedOutputError("unfinished list of tool calls", state=self._st.name, position=self._offset)
        reason = "the output ended inside its list of calls"
        streamed, text = self._block.cut()
        out += [ToolCallAborted(i, reason) for i in streamed]
        out.append(ToolCallUnfinished(index, text + tail, reason))

    def _release(self) -> None:
        """The held block yields a call: its text that is not a marker is content, in order."""
        for s, kind in self._block.release():
            if kind is SKIP_TEXT:
                self._content(self._fields.skip_text(s))
            elif kind is CONTENT_TEXT:
                self._content(s)

    def _give_back(self) -> None:
        """The held block ends without a call: all of its text is content, its markers
        included (unless it is only markers and whitespace: then none of it is)."""
        text = self._block.give_back()
        if text:
            if self.trace is not None:
                self.trace.give_back()
            self._field(_CONTENT, text, 0, len(text))

    def _header_end(self, marker: str, default: str) -> str:
        """The header is complete: the spec maps it to the body's state (and a call's name)."""
        text = self._header.take()
        header = self._c.spec.header
        route = header(text) if header is not None else None
        if route is None:
            if self._request.strict:
                raise MalformedOutputError(
                    f"malformed message header {text!r}", state=self._st.name, position=self._offset
                )
            malformed = text + marker
            self._field(_CONTENT, malformed, 0, len(malformed))
            return default
        state, name = route
        if name is None:
            if self.trace is not None:
                self.trace.add("header", self._header.at, self._at + len(marker))
        else:  # the header opens a call: its text is the call's first text
            if self._calls.open is not None:
                self._end_call(self._header.at)
            self._calls.start(text + marker, self._header.at, self._st.name)
            self._calls.set_name(name, self._out)
        return state
