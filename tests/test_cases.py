"""Every case file under tests/cases/ through the replay harness, under every chunking.

Each output is fed whole, one character per delta and (with ids) one token per delta and in
groups; it is split in two, its stream copied and the output truncated at the cuts of
``tests/support/cuts.py`` (each end of every marker and one character inside it, the ends of
the output, eight seeded positions). The same checks at every position, O(n^2) per case and
most of the suite's time, are the ``exhaustive`` suite: ``.ci/run``'s exhaustive step runs it
(``-m exhaustive``) and fails if it ran nothing.
"""

from __future__ import annotations

import pytest

from support import cases, tokenizers
from support.cuts import id_cuts, marker_strings, text_cuts
from support.known_losses import KNOWN_LOSSES
from trisect.testing import check_case, check_copies, check_nothing_lost, check_truncations

CASES = cases.load_cases()
_case = cases.as_case


def _cuts(data: dict) -> set[int]:
    return text_cuts(data["output"], marker_strings(data["reasoning"], data["tools_format"]))


def _token_cuts(data: dict) -> set[int] | None:
    ids = cases.token_ids(data)
    if ids is None:
        return None
    markers = marker_strings(data["reasoning"], data["tools_format"])
    encoded = [tokenizers.encode(data["tokenizer"], m) for m in markers] if data["tokenizer"] else []
    return id_cuts(ids, (e[0] for e in encoded if len(e) == 1))


def _copy_cuts(data: dict) -> dict[str, set[int]]:
    token_cuts = _token_cuts(data)
    return {"text": _cuts(data)} | ({} if token_cuts is None else {"ids": token_cuts})


def _truncation_cuts(data: dict) -> set[int]:
    token_cuts = _token_cuts(data)
    return _cuts(data) if token_cuts is None else token_cuts


def _checked(data: dict) -> bool:
    """Run the nothing-lost check inside the other checks (all but the known losses)."""
    return data["id"] not in KNOWN_LOSSES


@cases.parametrize(CASES)
def test_case_replays(data: dict) -> None:
    """One seeded grouping of tokens (three in the exhaustive suite) and the splits at the cuts."""
    assert check_case(_case(data), seeds=(0,), splits=_cuts(data), nothing_lost=_checked(data)) > 0


@pytest.mark.exhaustive
@cases.parametrize(CASES)
def test_case_split_everywhere(data: dict) -> None:
    """Every two-way split and three seeded groupings, the replay's other chunkings too
    (``check_case``'s defaults)."""
    assert check_case(_case(data), nothing_lost=_checked(data)) > 0


@cases.parametrize(CASES)
def test_case_copied_at_the_cuts(data: dict) -> None:
    assert check_copies(_case(data), nothing_lost=_checked(data), cuts=_copy_cuts(data)) > 0


@pytest.mark.exhaustive
@cases.parametrize(CASES)
def test_case_copied_at_every_cut(data: dict) -> None:
    assert check_copies(_case(data), nothing_lost=_checked(data)) > 0


COMPLETE_WITH_CALLS = [
    d for d in CASES if not (d.get("truncated") or d.get("malformed")) and d["expected"].get("tool_calls")
]


@cases.parametrize(COMPLETE_WITH_CALLS)
def test_case_truncated_at_the_cuts(data: dict) -> None:
    assert check_truncations(_case(data), nothing_lost=_checked(data), cuts=_truncation_cuts(data)) > 0


@pytest.mark.exhaustive
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
