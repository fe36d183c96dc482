"""``Service``: one request from body to answer, without HTTP (the app routes to it).

``chat(body)`` validates (``plan``), renders the template, checks the parser options, chooses
the constraint (``constraints``) and starts nothing yet: it returns the ``Answer`` and the
piece stream, which the engine request begins on first iteration. Everything that can be
rejected is rejected before that, so a bad request never reaches the engine.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from .chat_completions import Answer
from .constraints import decoding
from .errors import APIError
from .generate import pieces
from .model import ServedModel
from .plan import Plan, chat_plan
from .upstream.base import CompletionPiece, CompletionRequest, Upstream


@dataclass
class Prepared:
    plan: Plan
    prompt: str
    answer: Answer
    source: AsyncIterator[CompletionPiece]


class Service:
    def __init__(
        self,
        served: ServedModel,
        upstream: Upstream,
        *,
        strict_tool_calling: bool = False,
        reasoning_field: str = "reasoning",
    ) -> None:
        self.served = served
        self.upstream = upstream
        self.kind = upstream.kind
        self.strict_tool_calling = strict_tool_calling
        self.reasoning_field = reasoning_field

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

    def chat(self, body: Mapping[str, Any]) -> Prepared:
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
        self.served.parser.request(**options)  # RequestError / ToolSchemaError: a 400 now
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
        answer = Answer(
            self.served.parser,
            model=plan.model,
            n=plan.n,
            options=options,
            include_usage=plan.include_usage,
            continuous_usage=plan.continuous_usage,
            return_token_ids=plan.return_token_ids,
            reasoning_field=self.reasoning_field,
        )
        source = pieces(self.upstream, request, after_reasoning=chosen.after_reasoning)
        return Prepared(plan, prompt, answer, source)
