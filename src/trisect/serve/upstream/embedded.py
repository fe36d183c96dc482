"""The embedded upstream: llama.cpp in this process, through the ``xllamacpp`` wheel.

``EmbeddedUpstream(gguf_path, threads=None, slots=2, context=4096)`` loads the model (0.3–0.5 s
for SmolLM2-135M) and serves ``base.Upstream``: every choice is one streamed
``Server.handle_completions`` call (llama.cpp's ``/v1/completions`` handler, no HTTP hop), run in
a worker thread (llama.cpp releases the GIL) and bridged to the event loop through an
``asyncio.Queue``. Choices run concurrently on the model's ``slots`` (more wait in llama.cpp's
queue); choice ``i`` samples with ``seed + i`` so that ``n > 1`` with a seed gives distinct but
reproducible choices.

Mapping of ``CompletionRequest``:

* the body is llama-server's (``llamacpp.request_body``: llama.cpp's ``/v1/completions`` handler
  reads the same fields): the prompt as text (special tokens parsed: ``<|im_start|>`` is one
  token), ``n_predict``, ``temperature``, ``top_p``, ``seed``, ``sampling`` by llama.cpp's names
  (``sampling.SAMPLING``), ``keep_tokens`` as ``preserved_tokens``;
* token ids and logprobs: ``n_probs`` is always at least 1, because llama.cpp reports the sampled
  token's id only inside ``logprobs.content[]``; the end-of-generation token (its text is empty,
  and it is not part of the text) is left out of ``token_ids`` and ``logprobs``;
* ``stop`` strings are matched here, not by llama.cpp (whose streamed chunks then carry held-back
  ids with empty text): text is held back while it could still become a stop string, and the
  choice ends (generation cancelled) at the first one, which is not returned;
* constraints as llama-server takes them: ``gbnf`` -> ``grammar`` (lazy with ``triggers``:
  ``grammar_lazy`` and one WORD trigger per string; a trigger that is a single token of the
  vocabulary is also sent as ``preserved_tokens``, which llama.cpp requires); ``lark`` ->
  ``grammar`` under ``%llguidance {}`` (never lazy: lazy grammars are GBNF only);
  ``json_schema``; anything else is a 400.

Cancellation: closing the iterator sets a flag that the stream callback returns on its next
chunk (llama.cpp then cancels the task); ``return_progress`` makes chunks arrive while a long
prompt is read, so that a disconnect cancels promptly there too. Exceptions inside the callback,
which xllamacpp would swallow, are caught there and raised from the iterator.

Errors: llama.cpp's ``{"error": {...}}`` answers -> ``UpstreamError`` (its code when 4xx, else
502); ``ValueError`` from xllamacpp -> 400; a model that does not load -> ``UpstreamError`` 503
at construction; a missing xllamacpp -> ``ImportError`` naming the ``serve`` extra.

A lazy grammar's trigger completed by a token that carries more text (SmolLM2 writes
``<tool_call>,`` with ``>,`` as one token) makes llama.cpp fail the request: that token was sampled
before the grammar applied, and the grammar rejects its tail. Trigger prefixes are therefore held
back like stop strings until they are decided, and on that failure the choice continues with the
grammar from its first token (``_Choice.continuation``): a call the model starts is well formed.

Cost: per chunk, the chunk's size; with stop strings or a pending trigger, also the held text
(shorter than the longest of them plus one token).

Gotchas handled: a ``Server`` that never served a request can hang when destroyed, so one
1-token request is served at construction; llama.cpp's built-in HTTP port (127.0.0.1, a random
port) gets a random API key, so other local processes cannot use the model through it.
"""

from __future__ import annotations

import asyncio
import enum
import json
import secrets
import threading
import urllib.request
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...many import free_cores
from .base import CompletionPiece, CompletionRequest, UpstreamError
from .llamacpp import chat_entries
from .llamacpp import request_body as llamacpp_body
from .sampling import SAMPLING

_END = object()


