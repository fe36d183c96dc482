"""The detector classes SGLang instantiates (one per choice): a reasoning detector and a tool
detector per trisect format, made on first use.

SGLang runs two detectors per choice: the reasoning detector on the model's text, then the tool
detector on the text the first one leaves (``normal_text``). What reaches the client is
trisect's ``parse()`` of the output with the request's own options (trisect alone), however the
two are configured:

* **Both trisect's** (``--reasoning-parser trisect_R --tool-call-parser trisect_T``): each
  parses the whole output with the combined formats R + T and the same options; the reasoning
  detector gives the reasoning and hands the text on as written, the tool detector gives the
  content and the calls (``Split``). The reasoning detector reads T from SGLang's serving config
  (``get_serving().tool_call_parser``); the tool detector takes its partner, and with it the
  request's options, from the reasoning detector made just before it in the same task
  (``_PARTNER``: SGLang's serving code builds a choice's two parsers one after the other).
* **The reasoning detector alone** (no tool parser, or none active for the request): trisect's
  reasoning format alone, its reasoning and its content.
* **trisect's reasoning detector, SGLang's tool detector**: the text after the end of reasoning
  as written (``ReasoningPhase``); a channel format (Harmony: reasoning wherever an analysis
  message comes) hands on the whole text, which SGLang's channel detector parses itself.
* **trisect's tool detector alone, or after SGLang's reasoning detector**: the tool format alone
  on the text it is given (a channel format's analysis messages have no field to go to).

The request's options are trisect's request semantics: ``chat_template_kwargs`` (``thinking``,
``enable_thinking``, ``force_nonempty_content``, ...) and ``reasoning_effort`` as trisect reads
them, and the assistant message a ``continue_final_message`` request continues as the end of
the prompt (``request_options``). SGLang hands a reasoning detector ``force_reasoning``, not the
request; ``sglang.py`` hands it the request too (``read_request``). ``force_reasoning`` is then
not read: it is SGLang's reading of the template and of one switch, and a block the model opens
itself, or a switch SGLang does not read, would be lost by it. Without a request (a caller that
passes none), ``force_reasoning`` is the switch: True, the output starts inside reasoning;
False, thinking is off (trisect's off state, where a block the model opens itself is still
reasoning). ``reasoning_default`` declares trisect's own default for SGLang's other readers (the
grammar gate, ``_get_reasoning_from_request`` when the template gave SGLang no reasoning
config): ``sglang_reasoning_default``.

The tool detector's ``has_tool_call`` is true when parsing changes the text beyond whitespace (a
call, or a cut-off call's markup left out of the content); ``get_structural_tag`` is trisect's
structural tag (``required``, named, and ``auto`` with ``TRISECT_AUTO_GRAMMAR=1``), so SGLang
keeps the model's native format under constraint; formats without one return
``supports_structural_tag() == False`` and SGLang uses its JSON-array schema and parser.

``trisect_auto`` (both kinds) parses with the formats ``trisect.detect`` finds in the chat
template of the tokenizer SGLang hands a detector (the tokenizer manager's, whose
``chat_template`` SGLang's template manager sets to the template it renders with).

Detectors see text only (SGLang hands them no token ids), so markers match by their text. Cost
per delta: one trisect stream per detector (both trisect's: two streams over the same text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from functools import cache
from typing import Any, ClassVar

from .. import ContentText, Parser, ReasoningText, StreamParser
from ..errors import FormatError
from ..grammar import call_shape, structural_tag
from ..request.options import REASONING_EFFORTS
from ._common import (
    AUTO,
    AUTO_NAME,
    Fold,
    Piece,
    ReasoningPhase,
    detected,
    openai_tools,
    parser_for,
    plugin_names,
    settings,
    trisect_name,
)
from ._common import tool_choice as choice_of

_OFF = {"thinking": False, "enable_thinking": False}


def _first(spec: Any, terminal: str) -> str:
    spellings = spec.terminals.get(terminal) if spec is not None else None
    return spellings[0] if spellings else ""


_AUTO_PARSERS: dict[tuple[str | None, str | None, int], tuple[Any, Parser]] = {}


def text_parser(reasoning: str | None, tools: str | None, tokenizer: Any = None) -> Parser:
    """The parser a detector uses: the named formats, ``AUTO`` for the formats detected in
    ``tokenizer``'s chat template; built without the tokenizer (SGLang feeds text only)."""
    if AUTO not in (reasoning, tools):
        return parser_for(reasoning, tools, None)
    key = (reasoning, tools, id(tokenizer))
    entry = _AUTO_PARSERS.get(key)
    if entry is None or entry[0] is not tokenizer:
        entry = _AUTO_PARSERS[key] = (tokenizer, Parser(*detected(reasoning, tools, tokenizer)))
    return entry[1]


