"""The call tracker: the open tool call, from its first marker to its end.

The stream tells it where a call starts, which text is its name, its id and its arguments,
and where the arguments and the call end; the tracker moves the call through its ``Phase``
(``call``), feeds the argument codec (one way in: ``args``, for every piece of argument text),
decides whether the call is a call, and emits the call events. It keeps the call rules of the
engine package docstring: a call is held until its name is known and valid, then streamed
(``atomic`` streams hold it to its end); a malformed call is content (one already streamed is
reported aborted first); a call the output ends inside is kept apart, not content
(``ToolCallUnfinished``); a tool name that is not valid Unicode (a lone surrogate) makes the
call malformed, in every format; call ids.

Invariants: streamed calls are numbered densely from 0 in emission order; the first reason a
call is malformed is the one kept; the open call's raw text (the output from its first marker)
is kept until it ends (a streamed call's up to ``call_text_limit`` characters, ``call``), so a
malformed or cut-off call gives back exactly what the model wrote, or past the limit its first
characters and how many more. A stream reading a whole text (``engine.whole``) keeps it as
offsets into that text (``source``), not as a copy.

Cost: O(argument text) per call; memory O(the open call's kept raw text, at most ``call_text_limit``
characters once it is streamed, + its codec's state).
"""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache

from ..errors import MalformedOutputError, StreamError
from .call import ABORTING, ARGS_OPEN, BROKEN, HELD_CLOSED, REJECTED, STREAMED, STREAMING, STREAMING_CLOSED, Call
from .codec import CallCodec, CodecFactory
from .events import Event, ToolCallAborted, ToolCallArguments, ToolCallEnd, ToolCallStart, ToolCallUnfinished
from .spec import FormatSpec
from .stream_options import StreamOptions
from .value import Value, as_int, as_tuple

MARKUP_TEXT = "text inside the call's markup"
# a reason that names no text: where the stream was cut cannot change it


@lru_cache(maxsize=256)
def _markers_in(spec: FormatSpec) -> re.Pattern[str] | None:
    """A pattern finding any of the format's markers (three characters or more) in a name."""
    strings = sorted({m for values in spec.terminals.values() for m in values if len(m) >= 3}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, strings))) if strings else None


def holds_marker(spec: FormatSpec, name: str) -> bool:
    """A tool name that holds one of the format's markers is markup that did not read (a broken
    marker before it made the name region run on), never a name: no marker reaches a name."""
    pattern = _markers_in(spec)
    return pattern is not None and pattern.search(name) is not None


