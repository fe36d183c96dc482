"""The classes vLLM instantiates: a reasoning parser and a tool parser per trisect format, and
one ``TrisectParser`` per (reasoning, tools) pair that both go through.

vLLM looks a name up lazily (``register_lazy_module(name, this module, "reasoning:qwen3")``);
this module makes that class on first lookup (``__getattr__``), so any format, including one
registered at run time, has its class. Each instance is one choice of one request:

* ``TrisectParser`` (what ``ParserManager`` returns when every name is trisect's): one trisect
  stream for reasoning and tools, created on the first delta with the request's ``tools``,
  ``tool_choice``, ``parallel_tool_calls``, ``include_reasoning``, ``chat_template_kwargs``,
  ``reasoning_effort``, prompt ids and tool calls in the history; ``parse`` is trisect's
  ``parse`` of the text and ids. Serving still reads the class attributes
  ``reasoning_parser_cls`` / ``tool_parser_cls`` (to keep tool calls, to send the engine core
  the reasoning parser's name): they are trisect's split classes.
* ``TrisectReasoningParser``: the token-id methods the engine core calls with prompt + output
  ids (``is_reasoning_end``, ``is_reasoning_end_streaming`` with speculative ids popped off the
  end, ``extract_content_ids``, ``count_reasoning_tokens``) are pure functions of the ids, from
  trisect's token view (``IdsView``), except that ids starting with the prompt given to
  ``set_prompt_token_ids`` (DelegatingParser's check of the rendered prompt) are read as that
  prompt and the output after it; under vLLM's two-phase ``DelegatingParser`` (a vLLM tool
  parser, or vLLM versions without the composer patch) it is phase one (``ReasoningPhase``).
* ``TrisectToolParser``: phase two, one tools-only trisect stream fed the text after reasoning.
  ``supports_required_and_named = False``: required and named choices are parsed by trisect too.

Both split classes are ``engine_based_streaming``: vLLM passes them each delta, never the text
so far, so a stream costs O(delta) per delta. The reasoning class imports no more of vLLM than
the engine core has loaded (no tool parsers, no OpenAI protocol until a delta is parsed).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any, ClassVar

from .. import Message, Parser, StateError, StreamParser
from ..engine.value import as_int, as_items, as_tuple
from ..grammar import for_request
from ..request.tools import history_tool_calls
from ._common import AUTO, Fold, IdsView, Piece, ReasoningPhase, openai_tools, parser_for, settings, tool_choice


def __getattr__(name: str) -> type:
    kind, _, fmt = name.partition(":")
    if kind == "reasoning" and fmt:
        made: type = reasoning_class(fmt)
    elif kind == "tools" and fmt:
        made = tool_class(fmt)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = made
    return made


# ---------------------------------------------------------------------------------------- requests


def request_options(
    request: Any, chat_template_kwargs: dict[str, Any] | None, prompt_token_ids: Sequence[int] | None
) -> dict[str, Any]:
    """trisect's options for one vLLM request (chat or Responses)."""
    tools = openai_tools(getattr(request, "tools", None))
    kwargs = chat_template_kwargs if chat_template_kwargs else (getattr(request, "chat_template_kwargs", None) or {})
    options: dict[str, Any] = {
        "tools": tools,
        "tool_choice": tool_choice(getattr(request, "tool_choice", None), bool(tools)),
        "parallel_tool_calls": getattr(request, "parallel_tool_calls", True) is not False,
        "include_reasoning": getattr(request, "include_reasoning", True) is not False,
        "chat_template_kwargs": kwargs,
    }
    effort = getattr(request, "reasoning_effort", None)
    effort = effort if isinstance(effort, str) else kwargs.get("reasoning_effort")
    if isinstance(effort, str):
        options["reasoning_effort"] = effort
    if prompt_token_ids is not None:
        options["prompt_token_ids"] = list(prompt_token_ids)
    history = history_tool_calls(getattr(request, "messages", None))
    if history:
        options["history_tool_calls"] = history
    return options


def adjust_request(request: Any, parser: Parser) -> Any:
    """The renderer's hook before generation: keep special tokens in the text (trisect matches
    markers by id and aligns them with the text), and constrain the output for a required or
    named ``tool_choice`` (``auto`` only when asked: ``trisect_auto_grammar``)."""
    request.skip_special_tokens = False
    tools = openai_tools(getattr(request, "tools", None))
    choice = tool_choice(getattr(request, "tool_choice", None), bool(tools))
    if not tools or choice == "none":
        return request
    if choice == "auto":
        if not settings(getattr(request, "vllm_xargs", None)).auto_grammar:
            return request
        extract = getattr(request, "extract_structured_outputs", None)
        if extract is not None and extract() is not None:
            return request  # the user's own constraint for the answer wins
    constraint = for_request(
        parser, tools=tools, tool_choice=choice, parallel_tool_calls=request.parallel_tool_calls is not False
    )
    if constraint is None:
        return request
    from vllm.sampling_params import StructuredOutputsParams

    if "json_schema" in constraint:
        request.structured_outputs = StructuredOutputsParams(json=constraint["json_schema"])
    else:
        request.structured_outputs = StructuredOutputsParams(structural_tag=json.dumps(constraint["structural_tag"]))
    if hasattr(request, "response_format"):
        request.response_format = None
    elif hasattr(request, "text"):  # Responses API
        request.text = None
    return request


