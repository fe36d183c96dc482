"""Confirmation: a format is chosen only if it parses what the template renders back to exactly
the sentinels.

Reasoning trials, per switch setting (``evidence.Setting``): the model's output after that
setting's generation prompt, taken from the render when the render continues the prompt (the
reasoning turn and the plain answer turn), else built from the evidence markers as the
prompt's verdict says the model writes it — ``REASON</think>ANSWER`` after a prompt that left
reasoning open, ``ANSWER`` after one that closed it, ``<think>REASON</think>ANSWER`` when the
model decides. Each trial is parsed with that prompt and those ``chat_template_kwargs``, as a
server would, and must give exactly the reasoning and the answer.

The prompt-state rule is checked as well: ``disagreements`` counts the settings where the
format's own initial state (without the prompt) contradicts the prompt's verdict — a format
with none also serves an engine that does not pass the prompt (vLLM's parsers do not read it).

Tool trials: the region one and two calls rendered as must parse to exactly those calls (names
and arguments, typed by the sentinel tools' schemas) with no content left over.

Cost: one parse of a few hundred characters per trial and candidate.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..engine.spec import CONTENT, REASONING, FormatSpec
from ..engine.stream_options import StreamOptions
from ..errors import TrisectError
from ..message import Message
from ..parser import Parser
from . import probe as p
from .evidence import CLOSED, OPEN, ReasoningEvidence, ToolEvidence, ToolRegion


@dataclass(frozen=True)
class Trial:
    """One output the model would write, with the request it is parsed under and what it holds."""

    label: str
    output: str
    prompt: str | None
    kwargs: Any
    reasoning: str  # "" when none
    calls: int = 0
    content: str = p.CONTENT


@lru_cache(maxsize=512)
def parser(reasoning: FormatSpec | None, tools: FormatSpec | None) -> Parser:
    return Parser(reasoning=reasoning, tools=tools)


def _answer_end(text: str) -> str:
    """``text`` cut right after the answer sentinel (the turn's end markers dropped)."""
    return text[: text.rindex(p.CONTENT) + len(p.CONTENT)]


def reasoning_trials(ev: ReasoningEvidence, probe: p.Probe) -> list[Trial]:
    trials: list[Trial] = []
    for s in ev.settings:
        rendered = ev.rendered.get(s.label)
        rendered_here = rendered is not None and rendered.startswith(s.prompt)
        if rendered is not None and rendered_here:
            out = _answer_end(rendered[len(s.prompt) :])
            trials.append(Trial(f"{s.label}: rendered reasoning turn", out, s.prompt, s.kwargs, p.REASONING))
        plain = probe.turn(p.assistant(content=p.CONTENT), kwargs=s.kwargs).text
        if plain is not None and plain.startswith(s.prompt) and p.CONTENT in plain[len(s.prompt) :]:
            out = _answer_end(plain[len(s.prompt) :])
            # after a prompt that left the block open, a final turn without the closer is the
            # template continuing that block (a prefill), not an output
            if s.verdict != OPEN or (ev.end or "") in out:
                trials.append(Trial(f"{s.label}: rendered answer turn", out, s.prompt, s.kwargs, ""))
        built = None if rendered_here else _built(ev, s.verdict)
        if built is not None:
            out, reasoning = built
            trials.append(Trial(f"{s.label}: prompt {s.verdict or 'undecided'}", out, s.prompt, s.kwargs, reasoning))
    return trials


def _built(ev: ReasoningEvidence, verdict: str | None) -> tuple[str, str] | None:
    """The output a prompt with this verdict leads to, from the evidence markers."""
    end = ev.end or ""
    if verdict == OPEN:
        return f"{p.REASONING}\n{end}\n\n{p.CONTENT}", p.REASONING
    if verdict == CLOSED:
        return p.CONTENT, ""
    if ev.start:
        return f"{ev.start}\n{p.REASONING}\n{end}\n\n{p.CONTENT}", p.REASONING
    return None


def _same(msg: Message, trial: Trial) -> bool:
    if (msg.reasoning or "").strip() != trial.reasoning or (msg.content or "").strip() != trial.content:
        return False
    if len(msg.tool_calls) != trial.calls:
        return False
    for i, tc in enumerate(msg.tool_calls):
        try:
            arguments = json.loads(tc.arguments)
        except ValueError:
            return False
        if tc.name != p.NAMES[i] or arguments != p.ARGUMENTS:
            return False
    return True


def passes(reasoning: FormatSpec | None, tools: FormatSpec | None, trial: Trial) -> bool:
    try:
        msg = parser(reasoning, tools).parse(
            trial.output, prompt_text=trial.prompt, chat_template_kwargs=trial.kwargs, tools=p.TOOLS
        )
    except TrisectError:
        return False
    return _same(msg, trial)


def failures(reasoning: FormatSpec | None, tools: FormatSpec | None, trials: Sequence[Trial]) -> list[str]:
    """The trials the formats fail; no trials at all is a failure (nothing was confirmed)."""
    if not trials:
        return ["no trial"]
    return [t.label for t in trials if not passes(reasoning, tools, t)]


def disagreements(spec: FormatSpec, ev: ReasoningEvidence) -> list[str]:
    """Settings whose prompt verdict the format's own initial state contradicts."""
    initial: Callable[[StreamOptions], str] = spec.initial
    found = []
    for s in ev.settings:
        if s.verdict is None:
            continue
        try:
            state = initial(StreamOptions(chat_template_kwargs=s.kwargs))
        except (TrisectError, TypeError, ValueError):
            found.append(s.label)
            continue
        if state not in (REASONING, CONTENT):
            continue  # a message header (Harmony): the header decides
        if (state == REASONING) != (s.verdict == OPEN):
            found.append(s.label)
    return found


def region_output(region: ToolRegion, spec: FormatSpec | None) -> str:
    """A call region as the output ``spec`` reads: a marker that ends the region and is none of
    the format's is where the model's turn ends after calls (an end-of-turn token the template
    writes there: Gemma 4's ``<|tool_response>``, HY's ``<｜hy_eos｜>``), as the engine stops there."""
    text, last = region.text, region.last_marker
    if spec is not None and last and text.endswith(last):
        if last not in {m for markers in spec.terminals.values() for m in markers}:
            return text[: -len(last)].rstrip()
    return text


def tool_trials(regions: Sequence[ToolRegion], spec: FormatSpec | None = None) -> list[Trial]:
    return [
        Trial(f"{r.count} call{'s' if r.count > 1 else ''}", region_output(r, spec), None, {}, "", r.count, "")
        for r in regions
    ]


def combined_trial(
    rev: ReasoningEvidence,
    regions: Sequence[ToolRegion],
    tev: ToolEvidence,
    probe: p.Probe,
    tools: FormatSpec | None = None,
) -> Trial | None:
    """Reasoning then a call, after the default prompt with tools: the two formats together."""
    if not regions:
        return None
    region = region_output(regions[0], tools)
    prompt = probe.prompt(tools=True).text
    if prompt is None:
        return None
    default = next((s for s in rev.settings if s.label == "default"), None)
    if tev.with_reasoning is not None and region in tev.with_reasoning:
        cont = tev.with_reasoning
        out = cont[: cont.index(region) + len(region)]
        return Trial("default: rendered call turn with reasoning", out, prompt, {}, p.REASONING, 1, "")
    if not rev.found or default is None:
        return Trial("default: a call", region, prompt, {}, "", 1, "")
    if not rev.single_end:
        return None  # the reasoning ends by changing message: only a rendered turn says how
    built = _built(rev, default.verdict)
    if built is None:
        return None
    text, reasoning = built
    return Trial("default: reasoning then a call", text.replace(p.CONTENT, region), prompt, {}, reasoning, 1, "")
