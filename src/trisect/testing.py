"""The replay harness: checks the streaming contract on any case, for any format.

A case is an output (text and/or token ids), the request (tools, options) and the expected
message. ``check_case`` replays it whole and cut in every way an engine cuts a stream, and
checks, on every run:

1. split invariance and stream = ``parse()``: atomic streams, and incremental streams once the
   calls they reported aborted are dropped (a malformed call's text follows as content; a call
   the output ended inside is the message's ``unfinished_call``, not content);
2. the message equals the expected one (arguments compared as JSON values);
3. nothing leaks: no marker string of the format in any field unless the expected field has it;
4. arguments only append, end as one valid JSON object; call indexes are dense from 0, with
   id and name sent once, in the first delta of each call; no call is aborted in a complete
   output.

Chunkings: whole; one character per delta; every two-way split (or the ones asked for); and
with a tokenizer: one token per delta (text with ids, and ids alone), seeded random groups of
1-8 tokens, and detokenizer hold-back (each delta carries the next token's id before its text).
Each chunking feeds an incremental stream and an atomic one; a two-way split feeds the atomic
one only where the incremental one sent a call delta (with none the two take the same path, as
the whole and per-character runs of every case show).
``check_truncations`` cuts a complete case at every position and checks that nothing raises,
no call with invalid arguments is returned, and the calls that survive are the complete ones.
``check_copies`` forks a stream (``StreamParser.copy()``) at every cut and checks that the
copy and the original both end equal to ``parse()``; ``check_states`` does the same with the
stream written out and resumed (``StreamParser.to_state`` / ``Parser.resume``), and bounds the
state by the text it holds. ``check_nothing_lost`` checks that every
non-whitespace character of the output is accounted for (a field, a call, a consumed marker);
the three other checks run it on every output they make and hold every run to the spans it
accepted.

The harness needs only the standard library; a tokenizer object (tiktoken / HF) is duck-typed.
Cases are JSON lines, see ``load_cases``.
"""

from __future__ import annotations

import codecs
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .engine.spec import FormatSpec
from .engine.trace import Span
from .engine.tracker import valid_unicode
from .errors import MalformedOutputError
from .message.fold import fold
from .message.stream_parser import StreamParser
from .message.types import Delta, Message, MessageBuilder, ToolCall
from .parser import Parser

__all__ = [
    "Case",
    "CaseFailure",
    "check_case",
    "check_chunks",
    "check_copies",
    "check_ids_agree",
    "check_nothing_lost",
    "check_output",
    "check_states",
    "check_truncations",
    "engine_deltas",
    "held_text",
    "load_cases",
    "losses",
]


class CaseFailure(AssertionError):
    """A case broke the streaming contract; the message says which run and how."""


@dataclass
class Case:
    """One replay case (the fields of a line of a ``tests/cases/*/*.jsonl`` file)."""

    id: str
    output: str
    expected: Mapping[str, Any] | None  # None: no expected message (``check_output``)
    reasoning: str | None = None
    tools_format: str | None = None
    tools: list[Mapping[str, Any]] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    tokenizer: Any = None  # a tokenizer object (not its name)
    token_ids: list[int] | None = None
    truncated: bool = False
    ids_only: bool = False
    source: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], tokenizers: Callable[[str], Any] | None = None) -> Case:
        tok_name = data.get("tokenizer")
        tokenizer = tokenizers(tok_name) if (tok_name and tokenizers is not None) else None
        return cls(
            id=data["id"],
            output=data["output"],
            expected=data["expected"],
            reasoning=data.get("reasoning"),
            tools_format=data.get("tools_format"),
            tools=data.get("tools"),
            options=data.get("options") or {},
            tokenizer=tokenizer,
            token_ids=data.get("token_ids"),
            truncated=bool(data.get("truncated", False) or data.get("malformed", False)),
            ids_only=bool(data.get("ids_only", False)),
            source=data.get("source", ""),
        )

    def parser(self, *, with_tokenizer: bool) -> Parser:
        return Parser(self.reasoning, self.tools_format, tokenizer=self.tokenizer if with_tokenizer else None)

    def request(self) -> dict[str, Any]:
        options = dict(self.options)
        if self.tools is not None:
            options["tools"] = self.tools
        return options

    def ids(self) -> list[int] | None:
        if self.tokenizer is None:
            return None
        if self.token_ids is not None:
            return list(self.token_ids)
        return _encode(self.tokenizer, self.output)


def load_cases(path: str | Path, tokenizers: Callable[[str], Any] | None = None) -> list[Case]:
    """Read a JSON-lines case file; ``tokenizers`` maps a tokenizer name to an object."""
    cases = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                cases.append(Case.from_dict(json.loads(line), tokenizers))
            except (KeyError, ValueError) as exc:
                raise ValueError(f"{path}:{n}: bad case line: {exc}") from exc
    return cases


# ---------------------------------------------------------------------- tokenizer helpers


def _encode(tokenizer: Any, text: str) -> list[int]:
    if hasattr(tokenizer, "decode_single_token_bytes"):
        return list(tokenizer.encode(text, allowed_special="all"))
    encoded = tokenizer.encode(text, add_special_tokens=False)
    return list(getattr(encoded, "ids", encoded))


def _decode(tokenizer: Any, ids: Sequence[int]) -> str:
    text: str
    if hasattr(tokenizer, "decode_bytes"):
        text = tokenizer.decode_bytes(list(ids)).decode("utf-8", errors="replace")
    else:
        text = tokenizer.decode(list(ids), skip_special_tokens=False)
    return text


