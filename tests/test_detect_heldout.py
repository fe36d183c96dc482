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


# ---------------------------------------------------------------------- the mechanisms, one each


def part(name: str, kind: str) -> Part:
    d = detected(name)
    return d.reasoning_part if kind == "reasoning" else d.tools_part


def test_another_familys_spelling_of_the_markers_is_never_confident() -> None:
    """LFM2.5 writes <think> in ChatML: Mistral's format reads a text <think> as an alias of
    [THINK], and its family markers ([INST] …) are not in the prompt."""
    reasoning = part("LFM2.5-8B-A1B.jinja", "reasoning")
    assert reasoning.name != "mistral" or reasoning.confidence < HIGH_CONFIDENCE
    assert reasoning.confidence < HIGH_CONFIDENCE


def test_one_wire_format_under_two_families_is_told_apart_by_the_prompt() -> None:
    """Laguna's calls are GLM's <arg_key> calls; its prompt's <assistant> is poolside's."""
    for name in ("poolside-Laguna-S-2.1.jinja", "poolside-Laguna-XS-2.1.jinja"):
        tools = part(name, "tools")
        assert tools.name == "poolside_v1" and {"glm47", "ling3"} <= set(tools.passed)
        assert tools.decided_by == "family" and tools.confidence < 1.0


def test_a_choice_the_paired_tool_format_contests_is_not_confident() -> None:
    """DeepSeek-V4: deepseek_v3's rule fits the prompts better, deepseek_v4 is the tool format's
    family; the vendor documents deepseek_v4."""
    reasoning = part("deepseek-ai-DeepSeek-V4.jinja", "reasoning")
    assert "deepseek_v4" in reasoning.passed
    assert reasoning.name == "deepseek_v4" or reasoning.confidence < HIGH_CONFIDENCE


def test_a_template_that_renders_nothing_is_unknown_not_none() -> None:
    """firefunction-v2's template needs its own `functions` variable: no render, no verdict."""
    d = detected("fireworks-ai-llama-3-firefunction-v2.jinja")
    assert (d.reasoning_status, d.tools_status) == (UNKNOWN, UNKNOWN)
    assert "'functions' is undefined" in d.tools_part.evidence[0]


def test_none_is_not_sure_when_the_template_speaks_of_the_part() -> None:
    """Phi-4-mini takes its tools inside the system message, where the probe puts none."""
    tools = part("microsoft-Phi-4-mini-instruct.jinja", "tools")
    assert tools.status == NONE and tools.confidence < HIGH_CONFIDENCE and "'tool'" in tools.evidence[0]
    assert part("microsoft-Phi-3.5-mini-instruct.jinja", "tools").confidence == 1.0  # it never does


def test_a_channel_opener_is_the_whole_header() -> None:
    """Kimi K3 (XTML): the block opens with <|open|>think<|sep|>, and <|open|>response<|sep|>
    after the prompt means the block was closed (thinking=false)."""
    reasoning = part("Kimi-K3.jinja", "reasoning")
    assert "'<|open|>think<|sep|>'" in reasoning.evidence[0] and "thinking=false closed" in reasoning.evidence[1]
    assert reasoning.name == "kimi_k3" and reasoning.confidence == 1.0


def test_suffixed_markers_are_spelled_as_the_template_writes_them() -> None:
    """Tencent HY writes <think:opensource>: hy_v3 is spelled with the suffix the renders show
    (a bare template has no vocabulary), and the end-of-turn token after the calls is not content."""
    assert part("tencent-Hy3.jinja", "reasoning").name == "hy_v3"
    tools = part("tencent-Hy3.jinja", "tools")
    assert tools.name == "hy_v3" and tools.confidence == 1.0


def test_gigachat_31s_call_opener_is_gigachat3s() -> None:
    """GigaChat 3.1 opens a call with <|function_call|> (vLLM's gigachat3 parser reads both)."""
    tools = part("GigaChat3.1-10B-A1.8B.jinja", "tools")
    assert tools.status == CONFIRMED and tools.name == "gigachat3"
    assert tools.confidence < 1.0  # read by the alias: not the exact spelling of GigaChat 3's format


def test_a_built_format_that_misreads_the_templates_own_turns_is_not_offered() -> None:
    """MiniMax-M2's template writes parameter values verbatim: the format built from it keeps
    them so, and the same format stripping them (Qwen3-Coder's rule) passes the sentinel trials
    but misreads the template's own turns."""
    from dataclasses import replace

    from trisect.detect import inverse
    from trisect.detect import probe as p
    from trisect.detect.diff import Markers
    from trisect.formats import all_formats
    from trisect.templates import load_template

    template = TEMPLATES / "MiniMax-M2.jinja"
    first = detect(template).tools_part
    again = detect(template, formats=[f for f in all_formats() if f.name not in first.passed]).tools_part
    assert again.status == SYNTHESISED and again.spec is not None and again.spec.codec is not None
    built = again.spec
    stripping = replace(built, codec=replace(built.codec, trim="strip"))  # type: ignore[type-var]
    probe = p.Probe.of(load_template(template))
    verdict = inverse.tool_verdict(probe, stripping, Markers())
    assert not verdict.inverts and "two\\n    lines" in verdict.failed[0]
    assert inverse.tool_verdict(probe, built, Markers()).inverts
