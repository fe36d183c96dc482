"""The shape of a tool format's calls, derived from its table: what a structural tag writes.

``call_shape(spec)`` takes the path from content through one call back to content that passes
the most states (the template's envelope, not a recovery shortcut): its opening marker
(preferably a special token), the name and argument regions, the closing markers. It finds
whether more calls follow inside the same block (Kimi's section, a JSON list, DSML's next
``invoke``) and takes the argument syntax from the codec (``CodecFactory.grammar``); a format
says in ``FormatSpec.grammar`` what neither the table nor the codec can (why no tag can be
written, how a name region with an id is written). The result is a ``CallShape``, or a string
saying why the format has none; ``grammar_support(spec)`` is the one line ``trisect formats``
prints. No table here is keyed on a format name or a marker string.

Cost: a bounded walk of the table (at most ``_MAX_STEPS`` transitions deep), cached per spec.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from functools import lru_cache

from ..codecs import XmlParams
from ..engine.codec import ArgSyntax
from ..engine.spec import ARGS_DONE, CONTENT, Act, FormatSpec, Region, Rule
from ..request.choice import keeps_native_markers

Path = tuple[tuple[str, Rule], ...]  # (terminal, rule) transitions from content


@dataclass(frozen=True)
class Step:
    """One transition of the call path: its marker (``""`` for ``ARGS_DONE``), the region of
    the state it enters, and whether the marker is the first character of the arguments
    (``Act.ARG_MARKER`` on a structured codec: the argument grammar writes it)."""

    terminal: str
    marker: str
    region: Region
    in_args: bool = False
    state: str = ""  # the state it enters


@dataclass(frozen=True)
class CallShape:
    """A block of calls as the template writes it: ``opener`` steps (the first is the trigger),
    one ``call`` (from the transition that opens it to the one that closes it), then ``closer``
    steps back to content. ``repeat``: more calls follow in the same block, each after the
    ``separator`` steps (Kimi's section, Granite's list)."""

    opener: tuple[Step, ...]
    call: tuple[Step, ...]
    closer: tuple[Step, ...]
    args: str  # "json" (arguments object), "json_envelope" ({"name", "arguments"}), or an xgrammar XML style
    envelope_keys: tuple[str, str] = ("name", "arguments")
    repeat_open: Step | None = None  # the transition that opens each further call in the block
    separator: tuple[Step, ...] = ()
    alternates: tuple[CallShape, ...] = ()  # other blocks that open calls (bare JSON: Llama's "{")
    markers: tuple[str, ...] = ()  # every marker string of the format (kept out of raw-text values)

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.opener + self.call + self.closer

    @property
    def repeat(self) -> bool:
        return self.repeat_open is not None and bool(self.closer)

    @property
    def trigger(self) -> str:
        return self.steps[0].marker


def arg_syntax(spec: FormatSpec) -> ArgSyntax | str:
    """How a grammar writes the arguments of the format's codec (the codec declares it), or
    why it cannot."""
    factory = spec.codec
    if factory is None:
        return "the format has no tool calls"
    syntax = factory.grammar
    if syntax is not None:
        return syntax
    if isinstance(factory, XmlParams):
        return _xml_reason(spec, factory)
    name = getattr(factory, "__name__", type(factory).__name__)
    return f"argument codec {name} has no xgrammar style"


def _xml_reason(spec: FormatSpec, options: XmlParams) -> str:
    def marker(terminal: str | None) -> str:
        return spec.terminals[terminal][0] if terminal is not None and terminal in spec.terminals else ""

    start, end = marker(options.param_start), marker(options.param_end)
    key_end = marker(options.key_marker) or options.key_end
    if options.parse_key is not None:  # the key is read from attributes: name="key" …
        return f"XML parameters {start}…{key_end}VALUE{end} have no xgrammar style"
    return f"XML parameters {start}KEY{key_end}{marker(options.value_start)}VALUE{end} have no xgrammar style"


def name_spelling(spec: FormatSpec) -> str | None:
    """How the grammar writes a name the format reads with ``parse_name``: quoted (as templates
    write an attribute value) or plain, whichever the format reads back as the bare name with
    no call id; ``None`` if neither (the name region carries an id)."""
    if spec.parse_name is None:
        return "{name}"
    for spelling in ('"{name}"', "{name}"):
        probe = "get_weather_2"
        try:
            read = spec.parse_name(spelling.format(name=probe))
        except (ValueError, KeyError, IndexError):
            continue
        if tuple(read) == (probe, None):
            return spelling
    return None


def _transitions(spec: FormatSpec, state: str) -> list[tuple[str, Rule]]:
    rows = [(t, r) for (s, t), r in spec.table.items() if s == state and t != "ARGS_FAILED"]
    # special-token markers first where a block opens: the model's own call marker, not a recovery
    # spelling; inside a block the table's order decides (an end-of-turn token that also ends a
    # block is not the block's closer)
    if state == CONTENT:
        rows.sort(key=lambda tr: (tr[0] not in spec.special, tr[0]))
    else:
        rows.sort(key=lambda tr: tr[0] != ARGS_DONE)
    return rows


_STRUCTURAL = {Act.CALL_START, Act.NAME_END, Act.ARGS_END, Act.CALL_END, Act.REASONING_END}
_MAX_STEPS = 10


def _allowed(spec: FormatSpec, state: str, terminal: str, rule: Rule, syntax: ArgSyntax) -> bool:
    extra = set(rule.acts) - _STRUCTURAL
    if not extra:
        return True
    if extra == {Act.ARG_MARKER} and spec.regions[state] is not Region.ARGS:
        # a marker that is argument structure stands on the path only as the arguments' first text
        if syntax.opener:
            return terminal == syntax.opener
        marker = spec.terminals.get(terminal, ("",))[0]
        return marker == "{" or (syntax.list_opener and marker.startswith("[") and marker.endswith("{"))
    return False


@lru_cache(maxsize=128)
def call_shape(spec: FormatSpec) -> CallShape | str:
    """The canonical call block of a tool format (see the module docstring), or why it has none.

    Among the paths from content back to content that open exactly one call, name it (unless
    the JSON envelope carries the name), pass its argument region and close it, the one
    through the most distinct states wins, then the longest: the template's envelope rather
    than a recovery shortcut. Markers that are argument structure stand on the path only
    where they are the first text of the arguments (the argument grammar writes them).
    """
    if spec.grammar.unsupported:
        return spec.grammar.unsupported
    if spec.codec is None:
        return "the format has no tool calls"
    if Region.HEADER in spec.regions.values():
        return "a message header (its recipient) decides which message is a call and names it"
    syntax = arg_syntax(spec)
    if isinstance(syntax, str):
        return syntax
    args, keys = syntax.style, syntax.envelope_keys
    if spec.parse_name is not None and not spec.grammar.name_pattern and name_spelling(spec) is None:
        return "the name region also carries a call id (parse_name), which the grammar cannot fill"
    regions = spec.regions

    def valid(path: Path) -> bool:
        starts = [k for k, (_t, r) in enumerate(path) if Act.CALL_START in r.acts]
        ends = [k for k, (_t, r) in enumerate(path) if Act.CALL_END in r.acts]
        if len(starts) != 1 or len(ends) != 1 or starts[0] > ends[0]:
            return False
        inside = [regions[r.next] for _t, r in path[starts[0] : ends[0]]]
        if Region.ARGS not in inside:
            return False
        return args == "json_envelope" or Region.NAME in inside

    def walk(state: str, path: Path, used: frozenset[tuple[str, str]], seen: frozenset[str]) -> None:
        for t, r in _transitions(spec, state):
            if (state, t) in used or not _allowed(spec, state, t, r, syntax):
                continue
            if r.next in seen and r.next != state and Act.CALL_END not in r.acts:
                continue  # back to an earlier state: not the template's shape
            if r.next == state and not r.acts:
                continue  # a marker the state absorbs (a second opener): recovery, not the template's shape
            if r.next in opens_call and any(Act.CALL_END in rr.acts for _tt, rr in path):
                continue  # after the call, a separator towards the next one (a trailing comma)
            region = regions[r.next]
            step = (*path, (t, r))
            if region in (Region.CONTENT, Region.REASONING):
                if region is Region.CONTENT and valid(step):
                    score = (len({rr.next for _tt, rr in step}), len(step))
                    opener = step[0][0]
                    if opener not in best or score > best[opener][0]:
                        best[opener] = (score, step)
                continue
            if region not in (Region.SKIP, Region.NAME, Region.ARGS) or len(step) >= _MAX_STEPS:
                continue
            walk(r.next, step, used | {(state, t)}, seen | {r.next})

    opens_call = {st for (st, _t), r in spec.table.items() if Act.CALL_START in r.acts and st != CONTENT}
    best: dict[str, tuple[tuple[int, int], Path]] = {}
    walk(CONTENT, (), frozenset(), frozenset())
    if not best:
        return "no path through the table opens a call, names it, reads its arguments and closes it"
    # the best path wins; a call that opens on the first character of bare JSON is a call too
    order = sorted(best.values(), key=lambda sp: sp[0], reverse=True)
    shapes = [_shape(spec, order[0][1], args, keys)]
    for _score, path in order[1:]:
        if Act.ARG_MARKER in path[0][1].acts:
            shapes.append(_shape(spec, path, args, keys))
    found: list[CallShape] = []
    for shape in shapes:
        if isinstance(shape, str):
            return shape
        found.append(shape)
    return replace(found[0], alternates=tuple(found[1:]))


def _shape(spec: FormatSpec, path: Path, args: str, keys: tuple[str, str]) -> CallShape | str:
    steps = _steps(spec, path)
    if steps[0].in_args and args not in ("json_envelope",):
        return "the call opens on the first character of its bare JSON arguments"
    k0 = next(k for k, (_t, r) in enumerate(path) if Act.CALL_START in r.acts)
    k1 = next(k for k, (_t, r) in enumerate(path) if Act.CALL_END in r.acts)
    repeat_open: Step | None = None
    separator: tuple[Step, ...] = ()
    if k0 > 0 or len(steps[0].marker) > 1:  # the block opens before the call: may more calls follow in it?
        loop = _repeat_path(spec, path[k1][1].next, path[k0][0], {r.next for _t, r in path[k0:k1]})
        if loop is not None:
            *sep, last = loop
            repeat_open, separator = _steps(spec, (last,))[0], _steps(spec, tuple(sep))
    markers = tuple(sorted({m for strings in spec.terminals.values() for m in strings if len(m) > 1}))
    return CallShape(
        steps[:k0], steps[k0 : k1 + 1], steps[k1 + 1 :], args, keys, repeat_open, separator, markers=markers
    )


def _repeat_path(spec: FormatSpec, after: str, opens: str, inside: set[str]) -> Path | None:
    """Transitions leading from ``after`` (the state a call ends in) to the next call of the
    same block: the same opening terminal again (or a ``{`` that opens a JSON call), after
    separators that open nothing; the last one opens the call. The longest such path wins, so
    a list's "," rather than the recovery that accepts calls without it."""
    found: list[Path] = []
    queue: deque[tuple[str, Path]] = deque([(after, ())])
    seen = {after}
    while queue:
        state, path = queue.popleft()
        for t, r in _transitions(spec, state):
            if Act.CALL_START in r.acts:
                json_call = Act.ARG_MARKER in r.acts and spec.terminals[t][0] == "{"
                if t == opens or json_call or r.next in inside:
                    found.append((*path, (t, r)))
                continue
            if r.acts or spec.regions[r.next] is not Region.SKIP or r.next in seen:
                continue
            seen.add(r.next)
            queue.append((r.next, (*path, (t, r))))
    return max(found, key=len) if found else None


def _steps(spec: FormatSpec, path: Path) -> tuple[Step, ...]:
    return tuple(
        Step(
            t,
            "" if t == ARGS_DONE else spec.terminals[t][0],
            spec.regions[r.next],
            Act.ARG_MARKER in r.acts,
            r.next,
        )
        for t, r in path
    )


def grammar_support(spec: FormatSpec) -> str:
    """One line for ``trisect formats``: the structural tag's shape, or why there is none."""
    if spec.kind == "reasoning":
        return "reasoning block: allowed before the structural tag"
    shape = call_shape(spec)
    if isinstance(shape, str):
        return f"no structural tag: {shape}"
    native = "; keeps its markers under required/named" if keeps_native_markers(spec) else ""
    many = ", several calls per block" if shape.repeat else ""
    return f"structural tag triggered by {shape.trigger!r}, arguments as {shape.args}{many}{native}"
