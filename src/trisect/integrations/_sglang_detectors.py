"""The detector classes SGLang instantiates (one per choice): a reasoning detector and a tool
detector per trisect format, made on first use.

* ``TrisectReasoningDetector(BaseReasoningFormatDetector)``: phase one (``ReasoningPhase``).
  SGLang passes ``stream_reasoning``, ``force_reasoning`` (whether its template says the output
  starts inside reasoning: trisect reads it as a prompt that opened, or closed, the block),
  ``continue_final_message`` / ``previous_content`` (the partial assistant message, read as
  prompt text) and ``force_nonempty_content``; ``think_start_token`` / ``think_end_token`` are the
  format's first spellings (SGLang's grammar gate encodes the end marker).
* ``TrisectToolDetector(BaseFormatDetector)``: phase two, one tools-only trisect stream fed the
  text phase one leaves. ``detect_and_parse`` is trisect's ``parse``; ``has_tool_call`` is true
  when parsing changes the text beyond whitespace (a call, or a cut-off call's markup left out
  of the content); ``get_structural_tag`` is trisect's structural tag (``required``, named, and
  ``auto`` with ``TRISECT_AUTO_GRAMMAR=1``), so SGLang keeps the model's native format under
  constraint; formats without one return ``supports_structural_tag() == False`` and SGLang uses
  its JSON-array schema and parser.

Detectors see text only (SGLang hands them no token ids), so markers match by their text.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

from ..grammar import call_shape, structural_tag
from ._common import Fold, Piece, ReasoningPhase, openai_tools, parser_for, settings
from ._common import tool_choice as choice_of


def _first(spec: Any, terminal: str) -> str:
    spellings = spec.terminals.get(terminal) if spec is not None else None
    return spellings[0] if spellings else ""


# ---------------------------------------------------------------------------------------- reasoning


@cache
def reasoning_detector(fmt: str) -> type:
    parser_for(fmt, None, None)  # an unknown name fails here (FormatError)
    return type(
        f"TrisectReasoningDetector[{fmt}]", (_reasoning_base(),), {"trisect_format": fmt, "__module__": __name__}
    )


@cache
def _reasoning_base() -> type:
    from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector, StreamingParseResult

    class TrisectReasoningDetector(BaseReasoningFormatDetector):  # type: ignore[misc]
        """One trisect reasoning format as SGLang's reasoning detector (see the module docstring)."""

        trisect_format: ClassVar[str]

        def __init__(
            self,
            stream_reasoning: bool = True,
            force_reasoning: bool | None = None,
            continue_final_message: bool = False,
            previous_content: str = "",
            force_nonempty_content: bool = False,
            **_unused: Any,
        ) -> None:
            self.trisect = parser_for(self.trisect_format, None, None)
            spec = self.trisect.reasoning_spec
            start, end = _first(spec, "THINK_START"), _first(spec, "THINK_END")
            super().__init__(
                start,
                end,
                force_reasoning=bool(force_reasoning),
                stream_reasoning=stream_reasoning,
                continue_final_message=continue_final_message,
                previous_content=previous_content or "",
                reasoning_default=None if self.trisect.reasoning_ended_at_start() else "always",
                force_nonempty_content=force_nonempty_content,
            )
            prompt = ""
            if force_reasoning is True and start:
                prompt = start  # the template opened the block: the output starts inside it
            elif force_reasoning is False and end:
                prompt = start + end  # the template closed it: the output starts after it
            if continue_final_message and previous_content:
                prompt += previous_content
            self._options: dict[str, Any] = {"prompt_text": prompt} if prompt else {}
            if force_nonempty_content:  # the one chat-template switch SGLang hands a detector
                self._options["chat_template_kwargs"] = {"force_nonempty_content": True}
            self._phase: ReasoningPhase | None = None
            self._held: list[str] = []  # reasoning held back under stream_reasoning=False
            self._content_seen = False

        def _new_phase(self) -> ReasoningPhase:
            return ReasoningPhase(self.trisect.stream(**self._options), self.trisect.spec)

        def _detect_and_parse_impl(self, text: str) -> Any:
            reasoning, rest = self._new_phase().whole(text)
            return StreamingParseResult(normal_text=rest, reasoning_text=reasoning)

        def _parse_streaming_increment_impl(self, new_text: str) -> Any:
            if self._phase is None:
                self._phase = self._new_phase()
            reasoning, rest = self._phase.feed(new_text)
            self._in_reasoning = not self._phase.ended
            self._content_seen = self._content_seen or bool(rest)
            if not self.stream_reasoning:
                self._held.append(reasoning)
                reasoning = "" if self._in_reasoning else "".join(self._held)
                if not self._in_reasoning:
                    self._held.clear()
            return StreamingParseResult(normal_text=rest, reasoning_text=reasoning)

        def finish(self) -> Any:
            if self._phase is None:
                return StreamingParseResult()
            open_block = not self._phase.ended
            reasoning, rest = self._phase.finish()
            reasoning = "".join(self._held) + reasoning
            self._held.clear()
            self._in_reasoning = False
            if open_block and self._force_nonempty_content and not self._content_seen and not rest:
                # the block never ended and the format has no rule for it: SGLang's option makes
                # the reasoning the answer (as SGLang's own detectors do, it was streamed already)
                text = str(getattr(self, "_accumulated_reasoning", "")) + reasoning
                self._accumulated_reasoning = ""
                return StreamingParseResult(normal_text=text)
            return StreamingParseResult(normal_text=rest, reasoning_text=reasoning)

    return TrisectReasoningDetector


