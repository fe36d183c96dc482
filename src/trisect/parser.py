"""``Parser``: a reasoning format and a tool-call format, compiled once, used per request.

``parse()`` is ``stream(atomic_tool_calls=True)``, one ``feed()`` and ``finish()``: one set of
rules. A whole text is read by the same machine in one pass (``engine.whole``: nothing held back,
markers found and JSON decoded at C speed); the replay harness checks every stream against
``parse()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache, partial
from typing import Any

from .engine.compile import CompiledFormat, compile_format
from .engine.envelope import DEFAULT_MAX_BYTES, NO_TOKENIZER, Binding, canonical, digest, unseal
from .engine.event_stream import VALUE_ENUMS, EventStream
from .engine.spec import CONTENT, OPENING, REASONING, FormatSpec, Region, combine
from .engine.value import Value, as_bool, as_tuple
from .engine.vocab import Vocab
from .engine.whole import whole_events
from .errors import FormatError, RequestError, StateError
from .formats import all_formats, hf, reasoning_format, tool_format
from .message import Message, MessageBuilder, StreamParser, fold
from .request.choice import constrained_format, keeps_native_markers
from .request.filter import filter_events
from .request.options import Request, make_request
from .request.prompt import CLOSED, OPEN, prompt_verdict
from .request.tokenview import EngineTracker, ReasoningTracker, TokenView

_PLANS = 256  # requests whose plan a parser keeps (cleared when full)


@lru_cache(maxsize=256)
def _combined(reasoning: FormatSpec | None, tools: FormatSpec | None) -> FormatSpec:
    return combine(reasoning, tools)


def _resolve(
    value: str | FormatSpec | None, kind: str, tokenizer: Any, vocab: Vocab | None, *, paired: bool
) -> FormatSpec | None:
    """A format argument of ``Parser``: a registered name, ``hf`` (the model's response_template,
    read from ``tokenizer``), or a ``FormatSpec`` of that kind. ``paired``: the other argument
    names a format too (an ``hf`` tool format alone also reads the thinking region)."""
    if value is None:
        return None
    if isinstance(value, FormatSpec):
        if value.kind != kind:
            role = "reasoning" if kind == "reasoning" else "tools"
            raise FormatError(f"Parser({role}=...) takes a {kind} format; {value.name!r} is a {value.kind} format")
        return value
    if isinstance(value, str) and value in hf.NAMES:
        return hf.formats_for(kind, tokenizer, vocab, reasoning=paired)
    return reasoning_format(value) if kind == "reasoning" else tool_format(value)


class Parser:
    """Parses the output of one model family.

    ``reasoning`` and ``tools`` are format names as in vLLM's ``--reasoning-parser`` and
    ``--tool-call-parser`` (``hf``: the model's ``response_template``, read from ``tokenizer``),
    or ``FormatSpec`` objects (a format of your own, built in Python or
    read with ``trisect.load_format``; ``None``: no reasoning block / no tool calls). The
    ``reasoning`` / ``tools`` attributes are the formats' names; ``reasoning_spec`` /
    ``tools_spec`` the formats. ``tokenizer`` is optional (an HF ``tokenizers.Tokenizer``, a
    ``transformers`` tokenizer or a ``tiktoken.Encoding``): with it, special-token markers are
    matched by token id.
    """

    def __init__(
        self,
        reasoning: str | FormatSpec | None = None,
        tools: str | FormatSpec | None = None,
        *,
        tokenizer: Any = None,
    ) -> None:
        self._vocab = Vocab(tokenizer) if tokenizer is not None else None
        self.reasoning_spec = _resolve(reasoning, "reasoning", tokenizer, self._vocab, paired=tools is not None)
        self.tools_spec = _resolve(tools, "tools", tokenizer, self._vocab, paired=reasoning is not None)
        self.reasoning: str | None = self.reasoning_spec.name if self.reasoning_spec is not None else None
        self.tools: str | None = self.tools_spec.name if self.tools_spec is not None else None
        self._compiled: CompiledFormat = compile_format(_combined(self.reasoning_spec, self.tools_spec), self._vocab)
        self._token_views: dict[int, tuple[CompiledFormat, TokenView]] = {}  # id(compiled) -> its view
        # (id(request), plain or None) -> (request, its format, its initial state, plain): requests
        # are cached by content (``request.options``), so the engines' repeated options find their
        # plan here; the entry keeps its request alive, so the id stays its own. ``plain``: a
        # resumed stream's format as its state says it was chosen (``_compiled_for``)
        self._plans: dict[tuple[int, bool | None], tuple[Request, CompiledFormat, str, bool]] = {}
        self._formats_digest: bytes | None = None  # what a stream state is bound to (``_binding``)
        self._bindings: dict[tuple[int, bool], tuple[Request, Binding]] = {}

    @property
    def spec(self) -> FormatSpec:
        return self._compiled.spec

    @property
    def vocab(self) -> Vocab | None:
        """The tokenizer as the engine sees it (``None``: no tokenizer, markers match as text)."""
        return self._vocab

    def _plan(self, request: Request, plain: bool | None = None) -> tuple[CompiledFormat, str, bool]:
        """The format of ``request``'s output, the state it starts in, and whether that format
        dropped the reasoning format (``plain``, given: as a resumed stream's state says), worked
        out once per request."""
        key = (id(request), plain)
        entry = self._plans.get(key)
        if entry is None or entry[0] is not request:
            chosen = self._plain(request) if plain is None else plain
            compiled = self._compiled_for(request, chosen)
            if len(self._plans) >= _PLANS:
                self._plans.clear()
            entry = self._plans[key] = (request, compiled, self.initial_state(request, compiled), chosen)
        return entry[1], entry[2], entry[3]

    def _compiled_for(self, request: Request, plain: bool | None = None) -> CompiledFormat:
        """The format this request's output is in (``request/choice.py``: tool_choice semantics;
        ``FormatSpec.plain_when_off``: no reasoning format when the request switched it off).
        ``plain``: that choice as a resumed stream's state says it was made (from the prompt)."""
        reasoning, compiled = self.reasoning_spec, self._compiled
        if plain is None:
            plain = self._plain(request)
        if plain:
            reasoning, compiled = None, compile_format(_combined(None, self.tools_spec), self._vocab)
        choice = request.tool_choice
        if choice == "auto":
            return compiled
        if choice == "none":
            if self.tools_spec is None:
                return compiled
            return compile_format(_combined(reasoning, None), self._vocab)
        if self.tools_spec is not None and keeps_native_markers(self.tools_spec):
            return compiled
        return compile_format(constrained_format(reasoning, request.forced), self._vocab)

    def _plain(self, request: Request) -> bool:
        """The stream of ``request`` runs without the reasoning format (``plain_when_off``)."""
        reasoning = self.reasoning_spec
        return reasoning is not None and reasoning.plain_when_off and self._thinking_off(request)

    def _thinking_off(self, request: Request) -> bool:
        """Thinking is off for this request: the prompt, if given, closed the block itself (the
        template rendered an empty one, as Qwen3's does exactly when ``enable_thinking`` is
        false: a template's default counts as a switch), or the request switched thinking off
        and its prompt did not open a block anyway (a template that ignores the switch, QwQ's).
        Either way both markers are plain text, never one of them. Text, stream and token views
        read the same options, so they agree; a token view given prompt + output as one list of
        ids takes the switch at its word (pass the prompt as ``prompt_token_ids`` for it to
        decide)."""
        reasoning = self.reasoning_spec
        if reasoning is None:
            return False
        text, ids = request.prompt_text, request.prompt_token_ids
        verdict = prompt_verdict(self._compiled, prompt_text=text, prompt_token_ids=ids, vocab=self._vocab)
        return verdict == CLOSED or (verdict != OPEN and reasoning.initial(request) == CONTENT)

    def request(self, **options: Any) -> Request:
        """Validate request options once (``RequestError`` / ``ToolSchemaError``)."""
        return make_request(options)

    def reasoning_ended_at_start(
        self, prompt_token_ids: Sequence[int] | None = None, *, prompt_text: str | None = None, **options: Any
    ) -> bool:
        """Should an engine apply the request's grammar from the first generated token?

        True when the output cannot start inside reasoning: no reasoning format, the prompt
        already closed the block, thinking is switched off, or reasoning is hidden
        (``include_reasoning=False``) under a constrained ``tool_choice`` and the prompt is given
        and does not leave a block open (the model then skips reasoning; a block it writes
        anyway is still parsed as hidden reasoning). False: apply it once reasoning has ended
        (``StreamParser.reasoning_ended``).
        """
        if prompt_token_ids is not None:
            options["prompt_token_ids"] = prompt_token_ids
        if prompt_text is not None:
            options["prompt_text"] = prompt_text
        request = make_request(options)
        state = self.initial_state(request)
        compiled = self._compiled_for(request)
        if compiled.spec.header is not None:
            # channel formats (Harmony): a message header decides, and an analysis message may
            # come first, so only a prompt that already opened a non-reasoning message counts
            return compiled.states[state].region is Region.CONTENT
        return state != REASONING and state != OPENING

    def __repr__(self) -> str:
        return f"Parser(reasoning={self.reasoning!r}, tools={self.tools!r})"

    def initial_state(self, request: Request, compiled: CompiledFormat | None = None) -> str:
        """The state the request's output starts in (``compiled``: ``_compiled_for(request)``)."""
        if compiled is None:
            compiled = self._compiled_for(request)
        states = compiled.states
        if REASONING not in states:
            return CONTENT
        verdict = prompt_verdict(
            compiled,
            prompt_text=request.prompt_text,
            prompt_token_ids=request.prompt_token_ids,
            vocab=self._vocab,
        )
        if verdict == OPEN:
            return REASONING
        if verdict == CLOSED:
            return CONTENT
        prompt_known = request.prompt_text is not None or request.prompt_token_ids is not None
        if prompt_known and request.constrained and not request.include_reasoning:
            return CONTENT  # hidden and constrained: the grammar applies from the first token
        state = compiled.spec.initial(request)
        if (
            state == REASONING
            and prompt_known
            and compiled.spec.model_opens
            and "THINK_START" in compiled.spec.terminals
        ):
            return OPENING  # the template left the opener to the model: only an output that writes it thinks
        return state if state in states else CONTENT

    def stream(self, *, atomic_tool_calls: bool = False, **options: Any) -> StreamParser:
        """A stream for one request (one choice). Options: see ``parse()``."""
        return self._stream(make_request(options), atomic_tool_calls)

    def _stream(
        self, request: Request, atomic_tool_calls: bool, value: Value = None, plain: bool | None = None
    ) -> StreamParser:
        """A stream for ``request``; ``value``: the state a stream of the same request wrote
        (``StreamParser.to_value``), read back (a ``ValueError`` if it has another shape), with
        ``plain`` as that stream's format was chosen (``_compiled_for``)."""
        compiled, state, plain = self._plan(request, plain)
        keep = filter_events(request)
        origin = partial(self._origin, request, atomic_tool_calls, plain)
        if value is None:
            engine = EventStream(
                compiled,
                request,
                initial_state=state,
                vocab=self._vocab,
                atomic_tool_calls=atomic_tool_calls,
            )
            return StreamParser(engine, keep, origin)
        engine_value, keep_value = as_tuple(value, 2)
        engine = EventStream.from_value(
            compiled, request, engine_value, vocab=self._vocab, atomic_tool_calls=atomic_tool_calls
        )
        if (keep is None) != (keep_value is None):
            raise ValueError("the state was written by a stream of another request")
        kept = keep.from_value(keep_value) if keep is not None else None
        return StreamParser(engine, kept, origin)

    # ------------------------------------------------------------------ state that travels

    def resume(
        self,
        state: bytes,
        key: bytes | str,
        *,
        atomic_tool_calls: bool = False,
        max_bytes: int = DEFAULT_MAX_BYTES,
        **options: Any,
    ) -> StreamParser:
        """The stream ``StreamParser.to_state(key)`` wrote ``state`` from, continuing exactly as it
        would have. ``options`` (and ``atomic_tool_calls``) are the ones that stream was made
        with, the prompt excepted: it only decided where the stream started, which the state
        carries, so it may be left out. A state that was altered, cut short, signed with another
        key, made by another trisect state version, by a parser of other formats or another
        tokenizer, for other options, that has expired, or that is over ``max_bytes`` is a
        ``StateError`` (its ``reason`` says which), and nothing of it is decoded."""
        request = make_request(options)
        binding = self._binding(request, atomic_tool_calls)
        value = unseal(state, key, binding, max_bytes=max_bytes, enums=VALUE_ENUMS)
        try:
            stream_value, plain, carried = as_tuple(value, 3)
            stream = self._stream(request, atomic_tool_calls, stream_value, as_bool(plain))
        except ValueError as exc:
            # genuine, but not a stream of this parser's: another release's layout under the same version
            raise StateError(f"the state does not read as a stream of this parser: {exc}", reason="malformed") from None
        stream.carried = carried
        return stream

    def _origin(self, request: Request, atomic: bool, plain: bool) -> tuple[Binding, bool]:
        """What a stream's state needs of how it was made: its binding, and whether its format
        dropped the reasoning format (decided from the prompt, which a resume need not repeat)."""
        return self._binding(request, atomic), plain

    def _binding(self, request: Request, atomic: bool) -> Binding:
        """What a state of this parser's stream for ``request`` is bound to: the parser's formats
        (their description, read by ``envelope.canonical``: the formats a request selects follow
        from them and the options), the tokenizer, the options. Cached per request object
        (``make_request`` hands out one per content)."""
        key = (id(request), atomic)
        hit = self._bindings.get(key)
        if hit is not None and hit[0] is request:
            return hit[1]
        if len(self._bindings) >= 256:
            self._bindings.clear()
        binding = self._bind(request, atomic)
        self._bindings[key] = (request, binding)  # the entry keeps ``request`` alive: ids stay unique
        return binding

    def _bind(self, request: Request, atomic: bool) -> Binding:
        formats = self._formats_digest
        if formats is None:
            formats = self._formats_digest = digest(canonical(self._compiled.spec).encode("utf-8"))
        tokenizer = digest(self._vocab.fingerprint()) if self._vocab is not None else NO_TOKENIZER
        options = f"{request.canonical()}|atomic={atomic}".encode("utf-8", "surrogatepass")
        return Binding(formats, tokenizer, digest(options))

    def parse(self, output: str | None = None, *, token_ids: Sequence[int] | None = None, **options: Any) -> Message:
        """Parse a whole output (text, or token ids with a tokenizer, or both).

        Options: ``tools`` (OpenAI tool definitions), ``chat_template_kwargs``,
        ``reasoning_effort``, ``prompt_text`` / ``prompt_token_ids``, ``id_factory``
        (index -> call id), ``strict`` (raise on malformed output instead of degrading),
        ``tool_choice`` (``"auto"``, ``"none"``, ``"required"``, ``{"type": "function",
        "function": {"name": …}}``), ``parallel_tool_calls`` (``False``: at most the first call),
        ``include_reasoning`` (``False``: reasoning is parsed but never returned),
        ``call_text_limit`` (characters of a streamed call's raw text kept, 65,536: the bound of an
        unfinished call's text and of a long argument's memory; ``trisect.engine.call``).
        """
        request = make_request(options)
        if token_ids is None and type(output) is str:
            compiled, state, _ = self._plan(request)
            events = whole_events(compiled, request, state, output, vocab=self._vocab)
            keep = filter_events(request)
            delta = fold(keep(events) if keep is not None else events)
            return delta.message() if delta is not None else Message()
        stream = self._stream(request, True)
        builder = MessageBuilder()
        builder.add(stream.feed(output, token_ids))
        builder.add(stream.finish())
        return builder.message()

    # ------------------------------------------------------------------ token view (request/tokenview.py)

    def _token_view(self, options: dict[str, Any]) -> tuple[TokenView, str, str]:
        if self._vocab is None:
            raise RequestError("the token view needs a tokenizer: Parser(..., tokenizer=...)")
        request = make_request(options)
        compiled = self._compiled_for(request)
        entry = self._token_views.get(id(compiled))
        if entry is None or entry[0] is not compiled:  # the entry keeps `compiled` alive: ids stay unique
            entry = self._token_views[id(compiled)] = (compiled, TokenView(compiled, self._vocab))
        view = entry[1]
        default = compiled.spec.initial(request) if REASONING in compiled.states else CONTENT
        return view, self.initial_state(request), default

    def is_reasoning_end(self, token_ids: Sequence[int], **options: Any) -> bool:
        """Has reasoning ended in ``token_ids`` (the output so far, or prompt + output)? The
        latest block wins; options as for ``parse()`` decide where the output starts. Cost: the
        ids after the last marker (no decoding); per decode step use ``reasoning_tracker``."""
        view, initial, default = self._token_view(options)
        if view.needs_engine:
            return self.reasoning_tracker(**options).feed(token_ids)
        return view.is_reasoning_end(token_ids, initial, default)

    def reasoning_tracker(self, **options: Any) -> ReasoningTracker | EngineTracker:
        """The streaming ``is_reasoning_end``: ``tracker.feed(new_ids)`` -> bool, O(new ids)."""
        view, initial, default = self._token_view(options)
        if view.needs_engine:
            return EngineTracker(self.stream(**options).engine)
        return view.tracker(initial, default)

    def content_token_ids(self, token_ids: Sequence[int], **options: Any) -> list[int]:
        """The ids after the end of the latest reasoning block (``[]`` while it is open)."""
        tracker = self.reasoning_tracker(**options)
        tracker.feed(token_ids)
        start = tracker.content_start
        return [] if start is None or not tracker.ended else list(token_ids[start:])

    def count_reasoning_tokens(self, token_ids: Sequence[int], **options: Any) -> int:
        """Ids strictly inside reasoning blocks, markers excluded (``usage.reasoning_tokens``)."""
        tracker = self.reasoning_tracker(**options)
        tracker.feed(token_ids)
        return tracker.reasoning_tokens


def formats() -> list[FormatSpec]:
    """Every registered format (reasoning first), with ``name``, ``kind``, ``models``."""
    return all_formats()
