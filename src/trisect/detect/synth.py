"""Reasoning formats built from the evidence, the recipes format files are written from, and
the alignment of a built format's terminal names with the format it is combined with.

A reasoning block between two markers becomes ``formats._think.think_format``, its initial
state from the prompt verdicts: a switch that closes the block -> ``thinking_switch``; a prompt
that always opens it -> ``always_reasoning``; a reasoning effort that turns it off ->
``effort_switch``; a model that decides -> the block opens in content. Tool formats are built in
``shapes``. A built format is only used after it passes the same trials as a registered one.

Cost: a table build per format (once per detection).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any
from weakref import WeakKeyDictionary

from ..codecs import XmlParams
from ..engine.spec import FormatSpec
from ..engine.stream_options import StreamOptions
from ..formats._think import always_reasoning, effort_switch, think_format, thinking_switch
from . import probe as p
from .diff import Markers
from .evidence import CLOSED, OPEN, ReasoningEvidence

REFERENCE = "synthesised by trisect.detect from the chat template's renders"

# what a built format's functions were made from (its initial-state rule, its key and name
# readers), so that ``emit`` can write them as a format file; keyed by the spec itself
RECIPES: WeakKeyDictionary[FormatSpec, dict[str, Any]] = WeakKeyDictionary()


def recorded(spec: FormatSpec, **recipe: Any) -> FormatSpec:
    """``spec``, with the recipe ``emit`` writes its functions from."""
    RECIPES[spec] = recipe
    return spec


# ---------------------------------------------------------------------------- reasoning


def reasoning_format(
    ev: ReasoningEvidence, *, name: str = "detected", markers: Markers | None = None
) -> FormatSpec | None:
    if ev.end is None or not ev.single_end:
        return None
    initial, opens_in_content, rule = _initial(ev)
    spec = think_format(
        name,
        start=(ev.start,) if ev.start else (),
        end=(ev.end,),
        special=True,
        initial=initial,
        opens_in_content=opens_in_content,
        tool_start_ends_reasoning=True,
        turn_markers=_turn_markers(ev, markers or Markers()),
        models=(name,),
        reference=REFERENCE,
    )
    return recorded(spec, initial=rule)


def _initial(ev: ReasoningEvidence) -> tuple[Callable[[StreamOptions], str], bool, str | dict[str, Any]]:
    """The initial-state rule the prompt verdicts show, and whether a start marker in content
    opens the block (when the model decides)."""
    verdicts = {s.label: s.verdict for s in ev.settings}
    default = verdicts.get("default")
    switches: list[str] = []
    for key in ("enable_thinking", "thinking"):
        on, off = verdicts.get(f"{key}=true", default), verdicts.get(f"{key}=false", default)
        if on != off:
            switches.append(key)
    if verdicts.get("reasoning_effort=none", default) == CLOSED and default != CLOSED:
        rule: dict[str, Any] = {"switch": switches, "default": True, "effort_off": ["none"]}
        return effort_switch(off=("none",), default=None, names=tuple(switches)), False, rule
    if switches:
        thinks = default != CLOSED
        return thinking_switch(*switches, default=thinks), False, {"switch": switches, "default": thinks}
    if default == OPEN:
        return always_reasoning, False, "REASONING"
    rule = {"switch": ["enable_thinking", "thinking"], "default": False}
    return thinking_switch("enable_thinking", "thinking", default=False), default is None, rule


def _turn_markers(ev: ReasoningEvidence, markers: Markers) -> tuple[str, ...]:
    """The markers around the user's turn and the assistant's header in the default prompt."""
    prompt = ev.settings[0].prompt if ev.settings else ""
    at = prompt.rfind(p.USER)
    if at < 0:
        return ()
    found: list[str] = []
    before = markers.last(prompt[:at])
    if before:
        found.append(before)
    tail = prompt[at + len(p.USER) :]
    found += [tail[a:b] for a, b in sorted(markers.spans(tail))]
    own = {ev.start, ev.end}
    return tuple(m for m in dict.fromkeys(found) if m not in own)


def align(spec: FormatSpec, other: FormatSpec | None) -> FormatSpec:
    """``spec`` with its terminals renamed after ``other``'s where both declare the same marker,
    so that ``combine(other, spec)`` sees one terminal (Mistral's reasoning format declares
    ``[TOOL_CALLS]`` as ``TOOL_CALLS``; a synthesised tool format calls it ``CALL_START``)."""
    if other is None:
        return spec
    theirs = {markers: name for name, markers in other.terminals.items()}
    rename = {name: theirs[markers] for name, markers in spec.terminals.items() if markers in theirs}
    rename = {a: b for a, b in rename.items() if a != b and b not in spec.terminals}
    if not rename:
        return spec
    codec = spec.codec
    if isinstance(codec, XmlParams):
        codec = replace(
            codec,
            param_start=rename.get(codec.param_start, codec.param_start),
            param_end=rename.get(codec.param_end, codec.param_end),
        )
    table = {(state, rename.get(terminal, terminal)): rule for (state, terminal), rule in spec.table.items()}
    aligned = replace(
        spec,
        terminals={rename.get(n, n): m for n, m in spec.terminals.items()},
        special=frozenset(rename.get(n, n) for n in spec.special),
        table=table,
        codec=codec,
    )
    if spec in RECIPES:
        RECIPES[aligned] = RECIPES[spec]
    return aligned
