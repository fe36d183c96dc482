"""The token view: where reasoning ends, from token ids alone.

Engines that gate structured output on the end of reasoning, count reasoning tokens for
``usage``, or hand the content ids to a grammar need this per decode step, on ids, without
detokenizing the history. ``TokenView`` is compiled once per ``Parser`` from the same format
tables the text view runs; ``ReasoningTracker`` is the per-request streaming variant.

The machine has three states: in reasoning, after it (content), and *between turns* (right
after a turn marker such as ``<|im_start|>``, when the sequence holds a prompt too). Per id:

* a turn marker -> between turns (what follows decides; if nothing does, the request's switch
  and the family's default do);
* a reasoning start marker -> in reasoning, except that in the output's content it opens a
  block only for formats whose table says so (Mistral ``[THINK]``, Gemma 4 channels, Kimi,
  Granite): elsewhere it is text there, exactly as in the text view. After a turn marker (prompt
  text: a template's empty block followed by a continued ``<think>``) it always opens one;
* a marker that ends reasoning (the end marker, and the tool-call markers the table lets end
  it) -> content; in content it is absorbed (a duplicate end marker changes nothing).

So the latest block wins: earlier ``<think>…</think>`` pairs of a multi-turn prompt never
decide, a turn marker follows them. Special-token markers are matched by id only (the same
rule as the text view: a marker written with ordinary tokens is text); markers that are not
single tokens of the vocabulary (Granite's, OLMo 3's) are matched in the decoded text of the
ordinary tokens, so only those formats decode anything.

Reasoning tokens are the ids strictly inside a block, markers excluded (for a text marker,
every token that carries a byte of it); stray and nested markers only ever move the state, so
the count never goes negative.

Channel formats (gpt-oss Harmony) decide reasoning from header text rather than from markers;
for them the token view is the engine's own stream fed the ids (``EngineTracker``), so the two
views agree by construction.

Ids that are not token ids of the vocabulary (negative, past it, not integers) are a
``StreamError``, as ``parse()`` and ``feed()`` raise for them.

Cost: ``ReasoningTracker.feed`` is O(new ids) (C-level set and type tests that every id is a
token id, then one C-level set test for a delta without a marker id, else one dict lookup per
id; text-marker formats also decode the new ids and search a tail no longer than the longest
marker). ``is_reasoning_end``
checks every id (C-level), then scans backwards from the end and stops at the last deciding
marker (ids-only formats).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

from ..engine.compile import CompiledFormat
from ..engine.event_stream import EventStream
from ..engine.spec import CONTENT, OPENING, REASONING, Act, Region
from ..engine.vocab import Vocab

_IN = 0  # in reasoning
_OUT = 1  # after reasoning (content, tool calls)
_TURN = 2  # after a turn marker: the next marker decides, else the request's default
# the prompt left the opener to the model (``spec.OPENING``): the output's first marker or
# non-blank id decides, as in the text view (a start marker opens a block, any text is content)
_WAIT = 3

_START, _END, _TURN_MARK = "start", "end", "turn"
_SEQUENCES = (list, tuple)  # re-iterable and sized: the bulk path may read them twice


class TokenView:
    """The id tables of one compiled format. Built by ``Parser`` (needs a tokenizer)."""

    def __init__(self, compiled: CompiledFormat, vocab: Vocab) -> None:
        spec = compiled.spec
        self.vocab = vocab
        self.spec = spec
        reasoning_states = {s for s, r in spec.regions.items() if r is Region.REASONING}
        starts: set[str] = set()
        ends: set[str] = set()
        self.opens_in_content = False
        for (state, terminal), rule in spec.table.items():
            if state in reasoning_states and Act.REASONING_END in rule.acts:
                ends.add(terminal)
            elif terminal == "THINK_START":
                starts.add(terminal)
                if state == CONTENT and rule.next != CONTENT:
                    self.opens_in_content = True
        self.kinds: dict[int, str] = {}
        text_markers: dict[str, str] = {}
        for terminal, kind in [*((t, _START) for t in starts), *((t, _END) for t in ends)]:
            if terminal in compiled.special:
                for token_id, term in compiled.special_ids.items():
                    if term == terminal:
                        self.kinds[token_id] = kind
            else:
                for marker in spec.terminals[terminal]:
                    text_markers[marker] = kind
        for marker in spec.turn_markers:
            turn_id = vocab.special_id(marker)
            if turn_id is not None:
                self.kinds.setdefault(turn_id, _TURN_MARK)
        self.marker_ids = frozenset(self.kinds)
        self.text_markers = text_markers
        # added tokens that are pieces of text markers (Kimi K3's <|open|>): read as text
        self.part_ids = compiled.marker_part_ids - self.marker_ids
        self.longest = max((len(m) for m in text_markers), default=0)
        # channel formats (Harmony) decide reasoning from header text, not from markers: their
        # token view runs the engine itself on the ids (``EngineTracker``)
        self.needs_engine = spec.header is not None

    def tracker(self, initial: str, default: str) -> ReasoningTracker:
        return ReasoningTracker(self, initial, default)

    def is_reasoning_end(self, token_ids: Sequence[int], initial: str, default: str) -> bool:
        self.vocab.check_ids(token_ids)
        if self.text_markers or initial == OPENING:
            tracker = self.tracker(initial, default)
            tracker.feed(token_ids)
            return tracker.ended
        kinds = self.kinds
        skipped_start = False  # a start marker whose meaning depends on the state before it
        for i in range(len(token_ids) - 1, -1, -1):
            kind = kinds.get(token_ids[i])
            if kind is None:
                continue
            if kind == _END:
                if not skipped_start:
                    return True
                # a start marker after this end opens a block only in prompt text (a turn marker
                # came before); in the output's content it is text. Rare: scans back once more.
                return not any(kinds.get(t) == _TURN_MARK for t in token_ids[:i])
            if kind == _TURN_MARK:
                return False if skipped_start else default != REASONING
            if self.opens_in_content:
                return False
            skipped_start = True
        return False if (skipped_start and initial == REASONING) else initial != REASONING


class ReasoningTracker:
    """The streaming token view of one request: ``feed(new_ids)`` returns whether reasoning has
    ended; ``reasoning_tokens`` counts the ids inside reasoning blocks; ``content_start`` is the
    index (in all ids fed) where the content after the latest block begins, or ``None``."""

    def __init__(self, view: TokenView, initial: str, default: str) -> None:
        self._view = view
        self._kinds = view.kinds
        self._marker_ids = view.marker_ids
        self._default_out = default != REASONING
        self._state = _IN if initial == REASONING else _WAIT if initial == OPENING else _OUT
        self.position = 0  # ids fed so far
        self._prompt_like = False  # a turn marker was seen: what follows is prompt text
        self.reasoning_tokens = 0
        self.content_start: int | None = None if self._state != _OUT else 0
        # text markers
        self._text = bool(view.text_markers)
        self._decoder = view.vocab.utf8_decoder()
        self._tail = ""  # decoded text of the last ordinary tokens, at most the longest marker
        self._recent: deque[tuple[int, bool]] = deque()  # (chars, counted) of the tokens in the tail

    @property
    def ended(self) -> bool:
        if self._state == _TURN:
            return self._default_out
        return self._state == _OUT

    def copy(self) -> ReasoningTracker:
        """An independent tracker in the same state (to probe ids that may be rolled back, as
        speculative decoding does). O(1): the tail holds at most the longest text marker."""
        twin = object.__new__(ReasoningTracker)
        for name in self.__dict__:
            setattr(twin, name, getattr(self, name))
        twin._decoder = self._view.vocab.utf8_decoder()
        twin._decoder.setstate(self._decoder.getstate())
        twin._recent = deque(self._recent)
        return twin

    def feed(self, token_ids: Iterable[int]) -> bool:
        if not isinstance(token_ids, _SEQUENCES):
            token_ids = list(token_ids)
        self._view.vocab.check_ids(token_ids, self.position)  # StreamError, as parse() and feed() raise
        if not self._text and self._state != _WAIT and self._marker_ids.isdisjoint(token_ids):
            # the commonest delta: no marker among its ids (one C-level set test, not a loop)
            n = len(token_ids)
            if self._state == _IN:
                self.reasoning_tokens += n
            self.position += n
            return self.ended
        kinds = self._kinds
        for token_id in token_ids:
            kind = kinds.get(token_id)
            if self._state == _WAIT and kind is None and not self._blank(token_id):
                self._state = _OUT  # the output began with text, not the opener: content
                self.content_start = self.position
            if kind is not None:
                self._mark(kind)
                self._reset_text()
            elif self._text and (token_id in self._view.part_ids or self._view.vocab.added_text(token_id) is None):
                self._ordinary(token_id)
            else:
                if self._text:
                    self._reset_text()
                if self._state == _IN:
                    self.reasoning_tokens += 1
            self.position += 1
        return self.ended

    def _mark(self, kind: str, content_from: int | None = None) -> None:
        after = self.position + 1 if content_from is None else content_from
        state = self._state
        if kind == _TURN_MARK:
            self._state = _TURN
            self._prompt_like = True
            self.content_start = after if self._default_out else None
        elif kind == _START:
            if state != _OUT or self._view.opens_in_content or self._prompt_like:
                self._state = _IN
                self.content_start = None
        elif state != _OUT:  # an end marker ends the block (in content it is absorbed)
            self._state = _OUT
            self.content_start = after

    def _blank(self, token_id: int) -> bool:
        """The id's text is whitespace only (it decides nothing while ``_WAIT``)."""
        vocab = self._view.vocab
        added = vocab.added_text(token_id)
        return not (added.encode("utf-8") if added is not None else vocab.token_bytes(token_id)).strip()

    def _reset_text(self) -> None:
        self._tail = ""
        self._recent.clear()
        self._decoder.reset()

    def _ordinary(self, token_id: int) -> None:
        added = self._view.vocab.added_text(token_id)  # a piece of a text marker, else None
        piece = added if added is not None else self._decoder.decode(self._view.vocab.token_bytes(token_id))
        counted = self._state == _IN
        tail = self._tail + piece
        found = _find_markers(tail, len(self._tail), self._view.text_markers)
        if not found:
            if counted:
                self.reasoning_tokens += 1
            self._remember(tail, len(piece), counted)
            return
        # the last marker that completes in this token decides (earlier ones moved the state)
        recent = list(self._recent)
        for end, marker, kind in found:
            if kind == _END and self._state == _IN:
                # the earlier tokens that carry bytes of the marker were counted: uncount them
                start = end - len(marker)
                pos = len(self._tail)
                for chars, was_counted in reversed(recent):
                    pos -= chars
                    if pos + chars <= start:
                        break
                    if was_counted:
                        self.reasoning_tokens = max(0, self.reasoning_tokens - 1)
            self._mark(kind)
        # what follows the last marker in this token may begin the next one ('></' in '<think></think>')
        rest = tail[found[-1][0] :]
        self._tail = rest
        self._recent.clear()
        if rest:
            self._recent.append((len(rest), False))

    def _remember(self, tail: str, chars: int, counted: bool) -> None:
        self._recent.append((chars, counted))
        keep = self._view.longest
        if len(tail) > keep:
            drop = len(tail) - keep
            tail = tail[drop:]
            total = sum(c for c, _ in self._recent)
            while self._recent and total - self._recent[0][0] >= len(tail):
                total -= self._recent.popleft()[0]
        self._tail = tail


