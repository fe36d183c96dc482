"""Read the case files in tests/cases/ (written by tests/support/render_cases.py).

Each line of ``tests/cases/<dir>/<name>.jsonl`` is one case: ``id``, ``source``,
``reasoning`` / ``tools_format`` (trisect parser names or null), ``tokenizer``,
``token_ids``, ``output``, ``tools``, ``options``, ``truncated``, ``expected`` and, for cases
that only hold when token ids are fed, ``ids_only: true``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support import tokenizers

CASES_DIR = Path(__file__).resolve().parent.parent / "cases"


def case_files() -> list[Path]:
    return sorted(CASES_DIR.glob("*/*.jsonl"))


def load_cases(path: Path | None = None) -> list[dict[str, Any]]:
    """All cases of one file, or of every file when ``path`` is None."""
    paths = [path] if path is not None else case_files()
    cases: list[dict[str, Any]] = []
    for p in paths:
        for line in p.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            case["file"] = str(p.relative_to(CASES_DIR))
            cases.append(case)
    return cases


def token_ids(case: dict[str, Any]) -> list[int] | None:
    """The ids to feed with the output: explicit ``token_ids``, else the output encoded
    with the case's tokenizer (markers as their special ids), else None (text only)."""
    if case["token_ids"] is not None:
        return list(case["token_ids"])
    if case["tokenizer"] is None:
        return None
    return tokenizers.encode(case["tokenizer"], case["output"])
