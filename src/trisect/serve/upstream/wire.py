"""What a wire format is: how one engine kind is asked for a raw completion and how it answers.

A ``Wire`` is pure data handling, no I/O: ``body()`` turns a ``CompletionRequest`` into the JSON
the engine takes, ``decoder()`` gives a per-request ``Decoder`` that turns each streamed JSON
event into ``CompletionPiece`` objects, and ``encode()`` is the inverse the replay server
(``trisect.serve.replay``) uses to play recorded outputs back in that engine's format. Keeping
both directions next to each other keeps one wire's facts in one module.

``HTTPUpstream`` (``http.py``) does the I/O for every wire: POST, SSE, errors, cancellation.
The server always streams from the engine (so a client that leaves cancels the work), and always
asks for the generated token ids where the engine reports them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .base import CompletionPiece, CompletionRequest, UpstreamError


@dataclass(frozen=True)
class ReplayPiece:
    """One streamed step of a recorded output: its text, its token ids, the logprob entries of
    those tokens (OpenAI chat shape), for the replay server."""

    text: str
    token_ids: tuple[int, ...] = ()
    logprobs: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class ReplayChoice:
    pieces: tuple[ReplayPiece, ...]
    finish_reason: str = "stop"  # "stop" | "length"
    stop_reason: str | int | None = None  # the stop string that ended it (its text is not sent)

    @property
    def completion_tokens(self) -> int:
        return sum(len(p.token_ids) for p in self.pieces)


class Decoder:
    """Turns one request's stream of JSON events into pieces. ``close()`` at the end of the
    stream returns what was held back (a wire may hold the final pieces until the engine's
    usage arrives) and checks that every choice ended: an engine that stops mid-choice is an
    ``UpstreamError``."""

    def __init__(self, n: int) -> None:
        self.open = set(range(n))

    def decode(self, event: Mapping[str, Any]) -> list[CompletionPiece]:
        raise NotImplementedError

    @property
    def finished(self) -> bool:
        """Every choice has ended (a wire without an end sentinel stops reading here)."""
        return not self.open

    def ended(self, index: int) -> None:
        self.open.discard(index)

    def close(self) -> list[CompletionPiece]:
        if self.open:
            raise UpstreamError("the upstream ended the stream before every choice finished", status=502)
        return []


class Wire:
    kind: ClassVar[str]
    path: ClassVar[str]  # the raw-completion endpoint
    fans_out: ClassVar[bool]  # True: one request per choice (the engine cannot do n > 1 itself)
    done_sentinel: ClassVar[bool] = True  # the stream ends with ``data: [DONE]``
    token_ids: ClassVar[bool] = True  # the engine reports generated token ids
    stop_reasons: ClassVar[bool] = True  # the engine says which stop string ended a choice

    def body(self, request: CompletionRequest, *, model: str | None) -> dict[str, Any]:
        raise NotImplementedError

    def decoder(self, request: CompletionRequest) -> Decoder:
        raise NotImplementedError

    def encode(
        self, body: Mapping[str, Any], choices: Sequence[ReplayChoice], *, prompt_tokens: int
    ) -> Iterator[dict[str, Any]]:
        """The events the engine would stream for ``choices`` (replay side)."""
        raise NotImplementedError

    def request_n(self, body: Mapping[str, Any]) -> int:
        """How many choices a body asks for (replay side)."""
        return 1


def chat_logprob(token: str, logprob: float, top: Sequence[tuple[str, float]] = ()) -> dict[str, Any]:
    """One OpenAI chat ``logprobs.content`` entry."""
    return {
        "token": token,
        "logprob": logprob,
        "bytes": list(token.encode("utf-8")),
        "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode("utf-8"))} for t, lp in top],
    }
