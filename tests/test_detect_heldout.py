"""trisect.detect on chat templates it was not built on: never confidently wrong.

tests/data/detect/heldout holds chat templates of current models that are not in
tests/data/templates, each part labelled from its vendor's documentation (labels.json says
where from). A part is graded right (the documented name or an alias; ``none`` where the model
has no such part; ``unknown`` or a synthesised format where no registered name is documented),
unknown (the part is unknown or synthesised though a registered name is documented), or wrong
(another name, or ``none`` where the model has the part). No wrong part may carry a high
confidence. ``python tests/test_detect_heldout.py`` prints the table and the counts."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from trisect.detect import CONFIRMED, NONE, SYNTHESISED, UNKNOWN, Detection, Part, detect
from trisect.detect.result import HIGH_CONFIDENCE

HELDOUT = Path(__file__).parent / "data" / "detect" / "heldout"
TEMPLATES = Path(__file__).parent / "data" / "templates"
BUILT_ON = json.loads((HELDOUT.parent / "expected.json").read_text(encoding="utf-8"))["templates"]
LABELS: dict[str, Any] = json.loads((HELDOUT / "labels.json").read_text(encoding="utf-8"))["templates"]
RIGHT, WRONG, UNSURE = "right", "wrong", "unknown"

_CACHE: dict[str, Detection] = {}


def detected(name: str) -> Detection:
    if name not in _CACHE:
        _CACHE[name] = detect(HELDOUT / name)
    return _CACHE[name]


def grade(part: Part, label: dict[str, Any]) -> str:
    expect = label["expect"]
    if expect == "none":
        return RIGHT if part.status == NONE else UNSURE if part.status == UNKNOWN else WRONG
    if expect == "unsupported":
        return RIGHT if part.status in (UNKNOWN, SYNTHESISED) else WRONG
    if part.status == CONFIRMED:
        got = {part.name, *(part.spec.aliases if part.spec is not None else ())}
        return RIGHT if {expect, *label.get("also", ())} & got else WRONG
    return WRONG if part.status == NONE else UNSURE


def graded(split: str | None = None) -> list[tuple[str, str, Part, dict[str, Any], str]]:
    """(template, kind, part, label, grade) for every labelled part."""
    rows = []
    for name, entry in sorted(LABELS.items()):
        if split is not None and entry["split"] != split:
            continue
        d = detected(name)
        for kind, part in (("reasoning", d.reasoning_part), ("tools", d.tools_part)):
            label = entry[kind]
            if label is not None:
                rows.append((name, kind, part, label, grade(part, label)))
    return rows


def test_every_held_out_template_has_labels_and_none_is_in_the_built_on_set() -> None:
    """The built-on set: the templates tests/data/detect/expected.json names (test_detect.py)."""
    on_disk = sorted(p.name for p in HELDOUT.glob("*.jinja"))
    assert on_disk == sorted(LABELS)
    built_on = {(TEMPLATES / name).read_bytes() for name in BUILT_ON}
    assert not [p.name for p in HELDOUT.glob("*.jinja") if p.read_bytes() in built_on]
    assert not set(LABELS) & set(BUILT_ON)
    for entry in LABELS.values():
        assert entry["split"] in ("calibration", "test") and entry["origin"]["licence"]
        for kind in ("reasoning", "tools"):
            label = entry[kind]
            assert label is None or (label["expect"] and label["source"])


@pytest.mark.parametrize("split", ["calibration", "test"])
def test_no_held_out_part_is_wrong_at_high_confidence(split: str) -> None:
    confident_and_wrong = [
        (name, kind, part.name, part.confidence)
        for name, kind, part, _label, outcome in graded(split)
        if outcome == WRONG and part.confidence >= HIGH_CONFIDENCE
    ]
    assert confident_and_wrong == []


def test_other_copies_of_held_out_models_are_never_confidently_wrong() -> None:
    """tests/data/templates may hold another copy of a held-out model's template (another
    commit, for the inversion tests): the same labels hold for it."""
    for name in sorted(set(LABELS) & {p.name for p in TEMPLATES.glob("*.jinja")}):
        d = detect(TEMPLATES / name)
        for kind, part in (("reasoning", d.reasoning_part), ("tools", d.tools_part)):
            label = LABELS[name][kind]
            assert label is None or grade(part, label) != WRONG or part.confidence < HIGH_CONFIDENCE, (name, part)


def report() -> str:
    lines = []
    for split in ("calibration", "test"):
        rows = graded(split)
        lines.append(f"== {split}: {len({r[0] for r in rows})} templates, {len(rows)} parts")
        for name, kind, part, label, outcome in rows:
            sure = "" if label["sure"] else " (label unsure)"
            lines.append(
                f"{outcome:7} {part.confidence:.2f} {name:50} {kind:9} {part.status:11} "
                f"{part.name or '-':28} expected {label['expect']}{sure}"
            )
        counts = Counter(r[4] for r in rows)
        lines.append("   " + ", ".join(f"{k} {counts[k]}" for k in (RIGHT, WRONG, UNSURE)))
        by_level = Counter((round(r[2].confidence, 2), r[4]) for r in rows)
        for level in sorted({lv for lv, _o in by_level}, reverse=True):
            lines.append(
                f"   confidence {level:.2f}: "
                + ", ".join(f"{o} {by_level[(level, o)]}" for o in (RIGHT, WRONG, UNSURE))
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(report() + "\n")
