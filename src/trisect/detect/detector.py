"""``detect(source)``: render, diff, confirm — then rank what confirmed, or synthesise.

1. Render the template with the controlled conversations (``probe``).
2. Diff the renders: the reasoning markers and each switch setting's prompt verdict, the
   regions one and two tool calls render as (``evidence``).
3. Confirm: every registered format is tried on every trial (``confirm``); only formats that
   parse all of them back to the sentinels stay. The survivors are ranked by the documented
   policy (``priority``); the chosen reasoning and tool formats are then tried together on a
   turn that reasons and calls.
4. When nothing registered confirms but the evidence isolates the structure, a format is built
   from it (``synth``) and confirmed the same way. Otherwise the part is ``unknown``, with the
   evidence detection has.

Cost: a few dozen renders and, per registered format, one parse per trial (a few hundred
characters each): tens of milliseconds per template, dominated by Jinja.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..engine.compile import for_vocab
from ..engine.spec import FormatSpec
from ..engine.vocab import Vocab
from ..errors import TemplateError
from ..formats import all_formats
from ..templates import ChatTemplate, load_template
from . import confidence as conf
from . import confirm as c
from . import inverse, synth
from . import probe as p
from .diff import Markers, middle
from .evidence import ReasoningEvidence, ToolEvidence, ToolShape, reasoning_evidence, tool_evidence
from .priority import (
    REASONING_ORDER,
    TOOL_ORDER,
    Standing,
    covers,
    family_markers,
    order,
)
from .result import CONFIRMED, NONE, SYNTHESISED, UNKNOWN, Detection, Part
from .shapes import tool_format


def detect(source: str | Path | ChatTemplate | Any, *, formats: Iterable[FormatSpec] | None = None) -> Detection:
    """The reasoning and tool-call formats a chat template implies.

    ``source``: a Jinja template string, a ``.jinja`` / ``tokenizer_config.json`` /
    ``chat_template.json`` path, a model directory, a GGUF file, a loaded ``ChatTemplate``, or a
    tokenizer object that carries its template (a ``transformers`` tokenizer: ``chat_template``,
    ``bos_token`` / ``eos_token``, ``get_added_vocab()`` — what an engine plugin holds).
    ``formats``: the registered formats to choose from (default: every registered format).
    Results are cached per template and catalogue. Rendering needs jinja2 (the ``templates``
    extra)."""
    template = _template(source)
    catalogue = tuple(all_formats() if formats is None else formats)
    special = tuple(sorted(template.special_tokens.items()))
    key = (template.source, template.tool_use, special, template.added_tokens, template.origin, catalogue)
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = _detect(template, catalogue)
        if len(_CACHE) > 64:
            _CACHE.pop(next(iter(_CACHE)))
    return found


_CACHE: dict[tuple[Any, ...], Detection] = {}


def _template(source: str | Path | ChatTemplate | Any) -> ChatTemplate:
    if isinstance(source, ChatTemplate):
        return source
    if isinstance(source, (str, Path)):
        return load_template(source)
    text = getattr(source, "chat_template", None)
    if not isinstance(text, str) or not text:
        raise TemplateError(f"{type(source).__name__} carries no chat template (no chat_template string)")
    special = {k: v for k in ("bos_token", "eos_token") if isinstance(v := getattr(source, k, None), str)}
    added = getattr(source, "get_added_vocab", None)
    tokens = tuple(added()) if callable(added) else ()
    return ChatTemplate(source=text, special_tokens=special, added_tokens=tokens, origin=type(source).__name__)


def _detect(template: ChatTemplate, catalogue: Sequence[FormatSpec]) -> Detection:
    probe = p.Probe.of(template)
    markers = Markers(template.added_tokens)
    catalogue = _spelled(catalogue, template, probe, markers)
    reasoning_formats = [s for s in catalogue if s.kind == "reasoning" and s.terminals]
    tool_formats = [s for s in catalogue if s.kind == "tools"]

    rev = reasoning_evidence(probe, markers, _think_pairs(reasoning_formats))
    tev = tool_evidence(probe, markers, template.eos_token)

    stem = _stem(template)
    tools_part = _tools(tev, tool_formats, probe, markers, stem, catalogue)
    reasoning_part = _reasoning(rev, reasoning_formats, probe, tools_part, markers, stem, catalogue)
    reasoning_part, tools_part, note = _together(rev, tev, probe, reasoning_part, tools_part, reasoning_formats)
    evidence = (note,) if note else ()
    return Detection(reasoning_part, tools_part, source=template.origin, evidence=evidence)


class _AddedTokens:
    """The template's added tokens as a vocabulary (``engine.vocab.Vocab`` reads a transformers
    tokenizer's ``added_tokens_decoder``): enough to spell a format's suffixed markers."""

    def __init__(self, tokens: Iterable[str]) -> None:
        self.added_tokens_decoder = dict(enumerate(sorted(set(tokens))))
        self.all_special_ids: tuple[int, ...] = ()

    def convert_ids_to_tokens(self, token_id: int) -> str:
        return self.added_tokens_decoder[token_id]


def _spelled(
    catalogue: Sequence[FormatSpec], template: ChatTemplate, probe: p.Probe, markers: Markers
) -> list[FormatSpec]:
    """The catalogue with the formats whose markers carry a per-checkpoint suffix (Tencent HY:
    ``<think:opensource>``) spelled as this template spells them: from its added tokens, else from
    the markers its prompt and turns render (a bare template comes without its vocabulary)."""
    if not any(s.vocab_suffix for s in catalogue):
        return list(catalogue)
    tokens = set(template.added_tokens)
    if not tokens:
        turns = (
            probe.prompt(tools=True),
            probe.turn(p.assistant(content=p.CONTENT, reasoning_content=p.REASONING)),
            probe.turn(p.assistant(content="", tool_calls=p.calls(1, as_string=False)), tools=True),
        )
        for text in (r.text for r in turns if r.text):
            tokens.update(text[a:b] for a, b in markers.spans(text))
    vocab = Vocab(_AddedTokens(tokens))
    return [for_vocab(s, vocab) if s.vocab_suffix else s for s in catalogue]


def _stem(template: ChatTemplate) -> str:
    """A name for synthesised formats: the template's file (or directory) name."""
    origin = Path(template.origin) if template.origin and not template.origin.startswith("<") else None
    if origin is None:
        return "detected"
    stem = origin.parent.name if origin.name in ("tokenizer_config.json", "chat_template.jinja") else origin.stem
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-").lower() or "detected"