def default_threads() -> int:
    """Threads for llama.cpp: the cores that are free (CPUs usable by this process minus the
    1-minute load average, rounded down), at least 1. Measured on 2 shared cores: 2 threads
    against other load collapse to ~1 token/s, 1 thread keeps ~60. No load average (Windows):
    half the CPUs."""
    return free_cores()


def request_body(request: CompletionRequest, is_single_token: Callable[[str], bool]) -> dict[str, Any]:
    """The ``handle_completions`` request for one choice of ``request``: llama-server's body
    (``llamacpp.request_body``, which ``/v1/completions`` reads too) streamed, with ids always
    asked for, stop strings left to this module, and one-token triggers preserved;
    ``UpstreamError`` 400 for what llama.cpp cannot do."""
    if request.n < 1:
        raise UpstreamError("n must be at least 1", status=400)
    if request.max_tokens is not None and request.max_tokens < 1:
        raise UpstreamError("max_tokens must be at least 1", status=400)
    for name in request.sampling:
        if "embedded" not in SAMPLING.get(name, {}):
            raise UpstreamError(f"the embedded model takes no sampling parameter {name!r}", status=400)
    body = llamacpp_body("embedded", request)
    body.pop("stop", None)
    body.update(stream=True, n_probs=max(1, request.logprobs or 0), return_progress=True)
    constraint = request.constraint
    if constraint is not None and constraint.lazy:
        single = [t for t in constraint.triggers if is_single_token(t)]
        if single:
            body["preserved_tokens"] = list(dict.fromkeys([*body.get("preserved_tokens", ()), *single]))
    return body


