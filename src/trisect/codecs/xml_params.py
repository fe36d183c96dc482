"""XML-style parameters: ``<parameter=KEY>VALUE</parameter>`` (and the ``name="KEY"`` variants).

The engine matches the parameter markers and calls ``marker()``; this codec reads the key up
to the first ``>`` (or up to ``key_end``), then the value, and writes one JSON object:

* a value that can only be a string (declared ``string``, or a parameter the schema does not
  describe) streams as it arrives, JSON-escaped;
* any other value is typed by the tool schema (``trisect._schema.typed_value``) and written
  once complete;
* the wrapping whitespace of a value is trimmed by the family's rule (``trim``):
  ``"newline"`` removes exactly one leading and one trailing ``\\n`` (Qwen3-Coder template),
  ``"strip"`` removes all surrounding whitespace, ``"none"`` keeps the value verbatim.

Output only grows: ``{"k": "v…`` is sent before the value ends, ``}`` when the call ends.
Cost: O(len(piece)) per ``feed``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import Any

from .._schema import declared_types, parameter_schema, streams_as_string, typed_value

_IDLE, _KEY, _VALUE = 0, 1, 2
_WS = " \t\r\n"


_quote = encode_basestring  # JSON string literal, non-ASCII kept as is


class XmlParamsCodec:
    """Per-call codec; see the module docstring."""

    structured = False
    in_string = False
    call_id: str | None = None

    def __init__(
        self,
        tools: Mapping[str, Mapping[str, Any]],
        *,
        param_start: str,
        param_end: str,
        key_end: str = ">",
        parse_key: Callable[[str], tuple[str, tuple[str, ...] | None]] | None = None,
        trim: str = "newline",
    ) -> None:
        self._tools = tools
        self._param_start = param_start
        self._param_end = param_end
        self._key_end = key_end
        self._parse_key = parse_key
        self._trim = trim
        self.name: str | None = None
        self.done = False
        self.failed = False
        self._params: Mapping[str, Any] | None = None
        self._state = _IDLE
        self._key: list[str] = []
        self._value: list[str] = []  # whole value (typed values) or held tail (strings)
        self._streaming = False
        self._types: tuple[str, ...] = ()
        self._seen_start = False  # a string value: its first character was seen
        self._out: list[str] = []
        self._count = 0

    def set_name(self, name: str) -> None:
        self._params = self._tools.get(name)

    @property
    def in_value(self) -> bool:
        return self._state == _VALUE

    @property
    def in_string_value(self) -> bool:
        """Inside a streamed string value: any text without markers is value text."""
        return self._state == _VALUE and self._streaming and self._seen_start

    def feed(self, s: str, i: int, end: int) -> int:
        text = s[i:end]
        while text:
            if self._state == _KEY:
                cut = text.find(self._key_end)
                if cut < 0:
                    self._key.append(text)
                    return end
                self._key.append(text[:cut])
                text = text[cut + len(self._key_end) :]
                self._begin_value("".join(self._key))
            elif self._state == _VALUE:
                self._value_text(text)
                text = ""
            else:
                text = ""  # whitespace or junk between parameters is formatting
        return end

    def marker(self, terminal: str) -> None:
        if terminal == self._param_start:
            if self._state == _VALUE:
                self._end_value()  # a parameter left open: the next one closes it
            elif self._state == _KEY:
                self._key = []
            self._state = _KEY
            self._key = []
        elif terminal == self._param_end:
            if self._state == _KEY:  # "<parameter=k</parameter>": a key with no value
                self._begin_value("".join(self._key))
            if self._state == _VALUE:
                self._end_value()

    def _begin_value(self, raw_key: str) -> None:
        key, types = raw_key.strip(), None
        if self._parse_key is not None:
            key, types = self._parse_key(raw_key)
        if types is None:
            types = declared_types(parameter_schema(self._params, key))
        self._types = types
        self._streaming = streams_as_string(types)
        self._out.append(("{" if self._count == 0 else ", ") + _quote(key) + ": ")
        self._count += 1
        self._state = _VALUE
        self._value = []
        self._seen_start = False
        if self._streaming:
            self._out.append('"')

    def _value_text(self, text: str) -> None:
        if not self._streaming:
            self._value.append(text)
            return
        if not self._seen_start:
            if self._trim == "newline":
                self._seen_start = True  # exactly one newline goes, whatever follows
                if text.startswith("\n"):
                    text = text[1:]
            elif self._trim == "strip":
                text = text.lstrip(_WS)
                self._seen_start = bool(text)
            else:
                self._seen_start = True
            if not text:
                return
        if self._value:
            text = self._value.pop() + text
        # hold back what the trim rule may remove at the end of the value
        if self._trim == "newline":
            keep = text[:-1] if text.endswith("\n") else text
        elif self._trim == "strip":
            keep = text.rstrip(_WS)
        else:
            keep = text
        if len(keep) < len(text):
            self._value.append(text[len(keep) :])
        if keep:
            self._out.append(_quote(keep)[1:-1])

    def _end_value(self) -> None:
        if self._streaming:
            if self._value and self._trim == "none":
                self._out.append(_quote("".join(self._value))[1:-1])
            self._out.append('"')
        else:
            raw = "".join(self._value)
            if self._trim == "newline":
                if raw.startswith("\n"):
                    raw = raw[1:]
                if raw.endswith("\n"):
                    raw = raw[:-1]
            elif self._trim == "strip":
                raw = raw.strip(_WS)
            self._out.append(typed_value(raw, self._types))
        self._value = []
        self._state = _IDLE

    def take(self) -> str:
        if not self._out:
            return ""
        text = "".join(self._out)
        self._out.clear()
        return text

    def close(self) -> str | None:
        if self._state == _KEY:
            self.failed = True
            return None
        if self._state == _VALUE:
            self._end_value()
        self._out.append("}" if self._count else "{}")
        self.done = True
        return self.take()