def _think_pairs(specs: Sequence[FormatSpec]) -> list[tuple[str, str]]:
    pairs: dict[tuple[str, str], None] = {}
    for spec in specs:
        for start in spec.terminals.get("THINK_START", ()):
            for end in spec.terminals.get("THINK_END", ()):
                pairs[(start, end)] = None
    return list(pairs)


# ---------------------------------------------------------------------------- reasoning


def _settings_note(rev: ReasoningEvidence) -> str:
    return "prompt verdicts: " + ", ".join(f"{s.label} {s.verdict or 'undecided'}" for s in rev.settings)


def _reasoning(
    rev: ReasoningEvidence,
    specs: Sequence[FormatSpec],
    probe: p.Probe,
    tools: Part,
    markers: Markers,
    stem: str,
    catalogue: Sequence[FormatSpec],
) -> Part:
    if not rev.found:
        if rev.switch:
            changed = [s.label for s in rev.settings if s.prompt != rev.settings[0].prompt]
            return Part(
                UNKNOWN,
                suggested=_suggest_reasoning(rev, specs),
                evidence=(
                    f"the generation prompt changes under {', '.join(changed)}, but no render shows a reasoning block",
                ),
            )
        quiet = "no render shows a reasoning block and no switch changes the prompt"
        if not rev.settings:
            if probe.prompt(tools=True).text is None:
                error = probe.prompt().error
                return Part(UNKNOWN, evidence=(f"the template renders no generation prompt ({error})",))
            quiet = "the template renders a prompt only with tools, and it shows no reasoning block"
        return _none(quiet, probe.template.source, _REASONING_WORDS)
    markers_note = f"reasoning markers {rev.start!r} … {rev.end!r}: {rev.source}"
    trials = c.reasoning_trials(rev, probe)
    passed = [s for s in specs if not c.failures(s, None, trials)]
    tool_names = {tools.name, *(tools.spec.aliases if tools.spec else ())} - {None}
    prompt = rev.settings[0].prompt if rev.settings else ""
    outputs = [t.output for t in trials]
    spans = [markers.spans(o) for o in outputs]

    def standing(spec: FormatSpec) -> Standing:
        family = family_markers(spec, catalogue)
        present = sum(m in prompt for m in family)
        return Standing(
            spec,
            contradicted=bool(family) and not present,
            paired=spec.name in tool_names or bool(tool_names & set(spec.aliases)),
            disagreements=len(c.disagreements(spec, rev)),
            exact=covers(spec, outputs, spans),
            sniff=present,
            rank=order(spec.name, REASONING_ORDER),
        )

    evidence = (markers_note, _settings_note(rev))
    if passed:
        ranked = sorted((standing(s) for s in passed), key=Standing.key)
        best = ranked[0]
        contradicted = c.disagreements(best.spec, rev)
        rendered = any("rendered" in t.label and t.reasoning for t in trials)
        level, decided = conf.of_ranking(ranked, rendered=rendered, prompt_ok=not contradicted)
        note = f"{best.spec.name}: passed {len(trials)} trials; {_why(best, decided, len(ranked))}"
        if contradicted:
            note += f"; its own initial state contradicts the prompt under {', '.join(contradicted)}"
        return Part(
            CONFIRMED,
            best.spec.name,
            best.spec,
            level,
            alternatives=tuple(
                r.spec.name for r in ranked[1:] if not r.contradicted and r.disagreements == best.disagreements
            ),
            passed=tuple(r.spec.name for r in ranked),
            trials=len(trials),
            evidence=(*evidence, note),
            decided_by=decided,
        )
    built = synth.reasoning_format(rev, name=f"{stem}-reasoning", markers=markers)
    refused: tuple[str, ...] = ()
    if built is not None and not c.failures(built, None, trials):
        verdict = inverse.reasoning_verdict(probe, built, rev, markers)
        if verdict.inverts:
            return Part(
                SYNTHESISED,
                built.name,
                built,
                conf.SYNTHESISED,
                trials=len(trials) + verdict.rendered,
                evidence=(
                    *evidence,
                    f"{_none_passed('reasoning', specs)}; synthesised from the markers, and it parses "
                    f"{verdict.rendered} of the template's own reasoning turns back exactly",
                ),
            )
        refused = (_refused(verdict),)
    return Part(
        UNKNOWN,
        suggested=_suggest_reasoning(rev, specs),
        trials=len(trials),
        evidence=(*evidence, "no registered reasoning format passed every trial", *refused),
    )


