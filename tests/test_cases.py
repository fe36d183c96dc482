"""Every case file under tests/cases/ through the replay harness, under every chunking.

Each output is fed whole, one character per delta and (with ids) one token per delta and in
groups; it is split in two, its stream copied, written out and resumed (``check_states``), and
the output truncated at the cuts of
``tests/support/cuts.py`` (each end of every marker and one character inside it, the ends of
the output, eight seeded positions). The same checks at every position, O(n^2) per case and
most of the suite's time, are the ``exhaustive`` suite: ``.ci/run``'s exhaustive step runs it
(``-m exhaustive``) and fails if it ran nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support import cases, cuts, tokenizers
from support.known_losses import KNOWN_LOSSES
from trisect.testing import check_case, check_copies, check_nothing_lost, check_states, check_truncations

CASES = cases.load_cases()
_case = cases.as_case


def _copy_cuts(data: dict) -> dict[str, set[int]]:
    token_cuts = cuts.of_ids(data)
    return {"text": cuts.of_text(data)} | ({} if token_cuts is None else {"ids": token_cuts})


def _truncation_cuts(data: dict) -> set[int]:
    token_cuts = cuts.of_ids(data)
    return cuts.of_text(data) if token_cuts is None else token_cuts


def _checked(data: dict) -> bool:
    """Run the nothing-lost check inside the other checks (all but the known losses)."""
    return data["id"] not in KNOWN_LOSSES


@cases.parametrize(CASES)
def test_case_replays(data: dict) -> None:
    """One seeded grouping of tokens (three in the exhaustive suite) and the splits at the cuts."""
    assert check_case(_case(data), seeds=(0,), splits=cuts.of_text(data), nothing_lost=_checked(data)) > 0


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


@cases.parametrize(CASES)
def test_case_written_out_and_resumed_at_the_cuts(data: dict) -> None:
    assert check_states(_case(data), nothing_lost=_checked(data), cuts=_copy_cuts(data)) > 0


@pytest.mark.exhaustive
@cases.parametrize(CASES)
def test_case_written_out_and_resumed_at_every_cut(data: dict) -> None:
    assert check_states(_case(data), nothing_lost=_checked(data)) > 0


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


def _holds(data: dict, ids: bool) -> dict[int, list[int]]:
    """Each hold of a stream fed one character (or one id, ids alone) at a time: the output
    offset where the held text begins -> the first and the last position (pieces fed) it is held."""
    case = _case(data)
    stream = case.parser(with_tokenizer=ids).stream(**case.request())
    pieces = [(None, [t]) for t in case.ids() or ()] if ids else [(ch, None) for ch in case.output]
    holds: dict[int, list[int]] = {}
    for p, (text, token_ids) in enumerate(pieces, 1):
        stream.feed(text, token_ids=token_ids)
        held = stream.engine.held
        if held:  # where the held text begins: the text taken in so far, less what is held
            taken = len(tokenizers.decode(data["tokenizer"], case.ids()[:p]).rstrip("\ufffd")) if ids else p
            holds.setdefault(taken - len(held), [p, p])[1] = p
    return holds


@pytest.mark.parametrize("path", cases.case_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_hold_begins_and_ends_at_a_cut(path: Path) -> None:
    """The cuts are where the lexer's work changes: wherever a stream holds text back (a
    marker, a prefix of one, a guarded marker waiting for what follows), the portable suite
    cuts where that hold begins and where it ends, in text and in token ids."""
    missed = []
    for data in cases.load_cases(path):
        kinds = ([] if data.get("ids_only") else [(False, cuts.of_text(data))]) + (
            [(True, cuts.of_ids(data))] if data["tokenizer"] and cases.token_ids(data) is not None else []
        )
        for ids, at in kinds:
            for start, (first, last) in _holds(data, ids).items():
                if first not in at or last not in at:
                    missed.append((data["key"], "ids" if ids else "text", start, first, last))
    assert not missed, missed[:10]


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