def engine_deltas(
    tokenizer: Any, ids: Sequence[int], groups: Sequence[int], *, parser: Parser | None = None
) -> list[tuple[str, list[int]]]:
    """Cut ``ids`` into groups and attach the text an engine's detokenizer would send with
    each: the new text of the decoded prefix, holding back an incomplete UTF-8 character. With
    ``parser`` (its tokenizer's vocabulary and format), the control tokens the ids end with that
    are no markers of the format are the engine's stop tokens: their ids come without text."""
    stop = _stop_tokens(parser, ids) if parser is not None else 0
    if stop:
        head = engine_deltas(tokenizer, ids[: len(ids) - stop], groups)
        return [*head, ("", list(ids[len(ids) - stop :]))]
    out: list[tuple[str, list[int]]] = []
    if hasattr(tokenizer, "decode_single_token_bytes"):
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        i = 0
        for g in groups:
            chunk = list(ids[i : i + g])
            i += g
            text = decoder.decode(b"".join(tokenizer.decode_single_token_bytes(t) for t in chunk))
            out.append((text, chunk))
        tail = decoder.decode(b"", final=True)
        if tail:
            out.append((tail, []))
        return out
    sent = ""
    i = 0
    for g in groups:
        chunk = list(ids[i : i + g])
        i += g
        text = _decode(tokenizer, ids[:i])
        while text.endswith("\ufffd") and i < len(ids):
            text = text[:-1]
        out.append((text[len(sent) :], chunk))
        sent = text
    full = _decode(tokenizer, ids)
    if len(full) > len(sent):
        out.append((full[len(sent) :], []))
    return out


def text_ahead(deltas: Sequence[tuple[str, list[int]]]) -> list[tuple[str, list[int]]]:
    """``deltas`` (``engine_deltas``) with each delta's text sent one delta early: every delta
    carries the next group's text before its ids, as an engine whose detokenizer runs ahead of
    the ids it reports sends them."""
    ahead = [(deltas[k + 1][0] if k + 1 < len(deltas) else "", ids) for k, (_t, ids) in enumerate(deltas)]
    if ahead:
        ahead[0] = (deltas[0][0] + ahead[0][0], ahead[0][1])
    return ahead


def _stop_tokens(parser: Parser, ids: Sequence[int]) -> int:
    """How many of the ids the output ends with are stop tokens (control tokens that are no
    markers of the parser's format), whose text an engine does not send."""
    vocab = parser.vocab
    if vocab is None:
        return 0
    markers = _all_markers(parser.spec)
    keep = vocab.ids_within(markers)  # the markers' own tokens and their pieces
    k = len(ids)
    while k and vocab.added_text(ids[k - 1]) is not None and vocab.is_control(ids[k - 1]) and ids[k - 1] not in keep:
        k -= 1
    return len(ids) - k


# ---------------------------------------------------------------------- running


def _run(
    parser: Parser,
    request: Mapping[str, Any],
    chunks: Iterable[tuple[str | None, Sequence[int] | None]],
    *,
    atomic: bool,
) -> tuple[Message, list[Delta], list[Span]]:
    """Feed ``chunks`` to a stream; the folded message, the deltas and what the engine consumed."""
    stream = parser.stream(atomic_tool_calls=atomic, id_factory=_fixed_id, **request)
    trace = stream.engine.start_trace()
    deltas: list[Delta] = []
    for text, ids in chunks:
        d = stream.feed(text, ids)
        if d is not None:
            deltas.append(d)
    d = stream.finish()
    if d is not None:
        deltas.append(d)
    builder = MessageBuilder()
    for d in deltas:
        builder.add(d)
    return builder.message(), deltas, trace.spans


def _traced(
    parser: Parser, request: Mapping[str, Any], text: str | None, ids: Sequence[int] | None
) -> tuple[Message, list[Span]]:
    """The whole output through the engine alone (no request filter: hidden reasoning and
    dropped calls are still there), with what it consumed."""
    engine = parser.stream(atomic_tool_calls=True, id_factory=_fixed_id, **request).engine
    trace = engine.start_trace()
    builder = MessageBuilder()
    builder.add(fold(engine.feed(text, ids)))
    builder.add(fold(engine.finish()))
    return builder.message(), trace.spans


def _fixed_id(index: int) -> str:
    return f"call_{index}"


def _view(msg: Message) -> dict[str, Any]:
    unfinished = msg.unfinished_call
    return {
        "reasoning": msg.reasoning,
        "content": msg.content,
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in msg.tool_calls],
        "unfinished_call": None if unfinished is None else {"text": unfinished.text, "reason": unfinished.reason},
    }


def _markers(parser: Parser) -> list[str]:
    strings = {s for values in parser.spec.terminals.values() for s in values}
    return sorted(s for s in strings if len(s) >= 3)


def _check_message(case: Case, msg: Message, markers: list[str], run: str) -> None:
    exp = case.expected
    if exp is None:
        return
    problems = []
    if msg.reasoning != (exp.get("reasoning") or None):
        problems.append(f"reasoning {msg.reasoning!r} != expected {exp.get('reasoning')!r}")
    if msg.content != (exp.get("content") or None):
        problems.append(f"content {msg.content!r} != expected {exp.get('content')!r}")
    unfinished = msg.unfinished_call.text if msg.unfinished_call is not None else None
    if unfinished != (exp.get("unfinished_call") or None):
        problems.append(f"unfinished call {unfinished!r} != expected {exp.get('unfinished_call')!r}")
    want = exp.get("tool_calls") or []
    if len(msg.tool_calls) != len(want):
        problems.append(f"{len(msg.tool_calls)} tool calls != expected {len(want)}: {[c.name for c in msg.tool_calls]}")
    for got, w in zip(msg.tool_calls, want, strict=False):
        try:
            args = json.loads(got.arguments)
        except ValueError:
            problems.append(f"call {got.name}: arguments are not JSON: {got.arguments!r}")
            continue
        if not isinstance(args, dict):
            problems.append(f"call {got.name}: arguments are not a JSON object: {got.arguments!r}")
        if got.name != w["name"]:
            problems.append(f"call name {got.name!r} != expected {w['name']!r}")
        if args != w.get("arguments", {}):
            problems.append(f"call {got.name}: arguments {args!r} != expected {w.get('arguments')!r}")
        if "arguments_text" in w and got.arguments != w["arguments_text"]:
            problems.append(f"call {got.name}: arguments text {got.arguments!r} != {w['arguments_text']!r}")
        if "id" in w and got.id != w["id"]:
            problems.append(f"call {got.name}: id {got.id!r} != expected {w['id']!r}")
    fields = [("reasoning", msg.reasoning, exp.get("reasoning")), ("content", msg.content, exp.get("content"))]
    fields += [("name", c.name, None) for c in msg.tool_calls]
    for label, value, expected_value in fields:
        for marker in markers:
            if value and marker in value and value.count(marker) > (expected_value or "").count(marker):
                problems.append(f"marker {marker!r} leaked into {label}: {value!r}")
    if problems:
        raise CaseFailure(f"[{case.id}] {run}: " + "; ".join(problems))


