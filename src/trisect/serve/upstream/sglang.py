"""SGLang's native ``POST /generate`` (kind ``sglang``).

Request (SGLang docs, ``sampling_params`` and native API pages): ``{"text": prompt,
"sampling_params": {...}, "stream": true, "return_logprob", "top_logprobs_num",
"return_text_in_logprobs": true}``. Sampling names: ``max_new_tokens``, ``stop``,
``temperature``, ``top_p``, ``sampling_seed``, ``skip_special_tokens: false`` (markers stay in the
text), ``json_schema`` / ``regex`` / ``ebnf`` / ``structural_tag`` (strings), and the extras of
``sampling.SAMPLING``. One choice per request (the server fans ``n`` out).

Stream: ``data: {"text", "output_ids", "meta_info": {"finish_reason": null | {"type": "stop",
"matched": str | id} | {"type": "length"}, "prompt_tokens", "completion_tokens",
"output_token_logprobs": [[logprob, id, text]], "output_top_logprobs": [[[logprob, id, text]]]}}``
then ``data: [DONE]``. By default every chunk carries the *cumulative* text, ids and logprobs;
with ``--incremental-streaming-output`` only the new ones. Which one a chunk is follows from
the ids: cumulative ids are as many as ``meta_info.completion_tokens`` (without ids, from the
text: a text that extends the previous one is cumulative). A cumulative text that
does not extend the previous one (a stop string trimmed at the end) cannot be taken back: only
text past the common prefix is sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from .base import CompletionPiece, CompletionRequest, UpstreamError
from .sampling import wire_sampling
from .wire import Decoder, ReplayChoice, Wire, chat_logprob


def _entry(item: Sequence[Any]) -> tuple[float, str]:
    return float(item[0]), item[2] if len(item) > 2 and item[2] is not None else ""


class _GenerateDecoder(Decoder):
    def __init__(self, request: CompletionRequest) -> None:
        super().__init__(1)
        self._top = request.logprobs or 0
        self._text = ""
        self._ids = 0
        self._lps = 0

    def decode(self, event: Mapping[str, Any]) -> list[CompletionPiece]:
        meta = event.get("meta_info") or {}
        ids = list(event.get("output_ids") or ())
        text = event.get("text") or ""
        count = meta.get("completion_tokens")
        if ids or self._ids:
            cumulative = self._ids > 0 and count is not None and len(ids) == count
        else:  # no ids at all (not SGLang's own /generate): a text that extends the last one
            cumulative = bool(self._text) and text.startswith(self._text)
        if cumulative:
            new_ids = ids[self._ids :]
            new_text = text[len(self._text) :] if text.startswith(self._text) else text[_common(text, self._text) :]
            self._text = text if len(text) > len(self._text) else self._text
        else:
            new_ids, new_text = ids, text
            self._text += text
        self._ids += len(new_ids)
        logprobs = None
        values = meta.get("output_token_logprobs")
        if values:
            tops = meta.get("output_top_logprobs") or [None] * len(values)
            fresh = values[self._lps :] if cumulative else values
            fresh_tops = tops[self._lps :] if cumulative else tops
            self._lps += len(fresh)
            logprobs = tuple(
                chat_logprob(*_entry(v)[::-1], [_entry(t)[::-1] for t in (top or ())][: self._top])
                for v, top in zip(fresh, fresh_tops, strict=False)
            )
        pieces = []
        if new_text or new_ids or logprobs:
            pieces.append(CompletionPiece(index=0, text=new_text, token_ids=tuple(new_ids) or None, logprobs=logprobs))
        finish = meta.get("finish_reason")
        if finish:
            kind = finish.get("type") if isinstance(finish, Mapping) else finish
            if kind not in ("stop", "length"):
                message = finish.get("message") if isinstance(finish, Mapping) else None
                raise UpstreamError(f"the upstream aborted the request: {message or kind}", status=502)
            matched = finish.get("matched") if isinstance(finish, Mapping) else None
            pieces.append(
                CompletionPiece(
                    index=0,
                    finish_reason=kind,
                    stop_reason=matched,
                    prompt_tokens=meta.get("prompt_tokens"),
                    completion_tokens=count,
                )
            )
            self.ended(0)
        return pieces


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class SglangWire(Wire):
    kind: ClassVar[str] = "sglang"
    path: ClassVar[str] = "/generate"
    fans_out: ClassVar[bool] = True

    def body(self, request: CompletionRequest, *, model: str | None) -> dict[str, Any]:
        params: dict[str, Any] = {"max_new_tokens": request.max_tokens, "skip_special_tokens": False}
        if request.stop:
            params["stop"] = list(request.stop)
        if request.seed is not None:
            params["sampling_seed"] = request.seed
        for name in ("temperature", "top_p"):
            value = getattr(request, name)
            if value is not None:
                params[name] = value
        params.update(wire_sampling(self.kind, request.sampling))
        constraint = request.constraint
        if constraint is not None:
            if constraint.lazy:
                raise UpstreamError("SGLang has no lazy grammars (use a structural tag)", status=400)
            key = {"json_schema": "json_schema", "structural_tag": "structural_tag", "regex": "regex"}.get(
                constraint.kind, "ebnf"
            )
            value = constraint.value
            params[key] = value if isinstance(value, str) else json.dumps(value)
        body: dict[str, Any] = {"text": request.prompt, "sampling_params": params, "stream": True}
        if model is not None:
            body["model"] = model
        if request.logprobs is not None:
            body["return_logprob"] = True
            body["top_logprobs_num"] = request.logprobs
            body["return_text_in_logprobs"] = True
        return body

    def decoder(self, request: CompletionRequest) -> Decoder:
        if request.n != 1:
            raise UpstreamError("SGLang's /generate is asked one choice at a time", status=500)
        return _GenerateDecoder(request)

    def encode(
        self, body: Mapping[str, Any], choices: Sequence[ReplayChoice], *, prompt_tokens: int
    ) -> Iterator[dict[str, Any]]:
        (replay,) = choices
        text = ""
        ids: list[int] = []
        lps: list[list[Any]] = []
        tops: list[list[list[Any]]] = []
        for n, piece in enumerate(replay.pieces, 1):
            text += piece.text
            ids += piece.token_ids
            for e in piece.logprobs:
                lps.append([e["logprob"], 0, e["token"]])
                tops.append([[t["logprob"], 0, t["token"]] for t in e.get("top_logprobs", ())])
            meta: dict[str, Any] = {
                "id": "replay",
                "finish_reason": None,
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(ids),
                "cached_tokens": 0,
            }
            if body.get("return_logprob"):
                meta["output_token_logprobs"] = list(lps)
                meta["output_top_logprobs"] = list(tops)
            if n == len(replay.pieces):
                meta["finish_reason"] = _finish(replay)
            yield {"text": text, "output_ids": list(ids), "meta_info": meta, "index": 0}
        if not replay.pieces:
            meta = {
                "id": "replay",
                "finish_reason": _finish(replay),
                "prompt_tokens": prompt_tokens,
                "completion_tokens": 0,
                "cached_tokens": 0,
            }
            yield {"text": "", "output_ids": [], "meta_info": meta, "index": 0}


def _finish(replay: ReplayChoice) -> dict[str, Any]:
    if replay.finish_reason == "length":
        return {"type": "length", "length": replay.completion_tokens}
    return {"type": "stop", "matched": replay.stop_reason}
