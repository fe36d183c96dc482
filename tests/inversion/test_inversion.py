"""The template is the referee: every target's template renders generated assistant turns, and
trisect gives back exactly what it wrote (issue 20 §1; docs/inversion.md).

Portable: ``PORTABLE_EXAMPLES`` turns per target, derandomised (the same turns every run).
Heavy (``-m inversion_heavy``, CI's inversion step): ``TRISECT_INVERSION_EXAMPLES`` turns per
target (2,000 by default), capped per target by ``Target.heavy_examples``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from .check import check_turn
from .known import KNOWN, KNOWN_CLASSES
from .lossy import LOSSES
from .targets import TARGETS, Target
from .turns import Turn, turns

PORTABLE_EXAMPLES = 60
REGRESSIONS = Path(__file__).with_name("regressions.jsonl")


def _skipped(target: Target) -> str | None:
    for loss in LOSSES.get(target.name, ()):
        if loss.rule == "not a continuation":
            return f"{loss.reason} ({loss.cite})"
    return None


def _params(heavy: bool) -> list[Any]:
    params = []
    for target in TARGETS:
        marks: list[Any] = []
        skipped = _skipped(target)
        if skipped:
            marks.append(pytest.mark.skip(reason=f"lossy.py: not a continuation: {skipped}"))
        elif target.name in KNOWN:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[target.name]))
        if heavy:
            marks.append(pytest.mark.inversion_heavy)
        params.append(pytest.param(target, id=target.name, marks=marks))
    return params


def _run(target: Target, examples: int) -> None:
    # a known class (xfail) is not shrunk: its shrunk turn is in regressions.jsonl already
    phases = (
        (Phase.explicit, Phase.generate) if target.name in KNOWN else (Phase.explicit, Phase.generate, Phase.shrink)
    )

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=phases,
        suppress_health_check=(HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large),
    )
    @given(turns(target))
    def inverts(turn: Turn) -> None:
        check_turn(target, turn)

    inverts()


@pytest.mark.parametrize("target", _params(heavy=False))
def test_the_parser_gives_back_what_the_template_wrote(target: Target) -> None:
    _run(target, PORTABLE_EXAMPLES)


@pytest.mark.parametrize("target", _params(heavy=True))
def test_the_parser_gives_back_what_the_template_wrote_heavy(target: Target) -> None:
    examples = int(os.environ.get("TRISECT_INVERSION_EXAMPLES", "2000"))
    _run(target, min(examples, target.heavy_examples))


def _regressions() -> list[Any]:
    by_name = {t.name: t for t in TARGETS}
    lines = [json.loads(line) for line in REGRESSIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        pytest.param(
            by_name[line["target"]],
            Turn.from_dict(line["turn"]),
            id=f"{k}-{line['target']}-{line['class']}",
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_CLASSES[line["class"]])]
            if line["class"] in KNOWN_CLASSES
            else [],
        )
        for k, line in enumerate(lines)
    ]


@pytest.mark.parametrize(("target", "turn"), _regressions())
def test_a_turn_the_generator_shrank_stays_inverted(target: Target, turn: Turn) -> None:
    check_turn(target, turn)
