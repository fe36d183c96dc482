"""The OpenAI chat response layer: ``chat.completion.chunk`` and ``chat.completion`` dicts.

A ``ChatStream`` wraps one parser stream (one choice) and turns each ``feed()`` into the chunks
a client should receive; ``chat_completion()`` is the same stream fed once (non-streaming is
streaming), folded into one message. Both return plain dicts shaped exactly like the OpenAI
objects (the tests validate them with the ``openai`` package's types); nothing here imports
a third-party package.

Rules:

* The first chunk carries ``role``; a chunk with nothing to say (text held back as a possible
  marker) is not sent, except the final one, which carries ``finish_reason``. Logprobs and
  token ids of held-back tokens ride on the next chunk that is sent.
* ``finish_reason``: the engine's reason, except that a normal stop (``"stop"``) becomes
  ``"tool_calls"`` once a complete call was returned, and stays ``"stop"`` under a named
  ``tool_choice`` (OpenAI semantics). ``"length"`` stays ``"length"``, even inside a call.
* A call that was streamed and then turned out unfinished or malformed (``Delta.aborted``)
  cannot be taken back in the OpenAI protocol: it does not count for ``finish_reason``
  (``length`` stays ``length``; a normal stop with no complete call is ``stop``), and
  ``chat_completion()`` (atomic) never contains it. Clients that must not see such calls
  pass ``atomic_tool_calls=True``: each call is then sent whole once it is complete.
* Tool-call deltas carry ``index`` always and ``id``, ``type``, ``function.name`` in the first
  delta of each call; ``repeat_tool_call_ids=True`` repeats ``id`` / ``type`` on every delta
  for clients that validate each chunk on its own (vLLM #42696). Note that the ``openai``
  client's own accumulation concatenates repeated ids, so the option is off by default.
* ``include_reasoning=False``: no reasoning field, and no ``logprobs`` nor token ids in any chunk
  or in the final message (they would reveal the hidden reasoning).
* ``usage``: ``prompt_tokens``, ``completion_tokens`` (token ids fed, or the caller's count) and
  ``completion_tokens_details.reasoning_tokens``: tokens of reasoning, markers excluded,
  counted from token ids: with a tokenizer by the parser's token view
  (``Parser.reasoning_tracker``, markers matched by id); without one, the ids of deltas that
  begin and end inside reasoning (an approximation: a delta that crosses a marker is not
  counted). In a final usage chunk (``include_usage``), or on every
  chunk (``continuous_usage``).
* Call ids (``tool_call_id``): ``None`` keeps what the parser gives (the id the model wrote,
  else the family's style, else ``call_`` + random); ``"random"`` (``call_`` + 24 hex),
  ``"kimi"`` (``functions.NAME:N``, numbered on from ``history_tool_calls``), ``"mistral"``
  (9 alphanumerics) replace ids the model did not write.
"""

from __future__ import annotations

import random
import string
import time
import uuid
from collections.abc import Sequence
from typing import Any

from ..engine.events import Event, ReasoningText, ToolCallEnd
from ..engine.spec import REASONING, Region
from ..message.fold import fold as _fold
from ..message.types import Delta

ID_STYLES = ("random", "kimi", "mistral")
_ALNUM = string.ascii_letters + string.digits


def make_call_id(style: str, index: int, name: str, *, history_tool_calls: int = 0) -> str:
    """A tool-call id in one family's style (see the module docstring)."""
    if style == "kimi":
        return f"functions.{name}:{history_tool_calls + index}"
    if style == "mistral":
        return "".join(random.choices(_ALNUM, k=9))
    if style == "random":
        return "call_" + uuid.uuid4().hex[:24]
    raise ValueError(f"tool_call_id must be one of {', '.join(ID_STYLES)}")


def resolve_finish_reason(engine_reason: str | None, *, tool_calls: bool, named: bool) -> str:
    """OpenAI ``finish_reason`` from the engine's reason (see the module docstring)."""
    reason = engine_reason or "stop"
    if reason == "stop" and tool_calls and not named:
        return "tool_calls"
    return reason


class _ReasoningCounter:
    """Counts reasoning tokens, markers excluded, as token ids arrive."""

    def __init__(self, parser: Any, request: Any) -> None:
        compiled = parser._compiled_for(request)
        self._by_id = parser._vocab is not None
        self._special = compiled.special_ids
        self._rules = compiled.states[REASONING].rules if REASONING in compiled.states else {}
        self._inside = parser.initial_state(request) == REASONING
        self.count = 0

    def add(self, token_ids: Sequence[int], before: str, after: str, regions: Any) -> None:
        if self._by_id:
            for token_id in token_ids:
                if not self._inside:
                    break  # a format that opens reasoning again is counted by delta below
                terminal = self._special.get(token_id)
                if terminal is None:
                    self.count += 1
                    continue
                rule = self._rules.get(terminal)
                if rule is not None and regions[rule.next] is not Region.REASONING:
                    self._inside = False
            if not self._inside and regions.get(after) is Region.REASONING and regions.get(before) is Region.REASONING:
                self._inside = True
            return
        if regions.get(before) is Region.REASONING and regions.get(after) is Region.REASONING:
            self.count += len(token_ids)


