"""Derender: the token ids a vLLM worker generated -> chat messages and completions, in vLLM
0.33's scale-out protocol (``entrypoints/scale_out/token_in_token_out/protocol.py``,
``derender/serving.py``, ``renderers/online_derenderer.py``), with trisect parsing.

* ``chat``: a ``DerenderChatRequest`` (``generate_response`` with output_mode ``tokens``, the
  ``chat_request`` from the render step, ``prompt_token_ids``, ``prompt_tokens``) -> a
  ``ChatCompletionResponse``: each choice's ids parsed whole (``Parser.parse``).
* ``chat_chunk``: a ``DerenderChatStreamRequest`` (one ``generate_chunk``, the ``stream_state``
  of the previous answer) -> ``{"chunk": ChatCompletionStreamResponse, "stream_state": …}``. The
  first chunk starts a trisect stream from ``prompt_token_ids`` (where the prompt leaves the
  model: inside reasoning or not); every later chunk resumes it from ``stream_state`` and feeds
  only the chunk's ids, so a chunk costs O(its ids) on any replica, with neither the prompt nor
  the history. ``stream_state`` is ``{"trisect_state": <base64url>}``: the stream's signed state
  (``StreamParser.to_state``: the parser's held text, the detokenizer's unfinished character,
  the open call) carrying this endpoint's own few values (role sent, calls completed, the last
  sampled ids for byte-fallback logprobs).
* ``completion`` / ``completion_chunk``: ``/v1/completions/derender``, plain detokenization
  (``skip_special_tokens`` as the request says), one stream per choice; its state is the
  decoder's unfinished character and the logprob offsets, signed the same way.

Rules kept from vLLM's serving layer (each a 400 in vLLM's ``ErrorResponse`` shape): a parser
is configured (trisect always parses with formats, unless it serves none) and ``chat_request``
is missing; a stream's first chunk without ``prompt_token_ids`` when the reasoning format needs
the prompt to know where the output starts; more than one choice in a chunk; stop strings in a
streamed request (text already sent cannot be cut); a ``generate_response`` that is not output
mode ``tokens``, or a choice with no ids. And trisect's: a ``stream_state`` that is not one this
deployment signed for this request (altered, cut short, another key, another parser, tokenizer
or request, expired, or over the size limit: ``StateError``) is a 400 naming ``stream_state``,
and nothing of it is decoded.

The stop token: a choice that stopped on its last id (the end-of-sequence token, or a stop
token id the request or the model names) does not pass that id to the parser unless
``include_stop_str_in_output`` (vLLM's ``_drop_stop_token``). A non-streamed choice that stopped on
a stop string is decoded, cut before it, and parsed as text.

Tool calls stream incrementally (``atomic_tool_calls=False``): a call cut off after it was
streamed cannot be taken back (OpenAI's chunks have no field for it); it does not count for
``finish_reason``, which becomes ``tool_calls`` on a normal stop once a call completed (not under
a named ``tool_choice``), as in trisect serve.
"""

from __future__ import annotations

import base64
import binascii
import marshal
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...engine.envelope import DEFAULT_MAX_BYTES, Binding, digest, seal, unseal
from ...engine.value import as_bool, as_int, as_items, as_tuple
from ...engine.vocab import Vocab
from ...errors import RequestError, StateError, StreamError
from ...message.fold import fold
from ...message.stream_parser import StreamParser
from ...parser import Parser
from ...request.tools import history_tool_calls, openai_tools
from ..body import boolean, stop
from . import shapes
from .logprobs import IdsText, chat_logprobs, completion_logprobs, context_after
from .shapes import ScaleOutError

STATE_FIELD = "trisect_state"
STREAM_STOP_STRINGS = (
    "stop strings are not supported by streaming derender because text already sent cannot be cut. "
    "Use non-streaming derender or output_mode=text on /inference/v1/generate which holds stop strings back."
)
NEEDS_CHAT_REQUEST = (
    "chat_request is required when a tool or reasoning parser is configured because plain detokenization "
    "would leak raw parser markup into content."
)


# ---------------------------------------------------------------------------------------- reading


def _object(value: Any, where: str, *, required: bool = False) -> Mapping[str, Any]:
    if value is None and not required:
        return {}
    if not isinstance(value, Mapping):
        raise ScaleOutError(f"{where} must be an object", param=where)
    return value


