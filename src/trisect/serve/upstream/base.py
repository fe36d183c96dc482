"""The contract between the server and an engine: a raw prompt in, text and token ids out.

The server renders the chat template itself, so every upstream only ever sees a raw-completion
request (``CompletionRequest``): the prompt with special tokens kept as text, sampling
parameters, an optional constraint derived by ``trisect.grammar`` from the format, and how many
choices. It answers with an async stream of ``CompletionPiece`` per choice: new text, the token
ids of that text where the engine reports them (vLLM ``return_token_ids``, llama.cpp
``logprobs.content[].id``, SGLang ``output_ids``), per-token logprobs in the OpenAI chat shape,
and a ``finish_reason`` on the last piece of each choice.

Cancellation: closing the iterator (``aclose()``, which the server does when its client
disconnects) must cancel the engine's work for this request.

Errors: an upstream that cannot be reached, answers with an error status, or breaks off
mid-stream raises ``UpstreamError`` (``status`` is the HTTP status the server answers with:
502 for a failing upstream, whatever status it answered, which ``upstream_status`` keeps; 503
for one that cannot be reached; 504 for one that timed out; 400 when trisect cannot put the
request to this kind of engine at all).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

T = TypeVar("T")

ConstraintKind = Literal["json_schema", "gbnf", "lark", "structural_tag", "regex"]


@dataclass(frozen=True)
class Constraint:
    """How the engine must constrain sampling. ``value`` is the grammar text (GBNF, Lark, regex)
    or the JSON object (JSON schema, xgrammar structural tag). ``triggers``: for a lazy grammar,
    the strings that switch it on (text before the first trigger is sampled freely)."""

    kind: ConstraintKind
    value: str | Mapping[str, Any]
    triggers: tuple[str, ...] = ()

    @property
    def lazy(self) -> bool:
        return bool(self.triggers)


@dataclass(frozen=True)
class CompletionRequest:
    prompt: str
    max_tokens: int | None = None
    n: int = 1
    stop: tuple[str, ...] = ()
    seed: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    # further sampling fields, by their OpenAI / vLLM names (top_k, min_p, presence_penalty, …)
    sampling: Mapping[str, Any] = field(default_factory=dict)
    logprobs: int | None = None  # None: no logprobs; k >= 0: the sampled token's plus k alternatives
    constraint: Constraint | None = None
    token_ids: bool = True  # ask for the ids of the generated tokens where the engine can
    # marker strings the engine must keep in the text (llama.cpp ``preserved_tokens``: a control
    # token it would otherwise render as "")
    keep_tokens: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompletionPiece:
    index: int  # the choice
    text: str = ""
    token_ids: tuple[int, ...] | None = None
    logprobs: tuple[Mapping[str, Any], ...] | None = None  # OpenAI chat logprobs "content" entries
    finish_reason: str | None = None  # set on the last piece of a choice: "stop" or "length"
    prompt_tokens: int | None = None  # once per request, where the engine reports it
    # on the last piece, where the engine says: the stop string (or stop token id) that ended the
    # choice (``None``: end of sequence or length). Its text is not in ``text``; its ids may be in
    # ``token_ids`` (engines report every generated id)
    stop_reason: str | int | None = None
    completion_tokens: int | None = None  # on the last piece: tokens generated, as the engine counts
    # the engine sent token ids alone (vLLM's generate): a parser decodes the ids itself, ``text``
    # is decoded by the wire for answers without one
    ids_only: bool = False


class UpstreamError(Exception):
    """The upstream failed; ``status`` is the HTTP status to answer with (see the module doc).
    ``upstream_status`` is the status the upstream itself answered, when it answered one;
    ``kind`` names the failure for the metrics: ``unreachable``, ``timeout``, ``status`` (an
    error status), ``stream`` (an error or a break mid-stream), ``protocol`` (an answer that is
    not what the wire says), ``rejected`` (the request cannot be put to this engine)."""

    def __init__(
        self, message: str, *, status: int = 502, upstream_status: int | None = None, kind: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.upstream_status = upstream_status
        self.kind = kind or ("rejected" if status == 400 else "unreachable" if status == 503 else "protocol")


class Upstream(Protocol):
    kind: str  # "vllm", "sglang", "llamacpp", "openai", "embedded"
    fans_out: bool  # True when it cannot produce n > 1 choices itself (the server fans out)

    def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionPiece]:
        """Stream the pieces of every choice (interleaved; each choice ends with a piece that
        has its ``finish_reason``)."""
        ...

    async def models(self) -> list[str]:
        """Model ids the upstream serves (for ``GET /v1/models`` and ``/health``)."""
        ...

    async def aclose(self) -> None:
        """Release connections / the embedded model."""
        ...


@contextlib.asynccontextmanager
async def closing(stream: AsyncIterator[T]) -> AsyncIterator[AsyncIterator[T]]:
    """``async with closing(upstream.complete(r)) as pieces``: the stream is closed (``aclose()``,
    which cancels the engine's work) however the block is left."""
    try:
        yield stream
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