class ChatStream:
    """One choice of a streamed chat completion. ``options`` are the parser's request options
    (``tools``, ``tool_choice``, ``include_reasoning``, …)."""

    def __init__(
        self,
        parser: Any,
        *,
        id: str | None = None,
        model: str = "",
        created: int | None = None,
        index: int = 0,
        tool_call_id: str | None = None,
        repeat_tool_call_ids: bool = False,
        include_usage: bool = False,
        continuous_usage: bool = False,
        prompt_tokens: int | None = None,
        return_token_ids: bool = False,
        reasoning_field: str = "reasoning",
        atomic_tool_calls: bool = False,
        **options: Any,
    ) -> None:
        if tool_call_id is not None and tool_call_id not in ID_STYLES:
            raise ValueError(f"tool_call_id must be one of {', '.join(ID_STYLES)}")
        self.request = parser.request(**options)
        self._style = tool_call_id
        self._minted: dict[int, str] = {}
        if tool_call_id is not None and "id_factory" not in options:
            options["id_factory"] = self._mint
        self.stream = parser.stream(atomic_tool_calls=atomic_tool_calls, **options)
        self.id = id or "chatcmpl-" + uuid.uuid4().hex
        self.model = model
        self.created = int(time.time()) if created is None else created
        self.index = index
        self._repeat = repeat_tool_call_ids
        self._usage_last = include_usage
        self._usage_every = continuous_usage
        self._hide = not self.request.include_reasoning
        self._return_ids = return_token_ids and not self._hide
        self._reasoning_field = reasoning_field
        self._named = self.request.tool_choice == "named"
        self._regions = parser._compiled_for(self.request).spec.regions
        self._counter = _ReasoningCounter(parser, self.request)
        # the token view's exact count when the parser has a tokenizer (Parser.reasoning_tracker)
        tracker = getattr(parser, "reasoning_tracker", None)
        self._tracker = tracker(**options) if tracker is not None and parser._vocab is not None else None
        self.prompt_tokens = prompt_tokens
        if prompt_tokens is None:
            ids = self.request.prompt_token_ids
            self.prompt_tokens = len(ids) if ids is not None else 0
        self.completion_tokens = 0
        self._role_sent = False
        self._ids: dict[int, str] = {}  # call index -> id sent
        self._complete_calls = 0
        self._logprobs: list[Any] = []
        self._token_ids: list[int] = []
        self.finish_reason: str | None = None

    def _mint(self, index: int) -> str:
        placeholder = f"\x00trisect-call-{index}"
        self._minted[index] = placeholder
        return placeholder

    # ------------------------------------------------------------------ public API

    def feed(
        self, text: str | None = None, token_ids: Sequence[int] | None = None, *, logprobs: Sequence[Any] | None = None
    ) -> list[dict[str, Any]]:
        """One engine delta (text and/or token ids, optional per-token logprobs) -> chunks."""
        before = self.stream.state
        events = self.stream.events(text, token_ids)
        if token_ids:
            self.completion_tokens += len(token_ids)
            if self._tracker is not None:
                self._tracker.feed(token_ids)
            else:
                self._counter.add(token_ids, before, self.stream.state, self._regions)
            if self._return_ids:
                self._token_ids.extend(token_ids)
        if logprobs and not self._hide:
            self._logprobs.extend(logprobs)
        chunk = self._chunk(events, final=False)
        return [chunk] if chunk is not None else []

    def finish(
        self, finish_reason: str | None = "stop", *, completion_tokens: int | None = None
    ) -> list[dict[str, Any]]:
        """End of the choice: the final chunk (with ``finish_reason``), then a usage chunk
        when ``include_usage`` was asked for."""
        if completion_tokens is not None:
            self.completion_tokens = completion_tokens
        events = self.stream.finish_events()
        self._track(events)
        self.finish_reason = resolve_finish_reason(
            finish_reason, tool_calls=self._complete_calls > 0, named=self._named
        )
        chunk = self._chunk(events, final=True, tracked=True)
        assert chunk is not None
        out = [chunk]
        if self._usage_last and not self._usage_every:
            out.append(self._envelope([], usage=True))
        return out

    @property
    def reasoning_tokens(self) -> int:
        return self._tracker.reasoning_tokens if self._tracker is not None else self._counter.count

    def usage(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": (self.prompt_tokens or 0) + self.completion_tokens,
            "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
        }

    # ------------------------------------------------------------------ building chunks

    def _track(self, events: list[Event]) -> None:
        for event in events:
            if type(event) is ToolCallEnd:
                self._complete_calls += 1

    def _chunk(self, events: list[Event], *, final: bool, tracked: bool = False) -> dict[str, Any] | None:
        if not tracked:
            self._track(events)
        if self._hide:
            events = [e for e in events if type(e) is not ReasoningText]
        delta = _fold(events)
        body = self._delta_dict(delta) if delta is not None else {}
        if not self._role_sent:
            body = {"role": "assistant", **body}
            self._role_sent = True
        elif not body and not final:
            return None
        choice: dict[str, Any] = {"index": self.index, "delta": body, "logprobs": None, "finish_reason": None}
        if self._logprobs:
            choice["logprobs"] = {"content": self._logprobs, "refusal": None}
            self._logprobs = []
        if self._token_ids:
            choice["token_ids"] = self._token_ids
            self._token_ids = []
        if final:
            choice["finish_reason"] = self.finish_reason
        return self._envelope([choice], usage=self._usage_every)

    def _envelope(self, choices: list[dict[str, Any]], *, usage: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }
        if usage:
            out["usage"] = self.usage()
        return out

    def _delta_dict(self, delta: Delta) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if delta.reasoning and not self._hide:
            body[self._reasoning_field] = delta.reasoning
        if delta.content:
            body["content"] = delta.content
        calls = []
        for piece in delta.tool_calls:
            entry: dict[str, Any] = {"index": piece.index}
            call_id = piece.id
            if piece.name is not None:
                call_id = self._call_id(piece.index, piece.id or "", piece.name)
                self._ids[piece.index] = call_id
            elif self._repeat:
                call_id = self._ids.get(piece.index)
            if call_id is not None:
                entry["id"] = call_id
                entry["type"] = "function"
            function: dict[str, Any] = {}
            if piece.name is not None:
                function["name"] = piece.name
            function["arguments"] = piece.arguments
            entry["function"] = function
            calls.append(entry)
        if calls:
            body["tool_calls"] = calls
        return body

    def _call_id(self, index: int, given: str, name: str) -> str:
        if self._style is None or self._minted.get(index) != given:
            return given  # the parser's id: written by the model, or the caller's id_factory
        history = getattr(self.request, "history_tool_calls", 0)
        return make_call_id(self._style, index, name, history_tool_calls=history)