class EmbeddedUpstream:
    """``base.Upstream`` over an in-process llama.cpp (see the module docstring)."""

    kind = "embedded"
    fans_out = False

    def __init__(
        self,
        gguf_path: str | Path,
        *,
        threads: int | None = None,
        slots: int = 2,
        context: int = 4096,
        batch: int = 512,
        model_name: str | None = None,
        verbosity: int = 0,
    ) -> None:
        try:
            import xllamacpp  # type: ignore[import-not-found,unused-ignore]
        except ImportError as exc:
            raise ImportError(
                "the embedded model needs xllamacpp: pip install 'trisect[serve]' (a prebuilt wheel)"
            ) from exc
        path = Path(gguf_path)
        if not path.is_file():
            raise UpstreamError(f"no model file at {path}", status=503)
        if slots < 1 or context < 64:
            raise ValueError("slots must be >= 1 and context >= 64 tokens")
        threads = threads if threads is not None else default_threads()
        key = secrets.token_hex(16)
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = context * slots  # llama.cpp splits the context evenly across its slots
        params.n_parallel = slots
        params.n_batch = batch
        params.n_ubatch = min(batch, 512)
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.n_gpu_layers = 0
        params.verbosity = verbosity
        params.api_keys = [key]
        try:
            server = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise UpstreamError(f"llama.cpp could not load {path}: {exc}", status=503) from exc
        server.handle_completions({"prompt": "x", "max_tokens": 1})  # see the module docstring
        self._setup(server, model_name=model_name or path.stem, slots=slots, threads=threads, key=key)

    @classmethod
    def from_server(
        cls,
        server: Any,
        *,
        model_name: str,
        slots: int = 2,
        key: str = "",
        single_token: Callable[[str], bool] | None = None,
    ) -> EmbeddedUpstream:
        """An upstream over an already running ``xllamacpp.Server`` (or anything with its
        ``handle_completions(request, callback)``); ``single_token`` says whether a trigger is
        one token (default: ask the server's ``/tokenize``)."""
        self = cls.__new__(cls)
        self._setup(server, model_name=model_name, slots=slots, threads=0, key=key)
        if single_token is not None:
            self._single_token_of = single_token
        return self

    def _setup(self, server: Any, *, model_name: str, slots: int, threads: int, key: str) -> None:
        self._server: Any = server
        self.model_name = model_name
        self.slots = slots
        self.threads = threads
        self._key = key
        self._executor = ThreadPoolExecutor(max_workers=max(8, 4 * slots), thread_name_prefix="trisect-llama")
        self._single_token: dict[str, bool] = {}
        self._single_token_of: Callable[[str], bool] = self._is_single_token
        self._live: set[_Choice] = set()
        self._closed = False
        self.recoveries = 0  # lazy-grammar recoveries (see the module docstring), for the metrics

    # -- the Upstream protocol

    async def models(self) -> list[str]:
        return [self.model_name]

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for choice in list(self._live):
            choice.cancel.set()
        await asyncio.to_thread(self._executor.shutdown, True, cancel_futures=True)
        holder = [self._server]  # the only reference: llama.cpp's teardown runs in a worker thread
        self._server = None
        await asyncio.to_thread(holder.clear)

    def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionPiece]:
        body = self._body(request)  # errors in the request surface before any streaming
        return self._stream(request, body)

    def _body(self, request: CompletionRequest) -> dict[str, Any]:
        if self._closed:
            raise UpstreamError("the embedded model was shut down", status=503)
        return request_body(request, self._single_token_of)

    def _is_single_token(self, text: str) -> bool:
        """Is ``text`` one token of the vocabulary? (llama.cpp's built-in ``/tokenize``.)"""
        known = self._single_token.get(text)
        if known is None:
            body = json.dumps({"content": text, "add_special": False, "parse_special": True}).encode()
            request = urllib.request.Request(
                self._server.listening_address + "/tokenize",
                data=body,
                headers={"Content-Type": "application/json", "Authorization": f"Bearer {self._key}"},
            )
            with urllib.request.urlopen(request, timeout=30) as answer:  # loopback only
                known = len(json.loads(answer.read())["tokens"]) == 1
            self._single_token[text] = known
        return known

    # -- streaming

    async def _stream(self, request: CompletionRequest, body: dict[str, Any]) -> AsyncIterator[CompletionPiece]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
        choices = [_Choice(i, request) for i in range(request.n)]
        self._live.update(choices)
        futures = []

        def start(choice: _Choice, choice_body: dict[str, Any]) -> None:
            futures.append(loop.run_in_executor(self._executor, self._run, choice, choice_body, loop, queue))

        for choice in choices:
            choice.body = dict(body)
            if request.seed is not None:
                choice.body["seed"] = request.seed + choice.index
            start(choice, choice.body)
        live = len(choices)
        try:
            while live:
                index, item = await queue.get()
                choice = choices[index]
                if item is _END:
                    if choice.phase is Phase.RECOVERING:
                        self.recoveries += 1  # read by the server's metrics
                        start(choice, choice.continuation())
                        continue
                    live -= 1
                    if choice.error is not None:
                        raise choice.error
                    for piece in choice.finish():
                        yield piece
                    continue
                for piece in choice.chunk(item):
                    yield piece
        finally:
            for choice in choices:
                choice.cancel.set()
            self._live.difference_update(choices)
            pending = [f for f in futures if not f.done()]
            if pending:  # the workers return at their next chunk
                try:
                    await asyncio.wait(pending, timeout=30)
                except RuntimeError:  # no running loop: collected after its loop closed
                    pass

    def _run(self, choice: _Choice, body: dict[str, Any], loop: asyncio.AbstractEventLoop, queue: Any) -> None:
        """Worker thread: one streamed completion; chunks go to the loop's queue."""

        def put(item: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (choice.index, item))

        def callback(chunk: Any) -> bool:
            try:
                if choice.cancel.is_set():
                    return True
                put(chunk)
                return False
            except BaseException as exc:  # xllamacpp swallows it otherwise; the loop may be gone
                choice.error = choice.error or UpstreamError(f"the stream callback failed: {exc!r}")
                return True

        try:
            if not choice.cancel.is_set():
                self._server.handle_completions(body, callback)
        except ValueError as exc:
            choice.error = UpstreamError(f"llama.cpp rejected the request: {exc}", status=400)
        except Exception as exc:  # a failing engine is the upstream's error, reported to the client
            choice.error = UpstreamError(f"llama.cpp failed: {exc}", status=502)
        try:
            put(_END)
        except RuntimeError:  # the loop closed meanwhile: nobody is listening
            pass


