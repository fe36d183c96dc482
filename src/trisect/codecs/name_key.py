"""Calls written as ``{"NAME": {arguments}}``: the object's only key is the tool name (Apertus).

Structured: the key is read with the JSON scanner, the value by a ``JsonArgsCodec`` (streamed
as written); a second key, invalid JSON or an empty name fail the codec. Cost: O(len(piece))
per ``feed``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from ..engine.codec import ArgSyntax
from ..engine.jsonscan import JsonScanner
from ..engine.value import Value, as_int, as_pieces, as_tuple
from .base import Codec
from .json_call import JsonArgsCodec

_WS = re.compile(r"[ \t\r\n]*")
_OPEN, _KEY_START, _KEY, _COLON, _ARGS, _CLOSE = range(6)


class NameKeyCodec(Codec):
    """``{"NAME": {…}}``: the key is the tool name, the value the arguments object."""

    structured = True
    grammar: ClassVar[ArgSyntax | str | None] = "argument codec NameKeyCodec has no xgrammar style"

    def __init__(self, tools: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        super().__init__(tools)
        self._state = _OPEN
        self._key = JsonScanner()
        self._key_text: list[str] = []
        self._args = JsonArgsCodec(tools)

    def _own_value(self) -> Value:
        return (self._state, self._key.to_value(), "".join(self._key_text), self._args.to_value())

    def _load_own(self, value: Value) -> None:
        state, key, key_text, args = as_tuple(value, 4)
        self._state = as_int(state)
        self._key = JsonScanner.from_value(key)
        self._key_text = as_pieces(key_text)
        self._args.restore(args)

    @property
    def in_string(self) -> bool:
        if self._state == _KEY:
            return self._key.in_string
        return self._state == _ARGS and self._args.in_string

    def feed(self, s: str, i: int, end: int) -> int:
        while i < end and not self.done and not self.failed:
            st = self._state
            if st == _KEY:
                j = self._key.feed(s, i, end)
                self._key_text.append(s[i:j])
                i = j
                if self._key.failed:
                    self.failed = True
                elif self._key.done:
                    self.name = json.loads("".join(self._key_text)) or None
                    self.failed = self.name is None
                    self._state = _COLON
                continue
            if st == _ARGS:
                i = self._args.feed(s, i, end)
                piece = self._args.take()
                if piece:
                    self._emit(piece)
                if self._args.failed:
                    self.failed = True
                elif self._args.done:
                    self._state = _CLOSE
                continue
            m = _WS.match(s, i, end)
            i = m.end() if m is not None else i
            if i >= end:
                break
            c = s[i]
            if st == _OPEN and c == "{":
                self._state = _KEY_START
                i += 1
            elif st == _KEY_START and c == '"':
                self._state = _KEY
            elif st == _COLON and c == ":":
                self._state = _ARGS
                i += 1
            elif st == _CLOSE and c == "}":
                self.done = True
                i += 1
            else:
                self.failed = True
        return i
