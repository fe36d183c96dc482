"""Compile a ``FormatSpec`` once into the lookup structures a stream needs.

Per state: the transitions, a regex that finds the earliest live marker, the set of proper
prefixes of live markers (the text a stream may hold back at the end of a delta), and a regex
of the characters that can start a marker (a cheap test that nothing needs holding back).
Each comes in two variants: all live markers (text-only streams, or when a special token is
pending) and non-special markers only (token ids flow and no special token is pending).

Validation: every state is reachable from an initial state candidate, no marker string
belongs to two terminals, every terminal is used. The result is immutable and cached.

A format whose markers carry a per-checkpoint suffix (``FormatSpec.vocab_suffix``) is first
rewritten for the vocabulary (``for_vocab``); the compiled format holds the rewritten spec, so
everything downstream (prompt verdict, token view) sees the checkpoint's markers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache

from ..errors import FormatError
from .spec import (
    ARGS_DONE,
    ARGS_FAILED,
    CONTENT,
    FIRST_TEXT,
    PSEUDO,
    REASONING,
    STRAY_TEXT,
    Act,
    FormatSpec,
    Region,
    Rule,
)
from .vocab import Vocab


@dataclass(frozen=True, slots=True)
class Lexicon:
    """The markers live in one state, for one matching mode."""

    pattern: re.Pattern[str] | None
    prefixes: frozenset[str]
    longest_prefix: int
    starts: re.Pattern[str] | None


@dataclass(frozen=True, slots=True)
class StateTable:
    name: str
    region: Region
    rules: Mapping[str, Rule]
    text_lex: Lexicon  # all live markers, matched as text
    plain_lex: Lexicon  # live markers that are not special tokens
    done_rule: Rule | None  # transition on ARGS_DONE
    failed_rule: Rule | None = None  # transition on ARGS_FAILED (else done_rule)
    # token ids flow and a special token is pending: the live markers plus the special-token
    # markers with no entry here (text of this state, but their ids must be used up in place)
    ids_lex: Lexicon | None = None
    text_rule: Rule | None = None  # transition on the state's first text (``spec.FIRST_TEXT``)
    stray_rule: Rule | None = None  # transition on text other than whitespace (``spec.STRAY_TEXT``)
    # a whole text (``engine.whole``): the live marker strings, longest first, when one
    # ``str.find`` per string finds the next marker faster than the pattern (a few markers with
    # different first characters: the regex engine's fast scan needs one); None: the pattern
    find_strings: tuple[str, ...] | None = None
    opens_calls: bool = False  # a rule of this state opens a call (a block of calls can open here)


_ANY = re.compile(r"[\s\S]")
NON_BLANK = re.compile(r"\S")  # text a STRAY_TEXT rule takes (the machine finds it with this)
_FIND_MARKERS = 6  # at most this many marker strings are found one str.find each


def _find_strings(strings: list[str]) -> tuple[str, ...] | None:
    ordered = sorted(set(strings), key=lambda s: (-len(s), s))
    if len(ordered) <= _FIND_MARKERS and len({s[0] for s in ordered}) > 1:
        return tuple(ordered)
    return None


def _lexicon(strings: list[str], any_start: re.Pattern[str] | None = None) -> Lexicon:
    """``any_start``: the characters that may start structure besides the markers' first ones
    (every one in a state that text leaves, ``FIRST_TEXT``; any but whitespace where other text
    does, ``STRAY_TEXT``), so no fast path takes them."""
    if not strings:
        return Lexicon(None, frozenset(), 0, any_start)
    ordered = sorted(set(strings), key=lambda s: (-len(s), s))
    pattern = re.compile("|".join(re.escape(s) for s in ordered))
    prefixes = frozenset(s[:k] for s in ordered for k in range(1, len(s)))
    first = "[" + "".join(sorted({re.escape(s[0]) for s in ordered})) + "]"
    starts = _ANY if any_start is _ANY else re.compile(first + "|" + any_start.pattern if any_start else first)
    return Lexicon(pattern, prefixes, max((len(p) for p in prefixes), default=0), starts)


@dataclass(frozen=True)
class CompiledFormat:
    spec: FormatSpec
    states: Mapping[str, StateTable]
    terminal_of: Mapping[str, str]  # marker string -> terminal
    special: frozenset[str]  # terminals matched by token id when ids flow
    special_ids: Mapping[int, str]  # token id -> terminal
    marker_of: Mapping[str, str]  # special terminal -> its canonical marker string
    think_start_ids: frozenset[int]
    think_end_ids: frozenset[int]
    # added tokens that are pieces of a marker matched as text (a marker of several tokens):
    # their text must reach the lexer even when the vocabulary calls them control tokens
    marker_part_ids: frozenset[int] = frozenset()
    # the added tokens a stream that detokenizes ids decodes although they may be control
    # tokens: the special markers and the pieces of markers matched as text
    decoded_ids: frozenset[int] = frozenset()
    # bytes of the shortest special-token marker: where text runs this far ahead of its ids, a
    # special marker in it may still get its id (the lexer's ``ahead``)
    shortest_special: int = 1 << 30

    def start_state(self, state: str) -> StateTable:
        return self.states[state]


def compile_format(spec: FormatSpec, vocab: Vocab | None = None) -> CompiledFormat:
    return _compile(for_vocab(spec, vocab), vocab)


def for_vocab(spec: FormatSpec, vocab: Vocab | None) -> FormatSpec:
    """``spec`` with its suffixed markers spelled as ``vocab`` spells them (see the module
    docstring); ``spec`` itself when nothing changes."""
    rule = spec.vocab_suffix
    if rule is None or vocab is None:
        return spec
    return _with_suffix(spec, vocab.suffix_of(rule.pattern))


@lru_cache(maxsize=64)
def _with_suffix(spec: FormatSpec, suffix: str) -> FormatSpec:
    rule = spec.vocab_suffix
    if not suffix or rule is None:
        return spec

    def suffixed(marker: str) -> str:
        return marker[:-1] + suffix + ">" if marker.endswith(">") else marker

    terminals = {
        t: tuple(suffixed(m) for m in strings) if t in rule.terminals else strings
        for t, strings in spec.terminals.items()
    }
    renamed = {m: suffixed(m) for t in rule.terminals for m in spec.terminals[t]}
    # follow strings and key ends are marker texts: they are spelled with the suffix too
    table = {
        key: replace(r, follow=tuple(renamed.get(f, f) for f in r.follow), key_end=renamed.get(r.key_end, r.key_end))
        if r.follow or r.key_end
        else r
        for key, r in spec.table.items()
    }
    return replace(spec, terminals=terminals, table=table, vocab_suffix=None)


@lru_cache(maxsize=256)
def _compile(spec: FormatSpec, vocab: Vocab | None) -> CompiledFormat:
    terminal_of: dict[str, str] = {}
    for terminal, strings in spec.terminals.items():
        if not strings:
            raise FormatError(f"{spec.name}: terminal {terminal} has no marker string")
        for s in strings:
            if s in terminal_of and terminal_of[s] != terminal:
                raise FormatError(f"{spec.name}: marker {s!r} belongs to {terminal_of[s]} and {terminal}")
            terminal_of[s] = terminal
    used = {t for (_s, t) in spec.table}
    unused = set(spec.terminals) - used
    if unused:
        raise FormatError(f"{spec.name}: terminals never used in the table: {sorted(unused)}")

    # special terminals: declared special, and (with a tokenizer) really one added token
    special_ids: dict[int, str] = {}
    marker_of: dict[str, str] = {}
    special: set[str] = set()
    for terminal in spec.special:
        for s in spec.terminals[terminal]:
            if vocab is None:
                special.add(terminal)
                marker_of.setdefault(terminal, s)
                continue
            token_id = vocab.special_id(s)
            if token_id is not None:
                special.add(terminal)
                special_ids[token_id] = terminal
                marker_of.setdefault(terminal, s)

    states: dict[str, StateTable] = {}
    for state, region in spec.regions.items():
        live = {t: r for (s, t), r in spec.table.items() if s == state and t not in PSEUDO}
        all_strings = [s for t in live for s in spec.terminals[t]]
        plain_strings = [s for t in live if t not in special for s in spec.terminals[t]]
        inert_strings = [s for t in special if t not in live for s in spec.terminals[t]]
        text_rule = spec.table.get((state, FIRST_TEXT))
        stray_rule = spec.table.get((state, STRAY_TEXT))
        anyc = _ANY if text_rule is not None else NON_BLANK if stray_rule is not None else None
        states[state] = StateTable(
            name=state,
            region=region,
            rules=live,
            text_lex=_lexicon(all_strings, anyc),
            plain_lex=_lexicon(plain_strings, anyc),
            ids_lex=_lexicon(all_strings + inert_strings, anyc) if inert_strings else None,
            text_rule=text_rule,
            stray_rule=stray_rule,
            find_strings=_find_strings(all_strings),
            opens_calls=any(Act.CALL_START in r.acts for r in live.values()),
            done_rule=spec.table.get((state, ARGS_DONE)),
            failed_rule=spec.table.get((state, ARGS_FAILED), spec.table.get((state, ARGS_DONE))),
        )

    # reachability from the possible initial states
    seen = {s for s in (CONTENT, REASONING, *spec.header_states) if s in states}
    todo = list(seen)
    while todo:
        s = todo.pop()
        extra = [r for r in (states[s].done_rule, states[s].failed_rule, states[s].text_rule) if r is not None]
        for rule in list(states[s].rules.values()) + extra:
            if rule.next not in seen:
                seen.add(rule.next)
                todo.append(rule.next)
    unreachable = set(states) - seen
    if unreachable:
        raise FormatError(f"{spec.name}: states unreachable from the initial states: {sorted(unreachable)}")

    def ids_for(terminal: str) -> frozenset[int]:
        return frozenset(i for i, t in special_ids.items() if t == terminal)

    parts = _marker_parts(spec, vocab, special)
    return CompiledFormat(
        spec=spec,
        states=states,
        terminal_of=terminal_of,
        special=frozenset(special),
        special_ids=special_ids,
        marker_of=marker_of,
        shortest_special=min((len(m.encode("utf-8")) for m in marker_of.values()), default=1 << 30),
        think_start_ids=ids_for("THINK_START"),
        think_end_ids=ids_for("THINK_END"),
        marker_part_ids=parts,
        decoded_ids=frozenset(special_ids) | parts,
    )


def _marker_parts(spec: FormatSpec, vocab: Vocab | None, special: set[str]) -> frozenset[int]:
    if vocab is None:
        return frozenset()
    text_markers = [s for t, strings in spec.terminals.items() if t not in special for s in strings]
    return vocab.ids_within(text_markers)
