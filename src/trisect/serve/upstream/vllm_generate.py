"""vLLM's token-in, token-out ``POST /inference/v1/generate`` (kind ``vllm-generate``).

trisect renders the chat template and tokenizes the prompt itself; the engine generates from
the ids and sends ids back; trisect's parser decodes them (ids alone: no text makes the round
trip, and the markers that are special tokens are matched by id). So a vLLM started with
``vllm serve M --enable-scale-out`` (or any worker of a disaggregated deployment) serves
``trisect serve --upstream URL --upstream-kind vllm-generate --tokenizer PATH`` with no parser
of its own.

Request (``GenerateRequest``, ``vllm/entrypoints/scale_out/token_in_token_out/protocol.py``):
``token_ids`` (the rendered prompt, tokenized as the template's text: special tokens recognised,
none added), ``sampling_params`` (vLLM's ``SamplingParams`` names: the same fields and renames
as the ``vllm`` kind, ``structured_outputs`` included; ``detokenize: false``, since nothing reads
the engine's text), ``stream: true`` with ``stream_options.include_usage``, ``model``.

Pieces carry the ids (``ids_only``: a parser reads them, not the text) and the text decoded here
for answers without a parser (``/v1/completions``).

Stream: ``data: {"request_id", "choices": [{"index", "token_ids", "finish_reason",
"stop_reason", "logprobs": {"content": [{"token_id", "logprob", "top_logprobs": […]}]}}]}``
per step (``output_mode`` ``tokens``: ids only), a usage chunk with no choices, then
``data: [DONE]``. Every generated id is sent, the stop token included; the parser's own
detokenizer drops control tokens that are not markers of the format (an end-of-sequence token),
so the stop token never reaches the text. Logprobs carry ids: their token strings are the
tokens' bytes, decoded (``scale_out.logprobs``).

The tokenizer is the one ``--tokenizer`` names (the model directory's ``tokenizer.json``); the
kind is ``vllm`` for everything the server decides (sampling fields, grammars: one request
whose structural tag admits the reasoning block, as for ``/v1/completions``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from ...engine.vocab import Vocab
from ..scale_out.logprobs import IdsText, chat_logprobs, context_after
from ..scale_out.shapes import ScaleOutError
from .base import CompletionPiece, CompletionRequest, UpstreamError
from .vllm import VllmWire, _CompletionsDecoder
from .wire import Decoder, ReplayChoice

KIND = "vllm-generate"


def sampling_params(request: CompletionRequest, *, model: str | None) -> dict[str, Any]:
    """The ``SamplingParams`` of a ``GenerateRequest`` for ``request``: what the ``vllm`` kind
    sends to ``/v1/completions``, minus the fields that are not sampling (prompt, streaming,
    the ids switch, the model)."""
    body = VllmWire().body(request, model=model)
    for name in ("prompt", "stream", "stream_options", "return_token_ids", "add_special_tokens", "model"):
        body.pop(name, None)
    body["detokenize"] = False
    return body


class _GenerateDecoder(_CompletionsDecoder):
    """The ``vllm`` decoder, whose steps carry ids alone (the parser decodes them) and logprobs
    with ids (resolved to token strings here)."""

    def __init__(self, request: CompletionRequest, vocab: Vocab) -> None:
        super().__init__(request, ids=True)
        self._vocab = vocab
        self._limit = request.logprobs  # None: no logprobs were asked for
        self._context: list[list[int]] = [[] for _ in range(request.n)]
        # the text, for answers that have no parser to decode the ids (raw completions): control
        # tokens left out, as an engine's skip_special_tokens leaves them
        self._text = [IdsText(vocab, False, vocab.utf8_decoder()) for _ in range(request.n)]

    def _piece(self, index: int, choice: Mapping[str, Any], ids: Sequence[int] | None) -> CompletionPiece:
        logprobs = None
        if choice.get("logprobs") is not None and self._limit is not None:
            context = self._context[index]
            try:
                resolved = chat_logprobs(choice["logprobs"], self._vocab, context, self._limit, "logprobs")
            except ScaleOutError as exc:
                raise UpstreamError(f"the upstream sent logprobs trisect cannot read: {exc}", status=502) from None
            logprobs = tuple(resolved["content"] or ()) if resolved is not None else None
        self._context[index] = list(context_after(self._context[index], ids or ()))
        text = self._text[index].decode(ids or ())
        return CompletionPiece(
            index=index, text=text, token_ids=tuple(ids) if ids else None, logprobs=logprobs, ids_only=True
        )


class VllmGenerateWire(VllmWire):
    """``/inference/v1/generate``: token ids in and out (see the module docstring)."""

    kind: ClassVar[str] = "vllm"
    path: ClassVar[str] = "/inference/v1/generate"

    def __init__(self, vocab: Vocab | None = None) -> None:
        self.vocab = vocab

    def _require(self) -> Vocab:
        if self.vocab is None:
            raise UpstreamError("the vllm-generate upstream needs the model's tokenizer (--tokenizer)", status=400)
        return self.vocab

    def body(self, request: CompletionRequest, *, model: str | None) -> dict[str, Any]:
        ids = self._require().encode_text(request.prompt)
        if not ids:
            raise UpstreamError("the rendered prompt has no tokens", status=400)
        body: dict[str, Any] = {
            "token_ids": ids,
            "sampling_params": sampling_params(request, model=model),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if model is not None:
            body["model"] = model
        return body

    def decoder(self, request: CompletionRequest) -> Decoder:
        return _GenerateDecoder(request, self._require())

    def request_n(self, body: Mapping[str, Any]) -> int:
        return int((body.get("sampling_params") or {}).get("n") or 1)

    def encode(
        self, body: Mapping[str, Any], choices: Sequence[ReplayChoice], *, prompt_tokens: int
    ) -> Iterator[dict[str, Any]]:
        """The events vLLM's generate streams for ``choices`` (ids only), for the replay server."""
        steps = max((len(c.pieces) for c in choices), default=0)
        for step in range(steps):
            for index, replay in enumerate(choices):
                if step < len(replay.pieces):
                    piece = replay.pieces[step]
                    entry = {"index": index, "token_ids": list(piece.token_ids), "finish_reason": None}
                    yield {"request_id": "replay", "choices": [entry]}
        for index, replay in enumerate(choices):
            final = {"index": index, "token_ids": [], "finish_reason": replay.finish_reason}
            final["stop_reason"] = replay.stop_reason
            yield {"request_id": "replay", "choices": [final]}
        completion = sum(c.completion_tokens for c in choices)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
        }
        yield {"request_id": "replay", "choices": [], "usage": usage}