def _check_deltas(case: Case, deltas: list[Delta], run: str, *, complete: bool) -> None:
    seen: set[int] = set()
    next_index = 0
    for d in deltas:
        for piece in d.tool_calls:
            if piece.index not in seen:
                if piece.index != next_index:
                    raise CaseFailure(f"[{case.id}] {run}: call index {piece.index}, expected {next_index}")
                if piece.name is None or piece.id is None:
                    raise CaseFailure(f"[{case.id}] {run}: first delta of call {piece.index} lacks name or id")
                seen.add(piece.index)
                next_index += 1
            elif piece.name is not None or piece.id is not None:
                raise CaseFailure(f"[{case.id}] {run}: name/id of call {piece.index} sent twice")
        if d.aborted and complete:
            raise CaseFailure(f"[{case.id}] {run}: calls {d.aborted} aborted in a complete output")


def check_chunks(
    case: Case,
    parser: Parser,
    chunks: Sequence[tuple[str | None, Sequence[int] | None]],
    run: str,
    *,
    reference: Message,
    atomic: bool,
    spans: list[Span] | None = None,
) -> bool:
    """One replay: feed ``chunks``, fold, and check against ``reference`` (= ``parse()``) and,
    given ``spans`` (what the engine consumed of the whole output), the same spans. Returns
    whether the stream sent any call delta."""
    msg, deltas, got = _run(parser, case.request(), chunks, atomic=atomic)
    _check_deltas(case, deltas, run, complete=not case.truncated)
    _agrees(case, parser, msg, reference, run, renumbered=any(d.aborted for d in deltas))
    if spans is not None and "".join(t for t, _i in chunks if t) != case.output:
        spans = None  # a detokenizer's text differs from the output (offsets would too)
    if spans is not None and got != spans:
        raise CaseFailure(f"[{case.id}] {run}: the engine consumed {got} != {spans} of the whole output")
    return any(d.tool_calls for d in deltas)


def _agrees(
    case: Case,
    parser: Parser,
    msg: Message,
    reference: Message,
    run: str,
    *,
    expected: bool = True,
    renumbered: bool = False,
) -> None:
    """A streamed message (aborted calls dropped, as a client drops them) equals ``parse()``
    exactly, and, with ``expected``, the expected message. ``renumbered``: the stream aborted a
    call, which took an index, so the ids given by index (``id_factory``) of the calls after it
    differ; everything else must not."""
    got, want = _view(msg), _view(reference)
    if renumbered:
        for view in (got, want):
            for call in view["tool_calls"]:
                call["id"] = call["id"] if call["id"] and not call["id"].startswith("call_") else "call_#"
    if got != want:
        raise CaseFailure(f"[{case.id}] {run}: stream {_view(msg)} != parse() {_view(reference)}")
    if expected and case.expected is not None:
        _check_message(case, msg, _markers(parser), run)


def _char_chunks(text: str) -> list[tuple[str | None, list[int] | None]]:
    return [(ch, None) for ch in text]


def check_case(
    case: Case, *, seeds: Sequence[int] = (0, 1, 2), splits: bool | Iterable[int] = True, nothing_lost: bool = True
) -> int:
    """Replay ``case`` under every chunking; raise ``CaseFailure`` on the first violation.
    ``splits``: the two-way splits to replay, every position (``True``), none, or the positions
    given (the others are kept). With ``nothing_lost``, the whole output passes
    ``check_nothing_lost`` and every run consumes the same spans of it. Returns the number of
    runs made. Cost: the every-position splits are O(n^2) in the output's length; the rest O(n)."""
    runs = 0
    request = case.request()
    if not case.ids_only:
        parser = case.parser(with_tokenizer=False)
        reference = parser.parse(case.output, id_factory=_fixed_id, **request)
        _check_message(case, reference, _markers(parser), "parse(text)")
        spans = _consumed(case, parser, case.output, None, "text") if nothing_lost else None
        runs += 1
        chunkings: list[tuple[str, list[tuple[str | None, list[int] | None]]]] = [
            ("whole", [(case.output, None)]),
            ("per-char", _char_chunks(case.output)),
        ]
        points = range(1, len(case.output)) if splits is True else sorted(set(splits or ()))
        chunkings += [
            (f"split@{p}", [(case.output[:p], None), (case.output[p:], None)])
            for p in points
            if 0 < p < len(case.output)
        ]
        for label, chunks in chunkings:
            for atomic in (False, True):
                tag = f"{label}/{'atomic' if atomic else 'incremental'}"
                streamed = check_chunks(case, parser, chunks, tag, reference=reference, atomic=atomic, spans=spans)
                runs += 1
                if not streamed and label.startswith("split@"):
                    break  # no call delta: an atomic stream takes the same path (whole and per-char show it)
    ids = case.ids()
    if ids is None:
        return runs
    tok = case.tokenizer
    if case.token_ids is None and _decode(tok, ids) != case.output:
        raise CaseFailure(f"[{case.id}] the tokenizer does not round-trip the output text")
    parser = case.parser(with_tokenizer=True)
    reference = parser.parse(case.output, token_ids=ids, id_factory=_fixed_id, **request)
    _check_message(case, reference, _markers(parser), "parse(text, ids)")
    ids_alone = parser.parse(None, token_ids=ids, id_factory=_fixed_id, **request)
    if _view(ids_alone) != _view(reference):
        raise CaseFailure(f"[{case.id}] parse(ids alone) {_view(ids_alone)} != parse(text, ids) {_view(reference)}")
    spans = _consumed(case, parser, case.output, ids, "ids") if nothing_lost else None
    runs += 2
    groupings: list[tuple[str, list[int]]] = [("per-token", [1] * len(ids))]
    for seed in seeds:
        rng = random.Random(seed)
        sizes: list[int] = []
        while sum(sizes) < len(ids):
            sizes.append(rng.randint(1, 8))
        groupings.append((f"groups(seed={seed})", sizes))
    for label, sizes in groupings:
        deltas = engine_deltas(tok, ids, sizes, parser=parser)
        runs_of: list[tuple[str, list[tuple[str | None, list[int] | None]], list[Span] | None]] = [
            ("text", [(t, i) for t, i in deltas], spans),
            # ids alone: the engine's own text, whose offsets may differ from the output's
            ("ids-alone", [(None, i) for _t, i in deltas if i], None),
        ]
        if deltas:  # hold-back: every delta carries the next token's id before that token's text
            held = [(t, (deltas[k + 1][1] if k + 1 < len(deltas) else [])) for k, (t, _i) in enumerate(deltas)]
            held[0] = (held[0][0], deltas[0][1] + held[0][1])
            runs_of.append(("holdback", list(held), spans))
        for kind, chunks, want in runs_of:
            for atomic in (False, True):
                tag = f"{label}+{kind}/{'atomic' if atomic else 'incremental'}"
                check_chunks(case, parser, chunks, tag, reference=reference, atomic=atomic, spans=want)
                runs += 1
    return runs


