"""The stream: ``EventStream``, output text and token ids in, typed events out.

It is the ``Machine`` (``machine``: the format's table interpreted over the text) with the
public API — ``feed()``, ``finish()``, ``copy()`` — and the fast paths: a delta in which no
live marker can start (the commonest delta by far: a word of reasoning, of content, of a
string argument) skips the scanner and gives the same events the scanner would. The rules are
listed in the engine package docstring (``trisect.engine``).

Its state is the machine's components (``machine``); ``copy()`` and ``to_value()`` /
``from_value()`` (``engine.value``) go through their values.

Cost: O(len(delta) + tokens in delta) per ``feed``, amortised; ``copy()`` O(held state: the
held text, the open call, queued special ids), not O(output).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from ..errors import MalformedOutputError, StreamError
from .block import BlockPhase, Held
from .call import Call
from .call import Phase as CallPhase
from .codec import CodecFactory
from .compile import CompiledFormat, Lexicon
from .events import ContentText, Event, ReasoningText, ToolCallUnfinished
from .lexer import ALIGNED, TEXT, Mode, utf8_len
from .machine import DEFERRING, FINISHED, FRESH, HOLDING, RUNNING, Finder, Machine, Phase
from .spec import Region
from .stream_options import StreamOptions
from .trace import Trace
from .value import Value
from .vocab import Vocab

_REASONING, _CONTENT, _ARGS = Region.REASONING, Region.CONTENT, Region.ARGS

VALUE_ENUMS: tuple[type[enum.Enum], ...] = (Phase, Mode, CallPhase, BlockPhase, Held)
"""Every enum whose members appear in a stream's value, in a fixed order (for encoders)."""