def served_tools() -> str | None:
    """The trisect tool format SGLang's server runs (its ``--tool-call-parser``, from the serving
    config SGLang publishes in each of its processes), or None: not one of trisect's, or no
    serving config in this process."""
    try:
        from sglang.srt.runtime_context import get_serving

        name = get_serving().tool_call_parser
    except (ImportError, ValueError, AttributeError):  # not published: not SGLang's server
        return None
    if not isinstance(name, str) or (name not in plugin_names("tools") and name != AUTO_NAME):
        return None
    return trisect_name(name)


# ---------------------------------------------------------------------------------------- requests


def request_options(request: Any, previous_content: str = "") -> dict[str, Any]:
    """trisect's options for an SGLang request, as its parsing half sees it (SGLang's protocol
    has set both thinking switches from ``reasoning_effort``): ``chat_template_kwargs``,
    ``reasoning_effort`` (a value trisect does not take, SGLang's numeric efforts and ``ultra``,
    is no effort), the tools (``_tools_options``), ``parallel_tool_calls``, and the continued
    assistant message as the end of the prompt."""
    options: dict[str, Any] = {}
    kwargs = getattr(request, "chat_template_kwargs", None)
    if isinstance(kwargs, Mapping) and kwargs:
        options["chat_template_kwargs"] = dict(kwargs)
    effort = getattr(request, "reasoning_effort", None)
    if isinstance(effort, str) and effort in REASONING_EFFORTS:
        options["reasoning_effort"] = effort
    options.update(_tools_options(getattr(request, "tools", None)))
    if getattr(request, "parallel_tool_calls", True) is False:
        options["parallel_tool_calls"] = False
    if previous_content:
        options["prompt_text"] = previous_content
    return options


def switch_options(force_reasoning: bool | None, start: str, force_nonempty_content: bool) -> dict[str, Any]:
    """trisect's options for SGLang's ``force_reasoning`` alone (no request): True, a prompt that
    opened the block; False, both thinking switches off; None, no option."""
    options: dict[str, Any] = {}
    kwargs: dict[str, Any] = {}
    if force_reasoning is True and start:
        options["prompt_text"] = start
    elif force_reasoning is False:
        kwargs.update(_OFF)
    if force_nonempty_content:
        kwargs["force_nonempty_content"] = True
    if kwargs:
        options["chat_template_kwargs"] = kwargs
    return options


def _tools_options(tools: Any) -> dict[str, Any]:
    """The tools as trisect reads a detector's output: with ``tool_choice="auto"`` whatever the
    request chose, since SGLang hands trisect's detector only output in the format's own markers
    (a free ``auto`` output, or one trisect's structural tag constrained), and ``"none"`` without
    tools."""
    listed = openai_tools(tools)
    return {"tools": listed, "tool_choice": "auto" if listed else "none"}


def _reasoning_only(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k not in ("tools", "tool_choice")}


@cache
def sglang_reasoning_default(parser: Parser) -> str | None:
    """The ``reasoning_default`` mode of SGLang's serving code (``_get_reasoning_from_request``)
    closest to trisect's own: can the output start inside reasoning (``not
    reasoning_ended_at_start``), by default and under each switch SGLang can read?

    ``"always"`` (no switch SGLang reads turns it off), ``"thinking"`` / ``"enable_thinking"``
    (on unless that switch is false), ``"explicit_thinking"`` / ``"explicit_enable_thinking"``
    (off unless it is true), ``"mistral"`` (on when a ``reasoning_effort`` is given), or None
    (never). Where trisect reads both switches, the one it reads first. A switch no mode names
    (an effort that turns thinking off, MiniMax-M3's ``thinking_mode``) is not seen by SGLang's
    thinking mode; the detector still parses by it."""

    def on(kwargs: dict[str, bool] | None = None, effort: str | None = None) -> bool:
        options: dict[str, Any] = {"chat_template_kwargs": kwargs} if kwargs else {}
        if effort is not None:
            options["reasoning_effort"] = effort
        return not parser.reasoning_ended_at_start(**options)

    default = on()
    switches = [name for name in ("thinking", "enable_thinking") if on({name: not default}) != default]
    if len(switches) == 2:  # both turn it: the one trisect reads first decides when both are given
        both = {"thinking": not default, "enable_thinking": default}
        switches = ["thinking" if on(both) != default else "enable_thinking"]
    if switches:
        return switches[0] if default else f"explicit_{switches[0]}"
    if default:
        return "always"
    if on(effort="high") and on(effort="medium"):
        return "mistral"
    return None


