"""docs/inversion.md lists the lossy table as tests/inversion/lossy.py holds it, and every rule
cites a line of a template that exists."""

from __future__ import annotations

import re
from pathlib import Path

from .lossy import CHECKER, GENERATOR, LOSSES
from .targets import TARGETS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "inversion.md").read_text(encoding="utf-8")


def test_every_lossy_rule_is_documented_with_its_line() -> None:
    for name, losses in LOSSES.items():
        for loss in losses:
            assert f"| `{name}` | {loss.field} | {loss.rule} |" in DOC, (name, loss.rule)
            assert f"`{loss.cite}`" in DOC, (name, loss.cite)


def test_every_lossy_rule_names_a_target_and_a_template_it_cites() -> None:
    by_name = {t.name: t for t in TARGETS}
    for name, losses in LOSSES.items():
        assert name in by_name, name
        for loss in losses:
            assert loss.rule in CHECKER or loss.rule in GENERATOR
            file = re.split(r":", loss.cite)[0]
            assert file == by_name[name].template.name, (name, loss.cite)
            assert by_name[name].template.exists()
