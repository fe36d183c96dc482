"""Render: a chat (or completions) request -> vLLM 0.33's ``GenerateRequest``: the prompt's token
ids and the sampling parameters a worker's ``/inference/v1/generate`` runs.

The chat template, the request's checks and the constraint are ``trisect serve``'s own (``plan``,
``Service.render``, ``constraints``: as for a ``vllm`` upstream), so a request renders here
exactly as ``trisect serve --upstream-kind vllm`` would send it; the prompt is then tokenized as
the template's text (special tokens recognised, none added: vLLM's chat default).

Fields (``GenerateRequest``, ``token_in_token_out/protocol.py``): ``request_id``
(``chatcmpl-…`` / ``cmpl-…``), ``token_ids``, ``sampling_params`` (``SamplingParams`` names),
``model``, ``reasoning_ended`` (``true`` when a constraint is set: trisect's grammar admits the
reasoning block itself, so it applies from the first token and the worker needs no reasoning
parser; else ``null``), ``stream`` / ``stream_options``, ``return_token_ids``, ``cache_salt``,
``priority``, ``output_mode: "tokens"`` and ``parse_context`` (what the derender step reads, as
vLLM's render writes it); the rest as vLLM leaves them (``null``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from ..plan import chat_plan
from ..service import Service
from ..upstream.base import CompletionRequest
from ..upstream.sampling import SAMPLING
from ..upstream.vllm_generate import sampling_params
from .shapes import ScaleOutError


def _generate_request(
    request_id: str, token_ids: list[int], params: dict[str, Any], body: Mapping[str, Any]
) -> dict[str, Any]:
    stream = bool(body.get("stream"))
    return {
        "request_id": request_id,
        "token_ids": token_ids,
        "token_offsets": None,
        "features": None,
        "content_parts": None,
        "sampling_params": params,
        "model": body.get("model"),
        "reasoning_ended": None,
        "reasoning_parser_kwargs": None,
        "return_token_ids": body.get("return_token_ids"),
        "output_mode": "tokens",
        "parse_context": None,
        "stream": stream,
        "stream_options": body.get("stream_options") if stream else None,
        "cache_salt": body.get("cache_salt"),
        "priority": body.get("priority") or 0,
        "kv_transfer_params": body.get("kv_transfer_params"),
        "ec_transfer_params": None,
    }


class Renderer:
    """The render endpoints over one ``Service`` (its template, parser and kind ``vllm``)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        vocab = service.served.parser.vocab
        if vocab is None:
            raise ValueError("the render tier needs the model's tokenizer (--tokenizer)")
        self.vocab = vocab

    def chat(self, body: Any) -> dict[str, Any]:
        service = self.service
        served = service.served
        if isinstance(body, Mapping) and body.get("use_beam_search"):
            raise ScaleOutError("Beam search is not supported by the render endpoint")
        plan = chat_plan(
            body,
            kind="vllm",
            content_format=served.content_format,
            developer_role=served.developer_role,
            default_model=served.name,
        )
        plan.model = service.check_model(body.get("model"))
        prompt = service.render(plan)
        served.parser.request(**plan.parser_options, prompt_text=prompt)
        request, chosen = service.engine_request(plan, prompt)
        token_ids = self.vocab.encode_text(request.prompt)
        if not token_ids:
            raise ScaleOutError("No token_ids rendered")
        params = sampling_params(request, model=None)
        if plan.n == 1:
            params.pop("n", None)
        rid = body.get("request_id")
        out = _generate_request(f"chatcmpl-{rid or uuid.uuid4().hex}", token_ids, params, body)
        options = plan.parser_options
        if chosen.constraint is not None:
            out["reasoning_ended"] = True
        out["parse_context"] = {
            "tools": options.get("tools"),
            "tool_choice": options.get("tool_choice", "auto" if options.get("tools") else "none"),
            "parallel_tool_calls": options.get("parallel_tool_calls", True),
            "include_reasoning": options.get("include_reasoning", True),
            "chat_template_kwargs": {
                k: v for k, v in options.get("chat_template_kwargs", {}).items() if k not in ("add_generation_prompt",)
            },
            "history_tool_call_cnt": options.get("history_tool_calls", 0),
        }
        return out

    def completion(self, body: Any) -> list[dict[str, Any]]:
        if not isinstance(body, Mapping):
            raise ScaleOutError("the request body must be a JSON object")
        self.service.check_model(body.get("model"))
        prompts = body.get("prompt")
        if isinstance(prompts, str) or (isinstance(prompts, list) and prompts and type(prompts[0]) is int):
            prompts = [prompts]
        if not isinstance(prompts, list) or not prompts:
            raise ScaleOutError("prompt must be a string, a list of strings or token ids", param="prompt")
        sampling = {name: body[name] for name in SAMPLING if body.get(name) is not None}
        stop = body.get("stop")
        logprobs = body.get("logprobs")
        if logprobs is not None and (isinstance(logprobs, bool) or not isinstance(logprobs, int)):
            raise ScaleOutError("logprobs must be an integer", param="logprobs")
        base = f"cmpl-{body.get('request_id') or uuid.uuid4().hex}"
        out = []
        for i, prompt in enumerate(prompts):
            if isinstance(prompt, str):
                token_ids = self.vocab.encode_text(prompt)
            elif isinstance(prompt, list) and all(type(t) is int and t >= 0 for t in prompt):
                token_ids = list(prompt)
            else:
                raise ScaleOutError(f"prompt[{i}] must be a string or a list of token ids", param="prompt")
            if not token_ids:
                raise ScaleOutError("No token_ids rendered", param="prompt")
            request = CompletionRequest(
                prompt="",
                max_tokens=body.get("max_tokens", 16),
                n=body.get("n") or 1,
                stop=(stop,) if isinstance(stop, str) else tuple(stop or ()),
                seed=body.get("seed"),
                temperature=body.get("temperature"),
                top_p=body.get("top_p"),
                sampling=sampling,
                logprobs=logprobs,
            )
            params = sampling_params(request, model=None)
            if request.n == 1:
                params.pop("n", None)
            rid = base if len(prompts) == 1 else f"{base}-{i}"
            out.append(_generate_request(rid, token_ids, params, body))
        return out