# ---------------------------------------------------------------------------------------- reasoning


class Split:
    """Phase one over a stream of the whole output: ``feed`` returns ``(reasoning, rest)``, the
    stream's reasoning and either the text as written (``passthrough``: the next detector parses
    it again) or the stream's content. ``ended``: not inside a reasoning block now."""

    __slots__ = ("stream", "passthrough")

    def __init__(self, stream: StreamParser, passthrough: bool) -> None:
        self.stream = stream
        self.passthrough = passthrough

    @property
    def ended(self) -> bool:
        return not self.stream.in_reasoning

    def _split(self, events: Sequence[Any], text: str) -> tuple[str, str]:
        reasoning = "".join(e.text for e in events if type(e) is ReasoningText)
        if self.passthrough:
            return reasoning, text
        return reasoning, "".join(e.text for e in events if type(e) is ContentText)

    def feed(self, text: str) -> tuple[str, str]:
        return self._split(self.stream.events(text), text)

    def finish(self) -> tuple[str, str]:
        return self._split(self.stream.finish_events(), "")

    def whole(self, text: str) -> tuple[str, str]:
        reasoning, rest = self.feed(text)
        more_reasoning, more_rest = self.finish()
        return reasoning + more_reasoning, rest + more_rest


def _combines(reasoning: str, tools: str, tokenizer: Any) -> bool:
    try:
        text_parser(reasoning, tools, tokenizer)
    except FormatError:  # e.g. a terminal the two spell differently
        return False
    return True


# The reasoning detector of both trisect's SGLang built last in this task: the tool detector of
# the same choice parses after it (the chat and Responses paths build the two in either order, and
# always feed the reasoning detector first).
_PARTNER: ContextVar[Any] = ContextVar("trisect_sglang_partner", default=None)


@cache
def reasoning_detector(fmt: str) -> type:
    if fmt != AUTO:
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
            tokenizer: Any = None,
            tool_call_parser_active: bool = False,
        ) -> None:
            self.trisect = text_parser(self.trisect_format, None, tokenizer)
            spec = self.trisect.reasoning_spec
            start, end = _first(spec, "THINK_START"), _first(spec, "THINK_END")
            super().__init__(
                start,
                end,
                force_reasoning=bool(force_reasoning),
                stream_reasoning=stream_reasoning,
                continue_final_message=continue_final_message,
                previous_content=previous_content or "",
                reasoning_default=sglang_reasoning_default(self.trisect),
            )
            self._tokenizer = tokenizer
            self._feeds_tools = bool(tool_call_parser_active)  # a tool parser reads what this leaves
            self.paired_tools = served_tools() if self._feeds_tools else None
            if self.paired_tools is not None and not _combines(self.trisect_format, self.paired_tools, tokenizer):
                self.paired_tools = None  # formats that cannot share one table: two phases
            self.options = switch_options(force_reasoning, start, force_nonempty_content)
            if self.previous_content:
                self.options["prompt_text"] = self.options.get("prompt_text", "") + self.previous_content
            self._phase: ReasoningPhase | Split | None = None
            self._held: list[str] = []  # reasoning held back under stream_reasoning=False
            self.claimed = False  # a tool detector parses with this one's formats and options
            self.handed_content = False  # a whole output without calls: its content handed on
            if self.paired_tools is not None:
                _PARTNER.set(self)

        def read_request(self, request: Any) -> None:
            """Parse by the request's own fields (``request_options``) instead of SGLang's
            ``force_reasoning``."""
            self.options = request_options(request, self.previous_content)

        def paired_parser(self) -> Parser:
            """The combined formats both detectors parse with (reasoning + the served tools)."""
            return text_parser(self.trisect_format, self.paired_tools, self._tokenizer)

        def _new_phase(self) -> ReasoningPhase | Split:
            if self.paired_tools is not None:
                return Split(self.paired_parser().stream(**self.options), passthrough=True)
            stream = self.trisect.stream(**_reasoning_only(self.options))
            if not self._feeds_tools:
                return Split(stream, passthrough=False)
            if self.trisect.spec.header is not None:  # a channel format: SGLang's detector reads it all
                return Split(stream, passthrough=True)
            return ReasoningPhase(stream, self.trisect.spec)

        def _detect_and_parse_impl(self, text: str) -> Any:
            if self.paired_tools is not None:
                # SGLang's non-streaming path keeps this text as the content unless the tool
                # detector finds a call: without one, trisect's content is handed on instead
                message = self.paired_parser().parse(text, **self.options)
                self.handed_content = not message.tool_calls
                rest = (message.content or "") if self.handed_content else text
                return StreamingParseResult(normal_text=rest, reasoning_text=message.reasoning or "")
            reasoning, rest = self._new_phase().whole(text)
            return StreamingParseResult(normal_text=rest, reasoning_text=reasoning)

        def _parse_streaming_increment_impl(self, new_text: str) -> Any:
            if self._phase is None:
                self._phase = self._new_phase()
            reasoning, rest = self._phase.feed(new_text)
            self._in_reasoning = not self._phase.ended
            if not self.stream_reasoning:
                self._held.append(reasoning)
                reasoning = "" if self._in_reasoning else "".join(self._held)
                if not self._in_reasoning:
                    self._held.clear()
            return StreamingParseResult(normal_text=rest, reasoning_text=reasoning)

        def finish(self) -> Any:
            if self._phase is None:
                return StreamingParseResult()
            reasoning, rest = self._phase.finish()
            reasoning = "".join(self._held) + reasoning
            self._held.clear()
            self._in_reasoning = False
            return StreamingParseResult(normal_text=rest, reasoning_text=reasoning)

    return TrisectReasoningDetector


