"""``Service``: one request from body to answer, without HTTP (the app routes to it).

``chat(body)`` validates (``plan``), renders the template, checks the parser options, chooses
the constraint (``constraints``) and starts nothing yet: it returns the ``Answer`` and the
piece stream, which the engine request begins on first iteration. Everything that can be
rejected is rejected before that, so a bad request never reaches the engine. ``complete(body)``
does the same for a raw prompt (``/v1/completions``: no template, no parser).

Call ids: random, or with ``seed`` drawn from one ``random.Random(seed)`` in request order, so
two runs of the same requests get the same ids (``call_`` + 24 hex; ``toolu_`` for the Messages
API). The piece stream is measured by ``metrics`` when the server has them.
"""

from __future__ import annotations

import random
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .chat_completions import Answer
from .completions import RawAnswer, raw_plan
from .constraints import Decoding, decoding
from .errors import APIError
from .generate import pieces
from .model import ServedModel

if TYPE_CHECKING:
    from .metrics import Metrics
from .plan import Plan, chat_plan
from .upstream.base import CompletionPiece, CompletionRequest, Upstream


@dataclass
class Prepared:
    plan: Plan
    prompt: str
    answer: Answer
    source: AsyncIterator[CompletionPiece]


@dataclass
class RawPrepared:
    stream: bool
    answer: RawAnswer
    source: AsyncIterator[CompletionPiece]


class Service:
    def __init__(
        self,
        served: ServedModel,
        upstream: Upstream,
        *,
        strict_tool_calling: bool = False,
        reasoning_field: str = "reasoning",
        seed: int | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.served = served
        self.upstream = upstream
        self.kind = upstream.kind
        self.strict_tool_calling = strict_tool_calling
        self.reasoning_field = reasoning_field
        self.seed = seed
        self._ids = random.Random(seed)
        self.metrics = metrics  # ``metrics.Metrics``, or None (no /metrics)

    def call_id(self, prefix: str = "call_") -> str:
        return prefix + f"{self._ids.getrandbits(96):024x}"

    def tool_use_id(self) -> str:
        return self.call_id("toolu_")

    def id_factory(self, prefix: str = "call_") -> Callable[[int], str] | None:
        """The parser's ``id_factory`` for one request: seeded ids, or None (the parser's own)."""
        if self.seed is None:
            return None
        return lambda index: self.call_id(prefix)

    def _metered(
        self, source: AsyncIterator[CompletionPiece], api: str, arrived: float | None
    ) -> AsyncIterator[CompletionPiece]:
        if self.metrics is None:
            return source
        now = time.perf_counter()
        return self.metrics.metered(source, api=api, arrived=now if arrived is None else arrived, prepared=now)

    def check_model(self, name: str | None) -> str:
        if not name:
            return self.served.name
        if name not in self.served.names:
            raise APIError(f"The model `{name}` does not exist.", status=404, param="model", code="model_not_found")
        return name

    def render(self, plan: Plan) -> str:
        kwargs = dict(plan.template_kwargs)
        return self.served.template.render(
            plan.messages,
            tools=kwargs.pop("tools", None),
            documents=kwargs.pop("documents", None),
            add_generation_prompt=kwargs.pop("add_generation_prompt", True),
            continue_final_message=kwargs.pop("continue_final_message", False),
            **kwargs,
        )

    def engine_request(self, plan: Plan, prompt: str) -> tuple[CompletionRequest, Decoding]:
        """What the engine is asked for a rendered ``prompt``: sampling, the constraint, phases
        (the scale-out render step asks the same, for the worker to run)."""
        chosen = decoding(self.served, plan, prompt, kind=self.kind, strict_tool_calling=self.strict_tool_calling)
        request = CompletionRequest(
            prompt=self.served.prompt_for(prompt, self.kind),
            max_tokens=plan.max_tokens,
            n=plan.n,
            stop=plan.stop,
            seed=plan.seed,
            temperature=plan.temperature,
            top_p=plan.top_p,
            sampling=plan.sampling,
            logprobs=plan.logprobs,
            constraint=chosen.constraint,
            keep_tokens=self.served.keep_tokens if self.kind in ("llamacpp", "embedded") else (),
        )
        return request, chosen

    def chat(
        self, body: Mapping[str, Any], *, api: str = "chat", arrived: float | None = None, id_prefix: str = "call_"
    ) -> Prepared:
        plan = chat_plan(
            body,
            kind=self.kind,
            content_format=self.served.content_format,
            developer_role=self.served.developer_role,
            default_model=self.served.name,
        )
        plan.model = self.check_model(body.get("model") if isinstance(body, Mapping) else None)
        prompt = self.render(plan)
        options = {**plan.parser_options, "prompt_text": prompt}
        ids = self.id_factory(id_prefix)
        if ids is not None:
            options["id_factory"] = ids
        self.served.parser.request(**options)  # RequestError / ToolSchemaError: a 400 now
        request, chosen = self.engine_request(plan, prompt)
        answer = Answer(
            self.served.parser,
            model=plan.model,
            n=plan.n,
            options=options,
            include_usage=plan.include_usage,
            continuous_usage=plan.continuous_usage,
            return_token_ids=plan.return_token_ids,
            reasoning_field=self.reasoning_field,
            observe=self.metrics.tally if self.metrics is not None else None,
        )
        source = pieces(self.upstream, request, after_reasoning=chosen.after_reasoning)
        return Prepared(plan, prompt, answer, self._metered(source, api, arrived))

    def complete(self, body: Any, *, arrived: float | None = None) -> RawPrepared:
        """A raw completion: the prompt as given, the text as the engine writes it."""
        model, prompt, fields = raw_plan(body, self.kind)
        name = self.check_model(model)
        request = CompletionRequest(
            prompt=self.served.prompt_for(prompt, self.kind),
            max_tokens=fields["max_tokens"],
            n=fields["n"],
            stop=fields["stop"],
            seed=fields["seed"],
            temperature=fields["temperature"],
            top_p=fields["top_p"],
            sampling=fields["sampling"],
            logprobs=fields["logprobs"],
            keep_tokens=self.served.keep_tokens if self.kind in ("llamacpp", "embedded") else (),
        )
        answer = RawAnswer(
            name,
            fields["n"],
            include_usage=fields["include_usage"],
            return_token_ids=fields["return_token_ids"],
            logprobs=fields["logprobs"] is not None,
        )
        source = self._metered(pieces(self.upstream, request), "completions", arrived)
        return RawPrepared(fields["stream"], answer, source)
