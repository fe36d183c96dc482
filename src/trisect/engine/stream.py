"""The engine: one streaming state machine that runs every format.

A stream holds its state (one ``StateTable``), the text held back because it may still become
a marker, the open tool call, and — when token ids flow — the special tokens whose text has
not been reached yet. ``feed()`` scans only the new text (plus at most one held-back marker
prefix), so its cost is proportional to the delta; nothing already seen is scanned again.

Rules, all formats alike:

* A marker split across deltas is recognised; text that may still become a marker is held,
  never more than the longest live-marker prefix, and released as soon as it cannot.
* A terminal with no table entry in the current state is ordinary text of that state.
* With a tokenizer and token ids, a special-token marker counts only where its token id is:
  text that spells the marker with ordinary tokens stays text. Ids may arrive before their
  text (detokenizer hold-back); the terminal then waits for its text, so events keep text
  order. Text and ids are aligned by the bytes of the ordinary tokens (tolerating a few bytes
  of decoder drift, re-synchronised at each special token; a special token with no entry in
  the current state is text there, and its id is used up in place). When text is given with ids it
  must contain the special tokens' text (``skip_special_tokens=False``), as every engine sets
  it when a tool or reasoning parser runs; or pass ids alone and trisect detokenizes.
* Inside structured (JSON) arguments, the JSON decides where the arguments end: a marker
  inside a JSON string is string text, even a special token given by id (templates tokenize a
  marker string inside an argument as that special token); a special token outside a string
  interrupts the JSON. In raw-text values (XML parameters) a marker may carry a ``follow``
  rule: it counts only if the structure goes on after it (``Rule.follow``); the same rule
  can guard a separator where no call is open. A structured codec that completes fires the
  state's ``ARGS_DONE`` rule; one that fails fires its ``ARGS_FAILED`` rule (else ``ARGS_DONE``),
  which ends the call at once (not a call: its text is content) and scans the rest again.
* Message headers (``Region.HEADER``, Harmony): the header's text, markers included, is
  collected and never emitted; at a ``HEADER_END`` marker ``FormatSpec.header`` maps it to the
  body's state and, for a tool call, the tool name (the call's raw text starts with the
  header). A header the spec cannot read, one left by any other marker, one replaced by a new
  ``HEADER_START`` and one cut off by the end of the output is content, markers included.
* A marker that is complete but is also the start of a longer live marker waits for the next
  delta (``[`` before ``[ARGS]``), so the longest marker wins wherever the stream is cut.
* Reasoning and content are each stripped of leading and trailing whitespace as a whole
  (``FormatSpec.strip``): the newlines templates put around markers are formatting. Whitespace
  between two pieces of one field (content before and after a tool call) is kept. Streams
  hold trailing whitespace until more text of that field arrives. Whitespace in envelope
  regions (``Region.SKIP``) is dropped; other text there outside a call is content, with the
  whitespace around it between two markers kept only between non-whitespace text.
* Call ids: the id the model wrote (an envelope key, a ``Region.CALL_ID`` region, or split
  off the name by ``FormatSpec.parse_name``), else ``Request.id_factory``, else the family's
  ``FormatSpec.call_id`` style, else ``call_`` + random.
* Reasoning ends once per block: ``reasoning_ended`` turns true (one ``ReasoningEnd``) at the
  block's end marker, and false again where a transition from content (or an envelope, or a
  message header) opens a new block (formats whose reasoning is opted into by a marker: Mistral ``[THINK]``, Gemma
  4 channels, Granite). ``FormatSpec.content_prefix`` is content before the output's first
  text. With ``FormatSpec.reasoning_fallback`` (Nemotron), a stream that starts in reasoning
  holds that reasoning until it ends; if the output ends first, the held text is content.
* ``finish()`` releases held text, ends reasoning, and closes an unfinished call: a call that
  was not yet streamed is not a call (its raw text, markers included, becomes content); a call
  already streamed is reported in ``Delta.aborted``. Malformed calls (invalid arguments, no
  name, a name not among the tools where the family validates names) follow the same rule
  when they end. ``atomic`` streams hold every call until it is complete, so they stream
  exactly what ``parse()`` returns, even for truncated and malformed output.
  ``strict=True`` raises ``MalformedOutputError`` instead of degrading.

Cost: O(len(delta) + tokens in delta) per ``feed``, amortised; memory O(open call + held text).
"""

