"""How sure a detection is: the confidence of each part, from what decided it.

A confirmed part is at 1.0 only when the template rendered turns of that exact format (its own
markers cover every marker of the trials, and the trials include a rendered reasoning turn, not
only outputs built from the markers), no other registered format passed the same trials, the
prompt does not contradict the format's family, and its own initial state agrees with every
prompt. Otherwise the level is that of the parts decided the same way on the calibration half of
the held-out templates (tests/data/detect/heldout, ``split: calibration``): how often such a part
was the name its vendor documents, as (right + 1) / (parts + 2), rounded down to a tenth.
docs/detect.md ("Calibration") has the counts and what the test half showed.

Cost: a table look-up.
"""

from __future__ import annotations

from collections.abc import Sequence

from .priority import EXACT, FAMILY, ORDER, PAIRING, PROMPT_STATE, SNIFF, UNIQUE, Standing, contested, decided_by

SHOWN = "shown"  # some of the family's markers are in the prompt
UNSAID = "unsaid"  # the format declares no family markers
CONTRADICTED = "contradicted"  # it declares some, none is in the prompt

# a signal of the template separated the chosen format from the next (its family's markers are in
# the prompt and the next one's are not, the next one's initial state contradicts more prompts, or
# it is named like the chosen tool format): right 7 of 7 on the calibration half
SIGNAL = 0.8
# nothing but the documented order (or an alias, or a count of family markers) separated them:
# right 1 of 2
GUESS = 0.5
BY_STEP: dict[str, float] = {
    UNIQUE: SIGNAL,  # alone, but short of the conditions for 1.0 (the caps below say which)
    FAMILY: SIGNAL,
    PROMPT_STATE: SIGNAL,
    PAIRING: SIGNAL,
    EXACT: GUESS,
    SNIFF: GUESS,
    ORDER: GUESS,
}
# caps
NO_FAMILY = 0.2  # the chosen format's family markers are not in the prompt: right 0 of 3
CONTESTED = 0.2  # a lower-ranked format is paired with the tool format, or has exact markers: 0 of 2
BUILT_ONLY = 0.7  # no rendered reasoning turn: the trials were built from the markers (no data: a prior)
NOT_EXACT = 0.5  # the format reads a marker of the trials only by an alias (no data: a prior)
PROMPT_NEEDED = 0.8  # its own initial state contradicts a prompt: right only given the prompt
TOGETHER_FAILED = 0.5  # the two chosen formats fail together on a turn that reasons and calls

SYNTHESISED = 0.6  # built from the renders, and inverting the template's own turns (detect/inverse.py)
# nothing renders the part, but the template's source speaks of it: right 2 of 5
NONE_HINTED = 0.4


def confirmed(
    decided: str, *, rendered: bool, exact: bool, family: str, prompt_ok: bool, contested: bool = False
) -> float:
    """The confidence of a confirmed part."""
    if decided == UNIQUE and rendered and exact and family != CONTRADICTED and prompt_ok:
        return 1.0
    level = BY_STEP[decided]
    if decided != UNIQUE and family != SHOWN:
        level = min(level, NO_FAMILY)
    if contested:
        level = min(level, CONTESTED)
    if not rendered:
        level = min(level, BUILT_ONLY)
    if not exact:
        level = min(level, NOT_EXACT)
    if family == CONTRADICTED:
        level = min(level, NO_FAMILY)
    if not prompt_ok:
        level = min(level, PROMPT_NEEDED)
    return level


def of_ranking(ranked: Sequence[Standing], *, rendered: bool, prompt_ok: bool) -> tuple[float, str]:
    """(confidence, the step that decided) for the first of ``ranked`` (formats that passed
    every trial, best first)."""
    best = ranked[0]
    decided = decided_by(best, ranked[1] if len(ranked) > 1 else None)
    family = CONTRADICTED if best.contradicted else SHOWN if best.sniff else UNSAID
    level = confirmed(
        decided,
        rendered=rendered,
        exact=best.exact,
        family=family,
        prompt_ok=prompt_ok,
        contested=contested(best, ranked[1:]),
    )
    return level, decided
