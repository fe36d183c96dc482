"""Mistral's call body: a named call's bare arguments or a list entry's envelope.

After ``[TOOL_CALLS]`` a Mistral model writes either ``name[ARGS]{…}`` (tokenizer v11+: the
engine reads the name from its region and calls ``set_name``) or a JSON list of
``{"name": …, "arguments": …, "id": …}`` envelopes (v3). Which one is known at the first JSON
character, since a named call has had its name set by then: this codec then reads on as a
``JsonArgsCodec`` or as a ``JsonEnvelopeCodec`` (an ``"id"`` key before the name is the call id).
Cost: that of the codec it reads as.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..engine.codec import ArgSyntax
from ..engine.value import Value, as_bool, as_tuple
from .base import Codec
from .json_call import JsonArgsCodec, JsonEnvelope, JsonEnvelopeCodec

_LIST_ENTRY = JsonEnvelope(id_keys=("id",))


class MistralCallCodec(Codec):
    """See the module docstring."""

    structured = True
    grammar: ClassVar[ArgSyntax | str | None] = "argument codec MistralCallCodec has no xgrammar style"

    def __init__(self, tools: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        super().__init__(tools)
        self._tools = tools
        self._named = False
        self._inner: JsonArgsCodec | JsonEnvelopeCodec | None = None

    def set_name(self, name: str) -> None:
        self._named = True

    def _own_value(self) -> Value:
        """``(named, the inner codec's state or None, it reads bare arguments)``."""
        inner = self._inner
        if inner is None:
            return (self._named, None, False)
        return (self._named, inner.to_value(), isinstance(inner, JsonArgsCodec))

    def _load_own(self, value: Value) -> None:
        named, inner, bare = as_tuple(value, 3)
        self._named = as_bool(named)
        if inner is not None:
            codec = JsonArgsCodec(self._tools) if as_bool(bare) else _LIST_ENTRY(self._tools)
            codec.restore(inner)
            self._inner = codec

    @property
    def in_string(self) -> bool:
        return self._inner is not None and self._inner.in_string

    def _codec(self) -> JsonArgsCodec | JsonEnvelopeCodec:
        if self._inner is None:
            self._inner = JsonArgsCodec(self._tools) if self._named else _LIST_ENTRY(self._tools)
        return self._inner

    def _sync(self, inner: Codec) -> None:
        self.done, self.failed = inner.done, inner.failed
        self.name, self.call_id = inner.name, inner.call_id

    def feed(self, s: str, i: int, end: int) -> int:
        return self._read(s, i, end, False)

    def feed_last(self, s: str, i: int, end: int) -> int:
        return self._read(s, i, end, True)

    def _read(self, s: str, i: int, end: int, last: bool) -> int:
        inner = self._codec()
        j = inner.feed_last(s, i, end) if last else inner.feed(s, i, end)
        piece = inner.take()
        if piece:
            self._emit(piece)
        self._sync(inner)
        return j

    def _finish(self) -> None:
        inner = self._codec()
        rest = inner.close()
        self._sync(inner)
        if rest:
            self._emit(rest)
