"""What the fuzzer found and was fixed stays fixed: each line of ``tests/fuzz/regressions.jsonl``
(a finding as ``tests/fuzz/run.py`` shrank it: formats, tokenizer, request, job and input) is its
job run again, which raises ``Finding`` if the contract breaks again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fuzz.replay import replay

LINES: list[dict[str, Any]] = [
    json.loads(line)
    for line in (Path(__file__).parent / "fuzz" / "regressions.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]


@pytest.mark.parametrize(
    "line", LINES, ids=[f"{k}-{line.get('tools_format') or line.get('reasoning')}" for k, line in enumerate(LINES)]
)
def test_a_fixed_finding_stays_fixed(line: dict[str, Any]) -> None:
    assert sum(replay(line).values()) > 0  # the job ran (and raised nothing)
