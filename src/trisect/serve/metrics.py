"""``GET /metrics``: Prometheus text format (``prometheus_client``), one registry per app.

vLLM's names where vLLM has the same quantity (``vllm/v1/metrics/loggers.py``, 0.33), with its
``model_name`` label and its histogram buckets, so that dashboards built for vLLM read trisect:

* ``vllm:request_success_total{finished_reason}`` — requests answered, by the engine's finish
  reason (``stop``, ``length``); ``vllm:prompt_tokens_total``, ``vllm:generation_tokens_total``;
* ``vllm:time_to_first_token_seconds``, ``vllm:inter_token_latency_seconds`` (per generated
  token after the first, as the engine delivers them to trisect),
  ``vllm:e2e_request_latency_seconds`` (from the request's arrival to its last piece).

trisect's own:

* ``trisect:requests_total{api}`` — requests prepared per API (``chat``, ``responses``,
  ``messages``, ``completions``);
* ``trisect:parse_outcomes_total{kind}`` — ``calls`` (complete tool calls returned),
  ``malformed_calls`` (a call that ended malformed, its text given back as content),
  ``unfinished_calls`` (the output ended inside a call), ``marker_recoveries`` (the embedded
  model's lazy-grammar recoveries: llama.cpp rejected the token that completed a call marker,
  and the choice went on under the grammar);
* ``trisect:upstream_errors_total{kind}`` — ``UpstreamError.kind``: ``unreachable``,
  ``timeout``, ``status``, ``stream``, ``protocol``, ``rejected``;
* ``trisect:request_added_seconds`` — the time trisect adds to a request: preparing it
  (validation, template, grammar) plus handling its pieces (parsing, serialising, writing);
  ``trisect:chunk_added_seconds`` — the same per engine piece of output. Waiting on the
  engine is not counted.

Cost: a few counter increments and two clock reads per engine piece.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from ..engine.events import Event
from .outcomes import outcomes
from .upstream.base import CompletionPiece, UpstreamError, closing

# vLLM 0.33's buckets (vllm/v1/metrics/buckets.py), so histograms compare across the two
# fmt: off
REQUEST_LATENCY_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
                           120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
TIME_TO_FIRST_TOKEN_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
                               7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
INTER_TOKEN_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
                               10.0, 20.0, 40.0, 80.0)
# fmt: on
ADDED_BUCKETS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
OUTCOMES = ("calls", "malformed_calls", "unfinished_calls", "marker_recoveries")
ERROR_KINDS = ("unreachable", "timeout", "status", "stream", "protocol", "rejected")


class Metrics:
    def __init__(self, model: str, upstream: Any = None) -> None:
        self.model = model
        self.registry = registry = CollectorRegistry()
        label = ["model_name"]
        self.success = Counter(
            "vllm:request_success",
            "Count of successfully processed requests.",
            [*label, "finished_reason"],
            registry=registry,
        )
        self.prompt_tokens = Counter(
            "vllm:prompt_tokens", "Number of prefill tokens processed.", label, registry=registry
        )
        self.generation_tokens = Counter(
            "vllm:generation_tokens", "Number of generation tokens processed.", label, registry=registry
        )
        self.ttft = Histogram(
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            label,
            buckets=TIME_TO_FIRST_TOKEN_BUCKETS,
            registry=registry,
        )
        self.itl = Histogram(
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            label,
            buckets=INTER_TOKEN_LATENCY_BUCKETS,
            registry=registry,
        )
        self.e2e = Histogram(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            label,
            buckets=REQUEST_LATENCY_BUCKETS,
            registry=registry,
        )
        self.requests = Counter("trisect:requests", "Requests prepared, per API.", [*label, "api"], registry=registry)
        self.outcomes = Counter(
            "trisect:parse_outcomes",
            "Parse outcomes: calls, malformed calls, unfinished calls, marker recoveries.",
            [*label, "kind"],
            registry=registry,
        )
        self.upstream_errors = Counter(
            "trisect:upstream_errors", "Upstream failures, by kind.", [*label, "kind"], registry=registry
        )
        self.added = Histogram(
            "trisect:request_added_seconds",
            "Time trisect adds to a request (preparing it, handling its pieces).",
            label,
            buckets=ADDED_BUCKETS,
            registry=registry,
        )
        self.chunk_added = Histogram(
            "trisect:chunk_added_seconds",
            "Time trisect adds per engine piece.",
            label,
            buckets=ADDED_BUCKETS,
            registry=registry,
        )
        for kind in OUTCOMES:
            self.outcomes.labels(model, kind)
        for kind in ERROR_KINDS:
            self.upstream_errors.labels(model, kind)
        self.upstream = upstream
        self._recoveries = 0  # the upstream's count, as last mirrored into the counter

    def text(self) -> bytes:
        recovered = int(getattr(self.upstream, "recoveries", 0))
        if recovered > self._recoveries:
            self.outcomes.labels(self.model, "marker_recoveries").inc(recovered - self._recoveries)
            self._recoveries = recovered
        return generate_latest(self.registry)

    def tally(self, events: Sequence[Event]) -> None:
        """Count the parse outcomes in a batch of the engine's events (``outcomes``)."""
        for kind in outcomes(events):
            self.outcomes.labels(self.model, kind).inc()

    async def metered(
        self, source: AsyncIterator[CompletionPiece], *, api: str, arrived: float, prepared: float
    ) -> AsyncIterator[CompletionPiece]:
        """``source`` passed through, measured (see the module docstring)."""
        model = self.model
        self.requests.labels(model, api).inc()
        added = prepared - arrived
        first: float | None = None
        last = time.perf_counter()
        ids: dict[int, int] = {}  # choice -> token ids delivered
        try:
            async with closing(source) as pieces:
                async for piece in pieces:
                    now = time.perf_counter()
                    tokens = len(piece.token_ids or ()) or (1 if piece.text else 0)
                    ids[piece.index] = ids.get(piece.index, 0) + len(piece.token_ids or ())
                    if tokens:
                        if first is None:
                            first = now
                            self.ttft.labels(model).observe(now - arrived)
                        else:
                            per = (now - last) / tokens
                            for _ in range(tokens):
                                self.itl.labels(model).observe(per)
                        last = now
                    if piece.prompt_tokens is not None:
                        self.prompt_tokens.labels(model).inc(piece.prompt_tokens)
                    if piece.finish_reason is not None:
                        self.success.labels(model, piece.finish_reason).inc()
                        done = piece.completion_tokens
                        self.generation_tokens.labels(model).inc(ids.get(piece.index, 0) if done is None else done)
                    yield piece
                    spent = time.perf_counter() - now
                    added += spent
                    if tokens:  # a piece of output (the end-of-choice piece counts in the request's)
                        self.chunk_added.labels(model).observe(spent)
        except UpstreamError as exc:
            self.upstream_errors.labels(model, exc.kind).inc()
            raise
        finally:
            self.added.labels(model).observe(added)
            self.e2e.labels(model).observe(time.perf_counter() - arrived)