class Phase(enum.Enum):
    """Where one choice's stream is."""

    FREE = "free"  # a lazy grammar waits for its trigger: trigger prefixes are held back
    CONSTRAINED = "constrained"  # no lazy grammar, or its trigger appeared (the engine constrains)
    RECOVERING = "recovering"  # the engine rejected the trigger's token: a continuation follows
    DONE = "done"  # the last piece (with the finish reason) was sent


@dataclass(eq=False)
class _Choice:
    """One choice's stream: llama.cpp chunks in, pieces out, stop strings and trigger prefixes
    held back while undecided."""

    index: int
    request: CompletionRequest
    cancel: threading.Event = field(default_factory=threading.Event)
    error: UpstreamError | None = None
    stop_reason: str | None = None  # the stop string that ended this choice
    completion_tokens: int | None = None
    held: list[CompletionPiece] = field(default_factory=list)  # text that may start a stop string or a trigger
    empty: list[CompletionPiece] = field(default_factory=list)  # ids with no text yet (maybe EOS)
    prompt_tokens: int | None = None
    body: dict[str, Any] = field(default_factory=dict)
    released: list[str] = field(default_factory=list)  # the text passed on so far
    tokens: int = 0  # tokens generated so far
    phase: Phase = Phase.CONSTRAINED

    def __post_init__(self) -> None:
        if self.request.constraint is not None and self.request.constraint.lazy:
            self.phase = Phase.FREE

    @property
    def triggers(self) -> tuple[str, ...]:
        constraint = self.request.constraint
        return constraint.triggers if constraint is not None and self.phase is Phase.FREE else ()

    def continuation(self) -> dict[str, Any]:
        """The request that goes on after llama.cpp rejected the token that completed a trigger
        (sampled before the grammar applied, it carried text the grammar forbids, e.g. the
        ``,`` of ``<tool_call>,``): the prompt plus the text passed on so far (the held trigger
        prefix is dropped), the grammar applied from its first token, the token budget what is
        left of it."""
        self.phase = Phase.CONSTRAINED
        self.held, self.empty = [], []
        body = {k: v for k, v in self.body.items() if k not in ("grammar_lazy", "grammar_triggers", "preserved_tokens")}
        body["prompt"] = self.request.prompt + "".join(self.released)
        if "n_predict" in body:
            body["n_predict"] = max(1, body["n_predict"] - self.tokens)
        self.body = body
        return body

    def chunk(self, chunk: Mapping[str, Any]) -> list[CompletionPiece]:
        if self.phase is Phase.DONE:
            return []
        if "error" in chunk:
            error = chunk["error"] if isinstance(chunk["error"], Mapping) else {"message": str(chunk["error"])}
            if self.phase is Phase.FREE and "grammar" in str(error.get("message", "")):
                self.phase = Phase.RECOVERING  # see continuation()
                return []
            code = error.get("code")
            status = code if isinstance(code, int) and 400 <= code < 500 else 502
            self.error = UpstreamError(f"llama.cpp: {error.get('message', error)}", status=status)
            self.cancel.set()
            return []
        choices = chunk.get("choices") or []
        usage = chunk.get("usage")
        if isinstance(usage, Mapping):
            if isinstance(usage.get("prompt_tokens"), int):
                self.prompt_tokens = usage["prompt_tokens"]
            if isinstance(usage.get("completion_tokens"), int):
                self.completion_tokens = usage["completion_tokens"]
        if not choices:
            return []  # a prompt_progress chunk
        data = choices[0]
        text = data.get("text") or ""
        entries = ((data.get("logprobs") or {}).get("content")) or []
        ids = tuple(int(e["id"]) for e in entries if "id" in e)
        self.tokens += len(ids)
        logprobs = self._logprobs(entries)
        finish = data.get("finish_reason")
        out: list[CompletionPiece] = []
        if finish is not None:
            if finish == "stop" and self.empty:
                self.empty.pop()  # the end-of-generation token: no text, not part of the output
            out += self._release(self.empty)
            self.empty = []
            out += self._text(CompletionPiece(self.index, text, ids or None, logprobs))
            out += self._end(finish)
            return out
        piece = CompletionPiece(self.index, text, ids or None, logprobs)
        if not text:
            if ids:
                self.empty.append(piece)
            return out
        out += self._release(self.empty)
        self.empty = []
        out += self._text(piece)
        return out

    def finish(self) -> list[CompletionPiece]:
        if self.phase is Phase.DONE:
            return []
        # the stream ended without a finish reason (cancelled): what was held is released
        out = self._release(self.empty) + self._flush()
        return [*out, *self._end("stop")]

    def _logprobs(self, entries: list[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...] | None:
        k = self.request.logprobs
        # the /v1/completions handler's ``logprobs.content[]`` entries have the fields of the
        # native /completion's ``completion_probabilities``: the llamacpp kind's reshaping serves both
        return chat_entries(entries, k) if k is not None and entries else None

    def _release(self, pieces: list[CompletionPiece]) -> list[CompletionPiece]:
        out: list[CompletionPiece] = []
        for piece in pieces:
            out += self._text(piece)
        return out

    def _text(self, piece: CompletionPiece) -> list[CompletionPiece]:
        """Pass text on, holding back what could still become a stop string or, until a lazy
        grammar's trigger appeared, a trigger (see ``continuation``)."""
        stops, triggers = self.request.stop, self.triggers
        if not stops and not triggers:
            return self._pass([piece] if piece.text or piece.token_ids else [])
        self.held.append(piece)
        joined = "".join(p.text for p in self.held)
        if any(s and s in joined for s in stops):
            at, stop = min((joined.find(s), s) for s in stops if s and s in joined)
            out = self._take(at)
            self.held = []
            self.stop_reason = stop
            self.cancel.set()
            return [*out, *self._end("stop")]
        if any(t in joined for t in triggers):
            self.phase, triggers = Phase.CONSTRAINED, ()
        keep = max((k for s in (*stops, *triggers) for k in range(1, len(s)) if joined.endswith(s[:k])), default=0)
        return self._take(len(joined) - keep)

    def _pass(self, pieces: list[CompletionPiece]) -> list[CompletionPiece]:
        self.released.extend(p.text for p in pieces)
        return pieces

    def _take(self, size: int) -> list[CompletionPiece]:
        """The first ``size`` characters of the held text as pieces; the rest stays held. A
        piece cut in two keeps its ids (and logprobs) on the second part."""
        out: list[CompletionPiece] = []
        while self.held and size > 0:
            piece = self.held[0]
            if len(piece.text) <= size:
                out.append(self.held.pop(0))
                size -= len(piece.text)
            else:  # the ids go with the end of their text: with text that is dropped, they are too
                out.append(CompletionPiece(self.index, piece.text[:size]))
                self.held[0] = CompletionPiece(self.index, piece.text[size:], piece.token_ids, piece.logprobs)
                size = 0
        return self._pass(out)

    def _flush(self) -> list[CompletionPiece]:
        out, self.held = self.held, []
        return self._pass(out)

    def _end(self, finish: str) -> list[CompletionPiece]:
        if self.phase is Phase.DONE:
            return []
        self.phase = Phase.DONE
        out = [] if self.stop_reason is not None else self._flush()
        last = CompletionPiece(
            self.index,
            finish_reason=finish,
            prompt_tokens=self.prompt_tokens,
            stop_reason=self.stop_reason,
            completion_tokens=self.completion_tokens if self.completion_tokens is not None else self.tokens,
        )
        return [*out, last]
