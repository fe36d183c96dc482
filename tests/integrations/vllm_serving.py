"""vLLM 0.33's own serving code for one chat request, with no model: what a client receives.

The calls are the ones ``vllm serve`` makes, in its order (file:line refs are vllm 0.33.0):

1. ``ParserManager.get_parser`` (``parser/parser_manager.py:98``), as ``OnlineRenderer`` and
   ``OpenAIServingChat`` call it at start-up, with the plugin's names;
2. ``OnlineRenderer.preprocess_chat`` (``renderers/online_renderer.py:766``), the real method
   over a stub ``BaseRenderer`` that returns fixed prompt ids instead of applying a chat
   template; its tail builds the renderer's own parser instance and calls
   ``set_prompt_token_ids`` + ``adjust_request``;
3. ``request.to_sampling_params`` + ``EngineCoreRequest`` + vLLM's ``IncrementalDetokenizer``,
   fed like ``OutputProcessor``: ``update(ids, stop_terminated)`` then
   ``get_next_output_text(finished, delta=True)``;
4. streaming: ``ChatStreamProcessor.step`` per engine chunk (``stream_processor.py:52``), the
   deltas folded the way a client folds them; non-streaming: ``set_prompt_token_ids`` +
   ``parse`` + ``assemble_chat_message_fields`` + ``resolve_finish_reason``
   (``serving.py:985-1065``).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import hf_tokenizers

MODEL = "trisect-test/model"


@functools.cache
def tokenizer(name: str) -> Any:
    from vllm.tokenizers.hf import CachedHfTokenizer

    return CachedHfTokenizer.from_pretrained(str(hf_tokenizers.hf_dir(name)))


def model_config() -> Any:
    return SimpleNamespace(
        model=MODEL,
        hf_config=SimpleNamespace(model_type="trisect-test"),
        hf_text_config=SimpleNamespace(model_type="trisect-test"),
        multimodal_config=None,
        enable_prompt_embeds=False,
        max_model_len=1 << 20,
        is_encoder_decoder=False,
    )


def derenderer(tok: Any, reasoning: str | None, tools: str | None, *, eos_token_id: int | None = None) -> Any:
    """vLLM's ``OnlineDerenderer`` (the scale-out tier's derender) over ``tok`` with these parser
    names, its renderer and model config stubbed as vLLM's own derender tests stub them.
    ``eos_token_id``: the model's EOS as vLLM's renderer reports it (the test tokenizers are
    built without one; a real model's ``tokenizer_config.json`` names it, and vLLM's derender
    then leaves the stop token out of the text, as its engine's detokenizer does)."""
    from concurrent.futures import ThreadPoolExecutor
    from unittest.mock import MagicMock

    from vllm.renderers.online_derenderer import OnlineDerenderer

    renderer = MagicMock()
    renderer.get_tokenizer.return_value = tok
    renderer.get_eos_token_id.return_value = tok.eos_token_id if eos_token_id is None else eos_token_id
    renderer._executor = ThreadPoolExecutor(max_workers=1)
    config = MagicMock()
    config.hf_config.model_type = "trisect-test"
    config.model = MODEL
    config.try_get_generation_config.return_value = {}
    return OnlineDerenderer(
        model_config=config,
        renderer=renderer,
        request_logger=None,
        chat_template=None,
        chat_template_content_format="string",
        enable_auto_tools=True,
        tool_parser=tools,
        reasoning_parser=reasoning,
    )


def parser_class(reasoning: str | None, tools: str | None, tok: Any, *, unified: bool = True) -> Any:
    """``ParserManager.get_parser`` for the plugin names of these trisect formats (``unified=False``:
    vLLM's own two-phase ``DelegatingParser`` over trisect's split parsers)."""
    from vllm.parser import ParserManager

    saved = os.environ.get("TRISECT_VLLM_UNIFIED")
    os.environ["TRISECT_VLLM_UNIFIED"] = "1" if unified else "0"
    try:
        return ParserManager.get_parser(
            tool_parser_name=tools,
            reasoning_parser_name=reasoning,
            enable_auto_tools=True,
            model_name=MODEL,
            tokenizer=tok,
        )
    finally:
        if saved is None:
            os.environ.pop("TRISECT_VLLM_UNIFIED", None)
        else:
            os.environ["TRISECT_VLLM_UNIFIED"] = saved


class _StubRenderer:
    """Stands in for ``BaseRenderer``: no chat template, the given prompt ids."""

    def __init__(self, tok: Any) -> None:
        self.tokenizer = tok
        self.prompt_ids: list[int] = []

    def get_tokenizer(self) -> Any:
        return self.tokenizer

    async def render_chat_async(self, conversations: Any, chat_params: Any, tok_params: Any, **kw: Any) -> Any:
        from vllm.inputs.engine import tokens_input

        return [list(conversations[0])], [tokens_input(list(self.prompt_ids))]


@dataclass
class Server:
    """One ``vllm serve`` configuration: a tokenizer and the parser names."""

    tok: Any
    reasoning: str | None
    tools: str | None
    unified: bool = True
    parser_cls: Any = None
    _renderer: Any = None
    _stub: Any = None

    def __post_init__(self) -> None:
        from vllm.renderers.online_renderer import OnlineRenderer

        self.parser_cls = parser_class(self.reasoning, self.tools, self.tok, unified=self.unified)
        self._stub = _StubRenderer(self.tok)
        saved = os.environ.get("TRISECT_VLLM_UNIFIED")
        os.environ["TRISECT_VLLM_UNIFIED"] = "1" if self.unified else "0"
        try:
            self._renderer = OnlineRenderer(
                model_config(),
                self._stub,
                request_logger=None,
                chat_template=None,
                chat_template_content_format="auto",
                enable_auto_tools=True,
                tool_parser=self.tools,
                reasoning_parser=self.reasoning,
            )
        finally:
            if saved is None:
                os.environ.pop("TRISECT_VLLM_UNIFIED", None)
            else:
                os.environ["TRISECT_VLLM_UNIFIED"] = saved

    def request(self, *, stream: bool, tools: Any = None, **body: Any) -> Any:
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

        body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": stream, **body}
        if tools:
            body["tools"] = tools
        return ChatCompletionRequest(**body)

    def render(self, request: Any, prompt_ids: Sequence[int]) -> None:
        """The renderer's tail: its parser instance, ``set_prompt_token_ids``, ``adjust_request``."""
        self._stub.prompt_ids = list(prompt_ids)
        asyncio.run(
            self._renderer.preprocess_chat(
                request,
                request.messages,
                default_template=None,
                default_template_content_format="auto",
                default_template_kwargs={},
                tool_dicts=[t.model_dump() for t in request.tools] if request.tools else None,
                parser=self._renderer.parser,
            )
        )

    def serve(
        self,
        request: Any,
        output_ids: Sequence[int],
        *,
        prompt_ids: Sequence[int] = (),
        finish: str = "stop",
        chunk: int = 1,
        stop_terminated: bool = False,
    ) -> Reply:
        """One choice through serving: streamed per ``chunk`` ids if ``request.stream``."""
        from vllm.entrypoints.openai.chat_completion.message_assembly import assemble_chat_message_fields
        from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
        from vllm.entrypoints.serve.utils.tool_calls_utils import resolve_finish_reason
        from vllm.v1.engine import EngineCoreRequest
        from vllm.v1.engine.detokenizer import IncrementalDetokenizer

        prompt_ids = list(prompt_ids)
        ctk = request.build_chat_params(None, "auto").chat_template_kwargs
        serving_parser = self.parser_cls(self.tok, request.tools, chat_template_kwargs=ctk, model_config=None)
        self.render(request, prompt_ids)
        reply = Reply(reasoning_ended_at_start=request.resolve_reasoning_ended(serving_parser, prompt_ids))
        reply.request = request
        params = request.to_sampling_params(1 << 20, {})
        engine_request = EngineCoreRequest(
            request_id="trisect-test",
            prompt_token_ids=prompt_ids,
            mm_features=None,
            sampling_params=params,
            pooling_params=None,
            arrival_time=0.0,
            lora_request=None,
            cache_salt=None,
            data_parallel_rank=None,
        )
        detok = IncrementalDetokenizer.from_new_request(self.tok, engine_request)
        ids = list(output_ids)
        if not request.stream:
            detok.update(ids, stop_terminated)
            text = detok.get_next_output_text(True, False)
            reply.text = text
            serving_parser.set_prompt_token_ids(prompt_ids)
            reasoning, content, calls = serving_parser.parse(
                text, request, enable_auto_tools=True, model_output_token_ids=ids
            )
            fields = assemble_chat_message_fields(
                request, reasoning, content, calls, enable_auto_tools=True, parser_cls=self.parser_cls
            )
            reply.reasoning, reply.content = fields.reasoning or None, fields.content or None
            reply.tool_calls = [(c.id, c.function.name, c.function.arguments) for c in fields.tool_calls]
            reply.finish_reason = resolve_finish_reason(finish, request, bool(fields.tool_calls))
            reply.reasoning_tokens = serving_parser.count_reasoning_tokens(ids)
            return reply
        streaming_parser = self.parser_cls(self.tok, request.tools, chat_template_kwargs=ctk, model_config=None)
        processor = ChatStreamProcessor(request, streaming_parser, enable_auto_tools=True, parser_cls=self.parser_cls)
        groups = [ids[i : i + chunk] for i in range(0, len(ids), chunk)] or [[]]
        reasoning: list[str] = []
        content: list[str] = []
        calls: dict[int, list[Any]] = {}
        texts: list[str] = []
        for n, group in enumerate(groups):
            last = n == len(groups) - 1
            detok.update(group, last and stop_terminated)
            delta_text = detok.get_next_output_text(last, True)
            texts.append(delta_text)
            step = processor.step(delta_text, list(group), finish if last else None, prompt_ids)
            reply.finish_reason = step.finish_reason
            delta = step.delta
            if delta is None:
                continue
            reply.deltas.append(delta)
            reasoning.append(delta.reasoning or "")
            content.append(delta.content or "")
            for piece in delta.tool_calls or ():
                slot = calls.setdefault(piece.index, [None, None, ""])
                if piece.id is not None:
                    assert slot[0] is None, f"call {piece.index}: id sent twice"
                    slot[0] = piece.id
                if piece.function is not None:
                    if piece.function.name:
                        assert slot[1] is None, f"call {piece.index}: name sent twice"
                        slot[1] = piece.function.name
                    slot[2] += piece.function.arguments or ""
        reply.text = "".join(texts)
        reply.reasoning = "".join(reasoning) or None
        reply.content = "".join(content) or None
        reply.tool_calls = [tuple(calls[i]) for i in sorted(calls)]
        reply.reasoning_tokens = streaming_parser.count_reasoning_tokens(tuple(ids))
        return reply


@dataclass
class Reply:
    """What reaches the client (plus the text the parser saw)."""

    reasoning_ended_at_start: bool | None = None
    reasoning: str | None = None
    content: str | None = None
    tool_calls: list[Any] = field(default_factory=list)
    finish_reason: str | None = None
    reasoning_tokens: int = 0
    text: str = ""
    deltas: list[Any] = field(default_factory=list)
    request: Any = None

    def view(self, ids: bool = False) -> dict[str, Any]:
        calls = [(c[0] if ids else None, c[1], c[2]) for c in self.tool_calls]
        return {
            "reasoning": self.reasoning,
            "content": self.content,
            "tool_calls": calls,
            "finish_reason": self.finish_reason,
        }
