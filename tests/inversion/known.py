"""The classes the inversion tests find that are not fixed yet: the one list.

``KNOWN``: targets that run as ``xfail(strict=True)``, with the class and the file that owns it;
``KNOWN_CLASSES``: the lines of ``regressions.jsonl`` (by class) that do. A fix shows as an
unexpected pass, and its entry must go.
"""

from __future__ import annotations

NO_MARKERS_READ_AS_REASONING = (
    "qwen3 reasoning: a turn with no think markers, after a prompt that opened no think block, is read "
    "as reasoning (formats/qwen3.py, owned by another helper; issue 20 §2)"
)

KNOWN: dict[str, str] = {
    "lfm2.5": NO_MARKERS_READ_AS_REASONING,
}

KNOWN_CLASSES: dict[str, str] = {
    "no-markers-read-as-reasoning": NO_MARKERS_READ_AS_REASONING,
}
