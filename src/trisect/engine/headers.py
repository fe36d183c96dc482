"""Message headers (``Region.HEADER``, gpt-oss Harmony): the header text a stream collects.

A header's text, markers included, is collected and never emitted; at its end the stream
asks ``FormatSpec.header`` where the body goes. A header that does not end that way (left by
another marker, replaced by a new one, cut off by the end of the output) is content: its text
comes back from ``abandon`` / ``start`` (cut off, one that reads as a call's header is that
call's unfinished text instead: ``EventStream._cut_header``). Rules: the engine package docstring.

Cost: O(header text) per header.
"""

from __future__ import annotations

from .value import Value, as_int, as_str, as_tuple


class Header:
    """The open message header of one stream (``None`` parts: no header open)."""

    __slots__ = ("_parts", "at")

    def __init__(self) -> None:
        self._parts: list[str] | None = None
        self.at = 0  # output offset where the header's text began (kept by the stream)

    def copy(self) -> Header:
        return Header.from_value(self.to_value())

    def to_value(self) -> Value:
        """``(text, at)``: the open header's text (``None``: no header open) and its offset."""
        return ("".join(self._parts) if self._parts is not None else None, self.at)

    @classmethod
    def from_value(cls, value: Value) -> Header:
        parts, at = as_tuple(value, 2)
        new = cls()
        new._parts = None if parts is None else [as_str(parts)]
        new.at = as_int(at)
        return new

    @property
    def open(self) -> bool:
        """A header is open."""
        return self._parts is not None

    def add(self, text: str) -> None:
        """Header text (a marker inside the header is header text too)."""
        if self._parts is None:
            self._parts = []
        self._parts.append(text)

    def start(self, marker: str) -> str | None:
        """A header begins at ``marker``; returns the text of one left open (content)."""
        left = self.abandon("")
        self._parts = [marker]
        return left

    def abandon(self, marker: str) -> str | None:
        """The header did not end with its end marker: its text (and ``marker``) is content."""
        if self._parts is None:
            return None
        text = "".join(self._parts) + marker
        self._parts = None
        return text

    def take(self) -> str:
        """The header is complete: its text."""
        text = "".join(self._parts or ())
        self._parts = None
        return text
