"""Reasoning held while it may still turn out to be content (``FormatSpec.reasoning_fallback``).

A stream that starts in reasoning under a fallback (Nemotron's swap, K2 Horizon) holds that
reasoning until it knows: the block ends and something follows it (it was reasoning), or the
output ends first (it was the content). The machine's ``Phase`` says which (``DEFERRING``,
``HOLDING``); this holds the text, as it came.

Cost: O(1) per piece; memory O(the held reasoning), which the rule needs.
"""

from __future__ import annotations

from .value import Value, as_pieces


class Deferred:
    """The reasoning a stream holds (see the module docstring)."""

    __slots__ = ("_pieces",)

    def __init__(self) -> None:
        self._pieces: list[str] = []

    def copy(self) -> Deferred:
        return Deferred.from_value(self.to_value())

    def to_value(self) -> Value:
        """The held text."""
        return "".join(self._pieces)

    @classmethod
    def from_value(cls, value: Value) -> Deferred:
        new = cls()
        new._pieces = as_pieces(value)
        return new

    def add(self, text: str) -> None:
        self._pieces.append(text)

    def take(self) -> list[str]:
        """The held text, as it came; nothing is held after."""
        pieces, self._pieces = self._pieces, []
        return pieces
