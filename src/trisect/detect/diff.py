"""Text diffs of two renders, cut on marker boundaries.

Two renders of one template that differ in one thing (an assistant turn with and without tool
calls) share a prefix and a suffix; what lies between is what that one thing rendered as.
Character diffs cut markers apart where the two sides happen to share characters (``<tool_call>``
against ``<|im_end|>`` share ``<``), so every cut is moved outwards to the edge of the marker it
falls in. A marker is a special token of the model's vocabulary when the template came with
one (``added_tokens``), else any text of the shapes templates use for markers: ``<|…|>``,
``<｜…｜>``, ``<tag …>`` / ``</tag>``, ``[TAG]`` / ``[/TAG]``.

Cost: linear in the length of the renders compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_SHAPES = (
    r"<\|[^<>|\n]{1,64}\|>",  # <|im_start|>
    r"<｜[^<>\n]{1,64}?｜>",  # <｜tool▁calls▁begin｜>
    r"</?[A-Za-z_][\w:.\-]{0,40}(?:[ =][^<>\n]{0,120})?/?>",  # <think>, </tool_call>, <invoke name="x">
    r"\[/?[A-Z][A-Z_]{1,30}\]",  # [TOOL_CALLS], [/THINK]
)
_MARKER = re.compile("|".join(_SHAPES))


class Markers:
    """Finds marker spans in text: the vocabulary's special tokens first, then marker shapes."""

    def __init__(self, special: Iterable[str] = ()) -> None:
        tokens = sorted({t for t in special if t and not t.isspace()}, key=len, reverse=True)
        self._special = re.compile("|".join(re.escape(t) for t in tokens)) if tokens else None

    def spans(self, text: str) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        if self._special is not None:
            found += [m.span() for m in self._special.finditer(text)]
        found += [m.span() for m in _MARKER.finditer(text)]
        return found

    def left(self, text: str, cut: int) -> int:
        """``cut`` moved left to the start of the marker it falls inside, if any."""
        for a, b in self.spans(text):
            if a < cut < b:
                cut = min(cut, a)
        return cut

    def right(self, text: str, cut: int) -> int:
        """``cut`` moved right to the end of the marker it falls inside, if any."""
        for a, b in self.spans(text):
            if a < cut < b:
                cut = max(cut, b)
        return cut

    def last(self, text: str) -> str | None:
        """The marker ``text`` ends with (trailing whitespace ignored), if any."""
        stripped = text.rstrip()
        ends = [(a, b) for a, b in self.spans(stripped) if b == len(stripped)]
        return stripped[min(ends)[0] :] if ends else None

    def first(self, text: str) -> str | None:
        """The marker ``text`` starts with (leading whitespace ignored), if any."""
        stripped = text.lstrip()
        starts = [(a, b) for a, b in self.spans(stripped) if a == 0]
        return stripped[: max(starts)[1]] if starts else None


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def common_suffix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def middle(base: str, changed: str, markers: Markers) -> str:
    """What ``changed`` has where ``base`` differs from it, on marker edges, whitespace stripped.

    The shared prefix is cut back to a marker edge in both texts before the shared suffix is
    measured, so that the suffix cannot reuse characters of a marker the prefix split."""
    start = common_prefix(base, changed)
    start = min(markers.left(base, start), markers.left(changed, start))
    tail = common_suffix(base[start:], changed[start:])
    base_end = markers.right(base, len(base) - tail)
    changed_end = markers.right(changed, len(changed) - tail)
    tail = min(len(base) - base_end, len(changed) - changed_end)
    return changed[start : len(changed) - tail].strip()


def closing(marker: str) -> str | None:
    """The closer of an opening tag: ``<think>`` -> ``</think>``, ``[THINK]`` -> ``[/THINK]``."""
    if len(marker) > 2 and marker[0] in "<[" and marker[1] not in "/|｜":
        return marker[0] + "/" + marker[1:]
    return None