# ---------------------------------------------------------------------- any output


def check_ids_agree(parser: Parser, text: str | None, token_ids: Sequence[int], **options: Any) -> Message:
    """Text with its token ids and the ids alone tell one story: ``parse(text, token_ids)`` (the
    engine's text, special tokens included) equals ``parse(None, token_ids)`` (trisect
    detokenizes), and so do both streamed one token per delta, and the text sent a delta ahead
    of its ids (``text_ahead``). ``text`` ``None``: the ids' own text (``engine_deltas``).
    Raises ``CaseFailure``; returns the message."""
    tok = parser.vocab.tokenizer if parser.vocab is not None else None
    if tok is None:
        raise ValueError("check_ids_agree needs a Parser with a tokenizer")
    ids = list(token_ids)
    deltas = engine_deltas(tok, ids, [1] * len(ids), parser=parser)
    if text is None:
        text = "".join(t for t, _i in deltas)
    request = {**options, "id_factory": _fixed_id}
    with_text = parser.parse(text, token_ids=ids, **request)
    alone = parser.parse(None, token_ids=ids, **request)
    if _view(alone) != _view(with_text):
        raise CaseFailure(f"parse(ids alone) {_view(alone)} != parse(text, ids) {_view(with_text)}")
    rest = {k: v for k, v in options.items() if k not in ("tools", "id_factory")}
    case = Case(id="ids", output=text, expected=None, tools=options.get("tools"), options=rest, truncated=True)
    runs: list[tuple[str, list[tuple[str | None, list[int] | None]]]] = [
        ("text", [(t, i) for t, i in deltas]),
        ("ids-alone", [(None, i) for _t, i in deltas if i]),
        ("text-ahead", [(t, i) for t, i in text_ahead(deltas)]),
    ]
    for kind, chunks in runs:
        for atomic in (True, False):
            check_chunks(case, parser, chunks, f"per-token+{kind}", reference=with_text, atomic=atomic)
    return with_text


