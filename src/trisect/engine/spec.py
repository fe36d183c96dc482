"""How a format is described: data, not code.

A ``FormatSpec`` names its terminals (marker strings, with aliases), says which of them are
special tokens in the family's tokenizer, maps each state to the field its text goes to
(``Region``), and gives one transition table ``(state, terminal) -> (next state, actions)``.
A terminal with no entry in the current state is ordinary text of that state.

Reasoning formats and tool-call formats are described separately (users pick them
separately, as in vLLM's ``--reasoning-parser`` / ``--tool-call-parser``) and ``combine()``
joins them: the tool format's transitions out of ``CONTENT`` also leave ``REASONING`` when
the reasoning format says a tool-call marker ends reasoning (Qwen3, GLM, Kimi, Mistral). A
reasoning format may also end reasoning on such a marker by itself (used without a tool
format); combined, the tool format's call-opening transition takes that entry's place.

Channel formats (gpt-oss Harmony) decide the next state from header text: the text of a
``Region.HEADER`` state (markers included) is collected, and at a transition with
``Act.HEADER_END`` the spec's ``header`` function maps it to the state of the message body and,
for a tool call, the tool name (``header_states`` lists the states it may name).

What a grammar generator needs beyond the table and the codec is declared as data too
(``GrammarFacts``): ``trisect.grammar`` keeps no table of its own keyed on format names or
marker strings. A tool format whose table opens calls (``Act.CALL_START``, or a header that may
route to an argument state) must name its codec: building the spec fails otherwise.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import FormatError
from ..native import mypyc_attr

if TYPE_CHECKING:
    from .codec import CodecFactory
    from .stream_options import StreamOptions


class Region(enum.Enum):
    """Where the text of a state goes."""

    REASONING = "reasoning"
    CONTENT = "content"
    NAME = "name"  # the tool name (and, for some families, the call id)
    CALL_ID = "call_id"  # the call id the model writes between markers (Mistral ``[CALL_ID]``)
    ARGS = "args"  # the argument codec of the open call
    SKIP = "skip"  # envelope formatting between markers: whitespace is dropped
    HEADER = "header"  # message header: collected (markers included) and read by FormatSpec.header


class Act(enum.Enum):
    """What a transition does besides changing state."""

    REASONING_END = "reasoning_end"
    CALL_START = "call_start"  # a call opens at this marker
    CALL_DROP = "call_drop"  # the open call was the envelope of calls that open later: forget it
    NAME_END = "name_end"  # the name region is complete
    ARG_MARKER = "arg_marker"  # the marker is structure of the argument codec
    ARGS_END = "args_end"  # the arguments are complete
    CALL_END = "call_end"  # the call is complete
    HEADER_START = "header_start"  # a header begins at this marker (the marker is header text)
    HEADER_END = "header_end"  # the header is complete: FormatSpec.header picks the next state
    # the marker is text of the state it leads to, not consumed (a tool-call marker that ends
    # reasoning where no tool format reads it: the model's text stays, as content)
    MARKER_TEXT = "marker_text"
    # the list of calls the stream is in does not read (``FormatSpec.whole_list``): none of its
    # calls stand (those streamed are reported aborted) and its text, from its opener, is content
    LIST_BREAK = "list_break"
    # the list of calls closed inside its block (LFM2's "]" before <|tool_call_end|>): its calls stand
    LIST_CLOSE = "list_close"


REASONING = "REASONING"
CONTENT = "CONTENT"
# not a state of any table: the start a prompt gives that left the reasoning opener to the model
# (``FormatSpec.model_opens``); the machine runs it as REASONING until the output's first
# non-blank text or marker decides (``Phase.OPENING``)
OPENING = "OPENING"
ARGS_DONE = "ARGS_DONE"  # pseudo-terminal: the argument codec finished its own structure
ARGS_FAILED = "ARGS_FAILED"  # pseudo-terminal: the codec failed (default: the ARGS_DONE rule)
# pseudo-terminal: the state's first text takes this rule and is read in the next state (a
# label that counts only where the state begins: Gemma 4's ``thought`` after ``<|channel>``)
FIRST_TEXT = "FIRST_TEXT"
# pseudo-terminal: text other than whitespace in the state takes this rule and is read in the
# next state (whitespace stays the state's text): a word between the calls of a list
STRAY_TEXT = "STRAY_TEXT"
PSEUDO = (ARGS_DONE, ARGS_FAILED, FIRST_TEXT, STRAY_TEXT)


@dataclass(frozen=True, slots=True)
class Rule:
    """A transition, and when its marker counts where it could be text.

    ``follow``: matched as text while the argument codec is inside a value, in a name region or
    while no call is open, the marker counts only if what comes next (after whitespace) starts
    with one of these strings, or (no call open, a name region, or ``follow_end``) the output ends
    there; otherwise it is text (a file that contains ``</parameter>`` mid-line; a ``;`` in prose
    after a Llama call; Mistral's ``[`` in a name region that is not a list). Inside a
    value the end of the output counts only with ``follow_end``: a cut-off value never completes
    a call, except at the closer of the element the calls live in, which nothing but the call's
    end can follow (``<arg_value>Berlin</tool_call>``).

    ``key_end``: inside a value, the marker opens the next parameter (the value's closer is
    missing) only if a key follows, ending at this string, that the codec accepts
    (``CallCodec.accepts_key``: a new key of the tool); otherwise it is value text. No call ever
    gets a key twice.

    ``value_text``: inside a value the marker is value text (a call opener: the value's closer
    and the call's closers come first)."""

    next: str
    acts: tuple[Act, ...] = ()
    follow: tuple[str, ...] = ()
    follow_end: bool = False
    key_end: str = ""
    value_text: bool = False
    # the marker counts only as its special token, given by id; written as text it is text
    # (Mistral's [TOOL_CALLS] inside an explicit [THINK] block: only [/THINK] ends it as text)
    by_id: bool = False
    # the marker counts only where a tool call ended the reasoning block before its closer came
    # (the closer written after that call is the block's own: ``<think>R<tool_call>…</tool_call>
    # </think>``); anywhere else it is text (a closer where no block is open)
    after_interrupt: bool = False
    # read off ``acts`` once (the machine asks per marker): the marker may be text where a
    # lookahead or a value says so; it opens a call; it is text of an open call (it neither opens
    # a call nor a header); it is text of the state it leads to; it starts or ends a header
    guarded: bool = field(init=False, compare=False, repr=False)
    opens_call: bool = field(init=False, compare=False, repr=False)
    call_text: bool = field(init=False, compare=False, repr=False)
    kept: bool = field(init=False, compare=False, repr=False)
    header_marker: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        acts = self.acts
        setattr_ = object.__setattr__
        setattr_(self, "guarded", bool(self.follow or self.key_end or self.value_text))
        setattr_(self, "opens_call", Act.CALL_START in acts)
        setattr_(self, "call_text", Act.CALL_START not in acts and Act.HEADER_START not in acts)
        setattr_(self, "kept", Act.MARKER_TEXT in acts)
        setattr_(self, "header_marker", Act.HEADER_START in acts or Act.HEADER_END in acts)


Table = Mapping[tuple[str, str], Rule]


def rules(*rows: tuple[Any, ...]) -> dict[tuple[str, str], Rule]:
    """Build a table from ``(state, terminal, next, acts[, guard])`` rows; duplicates are an error.
    ``guard``: the ``follow`` strings, or a mapping of the other ``Rule`` fields."""
    table: dict[tuple[str, str], Rule] = {}
    for state, terminal, nxt, acts, *guard in rows:
        if (state, terminal) in table:
            raise FormatError(f"duplicate table entry ({state}, {terminal})")
        extra = guard[0] if guard else {}
        if not isinstance(extra, Mapping):
            extra = {"follow": tuple(extra)}
        table[(state, terminal)] = Rule(nxt, tuple(acts), **extra)
    return table


@dataclass(frozen=True, slots=True)
class GrammarFacts:
    """Facts for grammar generation (``trisect.grammar``) that the table and codec do not say.

    ``unsupported``: why no structural tag is generated although the table describes the calls
    (the template writes text no table can know). ``name_pattern``: how a grammar writes a name
    region that also carries a call id, a regex with ``{name}`` (Kimi-K2:
    ``functions\\.{name}:[0-9]+``); names that ``parse_name`` reads back bare from ``"NAME"`` or
    ``NAME`` need none. ``native_under_constraint``: under ``tool_choice`` required / named the
    model keeps its own markers (a constrained decoder uses the format's structural tag; Harmony),
    so such outputs parse as with ``auto`` instead of as the constrained JSON."""

    unsupported: str = ""
    name_pattern: str = ""
    native_under_constraint: bool = False


NO_GRAMMAR_FACTS = GrammarFacts()


@dataclass(frozen=True, slots=True)
class VocabSuffix:
    """Markers that carry a per-checkpoint suffix in the vocabulary (Tencent HY: ``<think:6124c78e>``
    for ``<think>``). ``pattern`` matches an added token of the vocabulary, group 1 the suffix;
    the suffix goes before the closing ``>`` of every marker of ``terminals``. Applied when the
    format is compiled with a vocabulary (``compile.for_vocab``); without one, or when no added
    token matches, the markers stand as written."""

    pattern: str
    terminals: frozenset[str]


def _always(_options: StreamOptions) -> str:
    return CONTENT


@mypyc_attr(native_class=False)  # a plain class compiled or not: trisect.detect keys a WeakKeyDictionary by it
@dataclass(frozen=True, eq=False)
class FormatSpec:
    """One format, as data. See the module docstring."""

    name: str
    kind: str  # "reasoning" or "tools"
    terminals: Mapping[str, tuple[str, ...]]
    regions: Mapping[str, Region]
    table: Table
    special: frozenset[str] = frozenset()
    models: tuple[str, ...] = ()
    reference: str = ""
    aliases: tuple[str, ...] = ()
    # reasoning formats
    initial: Callable[[StreamOptions], str] = _always
    tool_start_ends_reasoning: bool = False
    turn_markers: tuple[str, ...] = ()  # prompt markers that begin or end a turn
    # when true for a request, an output that ends inside the reasoning it started in is
    # content instead (Nemotron's swap); the stream holds that reasoning until it knows
    reasoning_fallback: Callable[[StreamOptions], bool] | None = None
    # the fallback also applies when that reasoning ended with nothing after it (Nemotron's swap:
    # content None or blank); otherwise only an output that ends inside it (K2 Horizon)
    fallback_when_empty: bool = False
    # the request switches thinking off (``initial`` says CONTENT, no prompt opened the block):
    # the family's markers are plain text then, as its reference parser has no think terminals
    # in that mode (``<think>hmm</think>Hello`` is content as written)
    plain_when_off: bool = False
    # the family's templates leave the reasoning opener to the model (the generation prompt ends
    # at the assistant's turn, and a thinking model writes ``<think>`` first): given a prompt that
    # neither opened nor closed a block, an output that does not begin with the opener is content
    model_opens: bool = False
    content_prefix: str = ""  # content emitted before the output (minimax_m2_append_think)
    # tool formats
    codec: CodecFactory | None = None
    validate_names: bool = False
    parse_name: Callable[[str], tuple[str, str | None]] | None = None
    # words a call's markup regions (Region.SKIP while a call is open) hold that carry nothing:
    # the call type DeepSeek V3 and Step-3 write before their separator; any other text there
    # makes the call malformed
    call_markup: tuple[str, ...] = ()
    # a block of calls is a list that the output must close: one it ends inside is no list (none
    # of its calls stand; all of its text is the unfinished call; pythonic ``[f(a=1), g(b="Ro``)
    whole_list: bool = False
    # header formats: header text -> (body state, tool name or None), None if malformed
    header: Callable[[str], tuple[str, str | None] | None] | None = None
    header_states: tuple[str, ...] = ()  # the states ``header`` may return
    # ids of calls whose id the model did not write: (request, index, name) -> id; default
    # ``call_`` + random (``StreamOptions.id_factory`` overrides both)
    call_id: Callable[[StreamOptions, int, str], str] | None = None
    # text normalisation: characters stripped from reasoning/content next to markers
    strip: str = " \t\r\n"
    grammar: GrammarFacts = NO_GRAMMAR_FACTS
    vocab_suffix: VocabSuffix | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("reasoning", "tools", "combined"):
            raise FormatError(f"{self.name}: kind must be 'reasoning' or 'tools'")
        for (state, terminal), rule in self.table.items():
            if state not in self.regions or rule.next not in self.regions:
                raise FormatError(f"{self.name}: table entry ({state}, {terminal}) names an unknown state")
            if terminal not in self.terminals and terminal not in PSEUDO:
                raise FormatError(f"{self.name}: table entry ({state}, {terminal}) names an unknown terminal")
        for terminal in self.terminals:
            if terminal in PSEUDO:
                raise FormatError(f"{self.name}: {terminal} names a pseudo-terminal, not a marker")
        for terminal in self.special:
            if terminal not in self.terminals:
                raise FormatError(f"{self.name}: special terminal {terminal} is not declared")
        if self.vocab_suffix is not None:
            for terminal in self.vocab_suffix.terminals:
                if terminal not in self.terminals:
                    raise FormatError(f"{self.name}: suffixed terminal {terminal} is not declared")
        for state in self.header_states:
            if state not in self.regions:
                raise FormatError(f"{self.name}: header state {state} is not a state")
        if self.codec is None:
            opens = [f"({s}, {t})" for (s, t), rule in self.table.items() if Act.CALL_START in rule.acts]
            if self.header is not None:
                opens += [f"header -> {s}" for s in self.header_states if self.regions[s] is Region.ARGS]
            if opens:
                raise FormatError(f"{self.name}: calls open at {', '.join(opens)} but the format names no codec")


IDENTITY = FormatSpec(
    name="identity",
    kind="reasoning",
    terminals={},
    regions={CONTENT: Region.CONTENT},
    table={},
    models=("any model without a reasoning block",),
    reference="no markers: everything is content",
)


def combine(reasoning: FormatSpec | None, tools: FormatSpec | None) -> FormatSpec:
    """Join a reasoning format and a tool-call format into one table.

    Terminal names are shared: the same name must mean the same markers in both, and an entry
    both define must be the same rule (a family whose reasoning and tool formats share one
    channel grammar, such as Harmony). Without a reasoning format the tool format's initial
    state applies. When the reasoning format says so, every transition that opens a call (or a
    block of calls) from ``CONTENT`` on a special-token marker also opens it from ``REASONING``,
    ending reasoning first.
    """
    r = reasoning or IDENTITY
    if tools is None:
        return r
    # a reasoning terminal whose markers the tool format reads under another name (qwen3's
    # <tool_call> is granite's LIST_START): the tool format's terminal replaces it, and its
    # transition out of CONTENT replaces the reasoning format's rows on it (below)
    read_by_tools = {m: name for name, strings in tools.terminals.items() for m in strings}
    renamed = {
        name: read_by_tools[strings[0]]
        for name, strings in r.terminals.items()
        if name not in tools.terminals and strings and strings[0] in read_by_tools
    }
    if renamed:
        r = replace(
            r,
            terminals={k: v for k, v in r.terminals.items() if k not in renamed},
            table={k: v for k, v in r.table.items() if k[1] not in renamed},
            special=r.special - set(renamed),
        )
    replaced = set(renamed.values())
    terminals: dict[str, tuple[str, ...]] = dict(r.terminals)
    for name, strings in tools.terminals.items():
        if name in terminals and terminals[name] != strings:
            raise FormatError(f"{r.name} + {tools.name}: terminal {name} means different markers")
        terminals[name] = strings
    regions = dict(r.regions)
    for state, region in tools.regions.items():
        if state in regions and regions[state] != region:
            raise FormatError(f"{r.name} + {tools.name}: state {state} has two regions")
        regions[state] = region
    table: dict[tuple[str, str], Rule] = dict(r.table)
    for (state, terminal), rule in tools.table.items():
        if (state, terminal) in table and table[(state, terminal)] != rule:
            raise FormatError(f"{r.name} + {tools.name}: both define ({state}, {terminal})")
        table[(state, terminal)] = rule
    if REASONING in regions:
        for (state, terminal), rule in tools.table.items():
            if state != CONTENT or (REASONING, terminal) in tools.table:
                continue  # a rule the tool format states for REASONING itself stands (one grammar: Harmony)
            # a reasoning format may end on a tool marker itself (for use without a tool
            # format); combined, the tool format's transition out of CONTENT replaces that rule
            ends = r.table.get((REASONING, terminal))  # the reasoning format's own rule on it
            own = ends is not None or terminal in replaced
            leaves = Act.CALL_START in rule.acts or tools.regions.get(rule.next) is not Region.CONTENT
            opens = r.tool_start_ends_reasoning and leaves and terminal in tools.special
            if own or (opens and (REASONING, terminal) not in table):
                by_id = ends is not None and ends.by_id  # only the reasoning format's rule says so
                table[(REASONING, terminal)] = replace(rule, acts=(Act.REASONING_END, *rule.acts), by_id=by_id)
    return FormatSpec(
        name=f"{r.name}+{tools.name}",
        kind="combined",
        terminals=terminals,
        regions=regions,
        table=table,
        special=r.special | tools.special,
        models=tools.models,
        reference=tools.reference,
        initial=r.initial if reasoning is not None else tools.initial,
        tool_start_ends_reasoning=r.tool_start_ends_reasoning,
        turn_markers=r.turn_markers,
        reasoning_fallback=r.reasoning_fallback,
        fallback_when_empty=r.fallback_when_empty,
        plain_when_off=r.plain_when_off,
        model_opens=r.model_opens,
        content_prefix=r.content_prefix,
        codec=tools.codec,
        validate_names=tools.validate_names,
        parse_name=tools.parse_name,
        call_markup=tools.call_markup,
        whole_list=tools.whole_list,
        call_id=tools.call_id,
        header=tools.header or r.header,
        header_states=tuple(dict.fromkeys(r.header_states + tools.header_states)),
        strip="".join(sorted(set(r.strip) & set(tools.strip))),
        grammar=tools.grammar,
        vocab_suffix=_join_suffixes(r, tools),
    )


def _join_suffixes(reasoning: FormatSpec, tools: FormatSpec) -> VocabSuffix | None:
    a, b = reasoning.vocab_suffix, tools.vocab_suffix
    if a is None or b is None:
        return a or b
    if a.pattern != b.pattern:
        raise FormatError(f"{reasoning.name} + {tools.name}: two vocabulary suffix patterns")
    return VocabSuffix(a.pattern, a.terminals | b.terminals)
