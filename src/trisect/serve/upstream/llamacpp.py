"""llama.cpp ``llama-server``'s native ``POST /completion`` (kind ``llamacpp``).

Request (``tools/server/README.md``): ``prompt`` (special-token text is parsed as the special
tokens), ``n_predict`` (-1: no limit), ``stream: true``, ``return_tokens: true``, ``stop``,
``seed``, ``temperature``, ``top_p``, ``n_probs`` (logprobs of the sampled token and the top
alternatives), ``cache_prompt``, a constraint as ``json_schema`` or ``grammar`` (GBNF; lazy with
``grammar_lazy`` + ``grammar_triggers`` ``[{"type": 1, "value": word}]``), ``preserved_tokens``
(control tokens rendered as their text instead of ``""``), and the extras of
``sampling.SAMPLING``. One choice per request (the server fans ``n`` out).

Stream (recorded from llama-server, ``tests/serve/data/llamacpp_completion.json``): one
``data: {"index", "content", "tokens": [ids], "stop": false, "tokens_predicted",
"tokens_evaluated", "completion_probabilities"?}`` per token, and a final one with
``"stop": true``, ``"stop_type": "eos" | "word" | "limit"`` and ``"stopping_word"``; no
``[DONE]``. The end-of-sequence token and the tokens of a matched stop word arrive as chunks
with empty ``content`` and their ids. An error is ``{"error": {"code", "message", "type"}}``.

The request body is also what llama.cpp's ``/v1/completions`` handler reads (both go through
``params_from_json_cmpl``), which is what the in-process ``embedded`` upstream calls.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from .base import CompletionPiece, CompletionRequest, UpstreamError
from .sampling import wire_sampling
from .wire import Decoder, ReplayChoice, Wire

_FINISH = {"eos": "stop", "word": "stop", "limit": "length", "none": "stop"}
WORD_TRIGGER = 1  # common_grammar_trigger_type: TOKEN=0, WORD=1, PATTERN=2, PATTERN_FULL=3


def request_body(kind: str, request: CompletionRequest) -> dict[str, Any]:
    """The llama.cpp completion body for ``request`` (shared with the embedded upstream)."""
    body: dict[str, Any] = {
        "prompt": request.prompt,
        "n_predict": -1 if request.max_tokens is None else request.max_tokens,
        "cache_prompt": True,
    }
    if request.stop:
        body["stop"] = list(request.stop)
    for name in ("seed", "temperature", "top_p"):
        value = getattr(request, name)
        if value is not None:
            body[name] = value
    if request.logprobs is not None:
        body["n_probs"] = max(request.logprobs, 1)  # 0 would mean no probabilities at all
    if request.keep_tokens:
        body["preserved_tokens"] = list(request.keep_tokens)
    body.update(wire_sampling(kind, request.sampling))
    constraint = request.constraint
    if constraint is not None:
        if constraint.kind == "json_schema":
            if constraint.lazy:
                raise UpstreamError("llama.cpp ignores lazy triggers on json_schema (send GBNF)", status=400)
            body["json_schema"] = constraint.value
        elif constraint.kind == "gbnf":
            body["grammar"] = constraint.value
            if constraint.lazy:
                body["grammar_lazy"] = True
                body["grammar_triggers"] = [{"type": WORD_TRIGGER, "value": t} for t in constraint.triggers]
        elif constraint.kind == "lark":
            if constraint.lazy:
                raise UpstreamError("llama.cpp's lazy grammars are GBNF only", status=400)
            text = str(constraint.value)  # trisect.grammar.lark writes the header itself
            body["grammar"] = text if text.lstrip().startswith("%llguidance") else "%llguidance {}\n" + text
        else:
            raise UpstreamError(f"llama.cpp takes no {constraint.kind} constraint", status=400)
    return body


def chat_entries(probabilities: Sequence[Mapping[str, Any]], top: int) -> tuple[dict[str, Any], ...]:
    """llama.cpp ``completion_probabilities`` as OpenAI chat logprob entries (ids dropped)."""
    out = []
    for p in probabilities:
        alternatives = [
            {"token": t["token"], "logprob": t["logprob"], "bytes": t.get("bytes")} for t in p.get("top_logprobs", ())
        ]
        out.append(
            {"token": p["token"], "logprob": p["logprob"], "bytes": p.get("bytes"), "top_logprobs": alternatives[:top]}
        )
    return tuple(out)


class _CompletionDecoder(Decoder):
    def __init__(self, request: CompletionRequest) -> None:
        super().__init__(1)
        self._top = request.logprobs or 0

    def decode(self, event: Mapping[str, Any]) -> list[CompletionPiece]:
        probabilities = event.get("completion_probabilities")
        ids = event.get("tokens")
        text = event.get("content") or ""
        pieces = []
        if text or ids or probabilities:
            pieces.append(
                CompletionPiece(
                    index=0,
                    text=text,
                    token_ids=tuple(ids) if ids else None,
                    logprobs=chat_entries(probabilities, self._top) if probabilities else None,
                )
            )
        if event.get("stop"):
            stop_type = event.get("stop_type", "eos")
            if stop_type not in _FINISH:
                raise UpstreamError(f"the upstream stopped with stop_type {stop_type!r}", status=502)
            pieces.append(
                CompletionPiece(
                    index=0,
                    finish_reason=_FINISH[stop_type],
                    stop_reason=event.get("stopping_word") if stop_type == "word" else None,
                    prompt_tokens=event.get("tokens_evaluated"),
                    completion_tokens=event.get("tokens_predicted"),
                )
            )
            self.ended(0)
        return pieces


class LlamacppWire(Wire):
    kind: ClassVar[str] = "llamacpp"
    path: ClassVar[str] = "/completion"
    fans_out: ClassVar[bool] = True
    done_sentinel: ClassVar[bool] = False

    def body(self, request: CompletionRequest, *, model: str | None) -> dict[str, Any]:
        body = request_body(self.kind, request)
        body["stream"] = True
        body["return_tokens"] = True
        if model is not None:
            body["model"] = model
        return body

    def decoder(self, request: CompletionRequest) -> Decoder:
        if request.n != 1:
            raise UpstreamError("llama.cpp's /completion is asked one choice at a time", status=500)
        return _CompletionDecoder(request)

    def encode(
        self, body: Mapping[str, Any], choices: Sequence[ReplayChoice], *, prompt_tokens: int
    ) -> Iterator[dict[str, Any]]:
        (replay,) = choices
        predicted = 0
        probs = body.get("n_probs")
        for piece in replay.pieces:
            predicted += len(piece.token_ids)
            chunk: dict[str, Any] = {
                "index": 0,
                "content": piece.text,
                "tokens": list(piece.token_ids),
                "stop": False,
                "id_slot": -1,
                "tokens_predicted": predicted,
                "tokens_evaluated": prompt_tokens,
            }
            if probs:
                chunk["completion_probabilities"] = [
                    {
                        "id": 0,
                        "token": e["token"],
                        "bytes": e.get("bytes") or list(e["token"].encode()),
                        "logprob": e["logprob"],
                        "top_logprobs": [
                            {"id": 0, "token": t["token"], "bytes": list(t["token"].encode()), "logprob": t["logprob"]}
                            for t in e.get("top_logprobs", ())
                        ],
                    }
                    for e in piece.logprobs
                ]
            yield chunk
        stop_type = "limit" if replay.finish_reason == "length" else ("word" if replay.stop_reason else "eos")
        yield {
            "index": 0,
            "content": "",
            "tokens": [],
            "id_slot": 0,
            "stop": True,
            "tokens_predicted": predicted,
            "tokens_evaluated": prompt_tokens,
            "has_new_line": False,
            "truncated": False,
            "stop_type": stop_type,
            "stopping_word": replay.stop_reason if isinstance(replay.stop_reason, str) else "",
            "tokens_cached": 0,
        }
