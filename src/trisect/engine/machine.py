"""The machine: the format's table, interpreted over the text of one stream.

``Machine`` owns the current state (one ``StateTable`` of the compiled format) and the
stream's ``Phase``. ``_process`` scans a delta for the markers live in the current state,
routes the text between them to the region of the state (``_text``) and applies the table's
rule at each marker (``_apply``). Its parts own the rest: ``Lexer`` (held-back text, token-id
alignment), ``CallTracker`` (the open call), ``Fields`` (whitespace of reasoning and content),
``Header`` (a message header). This is the reference behaviour: ``EventStream`` (``event_stream``)
adds the public API and fast paths that give the same events for the deltas they take. The
rules are listed in the engine package docstring (``trisect.engine``).

Invariant: only new text is scanned (plus at most one held marker prefix).

Cost: O(len(text) + markers in it) per ``_process``; memory O(open call + held text).
"""

from __future__ import annotations

import enum

from ..errors import MalformedOutputError
from .call import Call
from .compile import CompiledFormat
from .events import ContentText, Event, ReasoningEnd, ReasoningText, ToolCallAborted, ToolCallUnfinished
from .fields import Fields
from .guards import marker_counts
from .headers import Header
from .lexer import TEXT, Lexer, holdback
from .spec import Act, Region, Rule
from .stream_options import StreamOptions
from .trace import Trace
from .tracker import CallTracker
from .vocab import Vocab

_REASONING, _CONTENT, _NAME, _CALL_ID = Region.REASONING, Region.CONTENT, Region.NAME, Region.CALL_ID
_ARGS, _HEADER, _SKIP = Region.ARGS, Region.HEADER, Region.SKIP
_OPENS_REASONING = (_CONTENT, Region.SKIP, _HEADER)  # a transition from these into reasoning opens a block
_NOT_NOTED = (Act.CALL_START, Act.HEADER_START)  # markers that are not text of the open call
_FIELDS = (_REASONING, _CONTENT)
_KEPT = Act.MARKER_TEXT
_MARKER, _SKIP_TEXT, _CONTENT_TEXT = 0, 1, 2  # kinds of a held block's text (Machine._spill)


class Phase(enum.Enum):
    """The stream's life. Only ``RUNNING`` takes the fast paths."""

    FRESH = "fresh"  # the format's content prefix is not emitted yet
    DEFERRING = "deferring"  # reasoning is held while it may turn out to be content (reasoning_fallback)
    # the held reasoning ended and nothing followed yet: text or a marker makes it reasoning; the
    # end of the output, with nothing after it, makes it the content (the swap: content empty)
    HOLDING = "holding"
    RUNNING = "running"
    FINISHED = "finished"


FRESH, DEFERRING, HOLDING, RUNNING, FINISHED = Phase