# Set by the plugin once its finish_reason guard wraps ChatStreamProcessor.step (vLLM 0.33.x).
step_guard_installed = False


def _atomic(request: Any) -> bool:
    """Calls whole (default), or incremental when asked and the finish_reason guard is in."""
    return not (settings(getattr(request, "vllm_xargs", None)).incremental and step_guard_installed)


@cache
def _protocol() -> Any:
    from vllm.entrypoints.generate.base import protocol

    return protocol


def delta_message(piece: Piece | None) -> Any:
    """A trisect piece as vLLM's ``DeltaMessage`` (``None`` when it adds nothing)."""
    if piece is None:
        return None
    protocol = _protocol()
    calls = [
        protocol.DeltaToolCall(
            index=index,
            id=call_id,
            type="function" if call_id is not None else None,
            function=protocol.DeltaFunctionCall(name=name, arguments=arguments),
        )
        for index, call_id, name, arguments in piece.calls
    ]
    if not (piece.reasoning or piece.content or calls):
        return None
    return protocol.DeltaMessage(reasoning=piece.reasoning or None, content=piece.content or None, tool_calls=calls)


def _function_calls(message: Message) -> list[Any]:
    protocol = _protocol()
    return [protocol.FunctionCall(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls]


# ---------------------------------------------------------------------------------------- reasoning


@cache
def reasoning_class(fmt: str) -> type:
    if fmt != AUTO:  # (auto is decided per tokenizer, when vLLM builds the parser)
        parser_for(fmt, None, None)  # an unknown name fails here, at lookup (FormatError)
    return type(f"TrisectReasoning[{fmt}]", (_reasoning_base(),), {"trisect_format": fmt, "__module__": __name__})


@cache
def _reasoning_base() -> type:
    from vllm.reasoning.abs_reasoning_parsers import ReasoningParser

    class TrisectReasoningParser(ReasoningParser):  # type: ignore[misc]
        """One trisect reasoning format as vLLM's ``ReasoningParser`` (see the module docstring)."""

        engine_based_streaming = True
        trisect_format: ClassVar[str]

        def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(tokenizer, *args, **kwargs)
            self.trisect = parser_for(self.trisect_format, None, tokenizer)
            self._kwargs: dict[str, Any] = dict(kwargs.get("chat_template_kwargs") or {})
            self._prompt: list[int] | None = None
            self._phase: ReasoningPhase | None = None
            self._views: dict[bool, IdsView] = {}
            self._output: list[int] = []  # the output ids so far (extract_reasoning_streaming's deltas)

        def _options(self, with_prompt: bool) -> dict[str, Any]:
            options: dict[str, Any] = {"chat_template_kwargs": self._kwargs}
            effort = self._kwargs.get("reasoning_effort")
            if isinstance(effort, str):
                options["reasoning_effort"] = effort
            if with_prompt and self._prompt is not None:
                options["prompt_token_ids"] = self._prompt
            return options

        def _view(self, with_prompt: bool) -> IdsView:
            view = self._views.get(with_prompt)
            if view is None:
                view = self._views[with_prompt] = IdsView(self.trisect, self._options(with_prompt))
            return view

        def _terminal(self, name: str) -> str | None:
            spec = self.trisect.reasoning_spec
            spellings = spec.terminals.get(name) if spec is not None else None
            return spellings[0] if spellings else None

        @property
        def reasoning_start_str(self) -> str | None:
            return self._terminal("THINK_START")

        @property
        def reasoning_end_str(self) -> str | None:
            return self._terminal("THINK_END")

        # -- token ids: pure functions of the ids (prompt + output in the engine core)

        def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
            prompt = self._prompt
            if prompt is not None and len(input_ids) >= len(prompt) and list(input_ids[: len(prompt)]) == prompt:
                # the rendered prompt (DelegatingParser asks right after set_prompt_token_ids):
                # trisect decides where it leaves the model (a block it opened is open even with
                # thinking switched off), then reads the output ids after it
                return self._view(True).ended(input_ids[len(prompt) :])
            return self._view(False).ended(input_ids)

        def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Sequence[int]) -> bool:
            return self._view(False).ended(input_ids, len(delta_ids))

        def extract_content_ids(self, input_ids: list[int]) -> list[int]:
            # DelegatingParser asks with the delta where reasoning ended: where that delta stands
            # is the whole output's business (a prompt that left the opener to the model decides
            # by the output's first text, not by a delta's), so the ids are read in the output
            output, n = self._output, len(input_ids)
            if 0 < n <= len(output) and list(output[len(output) - n :]) == list(input_ids):
                content = self.trisect.content_token_ids(output, **self._options(True))
                return content[-n:]
            return self.trisect.content_token_ids(input_ids, **self._options(True))

        def count_reasoning_tokens(self, token_ids: Sequence[int]) -> int:
            return self._view(True).count(token_ids)

        def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
            self._prompt = list(prompt_token_ids)
            self._views.pop(True, None)

        def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
            self.set_prompt_token_ids(prompt_token_ids)

        def adjust_request(self, request: Any) -> Any:
            request.skip_special_tokens = False
            return request

        # -- text: phase one of vLLM's two-phase DelegatingParser

        def _stream(self) -> ReasoningPhase:
            if self._phase is None:
                self._phase = ReasoningPhase(self.trisect.stream(**self._options(True)), self.trisect.spec)
            return self._phase

        def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
            phase = ReasoningPhase(self.trisect.stream(**self._options(True)), self.trisect.spec)
            reasoning, rest = phase.whole(model_output)
            return reasoning or None, rest or None

        def extract_reasoning_streaming(
            self,
            previous_text: str,
            current_text: str,
            delta_text: str,
            previous_token_ids: Sequence[int],
            current_token_ids: Sequence[int],
            delta_token_ids: Sequence[int],
        ) -> Any:
            self._output += delta_token_ids  # vLLM's previous / current ids may start at the delta
            reasoning, rest = self._stream().feed(delta_text, list(delta_token_ids))
            return delta_message(Piece(reasoning, rest))

        def has_engine_confirmed_reasoning_end(self) -> bool:
            return self._stream().ended

        def finish_streaming(self) -> Any:
            reasoning, rest = self._stream().finish()
            return delta_message(Piece(reasoning, rest))

    return TrisectReasoningParser


