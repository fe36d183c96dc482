"""``Parser``: a reasoning format and a tool-call format, compiled once, used per request.

``parse()`` is ``stream(atomic_tool_calls=True)``, one ``feed()`` and ``finish()``: there is one
code path, so whole and streamed results cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from ._compile import CompiledFormat, compile_format
from ._message import Message, MessageBuilder
from ._prompt import CLOSED, OPEN, prompt_verdict
from ._request import Request, make_request
from ._spec import CONTENT, REASONING, FormatSpec, combine
from ._stream import StreamParser
from ._tokenizer import Vocab
from .formats import all_formats, reasoning_format, tool_format


@cache
def _combined(reasoning: str | None, tools: str | None) -> FormatSpec:
    r = reasoning_format(reasoning) if reasoning is not None else None
    t = tool_format(tools) if tools is not None else None
    return combine(r, t)


class Parser:
    """Parses the output of one model family.

    ``reasoning`` and ``tools`` are format names as in vLLM's ``--reasoning-parser`` and
    ``--tool-call-parser`` (``None``: no reasoning block / no tool calls). ``tokenizer`` is
    optional (an HF ``tokenizers.Tokenizer``, a ``transformers`` tokenizer or a
    ``tiktoken.Encoding``): with it, special-token markers are matched by token id.
    """

    def __init__(self, reasoning: str | None = None, tools: str | None = None, *, tokenizer: Any = None) -> None:
        self.reasoning = reasoning
        self.tools = tools
        self._vocab = Vocab(tokenizer) if tokenizer is not None else None
        self._compiled: CompiledFormat = compile_format(_combined(reasoning, tools), self._vocab)

    @property
    def spec(self) -> FormatSpec:
        return self._compiled.spec

    def __repr__(self) -> str:
        return f"Parser(reasoning={self.reasoning!r}, tools={self.tools!r})"

    def initial_state(self, request: Request) -> str:
        states = self._compiled.states
        if REASONING not in states:
            return CONTENT
        verdict = prompt_verdict(
            self._compiled,
            prompt_text=request.prompt_text,
            prompt_token_ids=request.prompt_token_ids,
            vocab=self._vocab,
        )
        if verdict == OPEN:
            return REASONING
        if verdict == CLOSED:
            return CONTENT
        state = self._compiled.spec.initial(request)
        return state if state in states else CONTENT

    def stream(self, *, atomic_tool_calls: bool = False, **options: Any) -> StreamParser:
        """A stream for one request (one choice). Options: see ``parse()``."""
        request = make_request(options)
        return StreamParser(
            self._compiled,
            request,
            initial_state=self.initial_state(request),
            vocab=self._vocab,
            atomic_tool_calls=atomic_tool_calls,
        )

    def parse(self, output: str | None = None, *, token_ids: Sequence[int] | None = None, **options: Any) -> Message:
        """Parse a whole output (text, or token ids with a tokenizer, or both).

        Options: ``tools`` (OpenAI tool definitions), ``chat_template_kwargs``,
        ``reasoning_effort``, ``prompt_text`` / ``prompt_token_ids``, ``id_factory``
        (index -> call id), ``strict`` (raise on malformed output instead of degrading).
        """
        stream = self.stream(atomic_tool_calls=True, **options)
        builder = MessageBuilder()
        builder.add(stream.feed(output, token_ids))
        builder.add(stream.finish())
        return builder.message()


def formats() -> list[FormatSpec]:
    """Every registered format (reasoning first), with ``name``, ``kind``, ``models``."""
    return all_formats()