from __future__ import annotations

import re
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from functools import lru_cache

from ..errors import MalformedOutputError, StreamError
from .codec import CallCodec
from .compile import CompiledFormat, Lexicon, StateTable
from .events import (
    ContentText,
    Event,
    ReasoningEnd,
    ReasoningText,
    ToolCallAborted,
    ToolCallArguments,
    ToolCallEnd,
    ToolCallStart,
)
from .options import StreamOptions
from .spec import Act, Region, Rule
from .tokenizer import Detokenizer, Vocab

# bytes of decoder drift tolerated between the ids' text and the text an engine sent
_ALIGN_TOLERANCE = 4

_REASONING = Region.REASONING
_CONTENT = Region.CONTENT
_NAME = Region.NAME
_CALL_ID = Region.CALL_ID
_ARGS = Region.ARGS
_SKIP = Region.SKIP
_HEADER = Region.HEADER
_OPENS_REASONING = (_CONTENT, _SKIP, _HEADER)  # a transition from these into reasoning opens a new block



@lru_cache(maxsize=64)
def _stops_regex(stops: str) -> re.Pattern[str]:
    """A regex matching any character that may end a codec's string (``string_stops``)."""
    return re.compile("[" + re.escape(stops) + "]")


def random_call_id(_index: int) -> str:
    return "call_" + uuid.uuid4().hex[:24]


def _id_maker(
    request: StreamOptions, family: Callable[[StreamOptions, int, str], str] | None
) -> Callable[[int, str], str]:
    factory = request.id_factory
    if factory is not None:
        return lambda index, _name: factory(index)
    if family is not None:
        return lambda index, name: family(request, index, name)
    return lambda index, _name: random_call_id(index)


class _Call:
    """The open tool call."""

    __slots__ = (
        "codec",
        "raw",
        "name_parts",
        "id_parts",
        "name",
        "id",
        "index",
        "bad",
        "args",
        "args_closed",
        "start",
        "quick",
        "stops",
    )

    def __init__(self, codec: CallCodec, marker: str, start: int) -> None:
        self.codec = codec
        self.raw: list[str] | None = [marker]  # exact text, kept until the call is streamed
        self.name_parts: list[str] = []
        self.id_parts: list[str] = []
        self.name: str | None = None
        self.id: str | None = None
        self.index: int | None = None  # set once streamed
        self.bad = ""  # why the call is not a call
        self.args: list[str] = []  # argument text produced before the call was streamed
        self.args_closed = False
        self.start = start
        # once streamed: the codec's string fast path and what may end its strings
        self.quick: Callable[[str], str] | None = None
        self.stops: re.Pattern[str] | None = None