# ---------------------------------------------------------------------------------------- tools


@cache
def tool_class(fmt: str) -> type:
    if fmt != AUTO:
        parser_for(None, fmt, None)
    return type(f"TrisectTools[{fmt}]", (_tool_base(),), {"trisect_format": fmt, "__module__": __name__})


@cache
def _tool_base() -> type:
    from vllm.tool_parsers.abstract_tool_parser import ToolParser

    class TrisectToolParser(ToolParser):  # type: ignore[misc]
        """One trisect tool-call format as vLLM's ``ToolParser`` (see the module docstring)."""

        supports_required_and_named = False  # trisect parses the constrained output itself
        engine_based_streaming = True
        trisect_format: ClassVar[str]

        def __init__(self, tokenizer: Any, tools: Any = None, **kwargs: Any) -> None:
            super().__init__(tokenizer, tools)
            self.trisect = parser_for(None, self.trisect_format, tokenizer)
            self._fold: Fold | None = None

        def adjust_request(self, request: Any) -> Any:
            return adjust_request(request, self.trisect)

        def get_remaining_unstreamed_args(self) -> str:
            return ""  # trisect streams every argument it parsed: nothing is left to back-fill

        def extract_tool_calls(self, model_output: str, request: Any) -> Any:
            protocol = _protocol()
            message = self.trisect.parse(model_output, **request_options(request, None, None))
            calls = [protocol.ToolCall(id=c.id, function=c) for c in _function_calls(message)]
            return protocol.ExtractedToolCallInformation(
                tools_called=bool(calls), tool_calls=calls, content=message.content
            )

        def extract_tool_calls_streaming(
            self,
            previous_text: str,
            current_text: str,
            delta_text: str,
            previous_token_ids: Sequence[int],
            current_token_ids: Sequence[int],
            delta_token_ids: Sequence[int],
            request: Any,
        ) -> Any:
            fold = self._fold
            if fold is None:
                stream = self.trisect.stream(atomic_tool_calls=_atomic(request), **request_options(request, None, None))
                fold = self._fold = Fold(stream)
                self.prev_tool_call_arr = fold.prev_tool_call_arr
                self.streamed_args_for_tool = fold.streamed_args
            return delta_message(fold.feed(delta_text, list(delta_token_ids)))

        def finish_streaming(self) -> Any:
            return delta_message(self._fold.finish()) if self._fold is not None else None

        def trisect_cut_off(self) -> bool:
            return self._fold is not None and bool(self._fold.aborted)

    return TrisectToolParser


# ---------------------------------------------------------------------------------------- unified