def _refused(verdict: inverse.Verdict) -> str:
    if verdict.rendered < 2:
        return f"a format built from the markers was not offered: only {verdict.rendered} test turn(s) rendered"
    return f"a format built from the markers was not offered: it misreads the template's own turn {verdict.failed[0]}"


def _why(best: Standing, decided: str, count: int) -> str:
    if count == 1:
        return "no other registered format passed them"
    return f"{count - 1} other format(s) passed them too; ranked first by {decided}" + (
        "; its family's markers are not in the prompt" if best.contradicted else ""
    )


# words a template that handles the part uses somewhere (a variable, a system prompt)
_REASONING_WORDS = re.compile(r"think|reason", re.IGNORECASE)
_TOOL_WORDS = re.compile(r"tool|function", re.IGNORECASE)


def _none(quiet: str, source: str, words: re.Pattern[str]) -> Part:
    """No render shows the part. Sure of that only when the template never speaks of it: one
    that does may take it in a shape the probe does not render (tools inside the system message,
    a template variable of its own, reasoning written as plain text)."""
    hint = words.search(source)
    if hint is None:
        return Part(NONE, confidence=1.0, evidence=(quiet,))
    said = f"; but its source speaks of {hint.group(0).lower()!r}, in a shape no probe rendered"
    return Part(NONE, confidence=conf.NONE_HINTED, evidence=(quiet + said,))