# ---------------------------------------------------------------------------------------- tools


@cache
def tool_detector(fmt: str) -> type:
    parser_for(None, fmt, None)
    return type(f"TrisectToolDetector[{fmt}]", (_tool_base(),), {"trisect_format": fmt, "__module__": __name__})


def _options(tools: Any) -> dict[str, Any]:
    listed = openai_tools(tools)
    return {"tools": listed, "tool_choice": "auto" if listed else "none"}


@cache
def _tool_base() -> type:
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem

    def result(piece: Piece | None) -> Any:
        if piece is None:
            return StreamingParseResult()
        calls = [ToolCallItem(tool_index=i, name=name, parameters=args) for i, _id, name, args in piece.calls]
        return StreamingParseResult(normal_text=piece.content, calls=calls)

    class TrisectToolDetector(BaseFormatDetector):  # type: ignore[misc]
        """One trisect tool-call format as SGLang's detector (see the module docstring)."""

        trisect_format: ClassVar[str]

        def __init__(self) -> None:
            super().__init__()
            self.trisect = parser_for(None, self.trisect_format, None)
            self._fold: Fold | None = None
            self.incomplete_tool_call_indices: set[int] = set()  # read by SGLang's finish_reason

        def has_tool_call(self, text: str) -> bool:
            message = self.trisect.parse(text)
            return bool(message.tool_calls) or (message.content or "").strip() != text.strip()

        def detect_and_parse(self, text: str, tools: Any) -> Any:
            message = self.trisect.parse(text, **_options(tools))
            calls = [
                ToolCallItem(tool_index=i, name=c.name, parameters=c.arguments)
                for i, c in enumerate(message.tool_calls)
            ]
            return StreamingParseResult(normal_text=message.content or "", calls=calls)

        def parse_streaming_increment(self, new_text: str, tools: Any) -> Any:
            fold = self._fold
            if fold is None:
                atomic = not settings().incremental
                fold = self._fold = Fold(self.trisect.stream(atomic_tool_calls=atomic, **_options(tools)))
                self.prev_tool_call_arr = fold.prev_tool_call_arr  # SGLang's back-fill reads these:
                self.streamed_args_for_tool = fold.streamed_args  # never anything left unsent
            piece = fold.feed(new_text)
            self.current_tool_id = len(fold.prev_tool_call_arr) - 1
            return result(piece)

        def finish(self, tools: Any) -> Any:
            if self._fold is None:
                return StreamingParseResult()
            piece = self._fold.finish()
            self.incomplete_tool_call_indices = set(self._fold.aborted)
            return result(piece)

        def supports_structural_tag(self) -> bool:
            return self.trisect.tools_spec is not None and not isinstance(call_shape(self.trisect.tools_spec), str)

        def structure_info(self) -> Any:
            raise NotImplementedError("trisect's detectors give SGLang a structural tag (get_structural_tag)")

        def get_structural_tag(
            self,
            tools: Any = None,
            tool_choice: Any = "auto",
            thinking_mode: bool = False,
            parallel_tool_calls: bool = True,
        ) -> Any:
            if not self.supports_structural_tag():
                return None
            from xgrammar import StructuralTag

            listed = openai_tools(tools)
            tag = structural_tag(
                self.trisect,
                listed,
                tool_choice=choice_of(tool_choice, bool(listed)),
                parallel_tool_calls=parallel_tool_calls,
            )
            return StructuralTag.model_validate(tag)

        def get_auto_tool_call_structural_tag(
            self, tools: Any = None, thinking_mode: bool = False, parallel_tool_calls: bool = True
        ) -> Any:
            if not settings().auto_grammar:
                return None
            return self.get_structural_tag(tools, "auto", thinking_mode, parallel_tool_calls)

    return TrisectToolDetector
