"""What the renders show: the reasoning markers and prompt states, and the tool-call regions.

Reasoning, from three kinds of render (the first that finds markers wins):

1. an assistant turn *with* reasoning against one without: the markers around the reasoning
   sentinel (the start marker before it, the end marker between it and the answer);
2. the generation prompt under each switch: a prompt that ends on an opening marker leaves the
   reasoning open, one that ends on its closer has closed it (``<think>`` / ``</think>``);
3. reasoning written into the content, for templates that only strip it out of history turns
   (``content.split('</think>')[-1]``): a pair of markers the template removes with the text
   between them is the family's.

Then each switch setting gets a verdict from its prompt's last turn (after the user sentinel):
``open`` (the model starts inside reasoning), ``closed`` (the template closed it: no reasoning),
or ``None`` (the model decides); a switch the template ignores (its prompt is the default's
under every value) is left out, since the model does under it what it does by default. A template whose prompts
differ between settings but shows no markers has a thinking switch whose wire format it never
renders: reasoning is *unknown*. Last resort: a known marker pair that the default system
prompt itself writes, opener before closer (Magistral tells the model to think in
``[THINK]…[/THINK]``).

Tool calls: the region an assistant turn with one and with two sentinel calls has where the
same turn without calls has nothing (``diff.middle``), for the first conversation shape that
renders every sentinel name (final turn or history turn; arguments as an object or a string).

Cost: a few dozen renders (``probe``) and linear diffs of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import probe as p
from .diff import Markers, closing, middle

OPEN = "open"
CLOSED = "closed"


@dataclass(frozen=True)
class Setting:
    """One switch setting: its generation prompt and what the prompt leaves the model in."""

    label: str
    kwargs: Mapping[str, Any]
    prompt: str
    verdict: str | None


@dataclass
class ReasoningEvidence:
    start: str | None = None
    end: str | None = None
    source: str = ""  # how the markers were found
    shape: str = ""  # the message shape that rendered the reasoning sentinel
    settings: list[Setting] = field(default_factory=list)
    switch: bool = False  # some setting renders a different prompt
    rendered: dict[str, str] = field(default_factory=dict)  # setting label -> reasoning turn render
    single_end: bool = True  # the end is one marker (not a message change, as in Harmony)

    @property
    def found(self) -> bool:
        return self.end is not None


@dataclass(frozen=True)
class ToolRegion:
    count: int
    text: str
    last_marker: str | None = None  # the marker the region ends with, if any


@dataclass(frozen=True)
class ToolShape:
    """The regions one conversation shape renders one and two calls as."""

    label: str
    regions: tuple[ToolRegion, ...]
    as_string: bool = False  # the arguments were given as a JSON string (else as an object)
    history: bool = False  # the calls were rendered in a history turn (a user turn follows)


@dataclass
class ToolEvidence:
    shapes: list[ToolShape] = field(default_factory=list)  # every shape that renders the calls
    errors: list[str] = field(default_factory=list)
    with_reasoning: str | None = None  # a call turn that also renders reasoning (after the prompt)

    @property
    def regions(self) -> tuple[ToolRegion, ...]:
        return self.shapes[0].regions if self.shapes else ()


def _tail(prompt: str) -> str:
    """The prompt after the user's turn: what the template adds for the assistant."""
    at = prompt.rfind(p.USER)
    return prompt[at + len(p.USER) :] if at >= 0 else prompt


def _opener(before: str, markers: Markers, end: str) -> str | None:
    """The marker the reasoning opens with: the last one before it, or, when that one is a
    separator the end repeats (XTML's ``<|open|>think<|sep|>``, Harmony's
    ``<|channel|>analysis<|message|>``), the channel header it closes, from the marker before
    the channel's name."""
    last = markers.last(before)
    if last is None or last not in end:
        return last
    head = before.rstrip()[: -len(last)]
    name = re.search(r"\w+$", head)
    if name is None:
        return last
    prior = markers.last(head[: name.start()])
    return prior + name.group(0) + last if prior and head[: name.start()].endswith(prior) else last


def verdict(prompt: str, start: str | None, end: str | None) -> str | None:
    tail = _tail(prompt)
    s = tail.rfind(start) if start else -1
    e = tail.rfind(end) if end else -1
    if e < 0 and end and start and s < len(tail.rstrip()) - len(start):
        # an end that changes channel (XTML's <|close|>think<|sep|><|open|>response<|sep|>): a
        # prompt that opens the next channel has closed the block (a suffix of the end the
        # opener does not share, from a marker edge)
        e = _closed_at(tail.rstrip(), start, end)
    if s > e:
        return OPEN
    if e > s:
        return CLOSED
    return None