def _none_passed(kind: str, specs: Sequence[FormatSpec]) -> str:
    return f"no registered {kind} format passed every trial" if specs else f"no registered {kind} format was offered"


def _suggest_reasoning(rev: ReasoningEvidence, specs: Sequence[FormatSpec]) -> tuple[str, ...]:
    text = "\n".join(s.prompt for s in rev.settings)
    scored = []
    for spec in specs:
        strings = [m for markers in spec.terminals.values() for m in markers if len(m.strip()) >= 3]
        hits = sum(m in text for m in strings)
        if hits >= 2 and spec.terminals.get("THINK_END", ("",))[0] in text:
            scored.append((-hits, spec.name))
    return tuple(name for _h, name in sorted(scored)[:3])


# ---------------------------------------------------------------------------- tools


def _tools(
    tev: ToolEvidence,
    specs: Sequence[FormatSpec],
    probe: p.Probe,
    markers: Markers,
    stem: str,
    catalogue: Sequence[FormatSpec],
) -> Part:
    with_tools, without = probe.prompt(tools=True).text, probe.prompt().text
    if not tev.shapes:
        if with_tools is not None and without is not None and with_tools != without:
            told = middle(without, with_tools, markers)
            return Part(
                UNKNOWN,
                suggested=_suggest_tools(told, specs),
                evidence=("the prompt lists the tools, but no assistant turn renders a tool call", *tev.errors[:2]),
            )
        if with_tools is None or without is None:
            error = probe.prompt(tools=True).error or probe.prompt().error
            return Part(UNKNOWN, evidence=(f"the template renders no prompt with and without tools ({error})",))
        return _none("the template neither lists tools nor renders tool calls", probe.template.source, _TOOL_WORDS)
    passed: list[tuple[FormatSpec, ToolShape]] = []
    for spec in specs:
        shape = next((sh for sh in tev.shapes if not c.failures(None, spec, c.tool_trials(sh.regions, spec))), None)
        if shape is not None:
            passed.append((spec, shape))
    prompt = with_tools or ""

    def standing(spec: FormatSpec, shape: ToolShape) -> Standing:
        family = family_markers(spec, catalogue)
        present = sum(m in prompt for m in family)
        texts = [r.text for r in shape.regions]
        return Standing(
            spec,
            contradicted=bool(family) and not present,
            paired=False,
            disagreements=0,
            exact=covers(spec, texts, [markers.spans(t) for t in texts]),
            sniff=present,
            rank=order(spec.name, TOOL_ORDER),
        )

    if passed:
        shapes = {id(spec): shape for spec, shape in passed}
        ranked = sorted((standing(s, sh) for s, sh in passed), key=Standing.key)
        best, shape = ranked[0], shapes[id(ranked[0].spec)]
        level, decided = conf.of_ranking(ranked, rendered=True, prompt_ok=True)
        return Part(
            CONFIRMED,
            best.spec.name,
            best.spec,
            level,
            alternatives=tuple(r.spec.name for r in ranked[1:]),
            passed=tuple(r.spec.name for r in ranked),
            trials=len(shape.regions),
            evidence=(
                _shown(shape, tev),
                f"{best.spec.name}: passed {len(shape.regions)} trials; {_why(best, decided, len(ranked))}",
            ),
            regions=shape.regions,
            decided_by=decided,
        )
    refused: list[str] = []
    for shape in tev.shapes:
        built = tool_format(shape, markers, name=f"{stem}-tools")
        if built is not None and not c.failures(None, built, c.tool_trials(shape.regions, built)):
            verdict = inverse.tool_verdict(probe, built, markers, as_string=shape.as_string, history=shape.history)
            if not verdict.inverts:
                refused.append(_refused(verdict))
                continue
            return Part(
                SYNTHESISED,
                built.name,
                built,
                conf.SYNTHESISED,
                trials=len(shape.regions) + verdict.rendered,
                evidence=(
                    _shown(shape, tev),
                    f"{_none_passed('tool', specs)}; synthesised from the call regions, and it parses "
                    f"{verdict.rendered} of the template's own call turns back exactly",
                ),
                regions=shape.regions,
            )
    return Part(
        UNKNOWN,
        suggested=_suggest_tools(tev.shapes[0].regions[0].text, specs),
        trials=len(tev.shapes[0].regions),
        evidence=(
            *(_shown(sh, tev) for sh in tev.shapes),
            "no registered tool format passed every trial",
            *refused[:1],
        ),
    )


