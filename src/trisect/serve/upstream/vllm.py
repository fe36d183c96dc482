"""vLLM's and any OpenAI-compatible server's ``POST /v1/completions`` (kinds ``vllm``, ``openai``).

Request (``vllm/entrypoints/openai/completion/protocol.py``): the prompt text, ``stream`` with
``stream_options.include_usage``, ``max_tokens`` (``null``: up to the context length; vLLM's
completions default would be 16), ``n``, ``stop``, ``seed``, ``temperature``, ``top_p``,
``logprobs`` (an int: the legacy completions shape). vLLM only: ``return_token_ids: true``
(generated ids per chunk, ``prompt_token_ids`` on a choice's first chunk),
``skip_special_tokens: false`` (markers that are special tokens stay in the text),
``add_special_tokens: false`` (the rendered template already holds BOS), ``structured_outputs``
(``json`` / ``structural_tag`` / ``regex`` / ``grammar``) and the sampling extras of
``sampling.SAMPLING``.

Stream: ``data: {"choices": [{"index", "text", "logprobs", "finish_reason", "stop_reason",
"token_ids"}], "usage": null}`` per step, then a usage chunk (``choices: []``), then
``data: [DONE]``. vLLM's ``token_ids`` hold every generated id, the end-of-sequence token and the
tokens of a matched stop string included, while ``text`` leaves both out; ``stop_reason`` is
the matched stop string (or stop token id). Finishes are held until the usage chunk so that the
last piece carries the engine's token counts.

``openai``: the same endpoint with only the OpenAI fields; no token ids, no constraints.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from .base import CompletionPiece, CompletionRequest, Constraint, UpstreamError
from .sampling import wire_sampling
from .wire import Decoder, ReplayChoice, Wire, chat_logprob


def _structured_outputs(constraint: Constraint) -> dict[str, Any]:
    if constraint.lazy:
        raise UpstreamError("vLLM has no lazy grammars (use a structural tag)", status=400)
    value = constraint.value
    if constraint.kind == "json_schema":
        return {"json": value}
    if constraint.kind == "structural_tag":
        return {"structural_tag": json.dumps(value)}
    if constraint.kind == "regex":
        return {"regex": value}
    return {"grammar": value}  # GBNF / Lark: vLLM's grammar backends take either


def legacy_to_chat(logprobs: Mapping[str, Any] | None, top: int) -> tuple[dict[str, Any], ...] | None:
    """Legacy completions logprobs (``tokens``, ``token_logprobs``, ``top_logprobs``) as OpenAI
    chat entries, ``top`` alternatives each (as vLLM's chat layer builds them)."""
    if not logprobs:
        return None
    tokens = logprobs.get("tokens") or []
    values = logprobs.get("token_logprobs") or []
    tops = logprobs.get("top_logprobs") or [None] * len(tokens)
    out = []
    for token, value, alternatives in zip(tokens, values, tops, strict=False):
        ranked = sorted((alternatives or {}).items(), key=lambda kv: -kv[1])[:top]
        out.append(chat_logprob(token, -9999.0 if value is None else value, ranked))
    return tuple(out) or None


def chat_to_legacy(entries: Sequence[Mapping[str, Any]], offset: int) -> dict[str, Any]:
    tokens = [e["token"] for e in entries]
    offsets = []
    for token in tokens:
        offsets.append(offset)
        offset += len(token)
    return {
        "tokens": tokens,
        "token_logprobs": [e["logprob"] for e in entries],
        "top_logprobs": [{t["token"]: t["logprob"] for t in e.get("top_logprobs", ())} for e in entries],
        "text_offset": offsets,
    }


class _CompletionsDecoder(Decoder):
    def __init__(self, request: CompletionRequest, *, ids: bool) -> None:
        super().__init__(request.n)
        self._top = request.logprobs or 0
        self._ids = ids
        self._counted = [0] * request.n
        self._held: list[CompletionPiece] = []
        self._prompt_tokens: int | None = None
        self._usage: Mapping[str, Any] | None = None

    def decode(self, event: Mapping[str, Any]) -> list[CompletionPiece]:
        if event.get("usage"):
            self._usage = event["usage"]
        out = []
        for choice in event.get("choices") or ():
            index = int(choice.get("index", 0))
            if not 0 <= index < len(self._counted):
                raise UpstreamError(f"the upstream sent choice {index} of {len(self._counted)}", status=502)
            ids = choice.get("token_ids") if self._ids else None
            prompt_ids = choice.get("prompt_token_ids")
            if prompt_ids is not None and self._prompt_tokens is None:
                self._prompt_tokens = len(prompt_ids)
            if ids:
                self._counted[index] += len(ids)
            piece = self._piece(index, choice, ids)
            reason = choice.get("finish_reason")
            if reason is None:
                out.append(piece)
                continue
            if reason not in ("stop", "length"):
                raise UpstreamError(f"the upstream ended choice {index} with finish_reason {reason!r}", status=502)
            if piece.text or piece.token_ids or piece.logprobs:
                out.append(piece)
            self._held.append(CompletionPiece(index=index, finish_reason=reason, stop_reason=choice.get("stop_reason")))
            self.ended(index)
        return out

    def _piece(self, index: int, choice: Mapping[str, Any], ids: Sequence[int] | None) -> CompletionPiece:
        """One choice's step as a piece (a wire with other shapes overrides this)."""
        return CompletionPiece(
            index=index,
            text=choice.get("text") or "",
            token_ids=tuple(ids) if ids else None,
            logprobs=legacy_to_chat(choice.get("logprobs"), self._top),
        )

    def close(self) -> list[CompletionPiece]:
        super().close()
        usage = self._usage or {}
        prompt_tokens = self._prompt_tokens if self._prompt_tokens is not None else usage.get("prompt_tokens")
        out = []
        for i, piece in enumerate(sorted(self._held, key=lambda p: p.index)):
            counted: int | None = self._counted[piece.index] if self._ids else None
            if counted is None and len(self._held) == 1:
                counted = usage.get("completion_tokens")
            out.append(
                CompletionPiece(
                    index=piece.index,
                    finish_reason=piece.finish_reason,
                    stop_reason=piece.stop_reason,
                    prompt_tokens=prompt_tokens if i == 0 else None,
                    completion_tokens=counted,
                )
            )
        return out


class CompletionsWire(Wire):
    """Any OpenAI-compatible ``/v1/completions`` (kind ``openai``): text only."""

    kind: ClassVar[str] = "openai"
    path: ClassVar[str] = "/v1/completions"
    fans_out: ClassVar[bool] = False
    token_ids: ClassVar[bool] = False
    stop_reasons: ClassVar[bool] = False

    def body(self, request: CompletionRequest, *, model: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "prompt": request.prompt,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": request.max_tokens,
        }
        if model is not None:
            body["model"] = model
        if request.n != 1:
            body["n"] = request.n
        for name in ("seed", "temperature", "top_p"):
            value = getattr(request, name)
            if value is not None:
                body[name] = value
        if request.stop:
            body["stop"] = list(request.stop)
        if request.logprobs is not None:
            body["logprobs"] = request.logprobs
        body.update(wire_sampling(self.kind, request.sampling))
        if request.constraint is not None:
            raise UpstreamError("an openai-kind upstream takes no grammar", status=400)
        return body

    def decoder(self, request: CompletionRequest) -> Decoder:
        return _CompletionsDecoder(request, ids=self.token_ids)

    def request_n(self, body: Mapping[str, Any]) -> int:
        return int(body.get("n") or 1)

    def encode(
        self, body: Mapping[str, Any], choices: Sequence[ReplayChoice], *, prompt_tokens: int
    ) -> Iterator[dict[str, Any]]:
        ids = bool(body.get("return_token_ids"))
        created = int(time.time())

        def chunk(choice: dict[str, Any]) -> dict[str, Any]:
            return {
                "id": "cmpl-replay",
                "object": "text_completion",
                "created": created,
                "model": body.get("model") or "replay",
                "choices": [choice],
                "usage": None,
            }

        offsets = [0] * len(choices)
        steps = max((len(c.pieces) for c in choices), default=0)
        for step in range(steps):  # choices interleaved, as an engine batches them
            for index, replay in enumerate(choices):
                if step >= len(replay.pieces):
                    continue
                piece = replay.pieces[step]
                entry: dict[str, Any] = {
                    "index": index,
                    "text": piece.text,
                    "logprobs": chat_to_legacy(piece.logprobs, offsets[index])
                    if body.get("logprobs") is not None
                    else None,
                    "finish_reason": None,
                    "stop_reason": None,
                }
                offsets[index] += len(piece.text)
                if ids:
                    entry["token_ids"] = list(piece.token_ids)
                    if step == 0:
                        entry["prompt_token_ids"] = list(range(prompt_tokens))
                yield chunk(entry)
        for index, replay in enumerate(choices):
            final: dict[str, Any] = {
                "index": index,
                "text": "",
                "logprobs": None,
                "finish_reason": replay.finish_reason,
                "stop_reason": replay.stop_reason,
            }
            if ids:
                final["token_ids"] = []
            yield chunk(final)
        if (body.get("stream_options") or {}).get("include_usage"):
            completion = sum(c.completion_tokens for c in choices)
            yield {
                "id": "cmpl-replay",
                "object": "text_completion",
                "created": created,
                "model": body.get("model") or "replay",
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion,
                    "total_tokens": prompt_tokens + completion,
                },
            }


class VllmWire(CompletionsWire):
    kind: ClassVar[str] = "vllm"
    token_ids: ClassVar[bool] = True
    stop_reasons: ClassVar[bool] = True

    def body(self, request: CompletionRequest, *, model: str | None) -> dict[str, Any]:
        constraint = request.constraint
        body = super().body(CompletionRequest(**{**request.__dict__, "constraint": None}), model=model)
        body.setdefault("add_special_tokens", False)
        body["skip_special_tokens"] = False
        if request.token_ids:
            body["return_token_ids"] = True
        if constraint is not None:
            body["structured_outputs"] = _structured_outputs(constraint)
        return body
