"""The cases ``trisect.testing.check_nothing_lost`` fails today, by case id: the one list.

Each is a format's bug the check found (issue 10 §2), left to the formats' owner to fix in the
format; ``tests/test_cases.py`` runs the check on them as ``xfail(strict=True)``, so a fix shows
as an unexpected pass and its entry must go. Every other case passes the check under every
mutation the suite makes (chunkings, truncations, copies).
"""

from __future__ import annotations

_ENVELOPE = "issue 10: envelope (a block of calls that yields no call keeps its text minus its markers)"
_LABEL = "issue 10: label (a marker that is a word deletes it from the model's text)"

KNOWN_LOSSES: dict[str, str] = {
    "granite-start-marker-missing": _LABEL,
    "ink-malformed-invalid-json": _ENVELOPE,
    "ink-tools-only-malformed-invalid-json": _ENVELOPE,
}
