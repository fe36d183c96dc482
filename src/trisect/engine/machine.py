"""The machine: the format's table, interpreted over the text of one stream.

``Machine`` owns the current state (one ``StateTable`` of the compiled format) and the
stream's ``Phase``. ``_process`` scans a delta for the markers live in the current state,
routes the text between them to the region of the state (``_text``) and applies the table's
rule at each marker (``_apply``). Its parts own the rest: ``Lexer`` (held-back text, token-id
alignment), ``CallTracker`` (the open call), ``Fields`` (whitespace of reasoning and content),
``Header`` (a message header). This is the reference behaviour: ``EventStream`` (``stream``)
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
from .events import ContentText, Event, ReasoningEnd, ReasoningText
from .fields import Fields
from .headers import Header
from .lexer import TEXT, Lexer, holdback, marker_counts
from .options import StreamOptions
from .spec import Act, Region, Rule
from .tokenizer import Vocab
from .tracker import CallTracker

_REASONING, _CONTENT, _NAME, _CALL_ID = Region.REASONING, Region.CONTENT, Region.NAME, Region.CALL_ID
_ARGS, _HEADER = Region.ARGS, Region.HEADER
_OPENS_REASONING = (_CONTENT, Region.SKIP, _HEADER)  # a transition from these into reasoning opens a block
_NOT_NOTED = (Act.CALL_START, Act.HEADER_START)  # markers that are not text of the open call


class Phase(enum.Enum):
    """The stream's life. Only ``RUNNING`` takes the fast paths."""

    FRESH = "fresh"  # the format's content prefix is not emitted yet
    DEFERRING = "deferring"  # reasoning is held while it may turn out to be content (reasoning_fallback)
    RUNNING = "running"
    FINISHED = "finished"


FRESH, DEFERRING, RUNNING, FINISHED = Phase


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
        "_out",
        "_offset",
        "_at",
        "reasoning_ended",
        "in_reasoning",
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
        self._out: list[Event] = []
        self._offset = 0  # characters of output processed before the current data
        self._at = 0  # output offset of the marker being applied
        self.reasoning_ended = initial_state != "REASONING"
        self._phase = FRESH if compiled.spec.content_prefix else self._running_phase()

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
        data = lex.begin(text)
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
                        self._codec_step(call)
                        continue
            lexicon = lex.lexicon(st)
            m = lexicon.pattern.search(data, scan) if lexicon.pattern is not None else None
            if m is None:
                keep = n if final or lexicon.starts is None else holdback(data, scan, n, lexicon)
                if keep > pos:
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
            if rule.guarded:
                if a > pos:  # text before the marker is text whatever the marker turns out to be
                    self._text(data[pos:a])
                    pos = a
                if call is None or call.codec.in_value:
                    verdict = marker_counts(rule, call.codec if call is not None else None, data, b, n, final)
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
        if lex.mode is not TEXT:
            lex.bytes_at(data, used)
        self._offset += used

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
        elif calls.open is None and region is Region.SKIP:
            self._content(self._fields.skip_text(s))

    def _field(self, region: Region, s: str) -> None:
        if region is _REASONING and self._phase is DEFERRING:
            self._deferred.append(s)
            return
        f = 0 if region is _REASONING else 1
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
        self._fields.marker()
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
                if self._phase is DEFERRING:  # reasoning after all: release what was held
                    held, self._deferred = self._deferred, []
                    self._phase = RUNNING
                    for piece in held:
                        self._field(_REASONING, piece)
                if not self.reasoning_ended:
                    self.reasoning_ended = True
                    self._out.append(ReasoningEnd())
            elif act is Act.CALL_START:
                if calls.open is not None:
                    self._end_call()
                calls.start(marker, self._at, self._st.name)
            elif act is Act.CALL_DROP:
                self._content(calls.drop())
            elif act is Act.NAME_END:
                calls.name_end(self._out)
            elif act is Act.ARG_MARKER:
                calls.marker_args(terminal, marker, self._out)
                if calls.open is not None:
                    self._codec_step(calls.open)
            elif act is Act.ARGS_END:
                calls.args_end(self._out)
            elif act is Act.CALL_END:
                if calls.open is not None:
                    self._end_call()
            elif act is Act.HEADER_START:
                self._content(self._header.start(marker))
            elif act is Act.HEADER_END:
                nxt = self._header_end(marker, nxt)
        if self._c.states[nxt].region is _REASONING and self._st.region in _OPENS_REASONING:
            self.reasoning_ended = False  # a new reasoning block opens
        self._st = st = self._c.states[nxt]
        self.in_reasoning = st.region is _REASONING

    def _codec_step(self, call: Call) -> None:
        """After argument text: a structured codec that ended or failed fires the state's rule
        (the format ends calls where their JSON ends; a failed one is not a call, and what the
        codec did not consume is scanned again in the next state)."""
        codec = call.codec
        if codec.structured and (codec.done or codec.failed) and self._calls.open is call:
            rule = self._st.failed_rule if codec.failed else self._st.done_rule
            if rule is not None:
                self._apply(rule, "", "")

    def _end_call(self) -> None:
        self._content(self._calls.end(self._out))

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
        if name is not None:
            if self._calls.open is not None:
                self._end_call()
            self._calls.start(text + marker, self._at, self._st.name)
            self._calls.set_name(name, self._out)
        return state