def _closed_at(tail: str, start: str, end: str) -> int:
    for at in sorted({a for a, _b in Markers().spans(end)}):
        rest = end[at:]
        if at > 0 and tail.endswith(rest) and not start.endswith(rest):
            return len(tail) - len(rest)
    return -1


def _reasoning_render(probe: p.Probe, kwargs: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(shape, render, text before the answer) of the first reasoning shape that shows the sentinel."""
    for shape, fields in p.REASONING_SHAPES:
        text = probe.turn(p.assistant(**fields), kwargs=kwargs).text
        if text is None or p.REASONING not in text or p.CONTENT not in text:
            continue
        if "'text'" in text or '"text"' in text:
            continue  # the template printed the content chunks as data
        if text.index(p.REASONING) < text.rindex(p.CONTENT):
            return shape, text, text[text.index(p.REASONING) + len(p.REASONING) : text.rindex(p.CONTENT)]
    for as_string in (False, True):  # Kimi-K2-Thinking renders reasoning only on a call turn
        fields = {"content": "", "reasoning_content": p.REASONING, "tool_calls": p.calls(1, as_string=as_string)}
        text = probe.turn(p.assistant(**fields), tools=True, kwargs=kwargs).text
        if text is not None and p.REASONING in text and p.NAMES[0] in text:
            rest = text[text.index(p.REASONING) + len(p.REASONING) :]
            return "reasoning_content with a call", text, rest[: rest.index(p.NAMES[0])]
    return None


def _strip_probe(probe: p.Probe, pairs: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """A marker pair the template strips, with the reasoning between, from an answer."""
    for start, end in pairs:
        content = f"{start}{p.REASONING}{end}{p.CONTENT}"
        for history in (False, True):
            text = probe.turn(p.assistant(content=content), history=history).text
            if text is not None and p.CONTENT in text and p.REASONING not in text:
                return start, end
    return None


def _instructed(prompt: str, pairs: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """A registered marker pair the prompt itself writes, opener before closer (Magistral's system
    prompt: ``[THINK]Your thoughts…[/THINK]Here, provide a self-contained response.``)."""
    for start, end in pairs:
        at = prompt.find(start)
        close = prompt.find(end, at + len(start)) if at >= 0 else -1
        if close > at and p.USER not in prompt[at:close] and not _wraps_turns(prompt, start, end):
            return start, end
    return None


def _wraps_turns(prompt: str, start: str, end: str) -> bool:
    """Is the pair the template's turn markup (``[INST]`` … ``[/INST]`` around the user's turn)?"""
    tail = prompt[prompt.find(p.USER) - len(start) - 8 :] if p.USER in prompt else ""
    return start in tail or end in tail


def reasoning_evidence(
    probe: p.Probe, markers: Markers, catalogue_pairs: Sequence[tuple[str, str]]
) -> ReasoningEvidence:
    ev = ReasoningEvidence()
    prompts: list[tuple[str, Mapping[str, Any], str]] = []
    for label, kwargs in p.SETTINGS:
        text = probe.prompt(kwargs=kwargs).text
        if text is not None:
            prompts.append((label, kwargs, text))
    ev.switch = len({text for _l, _k, text in prompts}) > 1

    seen = _reasoning_render(probe, {})
    if seen is not None:
        ev.shape, text, between = seen
        before = text[: text.index(p.REASONING)]
        # before a call, the end is the first marker; before the answer, all that stands there
        # (Harmony closes one message and opens the next: <|end|><|start|>assistant…<|message|>)
        ev.end = (markers.first(between) if "call" in ev.shape else between.strip()) or None
        ev.start = _opener(before, markers, ev.end or "")
        ev.single_end = ev.end is not None and markers.first(ev.end) == ev.end
        ev.source = f"an assistant turn with reasoning ({ev.shape}) against one without"
    if not ev.found:
        tails = [_tail(text) for _l, _k, text in prompts]
        openers = {m for m in (markers.last(t) for t in tails) if m and closing(m)}
        for opener in sorted(openers):
            closer = closing(opener)
            if closer and any(t.rstrip().endswith(closer) for t in tails):
                ev.start, ev.end = opener, closer
                ev.source = "the generation prompt opens it under one setting and closes it under another"
                break
        if not ev.found:
            pairs = [(o, c) for o in sorted(openers) if (c := closing(o))] + list(catalogue_pairs)
            stripped = _strip_probe(probe, dict.fromkeys(pairs))
            if stripped is not None:
                ev.start, ev.end = stripped
                ev.source = "the template strips this pair, and the reasoning between, from an answer"
        if not ev.found and prompts and prompts[0][0] == "default":
            # only pairs registered formats use: system prompts also write <ROLE>…</ROLE> sections
            told = _instructed(prompts[0][2], catalogue_pairs)
            if told is not None:
                ev.start, ev.end = told
                ev.source = "the default system prompt tells the model to write its reasoning between these"
    default = prompts[0][2] if prompts and prompts[0][0] == "default" else None
    # a switch the template reads changes the prompt under one of its values (the default may
    # equal the other: thinking off unless enable_thinking is true)
    read = {next(iter(kwargs)) for label, kwargs, text in prompts if label != "default" and text != default}
    for label, kwargs, text in prompts:
        if label != "default" and next(iter(kwargs)) not in read:
            continue  # the template ignores this switch: the model does what it does by default
        ev.settings.append(Setting(label, kwargs, text, verdict(text, ev.start, ev.end) if ev.found else None))
        if ev.found:
            seen = _reasoning_render(probe, kwargs)
            if seen is not None:
                ev.rendered[label] = seen[1]
    return ev


def tool_evidence(probe: p.Probe, markers: Markers, eos: str | None = None) -> ToolEvidence:
    ev = ToolEvidence()
    seen: set[tuple[ToolRegion, ...]] = set()
    for history in (False, True):
        for as_string in (False, True):
            regions = _regions(probe, markers, history=history, as_string=as_string, eos=eos, ev=ev)
            if regions and regions not in seen:
                seen.add(regions)
                where = "a history" if history else "the final"
                label = f"{where} assistant turn, arguments as {'a JSON string' if as_string else 'an object'}"
                ev.shapes.append(ToolShape(label, regions, as_string, history))
    for as_string in (False, True):
        ev.with_reasoning = ev.with_reasoning or _call_with_reasoning(probe, as_string=as_string)
    return ev


def _regions(
    probe: p.Probe, markers: Markers, *, history: bool, as_string: bool, eos: str | None, ev: ToolEvidence
) -> tuple[ToolRegion, ...]:
    """The call regions of one shape, against a plain answer turn (else an empty one)."""
    found: list[ToolRegion] = []
    for count in (1, 2):
        region = None
        for tools in (True, False):  # some templates fail on the tools list but render calls without it
            for baseline in (p.CONTENT, ""):
                for content in ("", None):
                    base = probe.turn(p.assistant(content=baseline), tools=tools, history=history)
                    full = probe.turn(
                        p.assistant(content=content, tool_calls=p.calls(count, as_string=as_string)),
                        tools=tools,
                        history=history,
                    )
                    if base.text is None or full.text is None:
                        ev.errors.append(f"{count} call(s): {full.error or base.error}")
                        continue
                    region = middle(base.text, full.text, markers)
                    if not history:
                        region = cut_at_turn_end(region, base.text, baseline, markers, eos)
                    if all(name in region for name in p.NAMES[:count]):
                        break
                    region = None
                if region is not None:
                    break
            if region is not None:
                break
        if region is None:
            break
        found.append(ToolRegion(count, region, markers.last(region)))
    return tuple(found)


def cut_at_turn_end(region: str, base: str, baseline: str, markers: Markers, eos: str | None) -> str:
    """The model stops at its end of turn: text a template renders after it is not output."""
    ends = [eos] if eos else []
    if baseline and baseline in base:
        end = markers.first(base[base.rindex(baseline) + len(baseline) :])
        if end:
            ends.append(end)
    for end in ends:
        at = region.find(end)
        if at > 0:
            region = region[:at].rstrip()
    return region


def _call_with_reasoning(probe: p.Probe, *, as_string: bool) -> str | None:
    """A final call turn that renders reasoning too, continued after the default prompt."""
    prompt = probe.prompt(tools=True).text
    if prompt is None:
        return None
    for key in ("reasoning_content", "reasoning", "thinking"):
        fields = {"content": "", key: p.REASONING, "tool_calls": p.calls(1, as_string=as_string)}
        text = probe.turn(p.assistant(**fields), tools=True).text
        if text is not None and p.REASONING in text and text.startswith(prompt):
            return text[len(prompt) :]
    return None
