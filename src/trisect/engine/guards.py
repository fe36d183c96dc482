"""Guards: whether a marker found in the text counts, by what comes after it.

A rule may guard its marker (``Rule.guarded``): a closer inside a raw value counts only if the
structure goes on after it (``Rule.follow``), an opener only where a key the codec accepts
follows it (``Rule.key_end``), some markers are always value text inside a value
(``Rule.value_text``); the same ``follow`` rule can guard a separator where no call is open.
Each function looks ahead in the text already received and answers ``True`` / ``False``, or
``None`` when it cannot tell yet (the stream then holds the marker until the next delta).

Cost: O(length of the lookahead): at most the longest ``follow`` string, or ``KEY_LIMIT``
characters of key text.
"""

from __future__ import annotations

from collections.abc import Callable

from .codec import CallCodec
from .spec import Rule


def follows(data: str, i: int, n: int, follow: tuple[str, ...], final: bool, end: bool = True) -> bool | None:
    """Does data[i:] continue, after whitespace, with one of ``follow`` (or end, when ``end``)?
    ``None``: not decidable yet."""
    while i < n and data[i] in " \t\r\n":
        i += 1
    if i == n:
        return end if final else None
    rest = data[i : i + max(len(f) for f in follow)]
    undecided = False
    for f in follow:
        if rest.startswith(f):
            return True
        if f.startswith(rest):
            undecided = True
    return None if undecided and not final else False


KEY_LIMIT = 128
"""Characters of key text a lookahead reads (``key_follows``): a longer key is text."""


def key_follows(data: str, i: int, n: int, key_end: str, final: bool, accepts: Callable[[str], bool]) -> bool | None:
    """Does data[i:] hold a key ending at ``key_end`` (within ``KEY_LIMIT`` characters, on one
    line) that ``accepts`` takes? ``None``: not decidable yet."""
    stop = min(n, i + KEY_LIMIT + len(key_end))
    j = data.find(key_end, i, stop)
    if j < 0:
        if final or stop < n or "\n" in data[i:stop]:
            return False
        return None
    raw = data[i:j]
    return "\n" not in raw and accepts(raw)


def marker_counts(rule: Rule, codec: CallCodec | None, data: str, b: int, n: int, final: bool) -> bool | None:
    """Does the guarded marker (``Rule.guarded``) ending at ``data[b]`` count, with no call open
    or in a name region (``codec`` None), or inside the raw value of ``codec``? ``None``: not
    decidable yet."""
    if codec is None:
        return follows(data, b, n, rule.follow, final) if rule.follow else True
    if rule.value_text:
        return False
    if rule.key_end:
        return key_follows(data, b, n, rule.key_end, final, codec.accepts_key)
    if rule.follow:
        # a closer the output ends with is value text (a cut-off value never completes a
        # call), except the closer of the element the calls live in (``follow_end``)
        return follows(data, b, n, rule.follow, final, end=rule.follow_end)
    return True
