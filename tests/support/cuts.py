"""Where the portable suite cuts an output in two, copies a stream or truncates an output.

A cut matters to the lexer where it holds text back: from the first character of a marker (or
of text that begins like one) until the marker is whole or the text parts from it, and after a
guarded marker until what follows decides it (whitespace, then the follow). So the portable
suite cuts where each such hold begins and ends: at each end of every occurrence of a marker
string (values that mention one included) and one character inside each end, after the
whitespace that follows it, at each end of every proper prefix of a marker the text holds; at
the output's two ends; and at eight positions seeded by the output. Token ids are cut on each
side of every text cut, beside every id that is a whole marker, at the two ends and eight
seeded positions. ``tests/test_cases.py`` checks that every hold of a stream fed one piece at a
time begins and ends at a cut; the exhaustive suite (``-m exhaustive``, ``.ci/run``'s
exhaustive step) cuts at every position.

Cost: O(n x markers) per output.
"""

from __future__ import annotations

import random
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

from support import cases, tokenizers
from trisect import Parser


def marker_strings(reasoning: str | None, tools_format: str | None) -> set[str]:
    """The formats' marker strings."""
    spec = Parser(reasoning, tools_format).spec
    return {s for strings in spec.terminals.values() for s in strings}


def _seeded(n: int, seed: str) -> list[int]:
    return random.Random(seed).sample(range(n + 1), min(8, n + 1))


def text_cuts(output: str, markers: Iterable[str]) -> set[int]:
    """Character positions (characters before the cut) where the portable suite cuts ``output``."""
    cuts = {0, 1, len(output) - 1, len(output), *_seeded(len(output), output)}
    for marker in markers:
        at = output.find(marker[0])
        while at >= 0:
            k = _common_prefix(output, at, marker)
            if k == len(marker):  # held from its first character to its last, then while a guard waits
                cuts.update((at, at + 1, at + k - 1, at + k, _after_space(output, at + k)))
            else:  # a proper prefix: held, then given back as text
                cuts.update((at, at + 1, at + k))
            at = output.find(marker[0], at + 1)
    return {p for p in cuts if 0 <= p <= len(output)}


def _common_prefix(output: str, at: int, marker: str) -> int:
    k = 0
    while k < len(marker) and at + k < len(output) and output[at + k] == marker[k]:
        k += 1
    return k


def _after_space(output: str, at: int) -> int:
    while at < len(output) and output[at] in " \t\r\n":
        at += 1
    return at


def id_cuts(ids: Sequence[int], offsets: Sequence[int], text_cut: Iterable[int], marker_ids: Iterable[int]) -> set[int]:
    """Token positions (ids before the cut) where the portable suite cuts ``ids``: on each side
    of every text cut (``offsets[p]``: the characters the first ``p`` ids spell), beside every id
    that is a whole marker, the two ends and eight seeded positions."""
    special = set(marker_ids)
    cuts = {0, 1, len(ids) - 1, len(ids), *_seeded(len(ids), repr(list(ids)))}
    cuts.update(p for k, t in enumerate(ids) if t in special for p in (k, k + 1))
    for c in text_cut:
        cuts.update((bisect_right(offsets, c) - 1, bisect_left(offsets, c)))
    return {p for p in cuts if 0 <= p <= len(ids)}


def of_text(data: dict[str, Any], markers: Iterable[str] | None = None) -> set[int]:
    """The text cuts of a case (``support.cases``), at its formats' markers or at ``markers``."""
    if markers is None:
        markers = marker_strings(data["reasoning"], data["tools_format"])
    return text_cuts(data["output"], markers)


def of_ids(data: dict[str, Any], markers: Iterable[str] | None = None) -> set[int] | None:
    """The token-id cuts of a case, at its formats' markers or at ``markers``; None where it has
    no ids."""
    ids = cases.token_ids(data)
    if ids is None:
        return None
    markers = set(markers if markers is not None else marker_strings(data["reasoning"], data["tools_format"]))
    name = data["tokenizer"]
    if name is None:
        return id_cuts(ids, range(len(ids) + 1), of_text(data, markers), ())
    singles = (tokenizers.encode(name, m) for m in markers)
    offsets = [len(tokenizers.decode(name, ids[:p]).rstrip("\ufffd")) for p in range(len(ids) + 1)]
    return id_cuts(ids, offsets, of_text(data, markers), (e[0] for e in singles if len(e) == 1))