def _find_markers(text: str, new_from: int, markers: dict[str, str]) -> list[tuple[int, str, str]]:
    """Text markers that end in text[new_from:], leftmost first, without overlaps."""
    hits: list[tuple[int, str, str]] = []
    pos = 0
    while True:
        best: tuple[int, str] | None = None
        for marker in markers:
            i = text.find(marker, pos)
            if i != -1 and (best is None or i < best[0] or (i == best[0] and len(marker) > len(best[1]))):
                best = (i, marker)
        if best is None:
            return hits
        i, marker = best
        end = i + len(marker)
        if end > new_from:
            hits.append((end, marker, markers[marker]))
        pos = end


class EngineTracker:
    """The token view of a channel format: the engine's own stream fed ids alone (it detokenizes
    them; still O(new ids)). Same surface as ``ReasoningTracker``."""

    def __init__(self, stream: EventStream) -> None:
        self._stream = stream
        self.position = 0
        self.reasoning_tokens = 0
        self.content_start: int | None = None if not stream.reasoning_ended else 0

    @property
    def ended(self) -> bool:
        return self._stream.reasoning_ended

    def copy(self) -> EngineTracker:
        """An independent tracker at this point (the stream's ``copy()``): a probe of ids that
        may be taken back costs those ids, not the whole output again."""
        twin = EngineTracker.__new__(EngineTracker)
        twin._stream = self._stream.copy()
        twin.position = self.position
        twin.reasoning_tokens = self.reasoning_tokens
        twin.content_start = self.content_start
        return twin

    def feed(self, token_ids: Iterable[int]) -> bool:
        stream = self._stream
        for token_id in token_ids:
            was_ended = stream.reasoning_ended
            in_block = stream.in_reasoning
            stream.feed(None, (token_id,))
            if in_block and stream.in_reasoning:
                self.reasoning_tokens += 1
            self.position += 1
            if stream.reasoning_ended and not was_ended:
                self.content_start = self.position
            elif not stream.reasoning_ended:
                self.content_start = None
        return stream.reasoning_ended


