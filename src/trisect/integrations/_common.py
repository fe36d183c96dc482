"""What the vLLM and SGLang plugins share; no engine is imported here.

* ``plugin_names(kind)``: ``trisect_<name>`` for every name and alias ``trisect.Parser`` accepts,
  read from ``trisect.formats()`` when the engine registers (run-time formats included);
  ``engine_names(kind)`` adds ``trisect_auto``.
* ``parser_for``: one compiled ``trisect.Parser`` per (formats, tokenizer), shared by requests;
  ``AUTO`` for a format (``trisect_auto``) is what ``trisect.detect`` finds in the
  tokenizer's chat template (``detected``).
* ``settings``: the two switches an operator or a request sets (tool-call streaming, grammar
  for ``tool_choice="auto"``), from the environment and per-request extension arguments.
* ``Fold``: a stream's deltas -> ``Piece`` (reasoning, content, call pieces), keeping which
  calls completed or were aborted (the engines' finish_reason and back-fill read them).
* ``ReasoningPhase``: phase one of an engine's two-phase pipeline (a reasoning parser, then a
  tool parser fed what it leaves): trisect's reasoning, then the model's text after the end of
  reasoning exactly as the model wrote it, so phase two sees what it would see alone.
* ``IdsView``: the token view over one growing id sequence (an engine asks per decode step,
  with speculative ids that may be rolled back): O(new ids) per call, results a pure function
  of the ids.

Cost per delta: the trisect stream's (its fold included), plus O(calls in the delta).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import (
    Act,
    ContentText,
    Delta,
    FormatSpec,
    Parser,
    ReasoningEnd,
    ReasoningText,
    Region,
    StreamParser,
    formats,
)
from ..errors import RequestError
from ..message.fold import render
from ..request.tokenview import EngineTracker, ReasoningTracker
from ..request.tools import openai_tools as openai_tools  # the plugins' tool shaping, shared with serve

PREFIX = "trisect_"
AUTO = "auto"  # the format "detected from the tokenizer's chat template" (trisect_auto)
AUTO_NAME = PREFIX + AUTO
AUTO_FLAGS = {"reasoning": "--reasoning-parser trisect_NAME", "tools": "--tool-call-parser trisect_NAME"}

# Operator switches (environment, every process) and their per-request names (vLLM vllm_xargs).
TOOL_CALLS_ENV = "TRISECT_TOOL_CALLS"  # "atomic" (default) | "incremental"
AUTO_GRAMMAR_ENV = "TRISECT_AUTO_GRAMMAR"  # "1": a structural tag for tool_choice="auto"
TOOL_CALLS_ARG = "trisect_tool_calls"
AUTO_GRAMMAR_ARG = "trisect_auto_grammar"
TOOL_CALL_MODES = ("atomic", "incremental")
_TRUE = ("1", "true", "yes", "on")
# A character no marker contains and no format holds back: fed once to release held text.
_PROBE = "\ue000"


def plugin_names(kind: str) -> dict[str, str]:
    """``trisect_<name>`` -> trisect name, for every name and alias of that kind."""
    return {PREFIX + name: name for spec in formats() if spec.kind == kind for name in (spec.name, *spec.aliases)}


def engine_names(kind: str) -> dict[str, str]:
    """The names an engine plugin registers: every format's, and ``trisect_auto`` (the formats of
    the chat template of the tokenizer the engine hands the parser)."""
    return {**plugin_names(kind), AUTO_NAME: AUTO}


def trisect_name(name: str | None) -> str | None:
    """The trisect format a plugin name stands for (``None`` if it is not one of ours)."""
    if name is None or not name.startswith(PREFIX):
        return None
    return name[len(PREFIX) :]


_PARSERS: dict[tuple[str | None, str | None, int], tuple[Any, Parser]] = {}


def parser_for(reasoning: str | None, tools: str | None, tokenizer: Any) -> Parser:
    """The compiled parser for these formats and this tokenizer (built once, then shared); a
    format ``AUTO`` is the tokenizer's chat template's (``detected``)."""
    key = (reasoning, tools, id(tokenizer))
    entry = _PARSERS.get(key)
    if entry is None or entry[0] is not tokenizer:
        r, t = detected(reasoning, tools, tokenizer) if AUTO in (reasoning, tools) else (reasoning, tools)
        entry = _PARSERS[key] = (tokenizer, Parser(reasoning=r, tools=t, tokenizer=tokenizer))
    return entry[1]


def detected(
    reasoning: str | None, tools: str | None, tokenizer: Any
) -> tuple[str | FormatSpec | None, str | FormatSpec | None]:
    """The formats for ``AUTO``: ``trisect.detect`` of the tokenizer's ``chat_template`` (the
    model's, from its ``tokenizer_config.json``; an engine's ``--chat-template`` override is not
    on the tokenizer). A part the template does not have is none; one detection cannot tell, or a
    tokenizer without a template, is a ``DetectionError`` naming the flag to pass instead."""
    from ..detect import detect
    from ..errors import DetectionError, TemplateError

    parts = [part for part, fmt in (("reasoning", reasoning), ("tools", tools)) if fmt == AUTO]
    name = getattr(tokenizer, "name_or_path", None) or type(tokenizer).__name__
    try:
        detection = detect(tokenizer)
    except TemplateError as exc:
        flags = " / ".join(AUTO_FLAGS[part] for part in parts)
        raise DetectionError(f"{AUTO_NAME} reads the chat template of tokenizer {name} ({exc}); pass {flags}") from None
    replace(detection, source=f"tokenizer {name}").require(parts, flags=AUTO_FLAGS)
    return (
        detection.reasoning_spec if reasoning == AUTO else reasoning,
        detection.tools_spec if tools == AUTO else tools,
    )


@dataclass(frozen=True)
class Settings:
    """``incremental``: stream each call's arguments as they are generated (else each call
    whole once complete); ``auto_grammar``: constrain ``tool_choice="auto"`` by the format's
    structural tag."""

    incremental: bool = False
    auto_grammar: bool = False


def settings(extra: Mapping[str, Any] | None = None) -> Settings:
    """The operator's settings (environment), overridden by a request's extension arguments."""
    extra = extra or {}
    mode = str(extra.get(TOOL_CALLS_ARG, os.environ.get(TOOL_CALLS_ENV, "atomic"))).lower()
    if mode not in TOOL_CALL_MODES:
        raise RequestError(f"{TOOL_CALLS_ARG} must be one of {', '.join(TOOL_CALL_MODES)}, not {mode!r}")
    grammar = str(extra.get(AUTO_GRAMMAR_ARG, os.environ.get(AUTO_GRAMMAR_ENV, "0"))).lower() in _TRUE
    return Settings(incremental=mode == "incremental", auto_grammar=grammar)


def tool_choice(value: Any, has_tools: bool) -> Any:
    """A request's ``tool_choice`` as trisect reads it (pydantic named choices become dicts, chat
    or Responses-style: ``request.choice`` reads both; unset means ``auto`` when tools are given,
    as the engines default it)."""
    if value is None:
        return "auto" if has_tools else "none"
    return value.model_dump(exclude_none=True) if hasattr(value, "model_dump") else value


# ---------------------------------------------------------------------------------------- fold


@dataclass(slots=True)
class Piece:
    """What one feed adds: reasoning and content text, and call pieces
    ``(index, id | None, name | None, arguments)`` (id and name only in a call's first piece)."""

    reasoning: str = ""
    content: str = ""
    calls: list[tuple[int, str | None, str | None, str]] = field(default_factory=list)

    def add(self, other: Piece | None) -> Piece:
        if other is not None:
            self.reasoning += other.reasoning
            self.content += other.content
            self.calls.extend(other.calls)
        return self


class Fold:
    """One trisect stream, its deltas (``trisect.message.fold``) rendered as ``Piece`` objects."""

    __slots__ = ("stream", "_events", "completed", "aborted", "arguments", "prev_tool_call_arr", "streamed_args")

    def __init__(self, stream: StreamParser) -> None:
        self.stream = stream
        self._events = stream.events
        self.completed: set[int] = set()  # calls that ended well-formed
        self.aborted: set[int] = set()  # calls streamed, then cut off or malformed
        self.arguments: dict[int, list[str]] = {}  # argument pieces sent, per call
        # the engines' bookkeeping shape, per call: {"name", "arguments"} and the arguments sent.
        # Both hold the same string (the whole arguments once the call ended, "" before), so an
        # engine's back-fill of "parsed but unsent" arguments finds nothing to add.
        self.prev_tool_call_arr: list[dict[str, Any]] = []
        self.streamed_args: list[str] = []

    def feed(self, text: str | None, token_ids: Sequence[int] | None = None) -> Piece | None:
        events = self._events(text, token_ids)
        return render(events, self) if events else None

    def finish(self) -> Piece | None:
        delta = self.stream.finish()
        return self.on_delta(delta) if delta is not None else None

    # the fold's renderer (``trisect.message.fold``)

    def on_reasoning(self, text: str) -> Piece:
        return Piece(text)

    def on_content(self, text: str) -> Piece:
        return Piece("", text)

    def on_arguments(self, index: int, text: str) -> Piece:
        self.arguments[index].append(text)
        return Piece("", "", [(index, None, None, text)])

    def on_delta(self, delta: Delta) -> Piece | None:
        if delta.tool_calls or delta.ended or delta.aborted:
            self._keep(delta)
        if not (delta.reasoning or delta.content or delta.tool_calls):
            return None
        calls = [(c.index, c.id, c.name, c.arguments) for c in delta.tool_calls]
        return Piece(delta.reasoning or "", delta.content or "", calls)

    def _keep(self, delta: Delta) -> None:
        for call in delta.tool_calls:
            if call.name is not None:  # the call's first piece
                self.arguments[call.index] = [call.arguments]
                self.prev_tool_call_arr.append({"name": call.name, "arguments": ""})
                self.streamed_args.append("")
            else:  # setdefault: a resumed stream continues calls its Fold never saw start
                self.arguments.setdefault(call.index, []).append(call.arguments)
        for index in delta.ended:
            self.completed.add(index)
            whole = "".join(self.arguments.get(index, ()))
            if index < len(self.prev_tool_call_arr):  # a call this Fold saw start
                self.prev_tool_call_arr[index]["arguments"] = whole
                self.streamed_args[index] = whole
        self.aborted.update(delta.aborted)  # streamed, then malformed or cut off (not content)


# ---------------------------------------------------------------------------------------- two phases


class ReasoningPhase:
    """Phase one of a two-phase pipeline: ``feed`` returns ``(reasoning, rest)``.

    Until reasoning ends, ``reasoning`` is trisect's reasoning text. In the delta where it ends,
    ``rest`` is the model's text after the end marker, exactly as written, and every later delta
    is passed through unchanged: the phase-two parser gets the text it would get alone. The end
    marker is the first spelling of one of the format's reasoning-end markers that completes in
    that delta (the text of the previous deltas is searched as far back as a marker can reach;
    ``spec`` is the stream's format);
    a format whose reasoning ends otherwise (a channel header) hands over trisect's content
    and what it holds back (released by one probe character). Content a format puts before its
    reasoning block is returned in ``rest`` as trisect's text.

    Reasoning has ended at trisect's ``ReasoningEnd``, not at ``reasoning_ended``: a block whose
    text the stream holds past its end (Nemotron's swap, ``FormatSpec.fallback_when_empty``) is
    reasoning once something follows it, and the content if the output ends first. Until the
    stream decides, the phase stays in reasoning and keeps the raw text after the end marker;
    then it hands that over, or ``finish`` gives the held text as the content.
    """

    __slots__ = ("stream", "ended", "_ends", "_reach", "_tail", "_after")

    def __init__(self, stream: StreamParser, spec: FormatSpec) -> None:
        self.stream = stream
        self.ended = stream.reasoning_ended
        self._ends = end_markers(spec)
        self._reach = max((len(m) for m in self._ends), default=1) - 1
        self._tail = ""  # the last characters fed, as many as a marker split across deltas needs
        self._after: str | None = None  # the raw text after a held block's end, while undecided

    def feed(self, text: str, token_ids: Sequence[int] | None = None) -> tuple[str, str]:
        if self.ended:
            return "", text
        events = self.stream.events(text, token_ids)
        if self._after is not None:  # the held block ended before: only its ReasoningEnd decides
            self._after += text
        reasoning: list[str] = []
        before: list[str] = []  # content before the block ended (a format's content prefix)
        after: list[str] = []
        seen_end = False
        for event in events:
            if type(event) is ReasoningText and not seen_end:
                reasoning.append(event.text)
            elif type(event) is ContentText:
                (after if seen_end else before).append(event.text)
            elif type(event) is ReasoningEnd:
                seen_end = True
        if not seen_end:
            if self.stream.reasoning_ended and self._after is None:  # ended, its text held
                self._after = self._after_marker(text) or ""
            elif self._reach:
                self._tail = (self._tail + text)[-self._reach :]
            return "".join(reasoning), "".join(before)
        self.ended = True
        if self._after is not None:
            return "".join(reasoning), "".join(before) + self._after
        return "".join(reasoning), "".join(before) + self._raw_rest(text, "".join(after))

    def _raw_rest(self, text: str, content: str) -> str:
        rest = self._after_marker(text)
        if rest is not None:
            return rest
        held = "".join(e.text for e in self.stream.events(_PROBE) if type(e) is ContentText)
        return content + (held[: -len(_PROBE)] if held.endswith(_PROBE) else "")

    def _after_marker(self, text: str) -> str | None:
        """The text after the first end marker that completes in ``text`` (``None``: none does)."""
        window = self._tail + text
        ends = [
            i + len(m)
            for m in self._ends
            if (i := window.find(m, max(0, len(self._tail) - len(m) + 1))) != -1 and i + len(m) > len(self._tail)
        ]
        return window[min(ends) :] if ends else None

    def finish(self) -> tuple[str, str]:
        """End of output: what the stream still holds (reasoning, or content by a format's
        fallback), unless reasoning ended before."""
        if self.ended:
            return "", ""
        self.ended = True
        events = self.stream.finish_events()
        reasoning = "".join(e.text for e in events if type(e) is ReasoningText)
        return reasoning, "".join(e.text for e in events if type(e) is ContentText)

    def whole(self, text: str, token_ids: Sequence[int] | None = None) -> tuple[str, str]:
        reasoning, rest = self.feed(text, token_ids)
        more_reasoning, more_rest = self.finish()
        return reasoning + more_reasoning, rest + more_rest


def end_markers(spec: FormatSpec) -> tuple[str, ...]:
    """Every spelling of the markers that end a reasoning block in ``spec`` (longest first)."""
    reasoning = {state for state, region in spec.regions.items() if region is Region.REASONING}
    names = {t for (state, t), rule in spec.table.items() if state in reasoning and Act.REASONING_END in rule.acts}
    spellings = {m for name in names for m in spec.terminals.get(name, ())}
    return tuple(sorted(spellings, key=len, reverse=True))


# ---------------------------------------------------------------------------------------- token view


class IdsView:
    """The token view of one request over a sequence that only grows (the ids an engine has
    committed), probed with ids that may still be rolled back.

    ``ended(ids, pending)``: has reasoning ended in ``ids``, whose last ``pending`` ids are not
    committed yet? ``count(ids)``: reasoning tokens in ``ids``. A tracker is kept at the
    committed end and advanced by the new ids; pending ids are fed to a copy. A sequence that
    does not extend the tracked one (shorter, or another last id) starts the tracker again, so
    results depend on the ids only.
    """

    __slots__ = ("_parser", "_options", "_tracker", "_fed", "_last")

    def __init__(self, parser: Parser, options: Mapping[str, Any]) -> None:
        self._parser = parser
        self._options = dict(options)
        self._tracker: ReasoningTracker | EngineTracker | None = None
        self._fed = 0
        self._last: int | None = None

    def _at(self, ids: Sequence[int], n: int) -> ReasoningTracker | EngineTracker:
        tracker = self._tracker
        if tracker is None or n < self._fed or (self._fed and ids[self._fed - 1] != self._last):
            tracker = self._tracker = self._parser.reasoning_tracker(**self._options)
            self._fed = 0
        if n > self._fed:
            tracker.feed(list(ids[self._fed : n]))
            self._fed = n
            self._last = ids[n - 1]
        return tracker

    def ended(self, ids: Sequence[int], pending: int = 0) -> bool:
        pending = min(max(pending, 0), len(ids))
        base = len(ids) - pending
        tracker = self._at(ids, base)
        if not pending:
            return tracker.ended
        return tracker.copy().feed(list(ids[base:]))  # O(pending): the speculative ids alone

    def count(self, ids: Sequence[int]) -> int:
        return self._at(ids, len(ids)).reasoning_tokens
