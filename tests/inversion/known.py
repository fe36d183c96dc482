"""The classes the inversion tests find that are not fixed yet: the one list.

``KNOWN``: targets that run as ``xfail(strict=True)``, with the class and the file that owns it;
``KNOWN_CLASSES``: the lines of ``regressions.jsonl`` (by class) that do. A fix shows as an
unexpected pass, and its entry must go.
"""

from __future__ import annotations

KNOWN: dict[str, str] = {}

KNOWN_CLASSES: dict[str, str] = {}