@cache
def unified_parser(reasoning: str | None, tools: str | None) -> type:
    """The ``Parser`` class for one pair of trisect formats (either may be ``None``)."""
    from vllm.parser.abstract_parser import Parser as VllmParser

    class TrisectParser(VllmParser):  # type: ignore[misc]
        """Reasoning and tool calls from one trisect stream per choice (see the module docstring)."""

        reasoning_parser_cls = reasoning_class(reasoning) if reasoning is not None else None
        tool_parser_cls = tool_class(tools) if tools is not None else None
        trisect_formats = (reasoning, tools)
        always_adjust_request = True  # special tokens must stay in the text, even for tool_choice="none"

        def __init__(self, tokenizer: Any, tools: Any = None, *args: Any, model_config: Any = None, **kwargs: Any):
            super().__init__(tokenizer, tools, *args, model_config=model_config, **kwargs)
            self.trisect = parser_for(*self.trisect_formats, tokenizer)
            self._kwargs: dict[str, Any] = dict(kwargs.get("chat_template_kwargs") or {})
            self._prompt: list[int] | None = None
            self._fold: Fold | None = None
            self._view: IdsView | None = None

        def adjust_request(self, request: Any) -> Any:
            return adjust_request(request, self.trisect)

        def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
            self._prompt = list(prompt_token_ids)
            self._view = None

        def is_reasoning_end(self, input_ids: list[int]) -> bool:
            if self.trisect.reasoning is None:
                return True
            return self.trisect.is_reasoning_end(input_ids, **self._base_options(with_prompt=False))

        def _base_options(self, with_prompt: bool = True) -> dict[str, Any]:
            options: dict[str, Any] = {"chat_template_kwargs": self._kwargs}
            effort = self._kwargs.get("reasoning_effort")
            if isinstance(effort, str):
                options["reasoning_effort"] = effort
            if with_prompt and self._prompt is not None:
                options["prompt_token_ids"] = self._prompt  # the ids given are the output's
            return options

        def count_reasoning_tokens(self, token_ids: Sequence[int]) -> int:
            if self.trisect.reasoning is None:
                return 0
            if self._view is None:
                self._view = IdsView(self.trisect, self._base_options())
            return self._view.count(token_ids)

        def parse(
            self,
            model_output: str,
            request: Any,
            enable_auto_tools: bool = False,
            model_output_token_ids: Sequence[int] = (),
        ) -> tuple[str | None, str | None, list[Any] | None]:
            ids = list(model_output_token_ids) or None
            message = self.trisect.parse(
                model_output, token_ids=ids, **request_options(request, self._kwargs, self._prompt)
            )
            return message.reasoning, message.content, _function_calls(message) or None

        def parse_delta(
            self,
            delta_text: str,
            delta_token_ids: list[int],
            request: Any,
            prompt_token_ids: list[int] | None = None,
            *,
            finished: bool,
        ) -> Any:
            fold = self._fold
            if fold is None:
                if prompt_token_ids is not None:
                    self.set_prompt_token_ids(prompt_token_ids)
                options = request_options(request, self._kwargs, self._prompt)
                fold = self._fold = Fold(self.trisect.stream(atomic_tool_calls=_atomic(request), **options))
            piece = fold.feed(delta_text, delta_token_ids)
            if finished:
                piece = (piece or Piece()).add(fold.finish())
            return delta_message(piece)

        def trisect_cut_off(self) -> bool:
            return self._fold is not None and bool(self._fold.aborted)

        # the scale-out derender (``_vllm_derender``): the stream travels between chunks
        def trisect_stream(self) -> StreamParser | None:
            return self._fold.stream if self._fold is not None else None

        def trisect_state(self, key: bytes, output_tokens: int) -> bytes:
            """The stream's signed state, carrying the calls seen cut off and the ids counted."""
            fold = self._fold
            assert fold is not None
            return fold.stream.to_state(key, carry=(tuple(sorted(fold.aborted)), output_tokens))

        def trisect_resume(self, state: bytes, key: bytes, request: Any) -> int:
            """Continue the stream ``trisect_state`` wrote (``StateError`` if it does not verify
            for this request); the ids counted so far."""
            options = request_options(request, self._kwargs, None)
            stream = self.trisect.resume(state, key, atomic_tool_calls=_atomic(request), **options)
            try:
                aborted, counted = as_tuple(stream.carried, 2)
                fold = Fold(stream)
                fold.aborted = {as_int(i) for i in as_items(aborted)}
                output_tokens = as_int(counted)
            except ValueError:
                raise StateError("the state is not a vLLM derender stream's", reason="malformed") from None
            self._fold = fold
            return output_tokens

    TrisectParser.__qualname__ = TrisectParser.__name__ = f"TrisectParser[{reasoning}+{tools}]"
    return TrisectParser