def _ids(value: Any, where: str) -> list[int]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(type(t) is int and t >= 0 for t in value):
        raise ScaleOutError(f"{where} must be a list of non-negative integers", param=where)
    return value


def _count(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ScaleOutError(f"{where} must be a non-negative integer", param=where)
    return value


@dataclass(frozen=True)
class Context:
    """What a ``chat_request`` / ``completion_request`` tells the derender: the parser's options
    and the output's decoding rules."""

    options: dict[str, Any] = field(default_factory=dict)
    include_reasoning: bool = True
    named: bool = False
    return_token_ids: bool = False
    logprobs_limit: int | None = None  # candidates kept per position (None: all)
    stop: tuple[str, ...] = ()
    include_stop: bool = False
    ignore_eos: bool = False
    stop_token_ids: tuple[int, ...] = ()
    skip_special_tokens: bool = True


def chat_context(chat_request: Mapping[str, Any], where: str = "chat_request") -> Context:
    """The parser options of a chat request as the render step saw it: tools, tool_choice,
    parallel_tool_calls, include_reasoning, the template kwargs (``reasoning_effort`` sets
    ``enable_thinking`` unless the kwargs do, as vLLM's ``build_chat_params``), the tool calls
    already in the history. Its other fields are read only for decoding; the rest are ignored."""
    try:
        tools = openai_tools(chat_request.get("tools"))
    except RequestError as exc:
        raise ScaleOutError(f"{where}.tools: {exc}", param=f"{where}.tools") from None
    kwargs = dict(_object(chat_request.get("chat_template_kwargs"), f"{where}.chat_template_kwargs"))
    effort = chat_request.get("reasoning_effort")
    if effort is not None and not isinstance(effort, str):
        raise ScaleOutError(f"{where}.reasoning_effort must be a string", param=f"{where}.reasoning_effort")
    if effort is not None:
        kwargs.setdefault("reasoning_effort", effort)
        kwargs.setdefault("enable_thinking", effort != "none")
    messages = chat_request.get("messages") or []
    if not isinstance(messages, list):
        raise ScaleOutError(f"{where}.messages must be a list", param=f"{where}.messages")
    choice = chat_request.get("tool_choice")
    if choice is None:
        choice = "auto" if tools else "none"
    include_reasoning = boolean(chat_request, "include_reasoning", True)
    options: dict[str, Any] = {
        "tools": tools or None,
        "tool_choice": choice,
        "parallel_tool_calls": boolean(chat_request, "parallel_tool_calls", True),
        "include_reasoning": include_reasoning,
        "chat_template_kwargs": kwargs,
        "history_tool_calls": history_tool_calls(messages),
    }
    if effort is not None:
        options["reasoning_effort"] = effort
    logprobs = boolean(chat_request, "logprobs", False)
    top = chat_request.get("top_logprobs")
    if top is not None and (isinstance(top, bool) or not isinstance(top, int)):
        raise ScaleOutError(f"{where}.top_logprobs must be an integer", param=f"{where}.top_logprobs")
    every = bool(chat_request.get("logprob_token_ids")) or top == -1
    return Context(
        options=options,
        include_reasoning=include_reasoning,
        named=isinstance(choice, Mapping),
        return_token_ids=boolean(chat_request, "return_token_ids", False),
        logprobs_limit=None if (not logprobs or every) else (top or 0),
        stop=stop(chat_request.get("stop"), f"{where}.stop"),
        include_stop=boolean(chat_request, "include_stop_str_in_output", False),
        ignore_eos=boolean(chat_request, "ignore_eos", False),
        stop_token_ids=tuple(_ids(chat_request.get("stop_token_ids"), f"{where}.stop_token_ids")),
    )


def completion_context(request: Mapping[str, Any], where: str = "completion_request") -> Context:
    logprobs = request.get("logprobs")
    if logprobs is not None and (isinstance(logprobs, bool) or not isinstance(logprobs, int)):
        raise ScaleOutError(f"{where}.logprobs must be an integer", param=f"{where}.logprobs")
    every = bool(request.get("logprob_token_ids")) or logprobs is None or logprobs == -1
    return Context(
        return_token_ids=boolean(request, "return_token_ids", False),
        logprobs_limit=None if every or logprobs is None else max(logprobs + 1, 0),
        stop=stop(request.get("stop"), f"{where}.stop"),
        include_stop=boolean(request, "include_stop_str_in_output", False),
        ignore_eos=boolean(request, "ignore_eos", False),
        stop_token_ids=tuple(_ids(request.get("stop_token_ids"), f"{where}.stop_token_ids")),
        skip_special_tokens=boolean(request, "skip_special_tokens", True),
    )


@dataclass(frozen=True)
class Choice:
    """One choice of a generate response or chunk."""

    index: int
    token_ids: list[int]
    finish_reason: str | None
    stop_reason: int | str | None
    logprobs: Any


def _choices(response: Mapping[str, Any], where: str, *, stream: bool) -> list[Choice]:
    mode = response.get("output_mode", "tokens")
    if mode != "tokens":
        raise ScaleOutError(
            f"{where}.output_mode must be 'tokens' (got {mode!r}): other modes are already detokenized",
            param=f"{where}.output_mode",
        )
    raw = response.get("choices")
    if not isinstance(raw, list):
        raise ScaleOutError(f"{where}.choices must be a list", param=f"{where}.choices")
    out = []
    for k, item in enumerate(raw):
        at = f"{where}.choices[{k}]"
        item = _object(item, at, required=True)
        index = item.get("index", k)
        if isinstance(index, bool) or not isinstance(index, int):
            raise ScaleOutError(f"{at}.index must be an integer", param=f"{at}.index")
        reason = item.get("finish_reason", None if stream else "stop")
        if reason is not None and not isinstance(reason, str):
            raise ScaleOutError(f"{at}.finish_reason must be a string", param=f"{at}.finish_reason")
        stop_reason = item.get("stop_reason")
        if stop_reason is not None and (isinstance(stop_reason, bool) or not isinstance(stop_reason, (int, str))):
            raise ScaleOutError(f"{at}.stop_reason must be an integer or a string", param=f"{at}.stop_reason")
        out.append(
            Choice(index, _ids(item.get("token_ids"), f"{at}.token_ids"), reason, stop_reason, item.get("logprobs"))
        )
    return out


def _one_choice(body: Mapping[str, Any], what: str) -> tuple[Mapping[str, Any], list[Choice]]:
    """A stream request's ``generate_chunk`` and its choices: at most one (one stream state per
    choice: ``n > 1`` is one stream per choice index, as vLLM has it)."""
    chunk = _object(body.get("generate_chunk"), "generate_chunk", required=True)
    choices = _choices(chunk, "generate_chunk", stream=True)
    if len(choices) > 1:
        raise ScaleOutError(
            f"{what} expects at most one choice per chunk (got {len(choices)}).", param="generate_chunk"
        )
    return chunk, choices


def _stops(stop_reason: int | str | None, ctx: Context) -> tuple[str, ...]:
    """The stop strings that may have ended a choice: the one the engine reported, else the
    request's (an engine that reported a stop token id stopped on that)."""
    if isinstance(stop_reason, str):
        return (stop_reason,)
    return ctx.stop if stop_reason is None else ()


def _cut(text: str, stop_reason: int | str | None, ctx: Context) -> tuple[str, int | str | None]:
    """``text`` cut before the first stop string in it (after it: ``include_stop_str_in_output``)
    and the ``stop_reason``: that string."""
    hits = [(i, s) for s in _stops(stop_reason, ctx) if (i := text.find(s)) >= 0]
    if not hits:
        return text, stop_reason
    at, found = min(hits)
    return (text[: at + len(found)] if ctx.include_stop else text[:at]), found


def _usage(chunk: Mapping[str, Any], prompt_tokens: int | None) -> dict[str, Any] | None:
    given = chunk.get("usage")
    if given is None:
        return None
    given = _object(given, "generate_chunk.usage", required=True)
    pt = prompt_tokens if prompt_tokens is not None else (_count(given.get("prompt_tokens"), "usage") or 0)
    return shapes.usage(pt, _count(given.get("completion_tokens"), "usage") or 0)


def _encode_state(state: bytes) -> dict[str, str]:
    return {STATE_FIELD: base64.urlsafe_b64encode(state).decode("ascii")}


def _decode_state(value: Any, limit: int) -> bytes:
    if not isinstance(value, Mapping) or not isinstance(value.get(STATE_FIELD), str):
        raise ScaleOutError(
            f"invalid stream_state: not a trisect stream state (an object with {STATE_FIELD!r}, "
            "passed back exactly as the previous answer gave it)",
            param="stream_state",
        )
    text = value[STATE_FIELD]
    if len(text) > limit * 4 // 3 + 4:
        raise ScaleOutError(f"invalid stream_state: larger than {limit} bytes", param="stream_state")
    try:
        return base64.urlsafe_b64decode(text.encode("ascii"))
    except (ValueError, binascii.Error, UnicodeEncodeError):
        raise ScaleOutError("invalid stream_state: not base64url", param="stream_state") from None


# ---------------------------------------------------------------------------------------- derender


class Derenderer:
    """The derender endpoints over one trisect ``Parser`` (with its tokenizer) and one state key.

    ``ttl``: seconds a ``stream_state`` stays valid (``None``: until the key changes);
    ``eos_id``: the tokenizer's end-of-sequence id (a choice that ends on it reports no
    ``stop_reason``, as vLLM's engine reports it); ``eos_ids``: the model's other ones
    (generation config), reported as the ``stop_reason``."""

    def __init__(
        self,
        parser: Parser,
        key: bytes,
        *,
        model_names: Sequence[str],
        eos_id: int | None = None,
        eos_ids: frozenset[int] = frozenset(),
        ttl: float | None = None,
        max_state_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if parser.vocab is None:
            raise ValueError("the derender tier needs the model's tokenizer (--tokenizer)")
        self.parser = parser
        self.vocab: Vocab = parser.vocab
        self.key = key
        self.names = tuple(model_names)
        self.eos_id = eos_id
        self.eos_ids = eos_ids | ({eos_id} if eos_id is not None else set())
        self.ttl = ttl
        self.max_state_bytes = max_state_bytes
        self.parses = parser.reasoning is not None or parser.tools is not None
        # the prompt decides where the output starts only where there is a reasoning block
        self.needs_prompt = parser.reasoning is not None
        self._contexts: dict[bytes, Context] = {}  # chat_request content -> its context

    # ------------------------------------------------------------------ shared

    def model(self, body: Mapping[str, Any]) -> str:
        name = body.get("model")
        if name is None:
            return self.names[0]
        if name not in self.names:
            raise ScaleOutError(f"The model `{name}` does not exist.", status=404, param="model", kind="NotFoundError")
        return str(name)

    def _drop_stop(self, choice: Choice, ctx: Context) -> tuple[list[int], int | str | None]:
        """The ids to decode and the ``stop_reason``: the token that stopped generation is left
        out, as the engine's detokenizer leaves it (see the module docstring)."""
        ids, reason = choice.token_ids, choice.stop_reason
        if choice.finish_reason != "stop" or isinstance(reason, str) or not ids:
            return ids, reason
        last = ids[-1]
        if reason is None:
            honor_eos = not ctx.ignore_eos
            if honor_eos and last == self.eos_id:
                stopped = True
            elif last in ctx.stop_token_ids or (honor_eos and last in self.eos_ids):
                stopped, reason = True, last
            else:
                stopped = False
        else:
            stopped = last == reason
        if not stopped or ctx.include_stop:
            return ids, reason
        return ids[:-1], reason

    def _options(self, ctx: Context, where: str) -> dict[str, Any]:
        try:
            self.parser.request(**ctx.options)
        except RequestError as exc:
            raise ScaleOutError(f"{where}: {exc}", param=where) from None
        return ctx.options

    def _chat_context(self, chat_request: Any) -> Context:
        """The context of a chat request, read and checked once per content: a router sends
        the same ``chat_request`` with every chunk of a stream."""
        try:
            key: bytes | None = marshal.dumps(chat_request)
        except ValueError:
            key = None
        if key is not None:
            hit = self._contexts.get(key)
            if hit is not None:
                return hit
        ctx = chat_context(_object(chat_request, "chat_request"))
        self._options(ctx, "chat_request")
        if key is not None:
            if len(self._contexts) >= 256:
                self._contexts.clear()
            self._contexts[key] = ctx
        return ctx

    def _finish_reason(self, engine: str | None, ctx: Context, calls: bool) -> str | None:
        if engine is None:
            return None
        return "tool_calls" if engine == "stop" and calls and not ctx.named else engine

    # ------------------------------------------------------------------ chat, whole

    def chat(self, body: Mapping[str, Any]) -> dict[str, Any]:
        model = self.model(body)
        response = _object(body.get("generate_response"), "generate_response", required=True)
        chat_request = body.get("chat_request")
        if self.parses and chat_request is None:
            raise ScaleOutError(NEEDS_CHAT_REQUEST, param="chat_request")
        ctx = self._chat_context(chat_request)
        options = ctx.options
        prompt_ids = body.get("prompt_token_ids")
        if prompt_ids is None:
            prompt_ids = response.get("prompt_token_ids")
        prompt_ids = _ids(prompt_ids, "prompt_token_ids")
        if prompt_ids:
            options = {**options, "prompt_token_ids": prompt_ids}
        hide = not ctx.include_reasoning
        choices = []
        completion_tokens = 0
        for choice in _choices(response, "generate_response", stream=False):
            if not choice.token_ids:
                raise ScaleOutError(f"choice {choice.index} has empty or null token_ids", param="generate_response")
            completion_tokens += len(choice.token_ids)
            ids, stop_reason = self._drop_stop(choice, ctx)
            if choice.finish_reason == "stop" and _stops(stop_reason, ctx):
                # a stop string ended it: the text up to it, parsed as text
                text, stop_reason = _cut(self._decode(ids, special=True), stop_reason, ctx)
                msg = self.parser.parse(text, **options)
            else:
                msg = self.parser.parse(None, token_ids=ids, **options)
            calls = [(c.id, c.name, c.arguments) for c in msg.tool_calls]
            message = shapes.message(
                content=msg.content, reasoning=msg.reasoning if ctx.include_reasoning else None, tool_calls=calls
            )
            logprobs = None
            if choice.logprobs is not None and not hide:
                logprobs = chat_logprobs(choice.logprobs, self.vocab, (), ctx.logprobs_limit, "generate_response")
            choices.append(
                shapes.response_choice(
                    choice.index,
                    message,
                    logprobs=logprobs,
                    finish_reason=self._finish_reason(choice.finish_reason, ctx, bool(calls)),
                    stop_reason=stop_reason,
                    token_ids=choice.token_ids if ctx.return_token_ids and not hide else None,
                )
            )
        prompt_tokens = _count(body.get("prompt_tokens"), "prompt_tokens") or 0
        return shapes.chat_response(
            str(response.get("request_id") or "chatcmpl-" + uuid.uuid4().hex),
            model,
            int(time.time()),
            choices,
            shapes.usage(prompt_tokens, completion_tokens),
            prompt_token_ids=response.get("prompt_token_ids") if ctx.return_token_ids else None,
            prompt_logprobs=response.get("prompt_logprobs"),
            kv_transfer_params=response.get("kv_transfer_params"),
            metrics=response.get("metrics"),
        )

    def _decode(self, ids: Sequence[int], *, special: bool) -> str:
        """Ids -> text: added tokens as written (control tokens only when ``special``)."""
        decoder = self.vocab.utf8_decoder()
        return IdsText(self.vocab, special, decoder).decode(ids)

    # ------------------------------------------------------------------ chat, one chunk

    def chat_chunk(self, body: Mapping[str, Any]) -> dict[str, Any]:
        model = self.model(body)
        chunk, choices = _one_choice(body, "derender_chat_stream")
        chat_request = body.get("chat_request")
        if self.parses and chat_request is None:
            raise ScaleOutError(NEEDS_CHAT_REQUEST, param="chat_request")
        ctx = self._chat_context(chat_request)
        if ctx.stop:
            raise ScaleOutError(STREAM_STOP_STRINGS, param="chat_request.stop")
        stream, (role_sent, completed, context) = self._chat_stream(body, chunk, ctx.options)
        out_choices = []
        if choices:
            choice = choices[0]
            ids, stop_reason = self._drop_stop(choice, ctx)
            try:
                events = stream.events(None, ids) if ids else []
                if choice.finish_reason is not None:
                    events = events + stream.finish_events()
            except StreamError as exc:
                raise ScaleOutError(f"invalid stream_state or generate_chunk: {exc}", param="stream_state") from None
            d = fold(events)
            completed += len(d.ended) if d is not None else 0  # calls that ended well-formed here
            calls = [shapes.tool_call_delta(c.index, c.id, c.name, c.arguments) for c in (d.tool_calls if d else ())]
            reasoning = d.reasoning if d is not None and ctx.include_reasoning else None
            delta = shapes.delta(
                role=None if role_sent else "assistant",
                content=d.content if d is not None else None,
                reasoning=reasoning,
                tool_calls=calls,
            )
            role_sent = True
            hide = not ctx.include_reasoning
            logprobs = None
            if choice.logprobs is not None and not hide:
                logprobs = chat_logprobs(choice.logprobs, self.vocab, context, ctx.logprobs_limit, "generate_chunk")
            context = context_after(context, choice.token_ids)
            out_choices.append(
                shapes.stream_choice(
                    choice.index,
                    delta,
                    logprobs=logprobs,
                    finish_reason=self._finish_reason(choice.finish_reason, ctx, completed > 0),
                    stop_reason=stop_reason,
                    token_ids=choice.token_ids if ctx.return_token_ids and not hide else None,
                )
            )
        out = shapes.chat_chunk(
            str(chunk.get("request_id") or "chatcmpl-" + uuid.uuid4().hex),
            model,
            int(time.time()),
            out_choices,
            _usage(chunk, _count(body.get("prompt_tokens"), "prompt_tokens")),
        )
        out["metrics"] = chunk.get("metrics")
        if ctx.return_token_ids:
            out["prompt_token_ids"] = chunk.get("prompt_token_ids")
        state = stream.to_state(self.key, ttl=self.ttl, carry=(role_sent, completed, context))
        return {"chunk": out, "stream_state": _encode_state(state)}

    def _chat_stream(
        self, body: Mapping[str, Any], chunk: Mapping[str, Any], options: dict[str, Any]
    ) -> tuple[StreamParser, tuple[bool, int, tuple[int, ...]]]:
        """The chunk's stream: resumed from ``stream_state``, or (first chunk) started from the
        prompt; with this endpoint's carried values."""
        given = body.get("stream_state")
        if given is None:
            prompt = body.get("prompt_token_ids")
            if prompt is None:
                prompt = chunk.get("prompt_token_ids")
            if prompt is None and self.needs_prompt:
                raise ScaleOutError(
                    "prompt_token_ids is required on a stream's first chunk when a reasoning parser is configured: "
                    "without it the parser cannot tell whether the prompt left reasoning open.",
                    param="prompt_token_ids",
                )
            start = dict(options)
            if prompt is not None:
                start["prompt_token_ids"] = _ids(prompt, "prompt_token_ids")
            stream = self.parser.stream(**start)
            return stream, (False, 0, ())
        state = _decode_state(given, self.max_state_bytes)
        try:
            stream = self.parser.resume(state, self.key, max_bytes=self.max_state_bytes, **options)
        except StateError as exc:
            raise ScaleOutError(f"invalid stream_state: {exc}", param="stream_state") from None
        try:
            role_sent, completed, context = as_tuple(stream.carried, 3)
            return stream, (as_bool(role_sent), as_int(completed), tuple(as_int(i) for i in as_items(context)))
        except ValueError:
            raise ScaleOutError("invalid stream_state: not a chat stream's state", param="stream_state") from None

    # ------------------------------------------------------------------ completions

    def _text_binding(self, ctx: Context) -> Binding:
        special = "special" if not ctx.skip_special_tokens else "plain"
        return Binding(digest(b"trisect completions"), digest(self.vocab.fingerprint()), digest(special.encode()))

    def completion(self, body: Mapping[str, Any]) -> dict[str, Any]:
        model = self.model(body)
        responses = body.get("generate_responses")
        if not isinstance(responses, list) or not responses:
            raise ScaleOutError("generate_responses must not be empty", param="generate_responses")
        counts = body.get("prompt_tokens")
        seeds = body.get("prompt_token_ids")
        for name, given in (("prompt_tokens", counts), ("prompt_token_ids", seeds)):
            if given is not None and (not isinstance(given, list) or len(given) != len(responses)):
                raise ScaleOutError(
                    f"{name} length must equal generate_responses length ({len(responses)})", param=name
                )
        ctx = completion_context(_object(body.get("completion_request"), "completion_request"))
        choices = []
        total_prompt = total_completion = 0
        index = 0
        first: Mapping[str, Any] = {}
        for k, raw in enumerate(responses):
            response = _object(raw, f"generate_responses[{k}]", required=True)
            first = first or response
            for choice in _choices(response, f"generate_responses[{k}]", stream=False):
                if not choice.token_ids:
                    raise ScaleOutError(
                        f"choice {choice.index} in response {response.get('request_id')} has empty or null token_ids",
                        param="generate_responses",
                    )
                ids, stop_reason = self._drop_stop(choice, ctx)
                text = self._decode(ids, special=not ctx.skip_special_tokens)
                if choice.finish_reason == "stop" and _stops(stop_reason, ctx):
                    text, stop_reason = _cut(text, stop_reason, ctx)
                lp = chat_logprobs(choice.logprobs, self.vocab, (), ctx.logprobs_limit, f"generate_responses[{k}]")
                choices.append(
                    shapes.completion_choice(
                        index,
                        text,
                        logprobs=completion_logprobs(lp, choice.logprobs, 0),
                        finish_reason=choice.finish_reason,
                        stop_reason=stop_reason,
                        prompt_token_ids=response.get("prompt_token_ids") if ctx.return_token_ids else None,
                        token_ids=choice.token_ids if ctx.return_token_ids else None,
                    )
                )
                total_completion += len(choice.token_ids)
                index += 1
            total_prompt += (_count(counts[k], "prompt_tokens") or 0) if counts is not None else 0
        return shapes.completion_response(
            str(first.get("request_id") or "cmpl-" + uuid.uuid4().hex),
            model,
            int(time.time()),
            choices,
            shapes.usage(total_prompt, total_completion),
            kv_transfer_params=first.get("kv_transfer_params"),
            metrics=first.get("metrics") if len(responses) == 1 else None,
        )

    def completion_chunk(self, body: Mapping[str, Any]) -> dict[str, Any]:
        model = self.model(body)
        chunk, choices = _one_choice(body, "derender_completion_stream")
        ctx = completion_context(_object(body.get("completion_request"), "completion_request"))
        if ctx.stop:
            raise ScaleOutError(STREAM_STOP_STRINGS, param="completion_request.stop")
        binding = self._text_binding(ctx)
        decoder = self.vocab.utf8_decoder()
        context: tuple[int, ...] = ()
        offset = 0
        given = body.get("stream_state")
        if given is not None:
            try:
                value = unseal(
                    _decode_state(given, self.max_state_bytes), self.key, binding, max_bytes=self.max_state_bytes
                )
                pending, flag, context, offset = value
                decoder.setstate((pending, flag))
            except StateError as exc:
                raise ScaleOutError(f"invalid stream_state: {exc}", param="stream_state") from None
            except (TypeError, ValueError):
                raise ScaleOutError(
                    "invalid stream_state: not a completion stream's state", param="stream_state"
                ) from None
        out_choices = []
        if choices:
            choice = choices[0]
            ids, stop_reason = self._drop_stop(choice, ctx)
            text = IdsText(self.vocab, not ctx.skip_special_tokens, decoder).decode(ids)
            lp = chat_logprobs(choice.logprobs, self.vocab, context, ctx.logprobs_limit, "generate_chunk")
            logprobs = completion_logprobs(lp, choice.logprobs, offset)
            if logprobs is not None and logprobs["tokens"]:
                offset = logprobs["text_offset"][-1] + len(logprobs["tokens"][-1])
            else:
                offset += len(text)
            context = context_after(context, choice.token_ids)
            out_choices.append(
                shapes.completion_stream_choice(
                    choice.index,
                    text,
                    logprobs=logprobs,
                    finish_reason=choice.finish_reason,
                    stop_reason=stop_reason,
                    prompt_token_ids=chunk.get("prompt_token_ids") if ctx.return_token_ids else None,
                    token_ids=choice.token_ids if ctx.return_token_ids else None,
                )
            )
        out = shapes.completion_chunk(
            str(chunk.get("request_id") or "cmpl-" + uuid.uuid4().hex),
            model,
            int(time.time()),
            out_choices,
            _usage(chunk, _count(body.get("prompt_tokens"), "prompt_tokens")),
        )
        out["metrics"] = chunk.get("metrics")
        pending, flag = decoder.getstate()
        state = seal((pending, flag, context, offset), self.key, binding, ttl=self.ttl)
        return {"chunk": out, "stream_state": _encode_state(state)}