class Machine:
    """The state of one stream and the table interpreter (see the module docstring)."""

    __slots__ = (
        "_c",
        "_spec",
        "_request",
        "_phase",
        "_st",
        "_lex",
        "_calls",
        "_fields",
        "_header",
        "_deferred",
        "_block",
        "_spill",
        "_list",
        "_list_calls",
        "_list_held",
        "_out",
        "_offset",
        "_at",
        "reasoning_ended",
        "in_reasoning",
        "trace",
    )

    def __init__(
        self,
        compiled: CompiledFormat,
        request: StreamOptions,
        *,
        initial_state: str,
        vocab: Vocab | None = None,
        atomic_tool_calls: bool = False,
    ) -> None:
        self._c = compiled
        self._spec = compiled.spec
        self._request = request
        self._st = compiled.states[initial_state]
        # the current state's text is reasoning: kept with ``_st`` (read per delta by the
        # OpenAI layer's usage count, so a plain attribute rather than a property)
        self.in_reasoning = self._st.region is _REASONING
        self._lex = Lexer(compiled, vocab)
        self._calls = CallTracker(compiled.spec, request, atomic=atomic_tool_calls)
        self._fields = Fields(compiled.spec.strip)
        self._header = Header()  # the open message header (Region.HEADER)
        self._deferred: list[str] = []  # reasoning held while DEFERRING
        # inside a block of calls with no call open: its text since its opener or its last call
        # (None: not in a block), given back if the output ends there (``unfinished_block``)
        self._block: list[str] | None = None
        # the text of a block of calls in which no call has ended as a call yet, in order, as
        # (text, kind: _MARKER / _SKIP_TEXT / _CONTENT_TEXT); None: no block, or it yielded a
        # call. Its content waits: a block that yields no call is content whole, markers
        # included (all of its text, or none)
        self._spill: list[tuple[str, int]] | None = None
        # ``FormatSpec.whole_list``: the text of the open list of calls so far (its calls' and the
        # text between them; None: not in one), the indexes of its calls already streamed, and
        # (atomic streams) the events of its complete calls, held until the list closes
        self._list: list[str] | None = None
        self._list_calls: list[int] = []
        self._list_held: list[Event] = []
        self._out: list[Event] = []
        self._offset = 0  # characters of output processed before the current data
        self._at = 0  # output offset of the marker being applied
        self.reasoning_ended = initial_state != "REASONING"
        self._phase = FRESH if compiled.spec.content_prefix else self._running_phase()
        self.trace: Trace | None = None  # set to a Trace to record what the stream consumes

    def _running_phase(self) -> Phase:
        fallback = self._spec.reasoning_fallback
        if fallback is not None and not self.reasoning_ended and fallback(self._request):
            return DEFERRING
        return RUNNING

    # ------------------------------------------------------------------ scanning

    def _text_events(self, text: str) -> list[Event]:
        self._out = []
        if text or self._lex.hold:
            self._process(text, final=False)
        return self._out

    def _process(self, text: str, final: bool) -> None:
        if self._phase is FRESH:
            self._phase = self._running_phase()
            self._field(_CONTENT, self._spec.content_prefix)
        lex = self._lex
        calls = self._calls
        terminal_of = self._c.terminal_of
        data = lex.begin(text, self._offset)
        n = len(data)
        pos = scan = 0
        while pos < n:
            st = self._st
            call = calls.open
            if st.region is _ARGS and call is not None and call.codec.structured:
                codec = call.codec
                if not (codec.done or codec.failed):
                    hit = lex.next_special(st, data, pos, n) if lex.specials else None
                    limit = hit[0] if hit is not None else n
                    if limit == pos and hit is not None and codec.in_string:
                        # a special token inside a JSON string is string text
                        lex.claim(hit[2], data, hit[0], hit[1])
                        limit = hit[1]
                    if limit > pos:
                        pos = scan = calls.args(data, pos, limit, self._out)
                        self._codec_step(call, self._offset + pos)
                        continue
            lexicon = lex.lexicon(st)
            m = lexicon.pattern.search(data, scan) if lexicon.pattern is not None else None
            if st.text_rule is not None:
                text_end = m.start() if m is not None else n if final else holdback(data, scan, n, lexicon)
                if text_end > pos:  # the state's first text leaves it, and is read in the next one
                    self._apply(st.text_rule, "", "")
                    scan = pos
                    continue
            if m is None:
                keep = n if final or lexicon.starts is None else holdback(data, scan, n, lexicon)
                if keep > pos:
                    if final and self._block is not None and calls.open is None and st.region is _SKIP:
                        self._block.append(data[pos:keep])  # the block's last text: cut-off markup
                        if self._spill is not None:
                            self._spill.append((data[pos:keep], _SKIP_TEXT))
                    else:
                        self._text(data[pos:keep])
                lex.hold = data[keep:]
                break
            a, b = m.span()
            if not final and n - a <= lexicon.longest_prefix and data[a:n] in lexicon.prefixes:
                # a complete marker that may still grow into a longer one ("[" of "[ARGS]"): wait
                if a > pos:
                    self._text(data[pos:a])
                lex.hold = data[a:]
                break
            terminal = terminal_of[m.group()]
            rule = st.rules.get(terminal)
            if rule is None:  # a special token with no entry in this state: text, its id used up here
                if lex.claim(terminal, data, a, b):
                    self._text(data[pos:b])
                    pos = b
                scan = b if pos == b else a + 1
                continue
            real = lex.mode is not TEXT and terminal in self._c.special  # given by id (claimed when decided)
            if real and not lex.is_real(terminal, data, a):
                scan = a + 1
                continue
            if rule.by_id and not real:  # counts only as its special token: here it is text
                scan = a + 1
                continue
            if rule.guarded:
                if a > pos:  # text before the marker is text whatever the marker turns out to be
                    self._text(data[pos:a])
                    pos = a
                # in a name region the marker could be name text: guarded as with no call open
                value = call.codec if call is not None and call.codec.in_value else None
                if call is None or value is not None or st.region is _NAME:
                    verdict = marker_counts(rule, value, data, b, n, final)
                    if verdict is None:  # wait for what comes after the marker (its id stays queued)
                        lex.hold = data[a:]
                        break
                    if not verdict:
                        if real:  # the special token is value text: its id is used up here
                            lex.claim(terminal, data, a, b)
                            self._text(data[a:b])
                            pos = scan = b
                        else:
                            scan = a + 1
                        continue
            if real:
                lex.claim(terminal, data, a, b)
            if a > pos:
                self._text(data[pos:a])
            self._at = self._offset + a
            self._apply(rule, terminal, data[a:b])
            pos = scan = b
        used = n - len(lex.hold)
        self._offset += used
        if lex.mode is not TEXT:
            lex.bytes_at(data, used)

    # ------------------------------------------------------------------ text routing

    def _text(self, s: str) -> None:
        region = self._st.region
        calls = self._calls
        if region is _ARGS:
            call = calls.open
            if call is not None:
                if call.codec.structured:
                    calls.stray(s)
                else:
                    calls.args(s, 0, len(s), self._out)
            return
        if calls.open is not None:
            if region is _NAME:
                calls.name_text(s)
                return
            if region is _CALL_ID:
                calls.id_text(s)
                return
            calls.note(s)
        if region is _REASONING or region is _CONTENT:
            self._field(region, s)
        elif region is _HEADER:
            self._header.add(s)
        elif calls.open is None and region is _SKIP:
            if self._block is not None:
                self._block.append(s)
            if self._spill is not None:
                self._spill.append((s, _SKIP_TEXT))  # content only if the block yields a call
                return
            self._content(self._fields.skip_text(s))

    def _field(self, region: Region, s: str) -> None:
        if region is _REASONING and self._phase is DEFERRING:
            self._deferred.append(s)
            return
        if self._phase is HOLDING and (region is _REASONING or not s.isspace()):
            self._held_is_reasoning()
        f = 0 if region is _REASONING else 1
        if f and self._spill is not None and self._st.region is not region:
            self._spill.append((s, _CONTENT_TEXT))  # inside an undecided block: held with it
            return
        if f and not s.isspace() and self._st.region is not region:
            self._block = None  # part of the block is content: the rest follows it (not a block after all)
            if self.trace is not None:
                self.trace.spill()
        t = self._fields.trim(f, s)
        if t:
            self._out.append(ReasoningText(t) if f == 0 else ContentText(t))

    def _content(self, text: str | None) -> None:
        if text:
            self._field(_CONTENT, text)

    # ------------------------------------------------------------------ transitions

    def _apply(self, rule: Rule, terminal: str, marker: str) -> None:
        acts = rule.acts
        calls = self._calls
        if self._phase is HOLDING and marker:
            self._held_is_reasoning()  # something follows the held block: it was reasoning
        self._fields.marker()
        trace, kept = self.trace, _KEPT in acts
        if trace is not None and marker and not kept and calls.open is None and self._st.region is not _HEADER:
            label = not acts and self._st.region is self._c.states[rule.next].region and terminal not in self._c.special
            trace.applied(marker, self._at, acts, label)
        if self._block is not None and calls.open is None and Act.CALL_START not in acts:
            self._block.append(marker)
            if self._spill is not None:
                self._spill.append((marker, _MARKER))
        if calls.open is not None and not any(a in _NOT_NOTED for a in acts):
            calls.note(marker)
        nxt = rule.next
        if self._st.region is _HEADER and Act.HEADER_START not in acts and Act.HEADER_END not in acts:
            if self._c.states[nxt].region is _HEADER:
                self._header.add(marker)  # a marker inside the header is header text
            else:
                self._content(self._header.abandon(marker))
        for act in acts:
            if act is Act.REASONING_END:
                if self._phase is DEFERRING:
                    if self._spec.fallback_when_empty:  # reasoning if anything follows: hold it till then
                        self._phase = HOLDING
                        self.reasoning_ended = True  # the block ended here (the token view's answer too)
                        continue
                    held, self._deferred = self._deferred, []  # reasoning after all: release it
                    self._phase = RUNNING
                    for piece in held:
                        self._field(_REASONING, piece)
                if not self.reasoning_ended:
                    self.reasoning_ended = True
                    self._out.append(ReasoningEnd())
            elif act is Act.CALL_START:
                if calls.open is not None:
                    self._end_call(self._at)
                calls.start(marker, self._at, self._st.name)
            elif act is Act.CALL_DROP:
                dropped = calls.open
                text = calls.drop()
                if text:
                    self._content(text)
                elif self.trace is not None and dropped is not None and calls.open is None:
                    self.trace.add("dropped", dropped.start, self._at + len(marker))
            elif act is Act.NAME_END:
                calls.name_end(self._out)
            elif act is Act.ARG_MARKER:
                calls.marker_args(terminal, marker, self._out)
                if calls.open is not None:
                    self._codec_step(calls.open, self._at + len(marker))
            elif act is Act.ARGS_END:
                calls.args_end(self._out)
            elif act is Act.CALL_END:
                if calls.open is not None:
                    self._end_call(self._at + len(marker))
            elif act is Act.HEADER_START:
                self._content(self._header.start(marker))
                self._header.at = self._at
            elif act is Act.HEADER_END:
                nxt = self._header_end(marker, nxt)
        region = self._st.region
        st = self._c.states[nxt]
        if st.region is _REASONING and region in _OPENS_REASONING:
            self.reasoning_ended = False  # a new reasoning block opens
        if st.region is _HEADER and region is not _HEADER and Act.HEADER_START not in acts:
            self._header.at = self._at + len(marker)
        if (region in _FIELDS) is not (st.region in _FIELDS):
            if region not in _FIELDS:
                if self._spill is not None:
                    self._give_back()
                self._block = None
                if self._list is not None:  # the list closed: its calls stand
                    self._out += self._list_held
                    self._list, self._list_calls, self._list_held = None, [], []
                if self.trace is not None:
                    self.trace.leave(self._at + len(marker))
            elif Act.CALL_START in acts or any(Act.CALL_START in r.acts for r in st.rules.values()):
                # a block of calls opens
                # (not a message's end marker, such as Harmony's <|end|>); a call's marker is its own
                self._block = [] if Act.CALL_START in acts else [marker]
                self._spill = [] if Act.CALL_START in acts else [(marker, _MARKER)]
                if self._spec.whole_list:
                    self._list = [] if Act.CALL_START in acts else [marker]
                if self.trace is not None:
                    self.trace.enter(self._at)
        self._st = st
        self.in_reasoning = st.region is _REASONING
        if kept:
            self._text(marker)  # the marker is text of the state it leads to

    def _held_is_reasoning(self) -> None:
        """Something followed the held reasoning block (HOLDING): it is reasoning, and it ended."""
        held, self._deferred = self._deferred, []
        self._phase = RUNNING
        for piece in held:
            self._field(_REASONING, piece)
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
        if self._block is not None:
            if self._list is not None:
                self._list += self._block
            self._block = []  # the block's text starts again after the call
        k = len(self._out)
        text = self._calls.end(self._out)
        if self._list is not None and call is not None and text is None:
            self._list.append("".join(call.raw))
            if self._calls.atomic:  # held until the list closes
                self._list_held += self._out[k:]
                del self._out[k:]
            else:
                self._list_calls.append(call.index)
        if text is None and self._spill is not None:
            self._release()  # the block yields a call: its markers were structure
        if text is not None:
            self._content(text)
        elif self.trace is not None and call is not None:
            self.trace.call(call.start, end)

    def _cut_list(self) -> None:
        """The output ended inside a list of calls that must close (``FormatSpec.whole_list``):
        it is not a list. None of its calls stand (those already streamed are reported aborted),
        and all of its text, from its opener, is the unfinished call."""
        out = self._out
        tail, index = "", None
        if self._calls.open is not None:
            k = len(out)
            self._calls.unfinished(out)  # raises under strict
            ev = out.pop(k)
            assert isinstance(ev, ToolCallUnfinished)
            tail, index = ev.text, ev.index
        elif self._request.strict:
            raise MalformedOutputError("unfinished list of tool calls", state=self._st.name, position=self._offset)
        reason = "the output ended inside its list of calls"
        out += [ToolCallAborted(i, reason) for i in self._list_calls]
        text = "".join(self._list or ()) + "".join(self._block or ()) + tail
        out.append(ToolCallUnfinished(index, text, reason))
        self._list, self._list_calls, self._list_held = None, [], []
        self._block = self._spill = None

    def _release(self) -> None:
        """The held block yields a call: its text that is not a marker is content, in order."""
        held, self._spill = self._spill or [], None
        for s, kind in held:
            if kind == _SKIP_TEXT:
                self._content(self._fields.skip_text(s))
            elif kind == _CONTENT_TEXT:
                self._content(s)

    def _give_back(self) -> None:
        """The held block ends without a call: all of its text is content, its markers
        included (unless it is only markers and whitespace: then none of it is)."""
        held, self._spill = self._spill or [], None
        text = "".join(s for s, _kind in held)
        if any(kind != _MARKER for _s, kind in held) and text.strip():
            if self.trace is not None:
                self.trace.give_back()
            self._field(_CONTENT, text)

    def _take_spill(self) -> str:
        """The held block's text, markers included, taken out of the machine ("": none held)."""
        held, self._spill = self._spill or [], None
        return "".join(s for s, _kind in held)

    def _header_end(self, marker: str, default: str) -> str:
        """The header is complete: the spec maps it to the body's state (and a call's name)."""
        text = self._header.take()
        route = self._spec.header(text) if self._spec.header is not None else None
        if route is None:
            if self._request.strict:
                raise MalformedOutputError(
                    f"malformed message header {text!r}", state=self._st.name, position=self._offset
                )
            self._field(_CONTENT, text + marker)
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
