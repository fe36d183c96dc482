"""The jobs of the fuzzer and what each holds the library to.

A job raises ``Finding`` for a violation of the streaming contract (``trisect.testing``'s checks
raise ``CaseFailure``) or for an exception the library's documentation does not promise there.
``ALLOWED`` names the documented errors and where each is the answer:

* ``StreamError``: input that is not model output: an id that is not a token id of the
  vocabulary (negative, past it, not an integer), and text given with ids it does not spell;
* ``MalformedOutputError``: ``strict=True`` on malformed output (``check_output`` only);
* nothing else, anywhere: a mutated output is still model output, so ``parse()``, every stream
  and the token view must take it.

Each job returns its volume: ``streams`` (replays: one stream fed an output in some cut, or the
token view fed one sequence), ``mutations`` (mutated outputs checked) and ``id_sequences``.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from support import tokenizers
from trisect import MalformedOutputError, StreamError
from trisect.testing import Case, CaseFailure, check_chunks, check_output, engine_deltas, text_ahead

from . import corpus
from .mutate import mutate, mutate_ids

ALLOWED = {
    "StreamError": "input that is not model output: an id outside the vocabulary, text its ids do not spell",
    "MalformedOutputError": "strict=True on malformed output",
}
"""The library's documented errors the fuzzer accepts, each only where its rule says."""


@dataclass
class Finding(Exception):
    """A contract violation or an undocumented exception, with what reproduces it."""

    kind: str  # the job: split, mutation, ids
    check: str  # "contract" or the exception's type
    detail: str
    line: dict[str, Any] = field(default_factory=dict)  # the regression line (replay input)

    @property
    def signature(self) -> tuple[str, str, str, str]:
        """What two findings share when they are one class: format pair, job, check, message shape."""
        fmt = f"{self.line.get('reasoning')}+{self.line.get('tools_format')}"
        shape = re.sub(r"'[^']*'|\"[^\"]*\"|\d+|\[[^\]]*\]|\{[^}]*\}", "_", self.detail)[:60]
        return fmt, self.kind, self.check, shape

    def __str__(self) -> str:
        return f"{self.kind}/{self.check}: {self.detail}"


Volume = Counter[str]


def _line(item: corpus.Item, **extra: Any) -> dict[str, Any]:
    d = item.data
    return {
        "case": item.key,
        "reasoning": d.get("reasoning"),
        "tools_format": d.get("tools_format"),
        "tokenizer": d.get("tokenizer"),
        "tools": d.get("tools"),
        "options": d.get("options") or {},
        **extra,
    }


def _guard(kind: str, line: dict[str, Any], run: Callable[[], int]) -> int:
    """Run one check; anything but a pass is a ``Finding``."""
    try:
        return run()
    except CaseFailure as exc:
        raise Finding(kind, "contract", str(exc)[:2000], line) from None
    except Exception as exc:  # every exception is a finding here, documented or not: the check says which
        raise Finding(kind, type(exc).__name__, str(exc)[:2000], line) from None


# ---------------------------------------------------------------------- split


def split_job(item: corpus.Item, rng: random.Random) -> Volume:
    """A case cut at random, checked against its expected message and ``parse()``."""
    case = Case.from_dict(item.data, tokenizers.load)
    request = case.request()
    volume: Volume = Counter()
    line = _line(item, output=case.output, token_ids=case.token_ids)

    def text_runs() -> int:
        parser = case.parser(with_tokenizer=False)
        reference = parser.parse(case.output, id_factory=_fixed_id, **request)
        n = 0
        for k in range(3):
            pieces, i = [], 0
            while i < len(case.output):
                step = rng.choice((1, 2, 3, 4, 7, 12, 30))
                pieces.append((case.output[i : i + step], None))
                i += step
            for atomic in (True, False):
                check_chunks(case, parser, pieces, f"random-pieces#{k}", reference=reference, atomic=atomic)
                n += 1
        return n

    def id_runs() -> int:
        ids = case.ids()
        assert ids is not None
        parser = case.parser(with_tokenizer=True)
        reference = parser.parse(case.output, token_ids=ids, id_factory=_fixed_id, **request)
        n = 0
        for k in range(2):
            sizes: list[int] = []
            while sum(sizes) < len(ids):
                sizes.append(rng.randint(1, 12))
            deltas = engine_deltas(case.tokenizer, ids, sizes, parser=parser)
            alone = [(None, i) for _t, i in deltas if i]
            runs = [("text", deltas), ("ids-alone", alone), ("text-ahead", text_ahead(deltas))]
            for label, chunks in runs:
                for atomic in (True, False):
                    check_chunks(case, parser, chunks, f"groups#{k}+{label}", reference=reference, atomic=atomic)
                    n += 1
        return n

    if not case.ids_only:
        volume["streams"] += _guard("split", line, text_runs)
    if case.tokenizer is not None:
        volume["streams"] += _guard("split", line, id_runs)
    return volume


def _fixed_id(index: int) -> str:
    return f"call_{index}"


# ---------------------------------------------------------------------- mutation


