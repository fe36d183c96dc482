"""Every case file under tests/cases/ through the replay harness, under every chunking."""

from __future__ import annotations

import pytest

from support import cases
from support.known_losses import KNOWN_LOSSES
from trisect.testing import check_case, check_copies, check_nothing_lost, check_truncations

CASES = cases.load_cases()
_case = cases.as_case


def _checked(data: dict) -> bool:
    """Run the nothing-lost check inside the other checks (all but the known losses)."""
    return data["id"] not in KNOWN_LOSSES


@cases.parametrize(CASES)
def test_case_replays(data: dict) -> None:
    assert check_case(_case(data), nothing_lost=_checked(data)) > 0


@cases.parametrize(CASES)
def test_case_copied_at_every_cut(data: dict) -> None:
    assert check_copies(_case(data), nothing_lost=_checked(data)) > 0


COMPLETE_WITH_CALLS = [
    d for d in CASES if not (d.get("truncated") or d.get("malformed")) and d["expected"].get("tool_calls")
]


@cases.parametrize(COMPLETE_WITH_CALLS)
def test_case_truncated_everywhere(data: dict) -> None:
    assert check_truncations(_case(data), nothing_lost=_checked(data)) > 0


LOSSES = [d for d in CASES if d["id"] in KNOWN_LOSSES]


@cases.parametrize(pytest.param(d, marks=pytest.mark.xfail(strict=True, reason=KNOWN_LOSSES[d["id"]])) for d in LOSSES)
def test_case_loses_nothing(data: dict) -> None:
    """The known losses (tests/support/known_losses.py), one by one: each fails the check today."""
    case = _case(data)
    check_nothing_lost(case)
    if not case.truncated and data["expected"].get("tool_calls"):
        check_truncations(case)


def test_every_known_loss_is_a_case() -> None:
    assert set(KNOWN_LOSSES) <= {d["id"] for d in CASES}


def test_there_are_cases_for_every_first_format() -> None:
    dirs = {d["key"].split("/")[0] for d in CASES}
    assert {"qwen3", "deepseek_r1", "hermes", "qwen3_coder"} <= dirs
    assert len(CASES) >= 100
