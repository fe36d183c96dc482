"""The two text fields, reasoning and content: which part of a piece of text a stream may emit now.

Rules:

* Reasoning and content are each stripped of leading and trailing whitespace as a whole
  (``FormatSpec.strip``): the newlines templates put around markers are formatting.
  Whitespace between two pieces of one field (content before and after a tool call) is kept.
  A stream holds trailing whitespace until more text of that field arrives (and drops it at
  the end).
* Whitespace in envelope regions (``Region.SKIP``) is dropped; other text there outside a call
  is content, with the whitespace around it between two markers kept only between
  non-whitespace text.

Invariant: nothing emitted is ever taken back; held whitespace is kept as pieces.

Cost: O(len(piece)) per piece: a long run of whitespace-only deltas costs O(delta) each, not
O(run). Memory O(held whitespace).
"""

from __future__ import annotations

_WS = " \t\r\n"


class Fields:
    """Per field (0: reasoning, 1: content): emitted yet, and the trailing whitespace held."""

    __slots__ = ("_strip", "_started", "_held", "_skip_ws")

    def __init__(self, strip: str) -> None:
        self._strip = strip
        self._started = [False, False]
        self._held: list[list[str]] = [[], []]
        self._skip_ws = ""  # whitespace of a SKIP region, kept only if text follows it

    def copy(self) -> Fields:
        new = Fields(self._strip)
        new._started = self._started[:]
        new._held = [self._held[0][:], self._held[1][:]]
        new._skip_ws = self._skip_ws
        return new

    def trim(self, f: int, text: str) -> str:
        """The part of ``text`` field ``f`` can emit now (see the module docstring)."""
        strip = self._strip
        if not self._started[f]:
            text = text.lstrip(strip)
            if not text:
                return ""
            self._started[f] = True
        body = text.rstrip(strip)
        held = self._held[f]
        if not body:
            held.append(text)
            return ""
        tail = text[len(body) :]
        if held:
            body = "".join(held) + body
            held.clear()
        if tail:
            held.append(tail)
        return body

    def skip_text(self, s: str) -> str:
        """Text of a ``Region.SKIP`` state outside a call: the content it carries, the same
        whatever the cuts ("" while it is whitespace)."""
        t = s.rstrip(_WS)
        if not t:
            self._skip_ws += s
            return ""
        out = self._skip_ws + t
        self._skip_ws = s[len(t) :]
        return out

    def marker(self) -> None:
        """A marker was applied: whitespace of a SKIP region before it is dropped."""
        self._skip_ws = ""
