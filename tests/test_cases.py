"""Every case file under tests/cases/ through the replay harness, under every chunking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import tokenizers
from support.known_losses import KNOWN_LOSSES
from trisect.testing import Case, check_case, check_copies, check_nothing_lost, check_truncations

CASES_DIR = Path(__file__).resolve().parent / "cases"


def _load() -> list[tuple[str, dict]]:
    out = []
    for path in sorted(CASES_DIR.glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                data = json.loads(line)
                out.append((f"{path.parent.name}/{path.stem}:{data['id']}", data))
    return out


CASES = _load()


def _case(data: dict) -> Case:
    return Case.from_dict(data, tokenizers.load)


def _checked(data: dict) -> bool:
    """Run the nothing-lost check inside the other checks (all but the known losses)."""
    return data["id"] not in KNOWN_LOSSES


@pytest.mark.parametrize("data", [d for _, d in CASES], ids=[i for i, _ in CASES])
def test_case_replays(data: dict) -> None:
    assert check_case(_case(data), nothing_lost=_checked(data)) > 0


@pytest.mark.parametrize("data", [d for _, d in CASES], ids=[i for i, _ in CASES])
def test_case_copied_at_every_cut(data: dict) -> None:
    assert check_copies(_case(data), nothing_lost=_checked(data)) > 0


COMPLETE_WITH_CALLS = [
    (i, d) for i, d in CASES if not (d.get("truncated") or d.get("malformed")) and d["expected"].get("tool_calls")
]


@pytest.mark.parametrize("data", [d for _, d in COMPLETE_WITH_CALLS], ids=[i for i, _ in COMPLETE_WITH_CALLS])
def test_case_truncated_everywhere(data: dict) -> None:
    assert check_truncations(_case(data), nothing_lost=_checked(data)) > 0


LOSSES = [(i, d) for i, d in CASES if d["id"] in KNOWN_LOSSES]


@pytest.mark.parametrize(
    "data",
    [pytest.param(d, marks=pytest.mark.xfail(strict=True, reason=KNOWN_LOSSES[d["id"]])) for _, d in LOSSES],
    ids=[i for i, _ in LOSSES],
)
def test_case_loses_nothing(data: dict) -> None:
    """The known losses (tests/support/known_losses.py), one by one: each fails the check today."""
    case = _case(data)
    check_nothing_lost(case)
    if not case.truncated and data["expected"].get("tool_calls"):
        check_truncations(case)


def test_every_known_loss_is_a_case() -> None:
    assert set(KNOWN_LOSSES) <= {d["id"] for _, d in CASES}


def test_there_are_cases_for_every_first_format() -> None:
    dirs = {i.split("/")[0] for i, _ in CASES}
    assert {"qwen3", "deepseek_r1", "hermes", "qwen3_coder"} <= dirs
    assert len(CASES) >= 100
