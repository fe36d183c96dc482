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

from .value import Value, as_bool, as_pieces, as_str, as_tuple

_WS = " \t\r\n"


class Field:
    """One field (reasoning or content): whether it has emitted text yet, and the trailing
    whitespace it holds."""

    __slots__ = ("_strip", "started", "_held")

    def __init__(self, strip: str) -> None:
        self._strip = strip
        self.started = False
        self._held: list[str] = []

    def copy(self) -> Field:
        return Field.from_value(self._strip, self.to_value())

    def to_value(self) -> Value:
        """``(started, held whitespace)``."""
        return (self.started, "".join(self._held))

    @classmethod
    def from_value(cls, strip: str, value: Value) -> Field:
        started, held = as_tuple(value, 2)
        new = cls(strip)
        new.started = as_bool(started)
        new._held = as_pieces(held)
        return new

    def trim(self, data: str, i: int, j: int) -> str:
        """The part of ``data[i:j]`` the field can emit now (see the module docstring). A
        delta is stripped as a string; a long span (a whole output's) is read in place, so only
        the emitted part and the held whitespace are copied out of ``data``."""
        strip = self._strip
        held = self._held
        if not self.started:
            i = skip_lead(data, i, j, strip)
            if i == j:
                return ""
            self.started = True
        if j - i > 64:  # _CHUNK
            k = skip_trail(data, i, j, strip)
            body, tail = data[i:k], data[k:j]
        else:
            text = data[i:j]  # data itself when that is all of it (no copy)
            body = text.rstrip(strip)
            tail = text[len(body) :]
        if not body:
            held.append(tail)
            return ""
        if held:
            body = "".join(held) + body
            held.clear()
        if tail:
            held.append(tail)
        return body


_CHUNK = 64


def skip_lead(data: str, i: int, j: int, strip: str) -> int:
    """The index of the first character of ``data[i:j]`` not in ``strip`` (``j``: none).
    Reads on in chunks that double, so a long run of whitespace costs O(run) in C."""
    size = _CHUNK
    while i < j:
        head = data[i : min(j, i + size)]
        rest = head.lstrip(strip)
        if rest:
            return i + len(head) - len(rest)
        i += len(head)
        size *= 2
    return j


def skip_trail(data: str, i: int, j: int, strip: str) -> int:
    """The index after the last character of ``data[i:j]`` not in ``strip`` (``i``: none).
    Reads back in chunks that double, so a long run of whitespace costs O(run) in C."""
    size = _CHUNK
    while j > i:
        lo = max(i, j - size)
        body = data[lo:j].rstrip(strip)
        if body:
            return lo + len(body)
        j = lo
        size *= 2
    return i


class Fields:
    """Reasoning, content, and the whitespace of an envelope region (``Region.SKIP``)."""

    __slots__ = ("reasoning", "content", "skip_ws")

    def __init__(self, reasoning: Field, content: Field, skip_ws: str = "") -> None:
        self.reasoning = reasoning
        self.content = content
        # whitespace of a SKIP region, kept only if text follows it (dropped at a marker)
        self.skip_ws = skip_ws

    def copy(self) -> Fields:
        return Fields(self.reasoning.copy(), self.content.copy(), self.skip_ws)

    def to_value(self) -> Value:
        """``(reasoning, content, envelope whitespace)``."""
        return (self.reasoning.to_value(), self.content.to_value(), self.skip_ws)

    @classmethod
    def from_value(cls, strip: str, value: Value) -> Fields:
        reasoning, content, skip_ws = as_tuple(value, 3)
        return cls(Field.from_value(strip, reasoning), Field.from_value(strip, content), as_str(skip_ws))

    def skip_text(self, s: str) -> str:
        """Text of a ``Region.SKIP`` state outside a call: the content it carries, the same
        whatever the cuts ("" while it is whitespace)."""
        t = s.rstrip(_WS)
        if not t:
            self.skip_ws += s
            return ""
        out = self.skip_ws + t
        self.skip_ws = s[len(t) :]
        return out
