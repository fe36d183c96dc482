"""XML-style parameters: ``<parameter=KEY>VALUE</parameter>`` (and the ``name="KEY"`` variants).

The engine matches the parameter markers and calls ``marker()``; this codec reads the key up
to the first ``>`` (or up to ``key_end``; or, with ``key_marker``, up to that terminal, as GLM's
``<arg_key>k</arg_key>``), then the value (with ``value_start``, the value begins only at that
terminal, as GLM's ``<arg_value>``; text in between is formatting), and writes one JSON object:

* a value that can only be a string (declared ``string``, or a parameter the schema does not
  describe) streams as it arrives, JSON-escaped;
* any other value is typed by the tool schema (``trisect.codecs.schema.typed_value``) and written
  once complete;
* the wrapping whitespace of a value is trimmed by the family's rule (``trim``):
  ``"newline"`` removes exactly one leading and one trailing ``\\n`` (Qwen3-Coder template),
  ``"strip"`` removes all surrounding whitespace, ``"none"`` keeps the value verbatim;
* ``parse_key`` reads attributes from the raw key text (``name="k" string="false"``) and may
  decide the value's types itself: ``("string",)`` for a raw string, ``JSON_TEXT`` for a value
  the model wrote as JSON (kept as written when it is valid JSON, else a string);
* ``unwrap`` (DeepSeek V4): a first parameter named one of these keys, which the tool's schema
  does not declare, whose value is a JSON object and which stays the only parameter, *is* the
  arguments object (``{"arguments": {...}}`` becomes ``{...}``); it is held until that is known.

Output only grows: ``{"k": "v…`` is sent before the value ends, ``}`` when the call ends.
Cost: O(len(piece)) per ``feed``.

The options are one frozen ``XmlParams`` object, the codec's factory; its ``style`` names the
xgrammar argument style that writes this syntax, when one does (the format declares it: which
style a parameter syntax is cannot be read off the options).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

from ..engine.codec import ArgSyntax
from ..engine.fields import skip_lead, skip_trail
from ..engine.value import Value, as_bool, as_int, as_opt_str, as_pieces, as_str, as_strs, as_tuple
from .base import Codec, emit_json_string
from .schema import declared_types, parameter_schema, streams_as_string, typed_value

# _AWAIT: the key is complete, the value marker is not yet seen; _CLOSER: the closer's own key
# (``closer_key``: ``</KEY>``) is being read; _BETWEEN: inside an element between key and value
_IDLE, _KEY, _VALUE, _AWAIT, _CLOSER, _BETWEEN = 0, 1, 2, 3, 4, 5
_WS = " \t\r\n"
JSON_TEXT = ("json",)  # pseudo-types: the value is JSON text whatever its kind


_quote = encode_basestring  # JSON string literal, non-ASCII kept as is


KeyReader = Callable[[str], tuple[str, tuple[str, ...] | None]]
"""Raw key text -> (key, the value's types or None to ask the tool schema)."""

TRIMS = ("newline", "strip", "none")


@dataclass(frozen=True, slots=True)
class XmlParams:
    """The options of ``XmlParamsCodec`` (see the module docstring), and its factory.

    ``param_start`` / ``param_end`` / ``key_marker`` / ``value_start`` are terminal names of
    the format; ``key_end`` is text. ``closer_key``: the closer names its parameter (MiniMax-M3's
    ``</KEY>``: the ``param_end`` terminal is ``</``), and that name must be the parameter's.
    ``between``: (opener, closer) terminals of elements written between a key and its value
    whose text is formatting (K2 Horizon's ``<ifm|arg_type>``). ``style``: the xgrammar argument
    style of this syntax, or ``None`` when none writes it."""

    param_start: str
    param_end: str
    key_end: str = ">"
    parse_key: KeyReader | None = None
    trim: str = "newline"
    key_marker: str | None = None
    value_start: str | None = None
    unwrap: tuple[str, ...] = ()
    style: str | None = None
    closer_key: bool = False
    between: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.trim not in TRIMS:
            raise ValueError(f"trim must be one of {', '.join(TRIMS)}")

    @property
    def grammar(self) -> ArgSyntax | None:
        return None if self.style is None else ArgSyntax(self.style, opener=self.param_start)

    def __call__(self, tools: Mapping[str, Mapping[str, Any]], /) -> XmlParamsCodec:
        return XmlParamsCodec(tools, self)


class XmlParamsCodec(Codec):
    """Per-call codec; see the module docstring."""

    structured = False

    def __init__(self, tools: Mapping[str, Mapping[str, Any]], options: XmlParams) -> None:
        super().__init__(tools)
        self._tools = tools
        self._param_start = options.param_start
        self._param_end = options.param_end
        self._key_end = options.key_end
        self._parse_key = options.parse_key
        self._trim = options.trim
        self._key_marker = options.key_marker
        self._value_start = options.value_start
        self._unwrap = options.unwrap
        self._closer_key = options.closer_key
        self._between = dict(options.between)  # opener -> closer
        self._between_end = ""  # the closer of the element being read (_BETWEEN)
        self._last_key = ""  # the key of the parameter that ended last (``closer_key``)
        self._tool: str | None = None  # the tool's name, once known (set_name)
        self._held: tuple[str, str | None] | None = None  # unwrap candidate: (key, value text once complete)
        self._pending_key = ""
        self._params: Mapping[str, Any] | None = None
        self._state = _IDLE
        self._key: list[str] = []
        self._value: list[str] = []  # whole value (typed values) or held tail (strings)
        self._streaming = False
        self._types: tuple[str, ...] = ()
        self._seen_start = False  # a string value: its first character was seen
        self._count = 0
        self._keys: set[str] = set()  # the keys of this call so far: none is written twice

    fast_strings = True

    def set_name(self, name: str) -> None:
        self._tool = name
        self._params = self._tools.get(name)

    def _own_value(self) -> Value:
        """``(tool name, held unwrap candidate, pending key, state, key text, value text, streaming,
        types, first character seen, parameters, keys, closer of the element between key and value,
        last key)``; the tool's schema is read again from
        the request's tools by name."""
        held = None if self._held is None else (self._held[0], self._held[1])
        return (
            self._tool,
            held,
            self._pending_key,
            self._state,
            "".join(self._key),
            "".join(self._value),
            self._streaming,
            self._types,
            self._seen_start,
            self._count,
            tuple(sorted(self._keys)),
            self._between_end,
            self._last_key,
        )

    def _load_own(self, value: Value) -> None:
        (
            tool,
            held,
            pending_key,
            state,
            key,
            text,
            streaming,
            types,
            seen_start,
            count,
            keys,
            between_end,
            last_key,
        ) = as_tuple(value, 13)
        if tool is not None:
            self.set_name(as_str(tool))
        if held is not None:
            held_key, held_text = as_tuple(held, 2)
            self._held = (as_str(held_key), as_opt_str(held_text))
        self._pending_key = as_str(pending_key)
        self._state = as_int(state)
        self._key = as_pieces(key)
        self._value = as_pieces(text)
        self._streaming = as_bool(streaming)
        self._types = as_strs(types)
        self._seen_start = as_bool(seen_start)
        self._count = as_int(count)
        self._keys = set(as_strs(keys))
        self._between_end = as_str(between_end)
        self._last_key = as_str(last_key)

    @property
    def in_value(self) -> bool:
        return self._state == _VALUE

    @property
    def in_string_value(self) -> bool:
        """Inside a streamed string value: any text without markers is value text."""
        return self._state == _VALUE and self._streaming and self._seen_start

    def string_piece(self, text: str) -> str | None:
        """``feed`` + ``take`` for text inside a streamed string value (``in_string_value``):
        the common delta, without the general path's bookkeeping. Same result."""
        if self._value or self._out:
            self.feed(text, 0, len(text))
            return self.take()
        trim = self._trim
        if (trim == "newline" and text[-1] == "\n") or (trim == "strip" and text[-1] in _WS):
            self._value_text(text, 0, len(text))
            return self.take()
        return _quote(text)[1:-1]

    def accepts_key(self, raw: str) -> bool:
        """Inside a value, the parameter marker before ``raw`` opens the next parameter (the
        value's closer is missing) only for a key that can be one: written as a key (no ``<``),
        new to this call, and one the tool declares when its schema lists properties.
        Otherwise the marker and the key are the value's text."""
        if "<" in raw:
            return False
        key = self._parse_key(raw)[0] if self._parse_key is not None else raw.strip()
        if not key or key in self._keys:
            return False
        props = self._params.get("properties") if self._params else None
        return not props or key in props

    def feed(self, s: str, i: int, end: int) -> int:
        if self.failed:
            return end
        while i < end:
            if self._state == _KEY:
                if self._key_marker is not None:
                    self._key.append(s[i:end])
                    return end
                cut = s.find(self._key_end, i, end)
                if cut < 0:
                    self._key.append(s[i:end])
                    return end
                self._key.append(s[i:cut])
                i = cut + len(self._key_end)
                self._key_done("".join(self._key))
            elif self._state == _VALUE:
                self._value_text(s, i, end)
                return end
            elif self._state == _BETWEEN:
                return end  # the element's text is formatting
            elif self._state == _CLOSER:
                cut = s.find(self._key_end, i, end)
                self._key.append(s[i:end] if cut < 0 else s[i:cut])
                if cut < 0:
                    return end
                if "".join(self._key).strip() != self._last_key:
                    self.failed = True  # </other> closes no open parameter
                    return end
                self._state = _IDLE
                i = cut + len(self._key_end)
            else:
                # between parameters only whitespace is formatting: other text there (a broken
                # marker, a stray word) is a body that does not read, not text to drop
                if skip_lead(s, i, end, _WS) < end:
                    self.failed = True
                return end
        return end

    def marker(self, terminal: str) -> None:
        if self.failed:
            return
        if self._state == _CLOSER:  # a closer's name left without its ">": it must still be the key
            self._close_closer()
            if self.failed:
                return
        if terminal in self._between or terminal == self._between_end:
            if terminal in self._between and self._state == _AWAIT:
                self._state, self._between_end = _BETWEEN, self._between[terminal]
            elif terminal == self._between_end and self._state == _BETWEEN:
                self._state, self._between_end = _AWAIT, ""
            else:
                self.failed = True  # an element between key and value, out of place
        elif terminal == self._param_start:
            if self._state == _VALUE:
                self._end_value()  # a parameter left open: the next one closes it
            elif self._state == _AWAIT:  # a key without a value: the value is empty
                self._begin_value(self._pending_key)
                self._end_value()
            elif self._state == _KEY:
                self.failed = True  # a key never ended: its text would be lost
                return
            self._state = _KEY
            self._key = []
        elif terminal == self._param_end:
            if self._state == _KEY:  # "<parameter=k</parameter>": a key with no value
                self._begin_value("".join(self._key))
            elif self._state == _AWAIT:
                self._begin_value(self._pending_key)
            elif self._state == _IDLE:
                self.failed = True  # a closer with no parameter open: its opener is broken or missing
                return
            if self._state == _VALUE:
                self._end_value()
                if self._closer_key:
                    self._state, self._key = _CLOSER, []
        elif terminal == self._key_marker:
            if self._state == _KEY:
                self._key_done("".join(self._key))
            else:
                self.failed = True  # a key end without a key
        elif terminal == self._value_start:
            if self._state == _AWAIT:
                self._begin_value(self._pending_key)
            else:
                self.failed = True  # a value without a key

    def _key_done(self, raw_key: str) -> None:
        if self._value_start is None:
            self._begin_value(raw_key)
        else:
            self._pending_key = raw_key
            self._state = _AWAIT

    def _begin_value(self, raw_key: str) -> None:
        key, types = raw_key.strip(), None
        if self._parse_key is not None:
            key, types = self._parse_key(raw_key)
        if not key or key in self._keys:  # no key (an element that names none: Kimi K3's
            self.failed = True  # <|open|>argument type="json">), or one written twice: no object
            return
        self._keys.add(key)
        self._last_key = key
        if types is None:
            types = declared_types(parameter_schema(self._params, key))
        self._types = types
        self._streaming = streams_as_string(types)
        if self._held is not None:  # a second parameter: the held one was a parameter after all
            self._release_held()
        if (
            self._count == 0
            and key in self._unwrap
            and not self._streaming
            and parameter_schema(self._params, key) is None
        ):
            self._held = (key, None)
        else:
            self._emit(("{" if self._count == 0 else ", ") + _quote(key) + ": ")
        self._count += 1
        self._state = _VALUE
        self._value = []
        self._seen_start = False
        if self._streaming:
            self._emit('"')

    def _value_text(self, s: str, i: int, end: int) -> None:
        """Value text ``s[i:end]`` (a whole output's value is read from ``s``, not copied first)."""
        if not self._streaming:
            self._value.append(s[i:end])
            return
        if not self._seen_start:
            if self._trim == "newline":
                self._seen_start = True  # exactly one newline goes, whatever follows
                if s.startswith("\n", i, end):
                    i += 1
            elif self._trim == "strip":
                i = skip_lead(s, i, end, _WS)
                self._seen_start = i < end
            else:
                self._seen_start = True
            if i >= end:
                return
        if self._value:
            if self._trim == "strip" and skip_lead(s, i, end, _WS) == end:
                self._value.append(s[i:end])  # more trailing whitespace: held as pieces, O(delta)
                return
            s = "".join(self._value) + s[i:end]
            i, end = 0, len(s)
            self._value.clear()
        # hold back what the trim rule may remove at the end of the value
        if self._trim == "newline":
            keep = end - 1 if s.endswith("\n", i, end) else end
        elif self._trim == "strip":
            keep = skip_trail(s, i, end, _WS)
        else:
            keep = end
        if keep < end:
            self._value.append(s[keep:end])
        emit_json_string(s, i, keep, self._emit)

    def _end_value(self) -> None:
        if self._streaming:
            if self._value and self._trim == "none":
                self._emit(_quote("".join(self._value))[1:-1])
            self._emit('"')
        else:
            raw = "".join(self._value)
            self._value = []  # the pieces go before the value is written: one copy of it at a time
            if self._trim == "newline":
                if raw.startswith("\n"):
                    raw = raw[1:]
                if raw.endswith("\n"):
                    raw = raw[:-1]
            elif self._trim == "strip":
                raw = raw.strip(_WS)
            if self._types == JSON_TEXT and self._held is None and not _is_json(raw):
                self._emit('"')  # a string, escaped in place: a long value is never copied whole
                emit_json_string(raw, 0, len(raw), self._emit)
                self._emit('"')
            else:
                text = _json_text(raw) if self._types == JSON_TEXT else typed_value(raw, self._types)
                if self._held is not None:
                    self._held = (self._held[0], text)
                else:
                    self._emit(text)
        self._value = []
        self._state = _IDLE

    def _release_held(self) -> None:
        assert self._held is not None
        key, text = self._held
        self._held = None
        self._emit("{" + _quote(key) + ": " + (text or '""'))

    def _close_closer(self) -> None:
        if "".join(self._key).strip() not in ("", self._last_key):
            self.failed = True
        self._state = _IDLE

    def _unfinished(self) -> None:
        """The call ended: the open parameter ends with it (a key still being read: unfinished)."""
        if self._state == _KEY:
            return
        if self._state == _CLOSER:
            self._close_closer()
            if self.failed:
                return
        if self._state == _AWAIT:
            self._begin_value(self._pending_key)
        if self._state == _VALUE:
            self._end_value()
        if self._held is not None and (self._held[1] or "").startswith("{"):
            self._emit(self._held[1] or "")  # the wrapper's object is the arguments
            self._held = None
        else:
            if self._held is not None:
                self._release_held()
            self._emit("}" if self._count else "{}")
        self.done = True


# An attribute: a name (where a name can begin: the lookbehind keeps the scan linear, as no match
# is tried from inside a name), "=", a value in double or single quotes or bare (up to a space,
# a quote or ">"). Without the lookbehind every position inside a long name would start a match
# that reads to the name's end: quadratic in the name's length.
_ATTRIBUTE = re.compile(r"""(?<![\w.-])([A-Za-z_][\w.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")


def attribute_pairs(text: str) -> list[tuple[str, str, str]]:
    """The ``name=value`` attributes of an element's header, in order, as ``(name, quote,
    value)``: ``quote`` is ``"``, ``'`` or ``""`` (bare), the value as written (each format
    unescapes it its own way and decides which quotes it reads). Cost: O(len(text))."""
    return [_pair(m) for m in _ATTRIBUTE.finditer(text)]


def _pair(m: re.Match[str]) -> tuple[str, str, str]:
    name, double, single, bare = m.groups()
    if double is not None:
        return name, '"', double
    if single is not None:
        return name, "'", single
    return name, "", bare


# attributes that name a call rather than carry data (an id or index the model numbers calls
# with, the call's type): ignored by every reader, never text a field must hold
IDENTITY_ATTRIBUTES = frozenset({"id", "index", "type"})


def only_attributes(text: str, reads: Collection[str] | None = None) -> list[tuple[str, str, str]] | None:
    """``attribute_pairs(text)`` when the text is attributes and whitespace only, else ``None``:
    other text in a header (``name=d\nb``, ``tool="g"s``) is text no key or value carries, so
    the header does not read. ``reads``: the attributes the format reads; another attribute
    (``g="te"``), identity ones (``IDENTITY_ATTRIBUTES``) aside, holds text no field carries, so
    the header does not read either. Cost: O(len(text))."""
    pairs = []
    at = 0
    for m in _ATTRIBUTE.finditer(text):
        if text[at : m.start()].strip():
            return None
        pair = _pair(m)
        if reads is not None and pair[0] not in reads and pair[0].lower() not in IDENTITY_ATTRIBUTES:
            return None
        pairs.append(pair)
        at = m.end()
    return pairs if not text[at:].strip() else None


def _json_text(raw: str) -> str:
    """A value the model marked as JSON: as written when it is valid JSON, else a string."""
    return raw.strip(_WS) if _is_json(raw) else json.dumps(raw, ensure_ascii=False)


def _is_json(raw: str) -> bool:
    try:
        json.loads(raw.strip(_WS), parse_constant=_not_json)
    except (ValueError, RecursionError):  # nested past the C decoder's depth: not JSON here either
        return False
    return True


def _not_json(name: str) -> None:
    raise ValueError(f"{name} is not JSON")