def valid_unicode(text: str) -> bool:
    """No lone surrogate: the text can be written as UTF-8 (a tool name a client can send back)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def random_call_id(_index: int) -> str:
    # 96 random bits as 24 hex digits, as uuid4().hex[:24] gave, without building a UUID (4x faster)
    return "call_" + os.urandom(12).hex()


class CallTracker:
    """The open call of one stream and the calls streamed so far. ``codec``: the factory of
    each call's codec (default: the format's)."""

    __slots__ = (
        "_spec",
        "_request",
        "_codec",
        "_tools",
        "_atomic",
        "_strict",
        "_limit",
        "_count",
        "open",
        "source",
        "_pending",
    )

    @property
    def atomic(self) -> bool:
        """Calls are held to their end (``atomic_tool_calls``)."""
        return self._atomic

    @property
    def codec(self) -> CodecFactory | None:
        """The factory of each call's codec."""
        return self._codec

    def __init__(
        self, spec: FormatSpec, request: StreamOptions, *, atomic: bool, codec: CodecFactory | None = None
    ) -> None:
        self._spec = spec
        self._request = request
        self._codec = codec if codec is not None else spec.codec
        self._tools = request.tool_index
        self._atomic = atomic
        self._strict = request.strict
        # a list of calls that must close (``whole_list``) is all of its text or none: its calls keep theirs
        self._limit = request.call_text_limit if not spec.whole_list else sys.maxsize
        self._count = 0  # calls streamed
        self.open: Call | None = None
        self.source: str | None = None  # the whole text, when the stream reads one (raw text by offsets)
        # reading a whole text: the span of a structured codec's first marker ("{"), read with the
        # text that follows it (``feed_last``); (-1, -1): none
        self._pending = (-1, -1)

    def copy(self) -> CallTracker:
        value = self.to_value()
        return CallTracker.from_value(self._spec, self._request, value, atomic=self._atomic, codec=self._codec)

    def unsend(self, index: int) -> None:
        """The calls from ``index`` on were never sent (an atomic stream's calls of a list that
        did not read): the next call takes ``index``, so indexes sent stay 0, 1, 2, …"""
        self._count = min(self._count, index)

    def to_value(self) -> Value:
        """``(calls streamed, the open call or None)``."""
        if self.source is not None:
            raise StreamError("a stream reading a whole output (engine.whole) is not copied or written out")
        return (self._count, self.open.to_value() if self.open is not None else None)

    @classmethod
    def from_value(
        cls,
        spec: FormatSpec,
        request: StreamOptions,
        value: Value,
        *,
        atomic: bool,
        codec: CodecFactory | None = None,
    ) -> CallTracker:
        count, call = as_tuple(value, 2)
        new = cls(spec, request, atomic=atomic, codec=codec)
        new._count = as_int(count)
        if call is not None:
            new.open = Call.from_value(new._new_codec(), call)
        return new

    def _new_codec(self) -> CallCodec:
        factory = self._codec
        if factory is None:
            raise StreamError(f"{self._spec.name}: a call opened but the format has no argument codec")
        return factory(self._tools)

    # ------------------------------------------------------------------ opening and ending

    def start(self, marker: str, at: int, state: str) -> None:
        """A call opens at ``marker`` (output offset ``at``, in state ``state``)."""
        self.open = Call(self._new_codec(), marker if self.source is None else "", at, state)

    def raw(self, call: Call, end: int) -> str:
        """The call's raw text, up to output offset ``end``."""
        source = self.source
        return source[call.start : end] if source is not None else "".join(call.raw)

    def end(self, out: list[Event], at: int) -> str | None:
        """The open call ends at output offset ``at``. Returns the text that becomes content (a
        held malformed call)."""
        call = self.open
        assert call is not None
        self.markup_end()
        if call.phase in ARGS_OPEN:
            self.args_end(out)
        self.open = None
        phase = call.phase
        if phase in BROKEN:
            return self._finish_broken(call, out, at)
        if phase in STREAMED:
            out.append(ToolCallEnd(call.index))
            return None
        if call.name is None:
            self._break(call, "no tool name")
            return self._finish_broken(call, [], at)
        self._stream(call, out)
        out.append(ToolCallEnd(call.index))
        return None

    def unfinished(self, out: list[Event], at: int) -> None:
        """The output ended (at output offset ``at``) inside the open call: its raw text is kept
        apart, not content (``ToolCallUnfinished``; one already streamed is discarded by its index)."""
        call = self.open
        assert call is not None
        self.open = None
        where = "in its arguments" if call.name is not None else "before its name was complete"
        reason = f"the output ended {where}" + (f" (and {call.reason})" if call.reason else "")
        if self._strict:
            raise MalformedOutputError(f"unfinished tool call: {reason}", state=call.state, position=call.start)
        text, limit = self.raw(call, at), self._limit
        cut = call.cut + max(0, len(text) - limit)  # a held call kept it all: cut it the same way
        if cut:
            text = text[:limit]
            reason += f"; its text after the first {limit:,} characters ({cut:,} more) was not kept"
        out.append(ToolCallUnfinished(call.index if call.phase in STREAMED else None, text, reason))

    def drop(self, at: int) -> str | None:
        """``Act.CALL_DROP`` at output offset ``at``: a held call was the envelope of calls that
        open later: forget it. One that had a name was not an envelope: it is not a call (its
        text is returned)."""
        call = self.open
        if call is None or call.phase in STREAMED:
            return None
        self.open = None
        if "".join(call.name_parts).strip():
            self._break(call, "a name before a list of calls")
            return self._finish_broken(call, [], at)
        return None

    def _finish_broken(self, call: Call, out: list[Event], at: int) -> str:
        """A malformed call ends: its exact text is content (one already streamed is reported
        aborted first, so that a client that drops it ends with ``parse()``'s message)."""
        if self._strict:
            raise self._error(call)
        if call.phase is ABORTING:
            reason = call.reason
            if call.cut:
                reason += f"; its text after the first {self._limit:,} characters was not kept"
            out.append(ToolCallAborted(call.index, reason))
        return self.raw(call, at)

    @staticmethod
    def _error(call: Call) -> MalformedOutputError:
        return MalformedOutputError(f"malformed tool call: {call.reason}", state=call.state, position=call.start)

    def _break(self, call: Call, reason: str) -> None:
        if call.phase in BROKEN:
            return  # the first reason stands
        call.phase = ABORTING if call.phase in STREAMED else REJECTED
        call.reason = reason

    # ------------------------------------------------------------------ text

    def note(self, text: str) -> None:
        """Text read while the call is open (markers included): kept until it ends."""
        call = self.open
        if call is not None and self.source is None:
            call.keep(text, self._limit)

    def markup_text(self, text: str) -> None:
        """Text read in the open call's own markup (an envelope region: before its invoke,
        between its parts): whitespace and the format's ``call_markup`` words are formatting; any
        other text (a broken marker, a stray word) is a body that does not read, so the call is
        malformed and its text content. A run that may still become such a word waits for the
        next marker (``markup_end``), so every cut of the stream decides alike."""
        call = self.open
        if call is None:
            return
        run = (call.markup + text).lstrip(" \t\r\n")
        if run and not any(w.startswith(run.rstrip(" \t\r\n")) for w in self._spec.call_markup):
            self._break(call, MARKUP_TEXT)
            run = ""
        call.markup = run

    def markup_end(self) -> None:
        """A marker ends the markup run: it must be one of the ``call_markup`` words whole."""
        call = self.open
        if call is not None and call.markup:
            if call.markup.strip(" \t\r\n") not in self._spec.call_markup:
                self._break(call, MARKUP_TEXT)
            call.markup = ""

    def name_text(self, text: str) -> None:
        call = self.open
        if call is not None:
            self.note(text)
            call.name_parts.append(text)

    def id_text(self, text: str) -> None:
        call = self.open
        if call is not None:
            self.note(text)
            call.id_parts.append(text)

    def name_end(self, out: list[Event]) -> None:
        """The name region is complete: read the name (and an id the family writes in it)."""
        call = self.open
        if call is None or call.name is not None:
            return
        raw = "".join(call.name_parts).strip()
        call_id = "".join(call.id_parts).strip() or None
        if self._spec.parse_name is not None and raw:
            raw, parsed_id = self._spec.parse_name(raw)
            call_id = call_id or parsed_id
        if not raw:
            self._break(call, "no tool name")
            return
        call.name = raw
        call.id = call_id
        call.codec.set_name(raw)
        self._announce(call, out)

    def set_name(self, name: str, out: list[Event]) -> None:
        """The name came with the call's opening (a message header)."""
        call = self.open
        assert call is not None
        call.name_parts.append(name)
        self.name_end(out)

    def args(self, data: str, i: int, end: int, out: list[Event]) -> int:
        """Argument text ``data[i:end]`` of the open call: the one way in. Returns where the
        codec stopped (a structured codec stops where its value ends or breaks). Reading a whole
        output, ``data[i:]`` is the rest of it (``CallCodec.feed_last``)."""
        call = self.open
        assert call is not None
        codec = call.codec
        if self._pending[0] >= 0:  # the codec's marker comes first (``marker_args``)
            i, self._pending = self._pending[0], (-1, -1)
        if call.quick and end > i:
            stops = call.stops  # set for structured codecs
            if stops is not None:
                plain = codec.in_string and not stops.search(data, i, end)
            else:  # raw-text values: the caller found no marker in the text
                plain = codec.in_string_value
            if plain:  # inside a string of a streamed call: the codec's own fast path
                text = data[i:end] if i or end != len(data) else data
                piece = codec.string_piece(text)
                if piece is not None:
                    call.keep(text, self._limit)
                    if piece:
                        out.append(ToolCallArguments(call.index, piece))
                    return end
        last = self.source is not None and end == len(data)
        j = codec.feed_last(data, i, end) if last else codec.feed(data, i, end)
        if not codec.structured:
            j = end
        if self.source is None:
            call.keep(data[i:j], self._limit)
        self._after_codec(call, out)
        return j

    def marker_args(self, terminal: str, marker: str, out: list[Event], at: int) -> None:
        """``Act.ARG_MARKER`` at output offset ``at``: the marker is structure of the argument
        codec (its raw text is kept by ``note``)."""
        call = self.open
        if call is None:
            return
        if call.codec.structured:  # the marker is the codec's own first text ("{")
            if self.source is not None:  # a whole text: read with what follows it, at once
                self._pending = (at, at + len(marker))
                return
            call.codec.feed(marker, 0, len(marker))
        else:
            call.codec.marker(terminal)
        self._after_codec(call, out)

    def stray(self, text: str) -> None:
        """Text in the argument region that a structured codec did not take."""
        call = self.open
        if call is None:
            return
        self.note(text)
        if text.strip(" \t\r\n") and call.phase not in BROKEN:
            self._break(call, "text after the arguments" if call.codec.done else "invalid arguments")

    def args_end(self, out: list[Event]) -> None:
        """``Act.ARGS_END``: the arguments are complete."""
        call = self.open
        if call is None or call.phase not in ARGS_OPEN:
            return
        if call.name is None:
            self.name_end(out)
            if call.phase not in ARGS_OPEN:
                return
        at, end = self._pending
        if at >= 0 and self.source is not None:  # the codec's marker, and nothing after it
            self._pending = (-1, -1)
            call.codec.feed(self.source, at, end)
            self._after_codec(call, out)
        rest = call.codec.close()
        if rest is None:
            self._break(call, "invalid arguments" if call.codec.failed else "unfinished arguments")
            return
        call.phase = STREAMING_CLOSED if call.phase is STREAMING else HELD_CLOSED
        if rest:
            self._release(call, rest, out)

    # ------------------------------------------------------------------ the codec's output

    def _after_codec(self, call: Call, out: list[Event]) -> None:
        codec = call.codec
        if call.name is None and codec.name is not None:
            call.name = codec.name
            call.id = codec.call_id
            self._announce(call, out)
        if call.phase in STREAMED:  # a held call's text stays in its codec until it streams or closes
            piece = codec.take()
            if piece:
                out.append(ToolCallArguments(call.index, piece))
        if codec.failed and call.phase not in BROKEN:
            self._break(call, "invalid arguments")
            if self._strict:
                raise self._error(call)

    def _release(self, call: Call, piece: str, out: list[Event]) -> None:
        if call.phase in STREAMED:
            out.append(ToolCallArguments(call.index, piece))
        else:
            call.args.append(piece)

    def _announce(self, call: Call, out: list[Event]) -> None:
        """The name is known: validate it and, unless atomic, stream the call's start."""
        name = call.name
        assert name is not None
        tools = self._tools
        if not name.isascii() and not valid_unicode(name):
            self._break(call, f"the tool name {name!r} is not valid Unicode")
        elif holds_marker(self._spec, name):
            self._break(call, f"the tool name {name[:60]!r} holds a marker of the format")
        elif self._spec.validate_names and tools and name not in tools:
            self._break(call, f"unknown tool {name!r}")
        if not (call.phase in STREAMED or call.phase in BROKEN or self._atomic):
            self._stream(call, out)

    def _new_id(self, index: int, name: str) -> str:
        """The id of a call the model wrote none for (the engine package docstring's rule)."""
        request = self._request
        if request.id_factory is not None:
            return request.id_factory(index)
        family = self._spec.call_id
        if family is not None:
            return family(request, index, name)
        return random_call_id(index)

    def _stream(self, call: Call, out: list[Event]) -> None:
        index = self._count
        self._count += 1
        call.index = index
        if call.phase is HELD_CLOSED:
            call.phase = STREAMING_CLOSED
        else:
            call.phase = STREAMING
            call.streamed_paths()  # its arguments stream on
            call.streamed_text(self._limit)
        assert call.name is not None
        out.append(ToolCallStart(index, call.id or self._new_id(index, call.name), call.name))
        held = call.codec.take()
        if held:
            call.args.append(held)
        if call.args:
            out.append(ToolCallArguments(index, "".join(call.args)))  # one piece: no copy
            call.args = []