class EventStream(Machine):
    """One stream (one request, one choice): output text and ids in, typed events out.
    ``Parser.stream()`` wraps it in a ``trisect.StreamParser`` that folds the events into deltas."""

    __slots__ = ()

    def copy(self) -> EventStream:
        """An independent stream that continues from this point (its trace, if any, copied
        too). Cost O(held state)."""
        new = EventStream(
            self._c,
            self._request,
            vocab=self._lex.vocab,
            atomic_tool_calls=self._calls.atomic,
            codec=self._calls.codec,
            value=self.to_value(),
        )
        new.trace = self.trace.copy() if self.trace is not None else None
        return new

    @classmethod
    def from_value(
        cls,
        compiled: CompiledFormat,
        request: StreamOptions,
        value: Value,
        *,
        vocab: Vocab | None = None,
        atomic_tool_calls: bool = False,
        codec: CodecFactory | None = None,
    ) -> EventStream:
        """The stream whose ``to_value()`` was ``value``, made with the same configuration (the
        compiled format, request options, tokenizer and atomicity it was made with). A value of
        another shape is a ``ValueError``."""
        if type(value) is not tuple:
            raise ValueError("a stream's value is a tuple")
        return cls(compiled, request, vocab=vocab, atomic_tool_calls=atomic_tool_calls, codec=codec, value=value)

    # ------------------------------------------------------------------ public API

    @property
    def state(self) -> str:
        return self._st.name

    @property
    def num_tokens(self) -> int:
        """Token ids fed so far."""
        return self._lex.num_tokens

    def start_trace(self) -> Trace:
        """Record from now on the spans of output the stream consumes (``engine.trace``), for
        ``trisect.testing``'s nothing-lost check."""
        trace = self.trace = Trace()
        if self._block.open:
            trace.enter(self._offset)  # inside a block of calls (the envelope the machine holds)
        return trace

    @property
    def held(self) -> str:
        """Text held back because it may still become a marker."""
        return self._lex.hold

    def feed(self, text: object = None, token_ids: Sequence[int] | None = None) -> list[Event]:
        """Add one delta of model output (a str, or ``None`` with ids); returns the events it
        produces (often none). Any other text is a ``StreamError``: ``text`` is typed ``object``
        because that is what the method accepts, and a compiled build enforces annotations."""
        if self._phase is not RUNNING:
            if self._phase is FINISHED:
                raise StreamError("feed() after finish(): create a new stream per request")
            return self._text_events(self._lex.accept(text, token_ids))
        lex = self._lex
        if token_ids is None:
            if type(text) is str and text and not lex.hold and lex.mode is TEXT:
                st = self._st
                region = st.region
                starts = st.text_lex.starts
                if (region is _REASONING or region is _CONTENT) and (starts is None or starts.search(text) is None):
                    # the commonest delta, inlined: plain text of a field
                    self._offset += len(text)
                    if region is _REASONING:
                        t = self._fields.reasoning.trim(text, 0, len(text))
                        return [ReasoningText(t)] if t else []
                    t = self._fields.content.trim(text, 0, len(text))
                    return [ContentText(t)] if t else []
                if region is _ARGS:
                    call = self._calls.open
                    if call is not None:
                        codec = call.codec
                        if codec.structured:
                            if not (codec.done or codec.failed):
                                return self._json_delta(call, text)  # the JSON decides
                        elif starts is None or starts.search(text) is None:
                            # raw-text arguments (XML parameters): all of it is argument text
                            self._offset += len(text)
                            out: list[Event] = []
                            self._calls.args(text, 0, len(text), out)
                            return out
                fast = self._fast_path(text, st.text_lex)
                if fast is not None:
                    return fast
            return self._text_events(lex.accept(text, None))
        text = lex.accept(text, token_ids)
        if text and not lex.hold and not lex.specials and not lex.ahead:
            # ids without a tokenizer match every marker as text (TEXT mode)
            fast = self._fast_path(text, self._st.text_lex if lex.mode is TEXT else self._st.plain_lex)
            if fast is not None:
                return fast
        return self._text_events(text)

    def read_whole(self, text: str, find: Finder) -> list[Event]:
        """``feed(text)`` then ``finish()`` of a stream nothing was fed yet, the whole output at
        once (``engine.whole``): the scanner reads all of it (no fast path), ``find`` finds the
        markers, and calls keep their raw text as offsets into ``text``."""
        if self._offset or self._phase is FINISHED or self._lex.num_tokens:
            raise StreamError("read_whole() reads a whole output into a new stream")
        self._find = find
        self._calls.source = text
        return self._text_events(self._lex.accept(text, None)) + self.finish()

    def finish(self) -> list[Event]:
        """End of output: release held text and close what is open."""
        if self._phase is FINISHED:
            raise StreamError("finish() called twice")
        self._out = []
        text = self._lex.flush()
        if text or self._lex.hold or self._phase is FRESH:
            self._process(text, final=True)
        if self._lex.mode is ALIGNED:
            self._lex.check_alignment(self._offset)
        call = self._calls.open
        block = self._block
        if block.phase is BlockPhase.OUTSIDE and call is None:
            pass  # the commonest end: outside any block of calls
        elif block.listing and block.list_text:  # a list of calls that must close, with a call in it: not a list
            self._cut_list()
        elif call is not None:
            if call.closed:
                self._end_call(self._offset)
            else:
                k = len(self._out)
                self._calls.unfinished(self._out, self._offset)
                ev = self._out[k] if k < len(self._out) else None
                held = block.take_held()
                if held.strip() and isinstance(ev, ToolCallUnfinished):
                    # the block it opened in yielded no call: its text goes with the call's
                    self._out[k] = ToolCallUnfinished(ev.index, held + ev.text, ev.reason)
        elif block.text().strip():
            # the output ended inside a block of calls, before a call: its markup is not content
            undecided = block.phase is BlockPhase.UNDECIDED
            text = block.take_held() if undecided else block.text()
            self._out.append(ToolCallUnfinished(None, text, "the output ended inside a block of calls"))
        if block.phase is BlockPhase.UNDECIDED:
            self._give_back()  # the output ended in a block (after its last call) that yielded no call
        if self._header.open:
            self._cut_header(self._header.abandon("") or "")
        if self._st.region is _REASONING and not self.reasoning_ended:
            self.reasoning_ended = True
        if self._phase is DEFERRING or self._phase is HOLDING:  # nothing after the held reasoning: content
            for piece in self._deferred.take():
                self._field(_CONTENT, piece, 0, len(piece))
        self._phase = FINISHED
        if self.trace is not None:
            self.trace.leave(self._offset)
        return self._out

    def _cut_header(self, text: str) -> None:
        """The output ended inside a message header. One that already reads as a call's header
        (Harmony: ``<|start|>assistant to=functions.f<|channel|>commentary <|constrain|>json``)
        opened a call that the output cut off: ``ToolCallUnfinished``, as any cut-off call (no
        protocol markup reaches the answer). Any other is content, markers included."""
        header = self._c.spec.header
        route = header(text) if header is not None and text else None
        if route is None or route[1] is None:
            self._content(text)
            return
        reason = "the output ended in the call's header"
        if self._request.strict:
            raise MalformedOutputError(f"unfinished tool call: {reason}", state=self._st.name, position=self._offset)
        self._out.append(ToolCallUnfinished(None, text, reason))

    # ------------------------------------------------------------------ fast paths

    def _fast_path(self, text: str, lex: Lexicon) -> list[Event] | None:
        """The common delta, without the scanner: no character of it can start a live marker
        (and nothing is held), so it is all text of the current region; in JSON arguments the
        codec decides. Same result as the general path; ``None`` when it does not apply."""
        region = self._st.region
        if region is _ARGS:
            call = self._calls.open
            if call is not None and call.codec.structured and not (call.codec.done or call.codec.failed):
                if self._lex.mode is not TEXT and not call.in_plain_string(text):
                    return None  # token ids outside a plain string: the scanner aligns them
                return self._json_delta(call, text)
        starts = lex.starts
        if starts is not None and starts.search(text) is not None:
            return None
        self._offset += len(text)
        if self._lex.mode is not TEXT:
            self._lex.text_bytes += utf8_len(text)  # ordinary bytes, as the scanner counts them
        if region is _REASONING:
            t = self._fields.reasoning.trim(text, 0, len(text))
            return [ReasoningText(t)] if t else []
        if region is _CONTENT:
            t = self._fields.content.trim(text, 0, len(text))
            return [ContentText(t)] if t else []
        self._out = []
        self._text(text, 0, len(text))
        return self._out

    def _json_delta(self, call: Call, text: str) -> list[Event]:
        """A delta inside the JSON arguments of the open call: the codec reads it (markers
        inside JSON are JSON text). If the JSON ends or breaks inside the delta, what follows
        goes the general way. Same result as the general path."""
        codec = call.codec
        n = len(text)
        out: list[Event] = []
        self._out = out
        j = self._calls.args(text, 0, n, out)
        self._offset += j
        if self._lex.mode is not TEXT:
            # the bytes the codec read; the scanner counts what it reads again (text[j:]) itself
            self._lex.text_bytes += utf8_len(text) if j == n else utf8_len(text[:j])
        if j < n or codec.done or codec.failed:
            self._codec_step(call, self._offset)
            if j < n:
                self._process(text[j:], final=False)
        return self._out