def mutation_job(
    item: corpus.Item,
    rng: random.Random,
    text: str | None = None,
    seed: int | None = None,
    token_ids: list[int] | None = None,
) -> Volume:
    """A case's output mutated (or ``text``, replaying), through ``check_output`` as text and,
    with the case's tokenizer, as its token ids (``token_ids``, replaying: given)."""
    parser = item.parser(with_tokenizer=False)
    own = [m for values in parser.spec.terminals.values() for m in values if m.strip()]
    ops: list[str] = ["replay"]
    replaying = text is not None
    if text is None:
        text, ops = mutate(item.data["output"], rng, own, corpus.markers())
    seed = rng.randrange(1 << 30) if seed is None else seed
    request = item.request()
    volume: Volume = Counter(mutations=1)
    line = _line(item, output=text, seed=seed, mutations=ops)
    volume["streams"] += _guard("mutation", line, lambda: check_output(parser, text, seed=seed, cuts=3, **request))
    name = item.tokenizer
    if name is None:
        return volume
    tparser = item.parser(with_tokenizer=True)
    ids = corpus.encode(name, text) if not replaying else token_ids
    if ids is not None and (not replaying or corpus.encode(name, text) == ids):
        line = {**line, "token_ids": ids}
        volume["streams"] += _guard(
            "mutation", line, lambda: check_output(tparser, text, ids, seed=seed, cuts=2, **request)
        )
        return volume
    # text the tokenizer cannot write (a lone surrogate): fed with the ids of the output it came
    # from, it is text its ids do not spell: a StreamError, or taken as it is; never another error
    base = ids if replaying else corpus.encode(name, item.data["output"])
    if base is not None:
        line = {**line, "token_ids": base, "allow": "StreamError"}

        def disagreeing() -> int:
            try:
                tparser.parse(text, token_ids=base, **request)
            except StreamError:
                pass
            return 1

        volume["streams"] += _guard("mutation", line, disagreeing)
    return volume


# ---------------------------------------------------------------------- token ids


def ids_job(name: str, rng: random.Random, ids: list[Any] | None = None, item: corpus.Item | None = None) -> Volume:
    """A token-id sequence for tokenizer ``name``: a case's ids mutated (or ``ids``, replaying)."""
    if item is None:
        item = rng.choice([i for i in corpus.items() if i.tokenizer == name])
    ordinary, added, byte_ids = corpus.vocab_facts(name)
    kind = "replay"
    if ids is None:
        base = corpus.encode(name, item.data["output"]) or tokenizers.encode(name, item.data["output"])
        ids, kind = mutate_ids(base, rng, ordinary, added, byte_ids)
    parser = item.parser(with_tokenizer=True)
    request = item.request()
    valid = all(type(t) is int and 0 <= t for t in ids) and _in_vocab(name, ids)
    line = _line(item, token_ids=ids, ids_kind=kind, output=None)
    volume: Volume = Counter(id_sequences=1)
    if valid:
        seed = rng.randrange(1 << 30)
        volume["streams"] += _guard("ids", line, lambda: check_output(parser, None, ids, seed=seed, cuts=2, **request))
        volume["streams"] += _guard("ids", line, lambda: _token_view(parser, ids, request, rng))
    else:
        volume["streams"] += _guard("ids", line, lambda: _refused(parser, ids, request))
    return volume


def _in_vocab(name: str, ids: list[Any]) -> bool:
    ordinary, added, _bytes = corpus.vocab_facts(name)
    extra = set(added)
    return all(t < ordinary or t in extra for t in ids)


def _token_view(parser: Any, ids: list[int], request: dict[str, Any], rng: random.Random) -> int:
    """The token view takes any valid ids, and a tracker fed them in groups ends where
    ``is_reasoning_end`` says."""
    options = {k: v for k, v in request.items() if k != "tools"}
    ended = parser.is_reasoning_end(ids, **options)
    parser.content_token_ids(ids, **options)
    parser.count_reasoning_tokens(ids, **options)
    tracker = parser.reasoning_tracker(**options)
    i = 0
    got = tracker.feed([])
    while i < len(ids):
        k = rng.randint(1, 6)
        got = tracker.feed(ids[i : i + k])
        i += k
    if got != ended:
        raise CaseFailure(f"reasoning_tracker fed in groups says ended={got}, is_reasoning_end says {ended}")
    return 4


def _refused(parser: Any, ids: list[Any], request: dict[str, Any]) -> int:
    """Ids that are not token ids: ``StreamError`` from every entry point that takes ids."""
    options = {k: v for k, v in request.items() if k != "tools"}
    entries: list[tuple[str, Callable[[], Any]]] = [
        ("parse(ids)", lambda: parser.parse(None, token_ids=ids, **request)),
        ("stream per token", lambda: _feed_each(parser, ids, request)),
        ("is_reasoning_end", lambda: parser.is_reasoning_end(ids, **options)),
        ("content_token_ids", lambda: parser.content_token_ids(ids, **options)),
        ("count_reasoning_tokens", lambda: parser.count_reasoning_tokens(ids, **options)),
        ("reasoning_tracker().feed", lambda: parser.reasoning_tracker(**options).feed(ids)),
    ]
    for label, entry in entries:
        try:
            entry()
        except StreamError:
            continue
        except MalformedOutputError:
            raise
        raise CaseFailure(f"{label} took ids that are not token ids of the vocabulary: {ids!r:.200}")
    return len(entries)


def _feed_each(parser: Any, ids: list[Any], request: dict[str, Any]) -> None:
    stream = parser.stream(**request)
    for t in ids:
        stream.feed(None, [t])
    stream.finish()
