"""JSON tool calls: an envelope ``{"name": …, "arguments": {…}}`` or a bare arguments object.

Both codecs are *structured*: they read the JSON themselves, so a marker string inside a JSON
string (``"</tool_call>"`` in a file the model writes) is string text, and they stop right
after the JSON value ends, which lets formats without an end marker end the call there.

Arguments stream as the model wrote them (numbers, unicode and spacing untouched), cut at a
safe watermark: only text the scanner has validated is sent, so every piece is a prefix of
the final arguments, and a closing brace is sent exactly when the scanner knows it closes the
arguments object. Arguments given as a JSON-encoded string are decoded once and streamed
decoded. Cost: O(len(piece)) per ``feed``.

``JsonArgsCodec`` is its own factory (``NamedArgs(name)``: one whose tool is known
beforehand); ``JsonEnvelope(name_keys, args_keys, id_keys, list_opener)`` is the envelope
codec's (its options, typed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..engine.codec import ArgSyntax
from ..engine.jsonscan import JsonScanner, run_matcher
from ..engine.value import Value, as_bool, as_int, as_opt_str, as_pieces, as_str, as_tuple
from . import json_whole
from .base import Codec

# the C decoder's readers, read from this module's namespace at each call: a compiled build calls a
# function it imports directly, and the suite counts which calls the C decoder read by replacing
# these names (one dictionary lookup per call read, none per delta)
read_object = json_whole.read_object
read_envelope = json_whole.read_envelope

_WS = run_matcher(r"[ \t\r\n]*")
_PLAIN_STRING = re.compile(r'[^"\\\x00-\x1f]*')  # text that stays inside a JSON string
# a backslash escape that may be incomplete at the end of a piece of string-encoded text
_OPEN_ESCAPE = re.compile(r"(?:\\u[0-9a-fA-F]{0,3}|\\u[dD][89abAB][0-9a-fA-F]{2}(?:\\u?[0-9a-fA-F]{0,3})?|\\)\Z")

# envelope states
_OPEN, _KEY_OR_CLOSE, _KEY, _KEYSTR, _COLON, _VALUE, _INVALUE, _AFTER, _DONE = range(9)


def _string(raw: str) -> str | None:
    """The string a complete JSON value is, or ``None`` when it is not a string. Only strings
    are decoded: a number or an array in a name's place is not a name, whatever its size (no
    integer conversion past Python's digit limit, no recursion as deep as its nesting)."""
    return json.loads(raw) if raw[:1] == '"' else None


