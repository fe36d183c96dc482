"""A stateless tier's stream: every chunk goes to a fresh stream resumed from the state the
previous chunk left (``Parser.resume`` / ``StreamParser.to_state``), as a derender replica
serves it. Under each chunking, in text mode, token-id mode (the engine's text with each
chunk's ids) and ids alone, incremental and atomic, it must give the very same deltas as one
stream kept in memory: the same text, the same call ids and indexes, chunk for chunk. The
first chunk has the prompt; no later one does (the state carries where the stream started).

Every third case of ``tests/cases`` (``check_states`` already resumes each case at the cuts,
and at every cut in the exhaustive suite; this adds exact deltas with every chunk resumed); a
case's chunkings come from a seed of its own (groups of 1 to 8 characters or ids), so each
case is cut differently from the next. The same with a small ``call_text_limit``, so a call's
kept raw text is cut and counted across resumes too."""

from __future__ import annotations

import random
from typing import Any

import pytest

from support import cases
from trisect import Parser
from trisect.testing import Case, engine_deltas

KEY = b"a state key for the stateless tier"
CASES = cases.load_cases()
Chunk = tuple[str | None, list[int] | None]


def _fixed_id(index: int) -> str:
    return f"call_{index}"


def _groups(rng: random.Random, n: int) -> list[int]:
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(rng.randint(1, 8))
    return sizes


def _chunkings(case: Case, seed: str) -> list[tuple[str, Parser, list[Chunk]]]:
    rng = random.Random(seed)
    out: list[tuple[str, Parser, list[Chunk]]] = []
    if not case.ids_only:
        text, pieces, i = case.output, [], 0
        for size in _groups(rng, len(text)):
            pieces.append((text[i : i + size], None))
            i += size
        out.append(("text", case.parser(with_tokenizer=False), pieces))
    ids = case.ids()
    if ids is not None:
        parser = case.parser(with_tokenizer=True)
        deltas = engine_deltas(case.tokenizer, ids, _groups(rng, len(ids)))
        out.append(("text+ids", parser, [(t, i) for t, i in deltas]))
        out.append(("ids", parser, [(None, i) for _t, i in deltas if i]))
    return out


def _kept(parser: Parser, chunks: list[Chunk], options: dict[str, Any], atomic: bool) -> list[Any]:
    stream = parser.stream(atomic_tool_calls=atomic, **options)
    return [stream.feed(t, i) for t, i in chunks] + [stream.finish()]


def _stateless(parser: Parser, chunks: list[Chunk], options: dict[str, Any], atomic: bool) -> list[Any]:
    later = {k: v for k, v in options.items() if k not in ("prompt_text", "prompt_token_ids")}
    stream = parser.stream(atomic_tool_calls=atomic, **options)
    out = []
    for t, i in chunks:
        out.append(stream.feed(t, i))
        stream = parser.resume(stream.to_state(KEY), KEY, atomic_tool_calls=atomic, **later)
    out.append(stream.finish())
    return out


def _check(data: dict[str, Any], **extra: Any) -> int:
    case = cases.as_case(data)
    options = {"id_factory": _fixed_id, **case.request(), **extra}
    runs = 0
    for kind, parser, chunks in _chunkings(case, data["key"]):
        for atomic in (False, True):
            want = _kept(parser, chunks, options, atomic)
            got = _stateless(parser, chunks, options, atomic)
            for n, (g, w) in enumerate(zip(got, want, strict=True)):
                assert g == w, f"{kind}/{'atomic' if atomic else 'incremental'} chunk {n}: {g} != {w}"
            runs += 1
    return runs


@cases.parametrize(CASES[::3])
def test_every_chunk_resumed_gives_the_kept_streams_deltas(data: dict[str, Any]) -> None:
    assert _check(data) > 0


WITH_CALLS = [d for d in CASES if d["expected"].get("tool_calls") or d.get("truncated") or d.get("malformed")]


@pytest.mark.parametrize("limit", [3, 40])
@cases.parametrize(WITH_CALLS[::5])
def test_a_small_call_text_limit_travels_with_the_state(data: dict[str, Any], limit: int) -> None:
    assert _check(data, call_text_limit=limit) > 0