def _shown(shape: ToolShape, tev: ToolEvidence) -> str:
    text = f"tool calls render ({shape.label}) as {shape.regions[0].text!r}"
    if len(shape.regions) < 2:
        text += "; two calls do not render" + (f" ({tev.errors[-1]})" if tev.errors else "")
    return text


def _suggest_tools(text: str, specs: Sequence[FormatSpec]) -> tuple[str, ...]:
    scored = []
    for spec in specs:
        strings = {m for markers in spec.terminals.values() for m in markers if len(m.strip()) >= 3}
        hits = sum(m in text for m in strings)
        if hits:
            scored.append((-hits, spec.name))
    return tuple(name for _h, name in sorted(scored)[:3])


# ---------------------------------------------------------------------------- together


def _together(
    rev: ReasoningEvidence,
    tev: ToolEvidence,
    probe: p.Probe,
    reasoning: Part,
    tools: Part,
    reasoning_formats: Sequence[FormatSpec],
) -> tuple[Part, Part, str]:
    """Check the two choices on one turn that reasons and calls; fall back along the ranking."""
    if tools.spec is None:
        return reasoning, tools, ""
    if tools.status == SYNTHESISED and reasoning.spec is not None:
        tools = replace(tools, spec=synth.align(tools.spec, reasoning.spec))
    trial = c.combined_trial(rev, tools.regions, tev, probe, tools.spec)
    if trial is None:
        return reasoning, tools, ""
    if c.passes(reasoning.spec, tools.spec, trial):
        return reasoning, tools, f"{reasoning.name or 'no reasoning'} + {tools.name}: passed {trial.label!r}"
    if reasoning.status == CONFIRMED:
        by_name = {s.name: s for s in reasoning_formats}
        for name in reasoning.alternatives:
            spec = by_name[name]
            if c.passes(spec, tools.spec, trial):
                rest = tuple(n for n in reasoning.alternatives if n != name)
                chosen = replace(
                    reasoning,
                    name=name,
                    spec=spec,
                    alternatives=rest,
                    evidence=(*reasoning.evidence, f"{reasoning.name} fails with {tools.name} on {trial.label!r}"),
                )
                return chosen, tools, f"{name} + {tools.name}: passed {trial.label!r}"
    lowered = replace(
        tools,
        confidence=min(tools.confidence, conf.TOGETHER_FAILED),
        evidence=(*tools.evidence, f"with {reasoning.name or 'no reasoning'} it fails {trial.label!r}"),
    )
    return reasoning, lowered, f"{reasoning.name or 'no reasoning'} + {tools.name}: failed {trial.label!r}"


__all__ = ["CONFIRMED", "NONE", "SYNTHESISED", "UNKNOWN", "detect"]