def check_output(
    parser: Parser,
    output: str | None,
    token_ids: Sequence[int] | None = None,
    *,
    seed: int = 0,
    cuts: int = 8,
    **options: Any,
) -> int:
    """The streaming contract on any output, with no expected message (a model's real output, a
    fuzzer's mutation): ``parse()`` returns calls whose arguments load with the standard
    library's ``json.loads`` as an object, and ``strict=True`` either returns the same message or
    raises ``MalformedOutputError``; ``check_nothing_lost`` holds; streams cut whole, per
    character, at ``cuts`` random points and in ``cuts`` random groupings, and copied at ``cuts``
    random points, equal ``parse()`` (aborted calls dropped) and consume the same spans, with
    well-formed deltas. With ``token_ids`` (and a tokenizer on the parser), ``check_ids_agree``
    and the same streams fed as an engine sends them (one token, random groups, hold-back).
    ``output`` ``None``: ids only. Raises ``CaseFailure``; returns the number of runs."""
    rng = random.Random(seed)
    tools = options.get("tools")
    request = {k: v for k, v in options.items() if k not in ("tools", "id_factory")}
    runs = 0
    if output is not None:
        case = Case(id="output", output=output, expected=None, tools=tools, options=request, truncated=True)
        req = {**case.request(), "id_factory": _fixed_id}
        reference = parser.parse(output, **req)
        _sound(case, reference, output)
        try:
            strict = parser.parse(output, **{**req, "strict": True})
        except MalformedOutputError:
            pass
        else:
            if _view(strict) != _view(reference):
                raise CaseFailure(f"strict=True returned {_view(strict)} != parse() {_view(reference)}")
        spans = _consumed(case, parser, output, None, "text")
        n = len(output)
        chunkings: list[tuple[str, list[tuple[str | None, list[int] | None]]]] = [("whole", [(output, None)])]
        if n <= PER_CHAR_LIMIT:
            chunkings.append(("per-char", _char_chunks(output)))
        for k in range(cuts if n > 1 else 0):
            p = rng.randrange(1, n)
            chunkings.append((f"split@{p}", [(output[:p], None), (output[p:], None)]))
            chunkings.append((f"groups#{k}", [(piece, None) for piece in _random_pieces(output, rng)]))
        for label, chunks in chunkings:
            for atomic in (True, False):
                check_chunks(
                    case,
                    parser,
                    chunks,
                    f"{label}/{'atomic' if atomic else 'incremental'}",
                    reference=reference,
                    atomic=atomic,
                    spans=spans,
                )
                runs += 1
        for _ in range(cuts if n > 1 else 0):
            _check_copy(case, parser, reference, rng.randrange(0, n + 1), rng)
            runs += 1
    if token_ids is None:
        return runs
    vocab = parser.vocab
    if vocab is None:
        raise ValueError("check_output with token ids needs a Parser with a tokenizer")
    ids = list(token_ids)
    tok = vocab.tokenizer
    reference = check_ids_agree(parser, output, ids, **options)
    text = (
        output if output is not None else "".join(t for t, _i in engine_deltas(tok, ids, [1] * len(ids), parser=parser))
    )
    case = Case(id="ids", output=text, expected=None, tools=tools, options=request, truncated=True)
    _sound(case, reference, text)
    spans = _consumed(case, parser, text, ids, "ids")
    groupings = [[1] * len(ids)]
    for _ in range(max(1, cuts // 2)):
        sizes: list[int] = []
        while sum(sizes) < len(ids):
            sizes.append(rng.randint(1, 8))
        groupings.append(sizes)
    for sizes in groupings:
        deltas = engine_deltas(tok, ids, sizes, parser=parser)
        held = [(t, (deltas[k + 1][1] if k + 1 < len(deltas) else [])) for k, (t, _i) in enumerate(deltas)]
        if held:
            held[0] = (held[0][0], deltas[0][1] + held[0][1])
        runs_of: list[tuple[str, list[tuple[str | None, list[int] | None]], list[Span] | None]] = [
            ("text", [(t, i) for t, i in deltas], spans),
            ("ids-alone", [(None, i) for _t, i in deltas if i], None),
            ("holdback", [(t, i) for t, i in held], spans),
            ("text-ahead", [(t, i) for t, i in text_ahead(deltas)], spans),
        ]
        for kind, chunks, want in runs_of:
            for atomic in (True, False):
                check_chunks(
                    case,
                    parser,
                    chunks,
                    f"groups{sizes[:4]}+{kind}/{'atomic' if atomic else 'incremental'}",
                    reference=reference,
                    atomic=atomic,
                    spans=want,
                )
                runs += 1
    return runs


PER_CHAR_LIMIT = 4096
"""``check_output`` feeds outputs up to this long one character per delta (longer ones in random
pieces only: an oversized value costs its length in feeds per run otherwise)."""


def _random_pieces(text: str, rng: random.Random) -> list[str]:
    pieces, i = [], 0
    while i < len(text):
        k = rng.choice((1, 1, 2, 3, 5, 8, 16, 64))
        pieces.append(text[i : i + k])
        i += k
    return pieces


def _sound(case: Case, msg: Message, output: str) -> None:
    """A returned message is well-formed whatever the output: every call's arguments load with
    the standard library's ``json.loads`` as an object, names and ids are strings a client can
    send back (valid Unicode), an unfinished call's text ends the output."""
    for call in msg.tool_calls:
        try:
            args = json.loads(call.arguments)
        except (ValueError, RecursionError) as exc:
            raise CaseFailure(
                f"[{case.id}] call {call.name!r}: json.loads rejects its arguments ({exc!r:.80})"
            ) from exc
        if not isinstance(args, dict):
            raise CaseFailure(f"[{case.id}] call {call.name!r}: arguments are not an object: {call.arguments!r:.80}")
        for label, value in (("name", call.name), ("id", call.id)):
            if not isinstance(value, str) or not value or not valid_unicode(value):
                raise CaseFailure(f"[{case.id}] call {label} {value!r} is not a non-empty, valid Unicode string")
    unfinished = msg.unfinished_call
    if unfinished is not None and not output.endswith(unfinished.text):
        raise CaseFailure(f"[{case.id}] the unfinished call's text {unfinished.text!r:.80} does not end the output")


def _check_copy(case: Case, parser: Parser, reference: Message, p: int, rng: random.Random) -> None:
    """A stream fed ``output[:p]`` in random pieces, copied, and both fed the rest: both end
    equal to ``parse()``."""
    output = case.output
    for atomic in (True, False):
        stream = parser.stream(atomic_tool_calls=atomic, id_factory=_fixed_id, **case.request())
        sent = MessageBuilder()
        for piece in _random_pieces(output[:p], rng):
            sent.add(stream.feed(piece))
        fork, got = stream.copy(), _fork(sent)
        sent.add(stream.feed(output[p:]))
        sent.add(stream.finish())
        got.add(fork.feed(output[p:]))
        got.add(fork.finish())
        tag = f"copy@{p}/{'atomic' if atomic else 'incremental'}"
        _agrees(case, parser, got.message(), reference, tag, expected=False, renumbered=not atomic)
        _agrees(case, parser, sent.message(), reference, tag + "/original", expected=False, renumbered=not atomic)


# ---------------------------------------------------------------------- nothing lost


def check_nothing_lost(case: Case) -> int:
    """Every non-whitespace character of the output is accounted for, as text and (with a
    tokenizer) as token ids: it is in the reasoning or the content (in order), inside the span of
    a call (or the kept raw text of a call the output ended inside), inside a marker the format
    consumed, or inside a message header the format read. Whitespace is left to the documented
    rules that drop it (the fields' strip rule, envelope regions). Two finer rules:

    * a *label* (a marker that only drops text: same region before and after, no action, a word
      rather than markup, such as Gemma 4's channel name ``thought``) counts only right after
      another consumed span: anywhere else it deleted a word of the model's text;
    * an envelope (from a marker that leaves reasoning or content to the one that comes back)
      whose text partly became content holds no call: then its consumed markers were lost
      (all of such a block's text is content, or none).

    Raises ``CaseFailure`` naming the class (``lost``, ``label``, ``envelope``). Returns the
    number of outputs checked."""
    runs = 0
    if not case.ids_only:
        _consumed(case, case.parser(with_tokenizer=False), case.output, None, "text")
        runs += 1
    ids = case.ids()
    if ids is not None:
        _consumed(case, case.parser(with_tokenizer=True), case.output, ids, "ids")
        runs += 1
    return runs


def _consumed(case: Case, parser: Parser, text: str | None, ids: Sequence[int] | None, run: str) -> list[Span]:
    """``check_nothing_lost`` on one output (``text``, with its ``ids`` if given); returns what
    the engine consumed of it."""
    msg, spans = _traced(parser, case.request(), text, ids)
    output = case.output if text is None else text
    spec = parser.spec
    problems = losses(
        output, msg, spans, content_prefix=spec.content_prefix, markers=_all_markers(spec), words=structure_words(spec)
    )
    if problems:
        raise CaseFailure(f"[{case.id}] nothing-lost/{run}: " + "; ".join(problems))
    return spans


def losses(
    output: str,
    msg: Message,
    spans: Sequence[Span],
    *,
    content_prefix: str = "",
    markers: Sequence[str] = (),
    words: Collection[str] | None = None,
) -> list[str]:
    """What ``check_nothing_lost`` finds wrong with one parsed output (empty: nothing).

    With ``words`` (``structure_words`` of the format), the text inside a call and inside a
    message header counts as consumed only where something carries it: each word of a call's
    text, once the format's ``markers`` are taken out, is in the call's name, id or arguments
    (a key, a value) or is a word of the format's markup; a header's words are markup."""
    n = len(output)
    covered = bytearray(n)
    for span in spans:
        if span.kind != "envelope":
            covered[span.start : span.end] = b"\x01" * (min(span.end, n) - span.start)
    problems = []
    unfinished = msg.unfinished_call
    if unfinished is not None:
        if not output.endswith(unfinished.text):
            problems.append(f"lost: the unfinished call's text {unfinished.text!r} does not end the output")
        else:
            covered[n - len(unfinished.text) :] = b"\x01" * len(unfinished.text)
    left = "".join(ch for ch, c in zip(output, covered, strict=True) if not c and not ch.isspace())
    reasoning = "".join((msg.reasoning or "").split())
    content = "".join((msg.content or "").split())
    prefix = "".join(content_prefix.split())
    if prefix and content.startswith(prefix):
        content = content[len(prefix) :]
    if Counter(left) != Counter(reasoning + content) or not (_within(reasoning, left) and _within(content, left)):
        missing = Counter(left) - Counter(reasoning + content)
        extra = Counter(reasoning + content) - Counter(left)
        problems.append(
            f"lost: {''.join(sorted(missing.elements()))!r} of the output is in no field, call or marker"
            + (f"; {''.join(sorted(extra.elements()))!r} in a field is not in the output" if extra else "")
            + ("" if missing or extra else "; a field's text is out of order")
        )
    if words is not None:
        problems += _uncarried(output, msg, spans, markers, words)
    for span in spans:
        if span.kind == "label":
            before = output[: span.start].rstrip()
            if before and not covered[len(before) - 1]:
                problems.append(
                    f"label: the marker {output[span.start : span.end]!r} at offset {span.start} deleted model text"
                )
        elif span.kind == "envelope" and span.spilled and not span.calls:
            inner = [s for s in spans if s.kind in ("marker", "label") and span.start <= s.start < span.end]
            if inner:
                markers = [output[s.start : s.end] for s in inner]
                problems.append(
                    f"envelope: the block at {span.start}-{span.end} holds no call and part of its text is content, "
                    f"but its markers {markers} were consumed"
                )
    return problems


_WORD = re.compile(r"[^\W_]+")
# markup inside a call's text that carries nothing: an escape (JSON / Python / XML entity), a call's
# identity attribute with its value, quoted whole (an id or index the model numbers calls with, one
# after the name is not used: a call's id is decided when it is announced; the call's type),
# and the name of a key or attribute (a word right before "=" or '":'); what the key holds is
# checked as any other text
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|.)|&#?\w+;", re.DOTALL)
_IDENTITY = re.compile(r"""(?i)\b(?:id|index|type)(?:\s*=\s*|["']\s*:\s*)(?:"[^"]*"|'[^']*'|[\w.-]*)""")
# Harmony's content type, the word before a header's <|message|> (gpt-oss template:
# ``"commentary " + tool_call.content_type``, default "json"): markup no message field carries
_CONTENT_TYPE = re.compile(r"(?<=[\s>])[^\s<>]+(?=\s*<\|message\|>)")
_KEY = re.compile(r"""[\w-]+(?=\s*=|["']\s*:)""")
STRUCTURE_WORDS = frozenset(
    # markup words the registered formats' codecs and call headers read as structure: JSON and
    # Python literals; the string flag of XML-style parameters (DSML's string="true"); a call's
    # type word; a value's JSON Schema type (K2 Horizon's <ifm|arg_type>); the names of an
    # arguments wrapper (DSML's unwrapped "arguments" / "input");
    # Gemma's string quote <escape>; Kimi K2's id prefix "functions."; Harmony's call header
    # (role, channel, recipient namespace, content type)
    """name string true false null none json function functions arguments parameters input escape
    assistant analysis commentary final to code constrain integer number boolean object array""".split()
)
"""The markup words of every format, besides each format's marker words (``structure_words``)."""


def structure_words(spec: FormatSpec) -> frozenset[str]:
    """The words a call's markup may hold that no field carries, besides key and attribute
    names: the words of the format's markers and ``STRUCTURE_WORDS`` (case-folded)."""
    words = set(STRUCTURE_WORDS)
    for marker in _all_markers(spec):
        words.update(w.casefold() for w in _WORD.findall(marker))
    return frozenset(words)


def _all_markers(spec: FormatSpec) -> list[str]:
    """Every marker string of the format, longest first."""
    return sorted({s for values in spec.terminals.values() for s in values if s}, key=len, reverse=True)


def _carried(call: ToolCall) -> str:
    """What a returned call carries, case-folded: its name, id, arguments text, keys and values."""
    parts = [call.name, call.id, call.arguments]

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                parts.append(k)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        else:
            parts.append(value if isinstance(value, str) else json.dumps(value))

    try:
        walk(json.loads(call.arguments))
    except (ValueError, RecursionError):
        pass  # not JSON: the other checks report it
    return "\0".join(parts).casefold()


def _uncarried(
    output: str, msg: Message, spans: Sequence[Span], markers: Sequence[str], words: Collection[str]
) -> list[str]:
    """The words inside returned calls that nothing carries (see ``losses``)."""
    unfinished = msg.unfinished_call
    tail = len(output) - len(unfinished.text) if unfinished is not None else len(output)
    calls = [s for s in spans if s.kind == "call" and s.start < tail]
    if len(calls) != len(msg.tool_calls):
        return [f"call: {len(msg.tool_calls)} calls returned, {len(calls)} consumed"]
    problems = []
    for span, call in zip(calls, msg.tool_calls, strict=True):
        text = output[span.start : span.end]
        if "<|message|>" in text:
            text = _CONTENT_TYPE.sub(" ", text)
        for marker in markers:
            if marker in text:
                text = text.replace(marker, " ")
        text = _KEY.sub(" ", _IDENTITY.sub(" ", _ESCAPE.sub(" ", text)))
        blob = _carried(call)
        missing = [w for w in _WORD.findall(text) if w.casefold() not in words and w.casefold() not in blob]
        if missing:
            problems.append(
                f"call: {missing} of the call at {span.start}-{span.end} is in neither its name nor its arguments"
            )
    return problems


def _within(field: str, text: str) -> bool:
    """``field`` is a subsequence of ``text``."""
    it = iter(text)
    return all(ch in it for ch in field)


def _fork(builder: MessageBuilder) -> MessageBuilder:
    """A copy of a half-folded message (the deltas a client received so far)."""
    return MessageBuilder(
        reasoning=builder.reasoning[:],
        content=builder.content[:],
        calls={i: parts[:] for i, parts in builder.calls.items()},
        headers=dict(builder.headers),
        aborted=set(builder.aborted),
    )


def check_copies(case: Case, *, nothing_lost: bool = True, cuts: Mapping[str, Container[int]] | None = None) -> int:
    """``StreamParser.copy()`` at every cut: a stream is fed the output one character at a
    time (with a tokenizer also one token id at a time, ids alone) and copied before each
    piece; the copy is fed the rest of the output in one delta, the original goes on piece by
    piece, and both must equal ``parse()`` (as in ``check_chunks``; with ``nothing_lost``, each
    copy also consumes exactly the spans ``check_nothing_lost`` accepted), atomic and
    incremental.

    The cuts are every character boundary (``len(output) + 1`` of them) and every token
    boundary: the only places a stream sits between two deltas. The original moves on before
    its copy is fed, so a copy that shared state with it would see the next piece twice; and
    the original ends equal to ``parse()`` only if no copy disturbed it. The atomic run is
    skipped where the incremental one never streamed a call (the two then take the same path
    at every cut). ``cuts`` names the cuts to copy at, per kind (``"text"``: characters fed
    before the copy, ``"ids"``: token ids); a kind it leaves out is copied at every cut. Returns
    the number of copies checked. Cost: O(n^2) in the output's length at every cut (each copy is
    fed the rest), O(n) per cut checked."""
    return _check_forks(
        case, "copy", lambda parser, stream, options: stream.copy(), nothing_lost=nothing_lost, cuts=cuts
    )


_STATE_KEY = b"trisect.testing: a state key for the replay harness"
STATE_SLACK = 2048
"""Bytes a stream state may take beyond the text it holds (``check_states``)."""


def held_text(value: Any) -> int:
    """UTF-8 bytes of the text a state value holds (its strs and bytes)."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, tuple):
        return sum(held_text(v) for v in value)
    return 0


def check_states(case: Case, *, nothing_lost: bool = True, cuts: Mapping[str, Container[int]] | None = None) -> int:
    """``StreamParser.to_state`` / ``Parser.resume`` at every cut (or at ``cuts``), as
    ``check_copies`` checks ``copy()``: at each cut the stream's state is written, read back by
    ``resume`` (the prompt left out, as a later request of a stateless tier leaves it out) and
    the resumed stream is fed the rest; it must end equal to ``parse()``, and the original, which
    goes on piece by piece, too. Every state must also be at most ``STATE_SLACK`` bytes over the
    text it holds (a state never grows with what the stream already emitted). Returns the number
    of states checked."""

    def resume(parser: Parser, stream: StreamParser, options: dict[str, Any]) -> StreamParser:
        state = stream.to_state(_STATE_KEY)
        held = held_text(stream.to_value())
        if len(state) > held + STATE_SLACK:
            raise CaseFailure(f"[{case.id}] a state of {len(state)} bytes holds {held} bytes of text")
        atomic = options.pop("atomic_tool_calls")
        rest = {k: v for k, v in options.items() if k not in ("prompt_text", "prompt_token_ids")}
        return parser.resume(state, _STATE_KEY, atomic_tool_calls=atomic, **rest)

    return _check_forks(case, "state", resume, nothing_lost=nothing_lost, cuts=cuts)


Fork = Callable[[Parser, StreamParser, dict[str, Any]], StreamParser]


def _check_forks(
    case: Case, name: str, fork_of: Fork, *, nothing_lost: bool, cuts: Mapping[str, Container[int]] | None
) -> int:
    runs = 0
    kinds: list[tuple[str, Parser, list[tuple[str | None, list[int] | None]]]] = []
    if not case.ids_only:
        kinds.append(("text", case.parser(with_tokenizer=False), [(ch, None) for ch in case.output]))
    ids = case.ids()
    if ids is not None:
        kinds.append(("ids", case.parser(with_tokenizer=True), [(None, [t]) for t in ids]))
    request = case.request()
    for kind, parser, pieces in kinds:
        text, token_ids = (case.output, None) if kind == "text" else (None, ids)
        reference = parser.parse(text, token_ids=token_ids, id_factory=_fixed_id, **request)
        spans = _consumed(case, parser, case.output, token_ids, kind) if nothing_lost else None
        if kind == "ids":
            spans = None  # ids alone: the engine's own text, whose offsets may differ from the output's
        for atomic in (False, True):
            tag = f"{name}/{kind}/{'atomic' if atomic else 'incremental'}"
            stream = parser.stream(atomic_tool_calls=atomic, id_factory=_fixed_id, **request)
            trace = stream.engine.start_trace()
            sent = MessageBuilder()
            at = (cuts or {}).get(kind)
            for p in range(len(pieces) + 1):
                if at is not None and p not in at:
                    if p < len(pieces):
                        sent.add(stream.feed(*pieces[p]))
                    continue
                options = {"atomic_tool_calls": atomic, "id_factory": _fixed_id, **request}
                fork, got = fork_of(parser, stream, options), _fork(sent)
                if p < len(pieces):
                    sent.add(stream.feed(*pieces[p]))
                if kind == "text":
                    got.add(fork.feed(case.output[p:]))
                else:
                    assert ids is not None
                    got.add(fork.feed(None, ids[p:]))
                got.add(fork.finish())
                _agrees(case, parser, got.message(), reference, f"{tag}@{p}", expected=False, renumbered=not atomic)
                fork_trace = fork.engine.trace
                if spans is not None and fork_trace is not None and fork_trace.spans != spans:
                    raise CaseFailure(f"[{case.id}] {tag}@{p}: the {name} consumed {fork_trace.spans} != {spans}")
                runs += 1
            sent.add(stream.finish())
            _agrees(case, parser, sent.message(), reference, f"{tag}/original", renumbered=not atomic)
            if spans is not None and trace.spans != spans:
                raise CaseFailure(f"[{case.id}] {tag}/original: consumed {trace.spans} != {spans}")
            if not atomic and not sent.headers:
                break  # no call was ever streamed: an atomic stream runs exactly the same way
    return runs


def _prefixes(case: Case, cuts: Container[int] | None = None) -> Iterator[tuple[str | None, list[int] | None]]:
    """Each cut output (text, ids), or ``(None, None)`` where ``cuts`` leaves the position out."""
    ids = case.ids()
    if ids is None:
        for p in range(len(case.output)):
            yield (case.output[:p], None) if cuts is None or p in cuts else (None, None)
        return
    for p in range(len(ids)):
        yield (
            (_decode(case.tokenizer, ids[:p]).rstrip("\ufffd"), ids[:p]) if cuts is None or p in cuts else (None, None)
        )


def check_truncations(case: Case, *, nothing_lost: bool = True, cuts: Container[int] | None = None) -> int:
    """Cut a complete case at every character (or token) position and check the degrade rules:
    no exception; no returned call with invalid arguments; the returned calls are exactly the
    expected calls that were complete before the cut (a cut right after a closer that ends a
    call even inside a value, ``Rule.follow_end``, may end the last one early); a call the cut
    falls inside is not content but the message's ``unfinished_call``, whose text is exactly the
    output's end from that call's first marker; atomic and incremental streams (aborted calls
    dropped) equal ``parse()``; and, with ``nothing_lost``, ``check_nothing_lost`` holds for
    every cut.

    The stream of a cut is the one a client had when the output ended there: one stream per
    mode is fed the output piece by piece (a character, or a token id) and, at each cut, a
    ``copy()`` of it is finished (``check_copies`` shows a copy continues exactly as the stream
    it was taken from). That is the same sequence of feeds as a fresh stream fed the cut output
    piece by piece, at O(n) feeds per case instead of O(n^2). ``cuts``: the positions to cut at
    (characters, or token ids with a tokenizer); every one by default. Cost: O(n) per cut (the
    cut output is parsed), O(n^2) at every cut."""
    if case.truncated:
        raise ValueError("check_truncations needs a complete case")
    parser = case.parser(with_tokenizer=case.tokenizer is not None)
    want = [(c["name"], c.get("arguments", {})) for c in (case.expected or {}).get("tool_calls") or []]
    spec = parser.spec
    call_enders = tuple({m for (_s, t), r in spec.table.items() if r.follow_end for m in spec.terminals[t]}) or ("\0",)
    runs = 0
    all_ids = case.ids()
    pieces = _char_chunks(case.output) if all_ids is None else [(None, [t]) for t in all_ids]
    request = case.request()
    # per mode (atomic, incremental): the stream fed the pieces before the cut, and the deltas it
    # sent, folded (their aborted calls too)
    live = [
        (atomic, parser.stream(atomic_tool_calls=atomic, id_factory=_fixed_id, **request), MessageBuilder())
        for atomic in (True, False)
    ]
    for p, (text, ids) in enumerate(_prefixes(case, cuts)):
        if text is None:  # not a cut to check: the streams only move on
            for _atomic, stream, sent in live:
                sent.add(stream.feed(*pieces[p]))
            continue
        cut = Case(**{**case.__dict__, "output": text, "token_ids": ids, "truncated": True})
        use_text = text if not case.ids_only else None
        msg = parser.parse(use_text, token_ids=ids, id_factory=_fixed_id, **case.request())
        where = f"[{case.id}] cut at {len(text)}"
        got = []
        for c in msg.tool_calls:
            try:
                args = json.loads(c.arguments)
            except ValueError as exc:
                raise CaseFailure(f"{where}: call with invalid arguments {c.arguments!r}") from exc
            if not isinstance(args, dict):
                raise CaseFailure(f"{where}: arguments not an object {c.arguments!r}")
            got.append((c.name, args))
        if got != want[: len(got)] and not (
            # the cut ends at a closer that ends a call at the end of the output even inside a
            # value (``Rule.follow_end``): the last call ends there with the value cut short
            text.rstrip(" \t\r\n").endswith(call_enders)
            and got[:-1] == want[: len(got) - 1]
            and len(got) <= len(want)
            and got[-1][0] == want[len(got) - 1][0]
        ):
            raise CaseFailure(f"{where}: calls {got} are not a prefix of {want}")
        if msg.unfinished_call is not None and not text.endswith(msg.unfinished_call.text):
            raise CaseFailure(f"{where}: the unfinished call {msg.unfinished_call.text!r} does not end the output")
        same = msg if ids is None else parser.parse(None, token_ids=ids, id_factory=_fixed_id, **request)
        for atomic, stream, sent in live:
            fork, folded = stream.copy(), _fork(sent)
            folded.add(fork.finish())
            _agrees(
                cut,
                parser,
                folded.message(),
                same,
                f"cut at {len(text)}/{'atomic' if atomic else 'incremental'}",
                expected=False,
                renumbered=bool(folded.aborted),
            )
            sent.add(stream.feed(*pieces[p]))
        if nothing_lost:
            _consumed(cut, parser, text, ids, f"cut at {len(text)}")
        runs += 3
    return runs