class JsonArgsCodec(Codec):
    """The call body is the arguments object itself; the name came from a marker region."""

    structured = True
    grammar: ClassVar[ArgSyntax | str | None] = ArgSyntax("json")

    def __init__(self, tools: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        super().__init__(tools)
        self._scanner = JsonScanner()

    fast_strings = True

    @property
    def in_string(self) -> bool:
        return self._scanner.in_string

    def _own_value(self) -> Value:
        return self._scanner.to_value()

    def _load_own(self, value: Value) -> None:
        self._scanner = JsonScanner.from_value(value)

    def feed_last(self, s: str, i: int, end: int) -> int:
        """The rest of the output: the C decoder reads a plain object at once (``json_whole``)."""
        if not self._scanner.started and not self._out:
            read = read_object(s, i, end)
            if read is not None:
                j, self._out = read
                self.done = True
                return j
        return self.feed(s, i, end)

    def feed(self, s: str, i: int, end: int) -> int:
        if not self._scanner.started:
            i = _WS(s, i, end).end()
            if i >= end:
                return end
            if s[i] != "{":
                self.failed = True
                return i
        j = self._scanner.feed(s, i, end)
        if j > i:
            self._emit(s[i:j])
        if self._scanner.failed:
            self.failed = True
        elif self._scanner.done:
            self.done = True
        return j

    def string_piece(self, text: str) -> str | None:
        """A delta inside a JSON string (``in_string``): plain string text is argument text as
        written; ``None`` for any other (the general path reads it, and says where it stops)."""
        if self._out or not self._scanner.in_string_text or not _PLAIN_STRING.fullmatch(text):
            return None
        return text


@dataclass(frozen=True, slots=True)
class NamedArgs:
    """The factory of a ``JsonArgsCodec`` whose tool is known before its arguments (the function
    a named ``tool_choice`` forced)."""

    name: str

    @property
    def grammar(self) -> ArgSyntax:
        return ArgSyntax("json")

    def __call__(self, tools: Mapping[str, Mapping[str, Any]] | None = None, /) -> JsonArgsCodec:
        codec = JsonArgsCodec(tools)
        codec.name = self.name
        return codec


class _EncodedArgs:
    """Arguments written as a JSON string: decode as it arrives, validate the decoded text."""

    def __init__(self) -> None:
        self._pending = ""
        self._inner = JsonScanner()
        self.failed = False

    def to_value(self) -> Value:
        """``(an escape not complete yet, the decoded text's scanner, failed)``."""
        return (self._pending, self._inner.to_value(), self.failed)

    @classmethod
    def from_value(cls, value: Value) -> _EncodedArgs:
        pending, inner, failed = as_tuple(value, 3)
        new = cls()
        new._pending = as_str(pending)
        new._inner = JsonScanner.from_value(inner)
        new.failed = as_bool(failed)
        return new

    def feed_raw(self, interior: str) -> str:
        """The decoded text of ``interior`` that is argument text ("" when none yet, or failed)."""
        text = self._pending + interior
        m = _OPEN_ESCAPE.search(text)
        cut = m.start() if m else len(text)
        # an odd run of backslashes before the cut would leave a dangling escape
        self._pending = text[cut:]
        part = text[:cut]
        if not part:
            return ""
        try:
            decoded: str = json.loads('"' + part + '"')
        except ValueError:
            self.failed = True
            return ""
        if not self._inner.started:
            decoded = decoded.lstrip(" \t\r\n")
            if not decoded:
                return ""
            if decoded[0] != "{":
                self.failed = True
                return ""
        k = self._inner.feed(decoded)
        if self._inner.failed or k < len(decoded) and decoded[k:].strip(" \t\r\n"):
            self.failed = True
            return ""
        return decoded[:k]

    def finish(self) -> bool:
        return not self.failed and not self._pending and self._inner.done

    @classmethod
    def breaks_at(cls, state: Value, interior: str) -> int:
        """Where in ``interior``, fed to the decoder in ``state`` and failing there, the
        character that broke it is: the least prefix that fails ends with it (a prefix that fails
        fails however it goes on, so a binary search finds it). Cost O(n log n), once per call."""
        lo, hi = 1, len(interior)
        while lo < hi:
            mid = (lo + hi) // 2
            probe = cls.from_value(state)
            probe.feed_raw(interior[:mid])
            if probe.failed:
                hi = mid
            else:
                lo = mid + 1
        return lo - 1


@dataclass(frozen=True, slots=True)
class JsonEnvelope:
    """The options of ``JsonEnvelopeCodec``, and its factory: the family's key names (the first
    of ``name_keys`` / ``args_keys`` present counts; an ``id_keys`` key counts only before the
    name) and ``list_opener``: the call's opening marker may carry the ``[`` of the list around
    it (xLAM's ``[{``), which is skipped. ``requires_args``: an object without an arguments key is
    not a call (Llama's ``{"name": "Bob"}`` in prose); otherwise its arguments are ``{}``.
    ``ignored_keys``: keys that carry nothing a message holds: by default a call's ``id`` and
    ``type`` (``"function"``) as OpenAI-shaped calls write them (Llama's docs show the type). Any
    other key (a second name or arguments key, a misspelt one)
    makes the object unreadable: it is not a call, so no text of it is lost."""

    name_keys: tuple[str, ...] = ("name",)
    args_keys: tuple[str, ...] = ("arguments", "parameters")
    id_keys: tuple[str, ...] = ()
    list_opener: bool = False
    requires_args: bool = False
    ignored_keys: tuple[str, ...] = ("id", "type")

    @property
    def grammar(self) -> ArgSyntax | str:
        if self.id_keys:
            return "the envelope carries a call id key, which the grammar cannot fill"
        return ArgSyntax("json_envelope", (self.name_keys[0], self.args_keys[0]), list_opener=self.list_opener)

    def __call__(self, tools: Mapping[str, Mapping[str, Any]] | None = None, /) -> JsonEnvelopeCodec:
        return JsonEnvelopeCodec(tools, self)


ENVELOPE = JsonEnvelope()  # {"name": …, "arguments" | "parameters": …}


class JsonEnvelopeCodec(Codec):
    """``{"name": "f", "arguments": {…}}`` with the key names of its ``JsonEnvelope`` options."""

    structured = True
    grammar: ClassVar[ArgSyntax | str | None] = ArgSyntax("json_envelope")

    def __init__(self, tools: Mapping[str, Mapping[str, Any]] | None = None, options: JsonEnvelope = ENVELOPE) -> None:
        super().__init__(tools)
        self._name_keys = options.name_keys
        self._args_keys = options.args_keys
        self._id_keys = options.id_keys
        self._skip_list = options.list_opener
        self._requires_args = options.requires_args
        self._ignored_keys = options.ignored_keys
        self._held_name: str | None = None  # the name, until an arguments key makes it a call (requires_args)
        self._state = _OPEN
        self._scanner = JsonScanner()
        self._raw: list[str] = []  # raw text of a key or a captured value
        self._key = ""
        self._role = ""  # what the current value is: "name", "id", "args", "enc", "skip"
        self._args_seen = False
        self._args_done = False
        self._encoded: _EncodedArgs | None = None

    fast_strings = True

    @property
    def in_string(self) -> bool:
        return self._state in (_KEYSTR, _INVALUE) and self._scanner.in_string

    def _own_value(self) -> Value:
        encoded = self._encoded.to_value() if self._encoded is not None else None
        return (
            self._skip_list,
            self._held_name,
            self._state,
            self._scanner.to_value(),
            "".join(self._raw),
            self._key,
            self._role,
            self._args_seen,
            self._args_done,
            encoded,
        )

    def _load_own(self, value: Value) -> None:
        skip_list, held_name, state, scanner, raw, key, role, args_seen, args_done, encoded = as_tuple(value, 10)
        self._skip_list = as_bool(skip_list)
        self._held_name = as_opt_str(held_name)
        self._state = as_int(state)
        self._scanner = JsonScanner.from_value(scanner)
        self._raw = as_pieces(raw)
        self._key = as_str(key)
        self._role = as_str(role)
        self._args_seen = as_bool(args_seen)
        self._args_done = as_bool(args_done)
        self._encoded = _EncodedArgs.from_value(encoded) if encoded is not None else None

    def feed_last(self, s: str, i: int, end: int) -> int:
        """The rest of the output: the C decoder reads a plain envelope at once (``json_whole``)."""
        if self._state == _OPEN and not self._out:
            keys = (self._name_keys, self._args_keys, self._id_keys)
            read = read_envelope(keys, self._skip_list, s, i, end)
            if read is not None:
                j, self.name, self.call_id, args = read
                self._out = args
                self._skip_list = False
                self._args_seen = self._args_done = True
                self._state = _DONE
                self.done = True
                return j
        return self.feed(s, i, end)

    def feed(self, s: str, i: int, end: int) -> int:
        if self._skip_list:
            self._skip_list = False
            if i < end and s[i] == "[":
                i = _WS(s, i + 1, end).end()
        while i < end and not self.done and not self.failed:
            st = self._state
            if st in (_OPEN, _KEY_OR_CLOSE, _KEY, _COLON, _VALUE, _AFTER):
                i = _WS(s, i, end).end()
                if i >= end:
                    break
                c = s[i]
                if st == _OPEN:
                    if c != "{":
                        self.failed = True
                        break
                    self._state = _KEY_OR_CLOSE
                    i += 1
                elif st in (_KEY_OR_CLOSE, _KEY):
                    if c == '"':
                        self._scanner = JsonScanner()
                        self._raw = []
                        self._state = _KEYSTR
                    elif c == "}" and st == _KEY_OR_CLOSE:
                        self.done = True
                        i += 1
                    else:
                        self.failed = True
                        break
                elif st == _COLON:
                    if c != ":":
                        self.failed = True
                        break
                    self._state = _VALUE
                    i += 1
                elif st == _VALUE:
                    self._begin_value(c)
                    if self.failed:
                        break
                else:  # _AFTER
                    if c == ",":
                        self._state = _KEY
                    elif c == "}":
                        self.done = True
                    else:
                        self.failed = True
                        break
                    i += 1
            elif st == _KEYSTR:
                j = self._scanner.feed(s, i, end)
                self._raw.append(s[i:j])
                i = j
                if self._scanner.failed:
                    self.failed = True
                elif self._scanner.done:
                    self._key = json.loads("".join(self._raw))
                    self._state = _COLON
            else:  # _INVALUE
                i = self._value_text(s, i, end)
        return i

    def _begin_value(self, c: str) -> None:
        self._raw = []
        key = self._key
        if key in self._name_keys and self.name is None and self._held_name is None:
            self._role = "name"
        elif key in self._id_keys and self.call_id is None and self.name is None and self._held_name is None:
            # an id counts only before the name: the call is announced as soon as its name is known
            self._role = "id"
        elif key in self._args_keys and not self._args_seen:
            self._args_seen = True
            if self._held_name is not None:  # now it is a call: announce it
                self.name, self._held_name = self._held_name, None
            if c == "{":
                self._role = "args"
            elif c == '"':
                self._role = "enc"
                self._encoded = _EncodedArgs()
            elif c == "n":
                self._role = "null"
            else:
                self.failed = True
                return
        elif key in self._id_keys or key in self._ignored_keys:
            self._role = "skip"  # the family's markup: carries nothing (an id after the name is not streamed)
        else:
            # a key the family does not write (a second name or arguments key, a misspelt one): the
            # body does not read, and its text would be lost
            self.failed = True
            return
        # only the arguments are held to json.loads: a name or id that is no string is no name or id
        self._scanner = JsonScanner(loadable=self._role in ("args", "enc"))
        self._state = _INVALUE

    def _value_text(self, s: str, i: int, end: int) -> int:
        scanner = self._scanner
        j = scanner.feed(s, i, end)
        role = self._role
        piece = s[i:j]
        if role == "args":
            self._emit(piece)
        elif role == "enc":
            encoded = self._encoded
            assert encoded is not None
            lead = 0 if self._raw else 1  # the opening quote
            interior = piece[lead:]
            self._raw.append(piece)
            if scanner.done:
                interior = interior[:-1]  # the closing quote
            before = encoded.to_value()
            self._emit(encoded.feed_raw(interior))
            if encoded.failed:
                # it stops at the character that broke the arguments, wherever the delta ended
                self.failed = True
                return i + lead + _EncodedArgs.breaks_at(before, interior)
        elif role in ("name", "id", "null"):
            self._raw.append(piece)
        if scanner.failed:
            self.failed = True
        elif scanner.done:
            self._end_value()
        return j

    def _end_value(self) -> None:
        role = self._role
        if role == "name":
            value = _string("".join(self._raw))
            if not value:
                self.failed = True
            elif self._requires_args and not self._args_seen:
                self._held_name = value  # not a call until its arguments key comes
            else:
                self.name = value
        elif role == "id":
            value = _string("".join(self._raw))
            if value is not None:
                self.call_id = value
        elif role == "null":
            if "".join(self._raw) != "null":
                self.failed = True
            self._emit("{}")
            self._args_done = True
        elif role == "enc":
            assert self._encoded is not None
            if not self._encoded.finish():
                self.failed = True
            self._args_done = True
        elif role == "args":
            self._args_done = True
        self._state = _AFTER

    def string_piece(self, text: str) -> str | None:
        """A delta inside a string of the arguments object: plain string text is argument text
        as written; ``None`` for any other (the general path reads it, and says where it stops)."""
        if (
            self._out
            or self._state != _INVALUE
            or self._role != "args"
            or not self._scanner.in_string_text
            or not _PLAIN_STRING.fullmatch(text)
        ):
            return None
        return text

    def _finish(self) -> None:
        if self.name is None:
            self.failed = True  # a complete object without a name is not a call
        elif not self._args_seen:
            if self._requires_args:
                self.failed = True  # no arguments key: not a call of this family
                return
            self._emit("{}")
