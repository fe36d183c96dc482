"""The base of every argument codec: the ``CallCodec`` boilerplate, written once.

A codec subclasses ``Codec`` and writes only its syntax: ``feed`` (read text, append argument
text with ``self._emit``, set ``done`` / ``failed``), and where needed ``marker`` (parameter
markers of unstructured codecs), ``set_name`` (the name from a marker region), ``_finish``
(the last text once the structure is complete) and ``_unfinished`` (what ``close`` makes of an
unfinished structure, for codecs whose structure only ``close`` completes).

The one rule for ``close()`` (``trisect.engine.codec``): it returns ``None`` when ``failed`` or
when the structure is unfinished, and the rest of the arguments otherwise; it sets ``failed``
only where ``_finish`` finds a complete structure that is not a call, never for text that
merely stopped early. ``tests/test_codecs.py`` holds every codec to it.

Fast paths: a codec with ``fast_strings`` gives ``string_piece(text)`` (``feed`` + ``take`` of a
delta inside a string, without the general path's bookkeeping; ``None`` where it does not
apply, so that the general path says where the codec stopped); ``string_stops`` are the
characters that may end a string (default ``"`` and ``\\``); ``in_string_value`` (unstructured
codecs): inside a streamed string value.

State: a codec's state is a plain value (``trisect.engine.value``). ``Codec`` writes the part
every codec has (name, call id, done, failed, text not taken yet) and asks the codec for the
rest: ``_own_value()`` returns it, ``_load_own(value)`` reads it into a fresh codec of the same factory
(``restore``). The options a factory gave the codec are not part of it.

A codec class with no options is its own factory (``codec=JsonArgsCodec``); one with options
has a frozen options object that is the factory (``codec=XmlParams(...)``). Either says how a
grammar writes its arguments in ``grammar`` (an ``ArgSyntax``, a reason, or ``None``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import Any, ClassVar

from ..engine.codec import ArgSyntax
from ..engine.value import Value, as_bool, as_opt_str, as_str, as_tuple
from ..native import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)  # a format of the user's may bring its own codec
class Codec:
    """Per-call codec state shared by every codec; see the module docstring."""

    structured: ClassVar[bool]
    grammar: ClassVar[ArgSyntax | str | None] = None
    fast_strings: ClassVar[bool] = False

    def __init__(self, tools: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.name: str | None = None
        self.call_id: str | None = None
        self.done = False
        self.failed = False
        self._out = ""  # argument text not taken yet (``_emit``)

    @property
    def in_value(self) -> bool:
        return False

    @property
    def in_string(self) -> bool:
        return False

    @property
    def in_string_value(self) -> bool:
        return False

    @property
    def string_stops(self) -> str:
        return '"\\'

    def string_piece(self, text: str) -> str | None:
        """The argument text of a delta inside a string, read faster than ``feed`` + ``take``
        (codecs with ``fast_strings``), or ``None``: the general path reads it (here, always)."""
        return None

    def to_value(self) -> Value:
        """``(name, call id, done, failed, text not taken yet, the codec's own state)``."""
        return (self.name, self.call_id, self.done, self.failed, self._out, self._own_value())

    def restore(self, value: Value) -> None:
        """Read ``value`` (from ``to_value`` of a codec of the same factory) into this fresh codec."""
        name, call_id, done, failed, out, own = as_tuple(value, 6)
        self.name = as_opt_str(name)
        self.call_id = as_opt_str(call_id)
        self.done = as_bool(done)
        self.failed = as_bool(failed)
        self._out = as_str(out)
        self._load_own(own)

    def _own_value(self) -> Value:
        """The codec's own state (``None``: nothing beyond ``Codec``'s)."""
        return None

    def _load_own(self, value: Value) -> None:
        """Read what ``_own_value`` wrote."""
        if value is not None:
            raise ValueError(f"{type(self).__name__} has no state of its own")

    def accepts_key(self, raw: str) -> bool:
        """Inside a value, may the raw key text ``raw`` open the next parameter
        (``Rule.key_end``)? Codecs without raw values never see the question."""
        return True

    def feed(self, s: str, i: int, end: int) -> int:
        raise NotImplementedError

    def feed_last(self, s: str, i: int, end: int) -> int:
        """``feed`` where ``s[i:end]`` is the rest of the output (a codec may read it faster)."""
        return self.feed(s, i, end)

    def marker(self, terminal: str) -> None:
        """A parameter marker (unstructured codecs); structured codecs read their own."""

    def set_name(self, name: str) -> None:
        """The tool name, read by the engine from a name region."""

    def _emit(self, text: str) -> None:
        """Append argument text. The text not taken yet is one string grown in place (the
        only reference to it is the local ``out`` while it grows), so a held call's arguments,
        many megabytes long, are never joined from pieces: they cost one copy, not two."""
        out = self._out
        self._out = ""
        out += text
        self._out = out

    def take(self) -> str:
        text = self._out
        self._out = ""
        return text

    def close(self) -> str | None:
        if not self.failed and not self.done:
            self._unfinished()
        if not self.failed and self.done:
            self._finish()
        if self.failed or not self.done:
            return None
        return self.take()

    def _unfinished(self) -> None:
        """``close`` met an unfinished structure: complete it here if the syntax allows."""

    def _finish(self) -> None:
        """The structure is complete: append the last text, or set ``failed`` if it is not a call."""


def integer_text(text: str) -> str:
    """The JSON text of a decimal integer literal (a sign, digits, Python's underscores): what
    ``str(int(text))`` gives, without ``int()``, so any number of digits (Python refuses to
    convert more than 4,300). Cost O(len(text))."""
    digits = text.lstrip("+-").replace("_", "").lstrip("0") or "0"
    return "-" + digits if text.startswith("-") and digits != "0" else digits


_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')  # what a JSON string escapes (non-ASCII stays as is)
ESCAPE_CHUNK = 1 << 16


def emit_json_string(s: str, i: int, end: int, emit: Callable[[str], None]) -> None:
    """``s[i:end]`` as the inside of a JSON string (escaped where it needs it), handed to ``emit``
    a chunk at a time: a string value many megabytes long costs the arguments it becomes and one
    chunk, never a slice of it and an escaped copy besides."""
    for k in range(i, end, ESCAPE_CHUNK):
        piece = s[k : min(end, k + ESCAPE_CHUNK)]
        emit(piece if _NEEDS_ESCAPE.search(piece) is None else encode_basestring(piece)[1:-1])