# ---------------------------------------------------------------------------------------- tools


@cache
def tool_detector(fmt: str) -> type:
    if fmt != AUTO:
        parser_for(None, fmt, None)
    return type(f"TrisectToolDetector[{fmt}]", (_tool_base(),), {"trisect_format": fmt, "__module__": __name__})


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

        def __init__(self, tokenizer: Any = None) -> None:
            super().__init__()
            self.tools_only = text_parser(None, self.trisect_format, tokenizer)
            self._parsing: tuple[Parser, dict[str, Any]] | None = None  # decided at the first parse
            self._partner: Any = None
            self._fold: Fold | None = None
            self.incomplete_tool_call_indices: set[int] = set()  # read by SGLang's finish_reason

        def _parser(self) -> tuple[Parser, dict[str, Any]]:
            """The combined formats and the request's options of the reasoning detector this one
            follows (both trisect's: it handed on the whole text), else the tool format alone."""
            if self._parsing is None:
                partner = _PARTNER.get()
                if partner is not None and not partner.claimed and partner.paired_tools == self.trisect_format:
                    partner.claimed = True
                    self._partner = partner
                    self._parsing = (partner.paired_parser(), _reasoning_only(partner.options))
                else:
                    self._parsing = (self.tools_only, {})
            return self._parsing

        def has_tool_call(self, text: str) -> bool:
            parser, options = self._parser()
            if self._partner is not None and self._partner.handed_content:
                return False  # the partner parsed this whole output: it has no call
            message = parser.parse(text, **options)
            return bool(message.tool_calls) or (message.content or "").strip() != text.strip()

        def detect_and_parse(self, text: str, tools: Any) -> Any:
            parser, options = self._parser()
            if self._partner is not None and self._partner.handed_content:
                return StreamingParseResult(normal_text=text)
            message = parser.parse(text, **options, **_tools_options(tools))
            calls = [
                ToolCallItem(tool_index=i, name=c.name, parameters=c.arguments)
                for i, c in enumerate(message.tool_calls)
            ]
            return StreamingParseResult(normal_text=message.content or "", calls=calls)

        def parse_streaming_increment(self, new_text: str, tools: Any) -> Any:
            fold = self._fold
            if fold is None:
                atomic = not settings().incremental
                parser, options = self._parser()
                fold = self._fold = Fold(parser.stream(atomic_tool_calls=atomic, **options, **_tools_options(tools)))
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
            spec = self.tools_only.tools_spec
            return spec is not None and not isinstance(call_shape(spec), str)

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
                self.tools_only,
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