class EventStream:
    """One stream (one request, one choice): output text and ids in, typed events out.
    ``Parser.stream()`` wraps it in a ``trisect.StreamParser`` that folds the events into deltas."""

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
        self._vocab = vocab
        self._atomic = atomic_tool_calls
        self._strict = request.strict
        self._strip = compiled.spec.strip
        self._st: StateTable = compiled.states[initial_state]
        self._new_id = _id_maker(request, compiled.spec.call_id)
        self._hold = ""
        self._skip_ws = ""  # whitespace of a SKIP region, kept only if text follows it
        # per field (0: reasoning, 1: content): text emitted yet, trailing whitespace held
        self._started = [False, False]
        self._held_ws: list[list[str]] = [[], []]
        self._call: _Call | None = None
        self._n_calls = 0
        self._header: list[str] | None = None  # the open message header (Region.HEADER)
        self._out: list[Event] = []
        self._finished = False
        self._offset = 0  # characters of output processed before the current data
        self._at = 0  # output offset of the marker being applied
        self.reasoning_ended = initial_state != "REASONING"
        self._prefix = compiled.spec.content_prefix  # content not yet emitted before the output
        fallback = compiled.spec.reasoning_fallback
        # reasoning held back while it may still turn out to be content (reasoning_fallback)
        self._deferred: list[str] | None = (
            [] if fallback is not None and not self.reasoning_ended and fallback(request) else None
        )
        # token ids
        self._ids_mode = False
        self._decode_ids: bool | None = None
        self._detok: Detokenizer | None = None
        self._pending: deque[tuple[int, str]] = deque()
        self._id_obytes = 0  # ordinary bytes of all ids fed
        self._text_obytes = 0  # ordinary bytes of text before data[_tb_pos]
        self._tb_pos = 0
        self._shift = 0
        self.num_tokens = 0

    # ------------------------------------------------------------------ public API

    @property
    def state(self) -> str:
        return self._st.name

    @property
    def in_reasoning(self) -> bool:
        """The current state's text is reasoning (the stream is inside a reasoning block)."""
        return self._st.region is _REASONING

    def feed(self, text: str | None = None, token_ids: Sequence[int] | None = None) -> list[Event]:
        """Add one delta of model output; returns the events it produces (often none)."""
        if token_ids is None:
            if text and not self._hold and not self._ids_mode and not self._finished:
                st = self._st
                region = st.region
                starts = st.text_lex.starts
                if (
                    (region is _REASONING or region is _CONTENT)
                    and (starts is None or starts.search(text) is None)
                    and not self._prefix
                    and self._deferred is None
                ):
                    # the commonest delta, inlined: plain text of a field
                    self._offset += len(text)
                    f = 0 if region is _REASONING else 1
                    t = self._trim(f, text)
                    if not t:
                        return []
                    return [ReasoningText(t)] if f == 0 else [ContentText(t)]
                call = self._call
                if region is _ARGS and call is not None and call.quick is not None and not self._prefix:
                    # a string delta of a streamed call's arguments, inlined (same as _fast_path)
                    codec = call.codec
                    if codec.structured:
                        plain = codec.in_string and call.stops is not None and call.stops.search(text) is None
                    else:
                        plain = codec.in_string_value and (starts is None or starts.search(text) is None)
                    if plain and self._deferred is None:
                        self._offset += len(text)
                        piece = call.quick(text)
                        return [ToolCallArguments(call.index, piece)] if piece else []  # type: ignore[arg-type]
                fast = self._fast_path(text, st.text_lex)
                if fast is not None:
                    return fast
            return self._text_events(self._accept(text, token_ids))
        text = self._accept(text, token_ids)
        if text and not self._hold and not self._pending:
            # ids without a tokenizer match every marker as text (no ids mode)
            fast = self._fast_path(text, self._st.plain_lex if self._ids_mode else self._st.text_lex)
            if fast is not None:
                self._text_obytes += len(text) if text.isascii() else len(text.encode("utf-8"))
                return fast
        return self._text_events(text)

    def _fast_path(self, text: str, lex: Lexicon) -> list[Event] | None:
        """The common delta, without the scanner: no character of it can start a live marker,
        so it is all text of the current region. Same result as the general path; ``None``
        when it does not apply."""
        if self._prefix or self._deferred is not None:
            return None
        st = self._st
        region = st.region
        call = self._call
        if region is _ARGS and call is not None and call.index is not None and call.raw is None:
            codec = call.codec
            if codec.structured and not (codec.done or codec.failed):
                return self._fast_json(call, codec, text)
        starts = lex.starts
        if starts is not None and starts.search(text) is not None:
            return None
        if region is _REASONING or region is _CONTENT:
            f = 0 if region is _REASONING else 1
            self._offset += len(text)
            t = self._trim(f, text)
            if not t:
                return []
            return [ReasoningText(t)] if f == 0 else [ContentText(t)]
        if region is _ARGS and call is not None and call.index is not None and call.raw is None:
            codec = call.codec
            if not getattr(codec, "in_string_value", False):
                return None
            self._offset += len(text)
            quick = call.quick
            if quick is not None:
                piece = quick(text)
            else:
                codec.feed(text, 0, len(text))
                piece = codec.take()
            return [ToolCallArguments(call.index, piece)] if piece else []
        return None

    def _fast_json(self, call: _Call, codec: CallCodec, text: str) -> list[Event] | None:
        """A delta inside the JSON arguments of a streamed call: the codec reads it (markers
        inside JSON are JSON text). If the JSON ends or breaks inside the delta, what follows
        goes the general way. Same result as the general path."""
        index = call.index
        assert index is not None
        quick = call.quick
        if quick is not None and codec.in_string and call.stops is not None and not call.stops.search(text):
            self._offset += len(text)
            piece = quick(text)
            return [ToolCallArguments(index, piece)] if piece else []
        if self._ids_mode:
            return None  # token ids: the general path aligns them
        n = len(text)
        j = codec.feed(text, 0, n)
        piece = codec.take()
        self._offset += j
        if j == n and not codec.done and not codec.failed:
            return [ToolCallArguments(index, piece)] if piece else []
        self._out = [ToolCallArguments(index, piece)] if piece else []
        self._after_codec(call)
        if j < n:
            self._process(text[j:], final=False)
        return self._out

    def _accept(self, text: str | None, token_ids: Sequence[int] | None) -> str:
        """Validate one delta and register its ids; returns the text to scan."""
        if self._finished:
            raise StreamError("feed() after finish(): create a new stream per request")
        if token_ids:
            text = self._take_ids(text, token_ids)
        elif text is None:
            return ""
        elif self._decode_ids:
            raise StreamError("this stream detokenizes ids itself: feed token ids without text")
        if not isinstance(text, str):
            raise StreamError(f"text must be a string, not {type(text).__name__}")
        return text

    def _text_events(self, text: str) -> list[Event]:
        self._out = []
        if text or self._hold:
            self._process(text, final=False)
        return self._out

    def finish(self) -> list[Event]:
        """End of output: release held text and close what is open."""
        if self._finished:
            raise StreamError("finish() called twice")
        self._out = []
        tail = self._detok.flush() if self._detok is not None else ""
        self._process(tail, final=True)
        call = self._call
        if call is not None:
            complete = call.args_closed or (call.codec.structured and call.codec.done)
            if complete and not call.bad:
                self._end_call()
            else:
                self._fail_open_call("unfinished: the output ended inside the call")
        self._header_malformed("")
        if self._st.region is _REASONING and not self.reasoning_ended:
            self.reasoning_ended = True
        if self._deferred is not None:  # the output ended inside the held reasoning: it is content
            held, self._deferred = self._deferred, None
            for piece in held:
                self._field(_CONTENT, piece)
        self._finished = True
        return self._out

    # ------------------------------------------------------------------ token ids

    def _take_ids(self, text: str | None, token_ids: Sequence[int]) -> str:
        vocab = self._vocab
        self.num_tokens += len(token_ids)
        if vocab is None:
            if text is None:
                raise StreamError("token ids without text need a tokenizer: Parser(..., tokenizer=...)")
            return text
        decode = text is None
        if self._decode_ids is None:
            self._decode_ids = decode
            if decode:
                self._detok = Detokenizer(vocab, self._c.special_ids)
        elif self._decode_ids != decode:
            raise StreamError("feed either text with ids or ids alone, the same way for the whole stream")
        self._ids_mode = True
        special_ids = self._c.special_ids
        pending = self._pending
        obytes = self._id_obytes
        for token_id in token_ids:
            terminal = special_ids.get(token_id)
            if terminal is not None:
                pending.append((obytes, terminal))
            else:
                added = vocab.added_text(token_id)
                if added is None:
                    obytes += len(vocab.token_bytes(token_id))
                elif not decode or not vocab.is_control(token_id):  # its text is in the text
                    obytes += len(added.encode("utf-8"))
        self._id_obytes = obytes
        if decode:
            assert self._detok is not None
            return self._detok.decode(token_ids)
        return text  # type: ignore[return-value]

    def _obytes_at(self, data: str, i: int) -> int:
        if i > self._tb_pos:
            piece = data[self._tb_pos : i]
            self._text_obytes += len(piece) if piece.isascii() else len(piece.encode("utf-8"))
            self._tb_pos = i
        return self._text_obytes

    def _real_special(self, terminal: str, y: int, claim: bool) -> bool:
        """Is there a pending special token ``terminal`` at ordinary-byte offset ``y``?"""
        pending = self._pending
        y += self._shift
        if claim:
            while pending and pending[0][0] < y - _ALIGN_TOLERANCE:
                pending.popleft()  # its text never came (skipped): it cannot be matched any more
        for k, (off, term) in enumerate(pending):
            if off > y + _ALIGN_TOLERANCE:
                return False
            if term == terminal and off >= y - _ALIGN_TOLERANCE:
                if claim:
                    del pending[k]
                    self._shift += off - y
                return True
        return False

    def _next_special(self, data: str, pos: int, end: int) -> tuple[int, int, str] | None:
        """Span and terminal of the next real special-token marker in data[pos:end], live in
        this state or not (inside a JSON string any special token is string text)."""
        lex = self._st.ids_lex or self._st.text_lex
        if lex.pattern is None:
            return None
        special = self._c.special
        base = self._obytes_at(data, pos)
        for m in lex.pattern.finditer(data, pos, end):
            terminal = self._c.terminal_of[m.group()]
            if terminal in special:
                piece = data[pos : m.start()]
                y = base + (len(piece) if piece.isascii() else len(piece.encode("utf-8")))
                if self._real_special(terminal, y, claim=False):
                    return m.start(), m.end(), terminal
        return None

    # ------------------------------------------------------------------ scanning

    def _lexicon(self) -> Lexicon:
        if self._ids_mode:
            if not self._pending:
                return self._st.plain_lex
            return self._st.ids_lex or self._st.text_lex
        return self._st.text_lex

    def _process(self, text: str, final: bool) -> None:
        if self._prefix:
            self._field(_CONTENT, self._prefix)
            self._prefix = ""
        data = self._hold + text if self._hold else text
        self._hold = ""
        self._tb_pos = 0
        n = len(data)
        pos = scan = 0
        while pos < n:
            st = self._st
            call = self._call
            if st.region is _ARGS and call is not None and call.codec.structured:
                codec = call.codec
                if not (codec.done or codec.failed):
                    hit = self._next_special(data, pos, n) if self._pending else None
                    limit = hit[0] if hit is not None else n
                    if limit == pos and hit is not None and codec.in_string:
                        # a special token inside a JSON string is string text (requirement 6)
                        a, b, terminal = hit
                        self._real_special(terminal, self._obytes_at(data, a), claim=True)
                        self._tb_pos = b
                        limit = b
                    if limit > pos:
                        j = codec.feed(data, pos, limit)
                        if call.raw is not None:
                            call.raw.append(data[pos:j])
                        pos = scan = j
                        self._after_codec(call)
                        continue
            lex = self._lexicon()
            m = lex.pattern.search(data, scan) if lex.pattern is not None else None
            if m is None:
                keep = n if final or lex.starts is None else self._holdback(data, scan, n, lex)
                if keep > pos:
                    self._text(data[pos:keep])
                if keep < n:
                    self._hold = data[keep:]
                break
            a, b = m.span()
            if not final and n - a <= lex.longest_prefix and data[a:n] in lex.prefixes:
                # a complete marker that may still grow into a longer one ("[" of "[ARGS]"): wait
                if a > pos:
                    self._text(data[pos:a])
                self._hold = data[a:]
                break
            terminal = self._c.terminal_of[m.group()]
            rule = st.rules.get(terminal)
            if rule is None:  # a special token with no entry in this state: text, its id used up here
                if self._real_special(terminal, self._obytes_at(data, a), claim=True):
                    self._tb_pos = b
                    self._text(data[pos:b])
                    pos = b
                scan = b if pos == b else a + 1
                continue
            real = False  # a special token given by id (claimed once the marker is decided)
            if self._ids_mode and terminal in self._c.special:
                if not self._real_special(terminal, self._obytes_at(data, a), claim=False):
                    scan = a + 1
                    continue
                real = True
            if rule.follow:
                if a > pos:  # text before the marker is text whatever the marker turns out to be
                    self._text(data[pos:a])
                    pos = a
                if call is None or call.codec.in_value:
                    # inside a value, a closer the output ends with is value text: a cut-off
                    # value never completes a call
                    verdict = _follows(data, b, n, rule.follow, final, end=call is None)
                    if verdict is None:  # wait for what comes after the marker (its id stays pending)
                        self._hold = data[a:]
                        break
                    if not verdict:
                        if real:  # the special token is value text: its id is used up here
                            self._real_special(terminal, self._obytes_at(data, a), claim=True)
                            self._tb_pos = b
                            self._text(data[a:b])
                            pos = scan = b
                        else:
                            scan = a + 1
                        continue
            if real:
                self._real_special(terminal, self._obytes_at(data, a), claim=True)
                self._tb_pos = b  # the marker's bytes are not ordinary text
            if a > pos:
                self._text(data[pos:a])
            self._at = self._offset + a
            self._apply(rule, terminal, data[a:b])
            pos = scan = b
        if self._ids_mode:
            self._obytes_at(data, n - len(self._hold))
        self._offset += n - len(self._hold)

    @staticmethod
    def _holdback(data: str, lo: int, n: int, lex: Lexicon) -> int:
        """Start of the longest suffix of data[lo:n] that is a proper prefix of a live marker."""
        start = max(lo, n - lex.longest_prefix)
        starts = lex.starts
        assert starts is not None
        m = starts.search(data, start)
        while m is not None:
            i = m.start()
            if data[i:n] in lex.prefixes:
                return i
            m = starts.search(data, i + 1)
        return n

    # ------------------------------------------------------------------ text routing

    def _text(self, s: str) -> None:
        region = self._st.region
        call = self._call
        if call is not None and call.raw is not None:
            call.raw.append(s)
        if region is _REASONING or region is _CONTENT:
            self._field(region, s)
        elif region is _ARGS:
            if call is None:
                return
            codec = call.codec
            if not codec.structured:
                codec.feed(s, 0, len(s))
                self._after_codec(call)
            elif s.strip(" \t\r\n") and not call.bad:
                call.bad = "text after the arguments" if codec.done else "invalid arguments"
        elif region is _NAME:
            if call is not None:
                call.name_parts.append(s)
        elif region is _CALL_ID:
            if call is not None:
                call.id_parts.append(s)
        elif region is _HEADER:
            self._header_text(s)
        elif call is None:  # _SKIP outside a call: the same text whatever the cuts
            t = s.rstrip(" \t\r\n")
            if t:
                self._field(_CONTENT, self._skip_ws + t)
                self._skip_ws = s[len(t) :]
            else:
                self._skip_ws += s

    def _field(self, region: Region, s: str) -> None:
        if region is _REASONING and self._deferred is not None:
            self._deferred.append(s)
            return
        f = 0 if region is _REASONING else 1
        t = self._trim(f, s)
        if t:
            self._out.append(ReasoningText(t) if f == 0 else ContentText(t))

    def _trim(self, f: int, text: str) -> str:
        """The part of ``text`` field ``f`` (0 reasoning, 1 content) can emit now: leading
        whitespace of the field is dropped, trailing whitespace is held until more text of the
        field follows (and dropped at the end). Held runs are kept as pieces, so a long run of
        whitespace-only deltas costs O(delta) each, not O(run)."""
        strip = self._strip
        if not self._started[f]:
            text = text.lstrip(strip)
            if not text:
                return ""
            self._started[f] = True
        body = text.rstrip(strip)
        held = self._held_ws[f]
        if not body:
            held.append(text)
            return ""
        tail = text[len(body) :]
        if held:
            body = "".join(held) + body
            held.clear()
        if tail:
            held.append(tail)
        return body

    # ------------------------------------------------------------------ transitions

    def _apply(self, rule: Rule, terminal: str, marker: str) -> None:
        acts = rule.acts
        call = self._call
        self._skip_ws = ""
        if call is not None and call.raw is not None and Act.CALL_START not in acts and Act.HEADER_START not in acts:
            call.raw.append(marker)
        nxt = rule.next
        if self._st.region is _HEADER and Act.HEADER_START not in acts and Act.HEADER_END not in acts:
            if self._c.states[nxt].region is _HEADER:
                self._header_text(marker)  # a marker inside the header is header text
            else:
                self._header_malformed(marker)
        for act in acts:
            if act is Act.REASONING_END:
                if self._deferred is not None:  # reasoning after all: release what was held
                    held, self._deferred = self._deferred, None
                    for piece in held:
                        self._field(_REASONING, piece)
                if not self.reasoning_ended:
                    self.reasoning_ended = True
                    self._out.append(ReasoningEnd())
            elif act is Act.CALL_START:
                if self._call is not None:
                    self._end_call()
                self._open_call(marker)
            elif act is Act.CALL_DROP:
                call = self._call
                if call is not None and call.index is None:
                    self._call = None
                    if "".join(call.name_parts).strip():  # it had a name: not an envelope after all
                        call.bad = call.bad or "a name before a list of calls"
                        self._reject(call)
            elif act is Act.NAME_END:
                self._name_end()
            elif act is Act.ARG_MARKER:
                call = self._call
                if call is not None:
                    if call.codec.structured:  # the marker is the codec's own first text ("{")
                        call.codec.feed(marker, 0, len(marker))
                    else:
                        call.codec.marker(terminal)
                    self._after_codec(call)
            elif act is Act.ARGS_END:
                self._args_end()
            elif act is Act.CALL_END:
                if self._call is not None:
                    self._end_call()
            elif act is Act.HEADER_START:
                self._header_malformed("")
                self._header = [marker]
            elif act is Act.HEADER_END:
                nxt = self._header_end(marker, nxt)
        if self._c.states[nxt].region is _REASONING and self._st.region in _OPENS_REASONING:
            self.reasoning_ended = False  # a new reasoning block opens
        self._st = self._c.states[nxt]

    def _header_text(self, s: str) -> None:
        if self._header is None:
            self._header = []
        self._header.append(s)

    def _header_malformed(self, marker: str) -> None:
        """A header that did not end with a HEADER_END marker: its text (markers included) is content."""
        if self._header is not None:
            self._field(_CONTENT, "".join(self._header) + marker)
            self._header = None

    def _header_end(self, marker: str, default: str) -> str:
        """The header is complete: the spec maps it to the body's state (and a call's name)."""
        text = "".join(self._header or ())
        self._header = None
        route = self._spec.header(text) if self._spec.header is not None else None
        if route is None:
            if self._strict:
                raise MalformedOutputError(
                    f"malformed message header {text!r}", state=self._st.name, position=self._offset
                )
            self._field(_CONTENT, text + marker)
            return default
        state, name = route
        if name is not None:
            if self._call is not None:
                self._end_call()
            self._open_call(text + marker)
            call = self._call
            assert call is not None
            call.name_parts.append(name)
            self._name_end()
        return state

    def _open_call(self, marker: str) -> None:
        factory = self._spec.codec
        if factory is None:
            raise StreamError(f"{self._spec.name}: a call opened but the format has no argument codec")
        self._call = _Call(factory(self._request.tool_index), marker, self._at)

    def _name_end(self) -> None:
        call = self._call
        if call is None or call.name is not None:
            return
        raw = "".join(call.name_parts).strip()
        call_id = "".join(call.id_parts).strip() or None
        if self._spec.parse_name is not None and raw:
            raw, parsed_id = self._spec.parse_name(raw)
            call_id = call_id or parsed_id
        if not raw:
            call.bad = call.bad or "no tool name"
            return
        call.name = raw
        call.id = call_id
        call.codec.set_name(raw)
        self._announce(call)

    def _announce(self, call: _Call) -> None:
        """The name is known: validate it and, in incremental mode, stream the call's start."""
        assert call.name is not None
        index = self._request.tool_index
        if self._spec.validate_names and index and call.name not in index:
            call.bad = call.bad or f"unknown tool {call.name!r}"
        if call.bad or self._atomic:
            return
        self._stream_call(call)

    def _stream_call(self, call: _Call) -> None:
        index = self._n_calls
        self._n_calls += 1
        call.index = index
        call.raw = None
        codec = call.codec
        call.quick = getattr(codec, "string_piece", None)
        if codec.structured:
            call.stops = _stops_regex(getattr(codec, "string_stops", '"\\'))
        assert call.name is not None
        self._out.append(ToolCallStart(index, call.id or self._new_id(index, call.name), call.name))
        if call.args:
            self._out.append(ToolCallArguments(index, "".join(call.args)))
            call.args = []

    def _after_codec(self, call: _Call) -> None:
        codec = call.codec
        if call.name is None and codec.name is not None:
            call.name = codec.name
            call.id = codec.call_id
            self._announce(call)
        piece = codec.take()
        if piece:
            if call.index is not None:
                self._out.append(ToolCallArguments(call.index, piece))
            else:
                call.args.append(piece)
        if codec.failed and not call.bad:
            call.bad = "invalid arguments"
            if self._strict:
                self._fail_strict(call)
        done_rule = self._st.failed_rule if codec.failed else self._st.done_rule
        if codec.structured and (codec.done or codec.failed) and done_rule is not None and self._call is call:
            # the format ends calls where their JSON ends: a failed JSON ends the call here too
            # (not a call; what the codec did not consume is scanned again in the next state,
            # the ARGS_FAILED rule's if the state has one)
            self._apply(done_rule, "", "")

    def _args_end(self) -> None:
        call = self._call
        if call is None or call.args_closed:
            return
        if call.name is None:
            self._name_end()
        call.args_closed = True
        rest = call.codec.close()
        if rest is None:
            call.bad = call.bad or ("invalid arguments" if call.codec.failed else "unfinished arguments")
            return
        if rest:
            if call.index is not None:
                self._out.append(ToolCallArguments(call.index, rest))
            else:
                call.args.append(rest)

    def _end_call(self) -> None:
        call = self._call
        assert call is not None
        if not call.args_closed:
            self._args_end()
        self._call = None
        if call.index is not None:
            if call.bad:
                self._abort(call)
            else:
                self._out.append(ToolCallEnd(call.index))
            return
        if call.bad or call.name is None:
            self._reject(call)
            return
        self._stream_call(call)
        assert call.index is not None
        self._out.append(ToolCallEnd(call.index))

    def _fail_open_call(self, reason: str) -> None:
        call = self._call
        assert call is not None
        self._call = None
        call.bad = call.bad or reason
        if call.index is not None:
            self._abort(call)
        else:
            self._reject(call)

    def _abort(self, call: _Call) -> None:
        assert call.index is not None
        if self._strict:
            self._fail_strict(call)
        self._out.append(ToolCallAborted(call.index, call.bad))

    def _reject(self, call: _Call) -> None:
        """Not a call after all: its exact text (markers included) becomes content."""
        if self._strict:
            self._fail_strict(call)
        self._field(_CONTENT, "".join(call.raw or ()))

    def _fail_strict(self, call: _Call) -> bool:
        raise MalformedOutputError(
            f"malformed tool call: {call.bad or 'invalid'}", state=self._st.name, position=call.start
        )


def _follows(data: str, i: int, n: int, follow: tuple[str, ...], final: bool, end: bool = True) -> bool | None:
    """Does data[i:] continue, after whitespace, with one of ``follow`` (or end, when ``end``)?
    ``None``: not decidable yet."""
    while i < n and data[i] in " \t\r\n":
        i += 1
    if i == n:
        return end if final else None
    rest = data[i : i + max(len(f) for f in follow)]
    undecided = False
    for f in follow:
        if rest.startswith(f):
            return True
        if f.startswith(rest):
            undecided = True
    return None if undecided and not final else False