def chat_completion(
    parser: Any,
    output: str | None = None,
    *,
    token_ids: Sequence[int] | None = None,
    finish_reason: str | None = "stop",
    logprobs: Sequence[Any] | None = None,
    completion_tokens: int | None = None,
    **stream_options: Any,
) -> dict[str, Any]:
    """A whole ``chat.completion`` dict for one output: the ``ChatStream`` fed once (atomic, so
    a malformed call is content as in ``parse()``), folded. ``stream_options`` as for
    ``ChatStream`` (``id``, ``model``, ``tool_call_id``, ``prompt_tokens``, request options…)."""
    stream_options.pop("include_usage", None)
    stream_options.pop("continuous_usage", None)
    stream_options.pop("repeat_tool_call_ids", None)
    stream_options.pop("atomic_tool_calls", None)
    chat = ChatStream(parser, atomic_tool_calls=True, **stream_options)
    chunks = chat.feed(output, token_ids, logprobs=logprobs)
    chunks += chat.finish(finish_reason, completion_tokens=completion_tokens)
    reasoning: list[str] = []
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    lps: list[Any] = []
    ids: list[int] = []
    field = chat._reasoning_field
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            if delta.get(field):
                reasoning.append(delta[field])
            if delta.get("content"):
                content.append(delta["content"])
            for piece in delta.get("tool_calls", ()):
                empty = {"id": piece.get("id"), "type": "function", "function": {"name": "", "arguments": ""}}
                call = calls.setdefault(piece["index"], empty)
                call["function"]["name"] += piece["function"].get("name", "")
                call["function"]["arguments"] += piece["function"]["arguments"]
            if choice.get("logprobs"):
                lps.extend(choice["logprobs"]["content"])
            ids.extend(choice.get("token_ids", ()))
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if not chat._hide:
        message[field] = "".join(reasoning) or None
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    choice_out: dict[str, Any] = {
        "index": chat.index,
        "message": message,
        "logprobs": {"content": lps, "refusal": None} if lps else None,
        "finish_reason": chat.finish_reason,
    }
    if chat._return_ids:
        choice_out["token_ids"] = ids
    return {
        "id": chat.id,
        "object": "chat.completion",
        "created": chat.created,
        "model": chat.model,
        "choices": [choice_out],
        "usage": chat.usage(),
    }
