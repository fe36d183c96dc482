"""Where the portable suite cuts an output in two, copies a stream or truncates an output.

A cut matters to the lexer where a marker begins or ends (a delta that ends inside a marker
holds its prefix back), so the portable suite cuts at each end of every occurrence of a marker
string (values that mention a marker included) and one character inside each end, at the
output's two ends, and at eight positions seeded by the output. With token ids: beside every id
that is a whole marker, the two ends and eight seeded positions. The exhaustive suite
(``-m exhaustive``, ``.ci/run``'s exhaustive step) cuts at every position.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from trisect import Parser


def marker_strings(reasoning: str | None, tools_format: str | None) -> set[str]:
    """The formats' marker strings of three characters or more."""
    spec = Parser(reasoning, tools_format).spec
    return {s for strings in spec.terminals.values() for s in strings if len(s) >= 3}


def _seeded(n: int, seed: str) -> list[int]:
    return random.Random(seed).sample(range(n + 1), min(8, n + 1))


def text_cuts(output: str, markers: Iterable[str]) -> set[int]:
    """Character positions (characters before the cut) where the portable suite cuts ``output``."""
    cuts = {0, 1, len(output) - 1, len(output), *_seeded(len(output), output)}
    for marker in markers:
        at = output.find(marker)
        while at >= 0:
            cuts.update((at, at + 1, at + len(marker) - 1, at + len(marker)))
            at = output.find(marker, at + 1)
    return {p for p in cuts if 0 <= p <= len(output)}


def id_cuts(ids: Sequence[int], marker_ids: Iterable[int]) -> set[int]:
    """Token positions (ids before the cut) where the portable suite cuts ``ids``."""
    special = set(marker_ids)
    cuts = {0, 1, len(ids) - 1, len(ids), *_seeded(len(ids), repr(list(ids)))}
    cuts.update(p for k, t in enumerate(ids) if t in special for p in (k, k + 1))
    return {p for p in cuts if 0 <= p <= len(ids)}
