"""The one reader of the case files in tests/cases/ (written by tests/support/render_*.py).

Each line of ``tests/cases/<dir>/<name>.jsonl`` is one case: ``id``, ``source``,
``reasoning`` / ``tools_format`` (trisect parser names or null), ``tokenizer``,
``token_ids``, ``output``, ``tools``, ``options``, ``truncated``, ``expected`` and, for cases
that only hold when token ids are fed, ``ids_only: true``. ``load_cases`` adds ``file`` (the
path under tests/cases/) and ``key`` (``<dir>/<name>:<id>``, the test id ``parametrize`` gives).

Every test module that reads cases reads them here; ``as_case`` turns one into the replay
harness's ``trisect.testing.Case`` with the staged tokenizers. Each file is parsed once per
process, however many modules read it (the suite's collection reads them six times over).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from support import tokenizers
from trisect.testing import Case

CASES_DIR = Path(__file__).resolve().parent.parent / "cases"


def case_files() -> list[Path]:
    return sorted(CASES_DIR.glob("*/*.jsonl"))


@cache
def _read(path: Path) -> tuple[dict[str, Any], ...]:
    name = str(path.relative_to(CASES_DIR))
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            case = json.loads(line)
            case["file"] = name
            case["key"] = f"{path.parent.name}/{path.stem}:{case['id']}"
            cases.append(case)
    return tuple(cases)


def load_cases(path: Path | None = None) -> list[dict[str, Any]]:
    """All cases of one file, or of every file when ``path`` is None. The dicts are shared by
    every caller in the process (each file is parsed once): read them, copy before changing."""
    return [case for p in ([path] if path is not None else case_files()) for case in _read(p)]


def parametrize(cases: Iterable[Any], name: str = "data", key: Callable[[Any], str] | None = None) -> Any:
    """``pytest.mark.parametrize`` over cases (dicts or ``pytest.param``), each test named by its key."""
    cases = list(cases)
    ids = [(key or _key)(c) for c in cases]
    return pytest.mark.parametrize(name, cases, ids=ids)


def _key(case: Any) -> str:
    data = case if isinstance(case, dict) else case.values[0]  # a case, or a pytest.param of one
    return str(data["key"])


def as_case(data: dict[str, Any]) -> Case:
    """The replay harness's ``Case`` for one case, with its staged tokenizer."""
    return Case.from_dict(data, tokenizers.load)


def token_ids(case: dict[str, Any]) -> list[int] | None:
    """The ids to feed with the output: explicit ``token_ids``, else the output encoded
    with the case's tokenizer (markers as their special ids), else None (text only)."""
    if case["token_ids"] is not None:
        return list(case["token_ids"])
    if case["tokenizer"] is None:
        return None
    return tokenizers.encode(case["tokenizer"], case["output"])