_ID_BATCH = 256  # ids handed to a tracker at once (its per-call cost, amortised)


class ReasoningTokens:
    """``usage.completion_tokens_details.reasoning_tokens`` of one stream, counted as it is fed
    (``fed(token_ids)`` after each ``feed`` with ids; ``count`` when usage is read).

    With a tokenizer, the token view counts (``tracker``: markers matched by id), read in
    batches, since the count is read rarely and a tracker's call has a fixed cost. Without one,
    the engine's state decides per delta: the ids of a delta count when the stream is inside
    reasoning (``in_reasoning``) both before it (after the previous delta with ids, or at the
    start) and after it, so a delta that crosses a reasoning marker is not counted: its ids carry
    the marker, and without a tokenizer text ids cannot be told from marker ids.

    Cost: O(1) per delta amortised (the tracker's O(ids) per batch with a tokenizer).
    """

    __slots__ = ("_engine", "_tracker", "_unread", "_counted", "_run_from")

    def __init__(self, engine: EventStream, tracker: ReasoningTracker | EngineTracker | None) -> None:
        self._engine = engine
        self._tracker = tracker
        self._unread: list[int] = []  # ids the tracker has not read yet (fewer than _ID_BATCH)
        self._counted = 0  # without a tracker: the ids of the runs of deltas that ended
        # without a tracker: ids fed when the current run of deltas inside reasoning began
        # (None: the last delta with ids ended outside reasoning)
        self._run_from: int | None = 0 if engine.in_reasoning else None

    def fed(self, token_ids: Sequence[int]) -> None:
        """The stream was just fed ``token_ids`` (a delta's, not empty)."""
        if self._tracker is not None:
            unread = self._unread
            unread += token_ids
            if len(unread) >= _ID_BATCH:
                self._read()
            return
        # kept per run of deltas that end inside reasoning: all of a run's ids count but its first delta's
        engine = self._engine
        start = self._run_from
        if engine.in_reasoning:
            if start is None:
                self._run_from = engine.num_tokens
        elif start is not None:
            self._counted += engine.num_tokens - len(token_ids) - start
            self._run_from = None

    @property
    def count(self) -> int:
        if self._tracker is None:
            start = self._run_from
            return self._counted + (self._engine.num_tokens - start if start is not None else 0)
        self._read()
        return self._tracker.reasoning_tokens

    def _read(self) -> None:
        if self._unread:
            assert self._tracker is not None
            self._tracker.feed(self._unread)
            self._unread = []
