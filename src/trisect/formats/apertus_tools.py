"""Swiss AI Apertus tool calls: a JSON list of ``{"NAME": {arguments}}`` objects.

Wire format (vLLM's Apertus tool template writes ``'{"' + name + '": ' + arguments + '}'``)::

    <|tools_prefix|>[{"get_weather": {"location": "Paris"}}, {"get_time": {"timezone": "UTC"}}]<|tools_suffix|>

The name is the object's only key and the arguments its value, streamed as written. The list
markers are special tokens of the Apertus vocabulary. An entry whose JSON is invalid (or that
has a second key) ends there and its text is content; the list markers are dropped.

Reference: vLLM ``examples/tool_chat_template_apertus.jinja`` (``tool_calls_token =
'<|tools_prefix|>'``, ``end_tool_calls_token = '<|tools_suffix|>'``); vLLM ``apertus`` parser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..codecs import JsonArgsCodec
from ..engine.jsonscan import JsonScanner
from ._json_tools import listed

_WS = re.compile(r"[ \t\r\n]*")
_OPEN, _KEY_START, _KEY, _COLON, _ARGS, _CLOSE = range(6)


class _NameKeyCodec:
    """``{"NAME": {…}}``: the key is the tool name, the value the arguments object."""

    structured = True
    in_value = False
    call_id: str | None = None

    def __init__(self, tools: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.name: str | None = None
        self.done = False
        self.failed = False
        self._state = _OPEN
        self._key = JsonScanner()
        self._key_text: list[str] = []
        self._args = JsonArgsCodec(tools)

    def set_name(self, name: str) -> None:
        pass

    def marker(self, terminal: str) -> None:
        pass

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
                if self._args.failed:
                    self.failed = True
                elif self._args.done:
                    self._state = _CLOSE
                continue
            i = _WS.match(s, i, end).end()
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

    def take(self) -> str:
        return self._args.take()

    def close(self) -> str | None:
        if self.failed or not self.done or self.name is None:
            self.failed = True
            return None
        return self._args.close()


FORMATS = [
    listed(
        "apertus",
        ("<|tools_prefix|>",),
        ("<|tools_suffix|>",),
        codec=_NameKeyCodec,
        special=frozenset({"LIST_START", "LIST_END"}),
        models=("Apertus-8B-Instruct-2509", "Apertus-70B-Instruct-2509"),
        reference="vLLM tool_chat_template_apertus.jinja; vLLM apertus",
    ),
]
