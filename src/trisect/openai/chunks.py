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
* A call the output ended inside is not content: its markup is never sent (the message's
  ``unfinished_call`` has no OpenAI field); ``finish_reason`` stays the engine's (``"length"``).
  A call that was streamed and then turned out unfinished or malformed (``Delta.aborted``; a
  malformed one's text follows as content)
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
  counted from token ids. With a tokenizer the parser's token view counts
  (``Parser.reasoning_tracker``, markers matched by id). Without one, the engine's state
  decides per delta: the ids of a delta count when the stream is inside reasoning
  (``StreamParser.in_reasoning``) both before it (after the previous delta with ids, or at
  the start) and after it, so a delta that crosses a reasoning marker is not counted (its
  ids carry the marker, and without a tokenizer text ids cannot be told from marker ids).
  In a final usage chunk (``include_usage``), or on every chunk (``continuous_usage``).
* Call ids (``tool_call_id``): ``None`` keeps what the parser gives (the id the model wrote,
  else the family's style, else ``call_`` + random); ``"random"`` (``call_`` + 24 hex),
  ``"kimi"`` (``functions.NAME:N``, numbered on from ``history_tool_calls``), ``"mistral"``
  (9 alphanumerics) replace ids the model did not write.

Cost: the engine's per delta, plus the fold (``trisect.message.fold``: its one-event fast path
is the commonest delta) and one chunk dict.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

from ..message.fold import fold, render
from ..message.types import Delta, MessageBuilder
from ..parser import Parser
from ..request.tokenview import ReasoningTokens
from .call_ids import CallIds

_CHUNK = "chat.completion.chunk"


def resolve_finish_reason(engine_reason: str | None, *, tool_calls: bool, named: bool) -> str:
    """OpenAI ``finish_reason`` from the engine's reason (see the module docstring)."""
    reason = engine_reason or "stop"
    if reason == "stop" and tool_calls and not named:
        return "tool_calls"
    return reason


class ChatStream:
    """One choice of a streamed chat completion. ``options`` are the parser's request options
    (``tools``, ``tool_choice``, ``include_reasoning``, …)."""

    __slots__ = (
        "request",
        "stream",
        "return_token_ids",
        "reasoning_field",
        "prompt_tokens",
        "finish_reason",
        "_events",
        "_engine",
        "_head",
        "_choice",
        "_ids",
        "_tokens",
        "_repeat",
        "_usage_last",
        "_usage_every",
        "_hide",
        "_named",
        "_completion_tokens",
        "_role_sent",
        "_complete_calls",
        "_logprobs",
        "_token_ids",
    )

    def __init__(
        self,
        parser: Parser,
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
        self.request = parser.request(**options)
        self._ids = CallIds(tool_call_id, history_tool_calls=self.request.history_tool_calls)
        if tool_call_id is not None and "id_factory" not in options:
            options["id_factory"] = self._ids.mint
        self.stream = parser.stream(atomic_tool_calls=atomic_tool_calls, **options)
        self._events = self.stream.events  # the engine's feed, after the request's filter
        self._engine = self.stream.engine
        # the token view's exact count when the parser has a tokenizer, else the engine's state
        tracker = parser.reasoning_tracker(**options) if parser.vocab is not None else None
        self._tokens = ReasoningTokens(self._engine, tracker)
        # what every chunk of this choice repeats (copied per chunk: cheaper than a literal)
        self._head: dict[str, Any] = {
            "id": id or "chatcmpl-" + uuid.uuid4().hex,
            "object": _CHUNK,
            "created": int(time.time()) if created is None else created,
            "model": model,
            "choices": [],
        }
        self._choice: dict[str, Any] = {"index": index, "delta": {}, "logprobs": None, "finish_reason": None}
        self._repeat = repeat_tool_call_ids
        self._usage_last = include_usage
        self._usage_every = continuous_usage
        self._hide = not self.request.include_reasoning
        self.return_token_ids = return_token_ids and not self._hide  # ids would reveal hidden reasoning
        self.reasoning_field = reasoning_field
        self._named = self.request.tool_choice == "named"
        if prompt_tokens is None:
            ids = self.request.prompt_token_ids
            prompt_tokens = len(ids) if ids is not None else 0
        self.prompt_tokens = prompt_tokens
        self._completion_tokens: int | None = None  # the caller's count (finish()), else the ids fed
        self._role_sent = False
        self._complete_calls = 0
        self._logprobs: list[Any] = []  # kept for the next chunk sent
        self._token_ids: list[int] = []  # kept for the next chunk sent
        self.finish_reason: str | None = None

    # ------------------------------------------------------------------ public API

    def feed(
        self, text: str | None = None, token_ids: Sequence[int] | None = None, *, logprobs: Sequence[Any] | None = None
    ) -> list[dict[str, Any]]:
        """One engine delta (text and/or token ids, optional per-token logprobs) -> chunks."""
        events = self._events(text, token_ids)
        if token_ids or logprobs:
            self._keep(token_ids, logprobs)
        if events:
            chunks = render(events, self)
            if chunks is not None:
                return chunks
        return self._chunks({}, False)

    def finish(
        self, finish_reason: str | None = "stop", *, completion_tokens: int | None = None
    ) -> list[dict[str, Any]]:
        """End of the choice: the final chunk (with ``finish_reason``), then a usage chunk
        when ``include_usage`` was asked for."""
        delta = self.finish_delta(finish_reason, completion_tokens=completion_tokens)
        out = self._chunks(self._body(delta) if delta is not None else {}, True)
        if self._usage_last and not self._usage_every:
            out.append(self._envelope([], usage=True))
        return out

    def feed_delta(
        self, text: str | None = None, token_ids: Sequence[int] | None = None, *, logprobs: Sequence[Any] | None = None
    ) -> Delta | None:
        """``feed`` before its rendering: the stream's delta (``trisect.message.fold``), its calls
        carrying the ids this choice sends; logprobs and token ids are kept for the next chunk
        (``pending_logprobs``)."""
        events = self._events(text, token_ids)
        if token_ids or logprobs:
            self._keep(token_ids, logprobs)
        delta = fold(events) if events else None
        return self._calls(delta) if delta is not None else None

    def finish_delta(self, finish_reason: str | None = "stop", *, completion_tokens: int | None = None) -> Delta | None:
        """``finish`` before its rendering: the stream's last delta; sets ``finish_reason``."""
        if completion_tokens is not None:
            self._completion_tokens = completion_tokens
        delta = fold(self.stream.finish_events())
        if delta is not None:
            self._calls(delta)
        self.finish_reason = resolve_finish_reason(
            finish_reason or "stop", tool_calls=self._complete_calls > 0, named=self._named
        )
        return delta

    def pending_logprobs(self) -> list[Any]:
        """The logprobs kept for the next chunk, handed over (the Responses stream's text)."""
        out, self._logprobs = self._logprobs, []
        return out

    def pending_token_ids(self) -> list[int]:
        """The token ids kept for the next chunk (``return_token_ids``), handed over."""
        out, self._token_ids = self._token_ids, []
        return out

    @property
    def id(self) -> str:
        """The completion id every chunk carries."""
        return str(self._head["id"])

    @property
    def model(self) -> str:
        return str(self._head["model"])

    @property
    def created(self) -> int:
        return int(self._head["created"])

    @property
    def index(self) -> int:
        """The choice's index."""
        return int(self._choice["index"])

    @property
    def completion_tokens(self) -> int:
        """Token ids fed (the engine counts them), or the count given to ``finish()``."""
        given = self._completion_tokens
        return self._engine.num_tokens if given is None else given

    @property
    def reasoning_tokens(self) -> int:
        return self._tokens.count

    def usage(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": (self.prompt_tokens or 0) + self.completion_tokens,
            "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
        }

    # ------------------------------------------------------------------ the fold's renderer

    def on_reasoning(self, text: str) -> list[dict[str, Any]]:
        return self._chunks({self.reasoning_field: text}, False)

    def on_content(self, text: str) -> list[dict[str, Any]]:
        return self._chunks({"content": text}, False)

    def on_arguments(self, index: int, text: str) -> list[dict[str, Any]]:
        return self._chunks({"tool_calls": [self._arguments(index, text)]}, False)

    def on_delta(self, delta: Delta) -> list[dict[str, Any]]:
        return self._chunks(self._body(self._calls(delta)), False)

    def _calls(self, delta: Delta) -> Delta:
        """``delta`` with the call ids this choice sends (``call_ids``), its complete calls counted."""
        for piece in delta.tool_calls:
            if piece.name is not None:  # the call's first piece
                piece.id = self._ids.first(piece.index, piece.id or "", piece.name)
        if delta.ended:
            self._complete_calls += len(delta.ended)
        return delta

    # ------------------------------------------------------------------ building chunks

    def _keep(self, token_ids: Sequence[int] | None, logprobs: Sequence[Any] | None) -> None:
        """The ids fed are counted; logprobs and token ids ride on the next chunk sent (never
        with hidden reasoning)."""
        if token_ids:
            self._tokens.fed(token_ids)
        if logprobs and not self._hide:
            self._logprobs.extend(logprobs)
        if token_ids and self.return_token_ids:
            self._token_ids.extend(token_ids)

    def _chunks(self, body: dict[str, Any], final: bool) -> list[dict[str, Any]]:
        """The chunk whose ``delta`` is ``body`` (none when it has nothing to say); the final
        one (with ``finish_reason``) when ``final``."""
        if not self._role_sent:
            body = {"role": "assistant", **body}
            self._role_sent = True
        elif not body and not final:
            return []
        chunk = self._head.copy()
        choice = self._choice.copy()
        choice["delta"] = body
        chunk["choices"] = [choice]
        if final or self._logprobs or self._token_ids or self._usage_every:
            self._extras(chunk, choice, final)
        return [chunk]

    def _extras(self, chunk: dict[str, Any], choice: dict[str, Any], final: bool) -> None:
        """What rides on a chunk besides its delta: kept logprobs and ids, ``finish_reason``, usage."""
        if self._logprobs:
            choice["logprobs"] = {"content": self._logprobs, "refusal": None}
            self._logprobs = []
        if self._token_ids:
            choice["token_ids"] = self._token_ids
            self._token_ids = []
        if final:
            choice["finish_reason"] = self.finish_reason
        if self._usage_every:
            chunk["usage"] = self.usage()

    def _envelope(self, choices: list[dict[str, Any]], *, usage: bool) -> dict[str, Any]:
        out = self._head.copy()
        out["choices"] = choices
        if usage:
            out["usage"] = self.usage()
        return out

    def _body(self, delta: Delta) -> dict[str, Any]:
        """A chunk's ``delta``: ``delta`` in the OpenAI shape. A call aborted after it was
        streamed cannot be taken back in the OpenAI protocol (module docstring)."""
        body: dict[str, Any] = {}
        if delta.reasoning:
            body[self.reasoning_field] = delta.reasoning
        if delta.content:
            body["content"] = delta.content
        if delta.tool_calls:
            body["tool_calls"] = [
                {
                    "index": p.index,
                    "id": p.id,
                    "type": "function",
                    "function": {"name": p.name, "arguments": p.arguments},
                }
                if p.name is not None
                else self._arguments(p.index, p.arguments)
                for p in delta.tool_calls
            ]
        return body

    def _arguments(self, index: int, text: str) -> dict[str, Any]:
        """A piece of a call's arguments after its first (its id again with ``repeat_tool_call_ids``)."""
        call_id = self._ids.sent(index) if self._repeat else None
        if call_id is None:
            return {"index": index, "function": {"arguments": text}}
        return {"index": index, "id": call_id, "type": "function", "function": {"arguments": text}}


def chat_completion(
    parser: Parser,
    output: str | None = None,
    *,
    token_ids: Sequence[int] | None = None,
    finish_reason: str | None = "stop",
    logprobs: Sequence[Any] | None = None,
    completion_tokens: int | None = None,
    **stream_options: Any,
) -> dict[str, Any]:
    """A whole ``chat.completion`` dict for one output: the ``ChatStream``'s deltas for it (atomic,
    so a malformed call is content as in ``parse()``), folded by ``MessageBuilder`` as a client
    folds a stream, then written in the OpenAI shape. ``stream_options`` as for ``ChatStream``
    (``id``, ``model``, ``tool_call_id``, ``prompt_tokens``, request options…)."""
    for name in ("include_usage", "continuous_usage", "repeat_tool_call_ids", "atomic_tool_calls"):
        stream_options.pop(name, None)
    chat = ChatStream(parser, atomic_tool_calls=True, **stream_options)
    built = MessageBuilder()
    built.add(chat.feed_delta(output, token_ids, logprobs=logprobs))
    built.add(chat.finish_delta(finish_reason, completion_tokens=completion_tokens))
    folded = built.message()
    lps = chat.pending_logprobs()
    ids = chat.pending_token_ids()
    message: dict[str, Any] = {"role": "assistant", "content": folded.content}
    if chat.request.include_reasoning:
        message[chat.reasoning_field] = folded.reasoning
    if folded.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in folded.tool_calls
        ]
    choice_out: dict[str, Any] = {
        "index": chat.index,
        "message": message,
        "logprobs": {"content": lps, "refusal": None} if lps else None,
        "finish_reason": chat.finish_reason,
    }
    if chat.return_token_ids:
        choice_out["token_ids"] = ids
    return {
        "id": chat.id,
        "object": "chat.completion",
        "created": chat.created,
        "model": chat.model,
        "choices": [choice_out],
        "usage": chat.usage(),
    }
