"""A stream's state is a set of named components, each a plain value that reads back.

Every case is fed one character at a time (with a tokenizer also one token id at a time, ids
alone), incremental and atomic, and at every cut each component of the stream (lexer, call
tracker with the open call and its codec, fields, header, block, deferred reasoning) and the
stream itself are written out (``to_value``) and read back (``from_value``): the value is plain
(``trisect.engine.value``) and reads back to the same value. That the value is complete (a
stream read back continues exactly as the original) is ``trisect.testing.check_copies``: a
stream's ``copy()`` is its value read back, and the replay harness copies every case at every cut.
The states met are counted, so the test cannot pass on trivial states only: mid-call with every
codec, mid-marker, inside an undecided and a decided block of calls and a list, inside a message
header, with reasoning deferred, with a detokenizer's unfinished character and with queued
special ids.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from support import tokenizers
from support.cases import load_cases, token_ids
from trisect import MessageBuilder, Parser
from trisect.engine.block import BlockPhase
from trisect.engine.call import STREAMED
from trisect.engine.event_stream import VALUE_ENUMS, EventStream
from trisect.engine.lexer import Mode
from trisect.engine.machine import Phase
from trisect.engine.value import Value, is_value
from trisect.message import fold

CASES = load_cases()


_PLAIN = {type(None), bool, int, str, bytes, *VALUE_ENUMS}


def _kinds(value: Value) -> set[type]:
    """The types of everything in ``value`` below its tuples."""
    kinds: set[type] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        if type(v) is tuple:
            todo += v
        else:
            kinds.add(type(v))
    return kinds


def _plain(engine: EventStream) -> bool:
    """Nothing held but the fields' whitespace: reasoning or content streaming through."""
    lex = engine._lex
    return (
        engine._calls.open is None
        and not lex.hold
        and not lex.specials
        and engine._block.phase is BlockPhase.OUTSIDE
        and engine._header.to_value()[0] is None  # type: ignore[index]
        and engine._phase is Phase.RUNNING
        and lex.to_value()[3] is None  # type: ignore[index]
    )


def _check(engine: EventStream, seen: Counter[str]) -> None:
    """The stream reads back to the same value (each component's ``from_value`` reads its part:
    the lexer, the call tracker with the open call and its codec, fields, header, block,
    deferred reasoning); note what state it is in. Cuts where the stream is only streaming
    reasoning or content through are checked one in 16 (``check_copies`` copies every cut)."""
    if _plain(engine):
        seen["plain"] += 1
        if seen["plain"] % 16:
            return
    value = engine.to_value()
    assert _kinds(value) <= _PLAIN, value  # plain (``is_value``), its enums among VALUE_ENUMS
    lex, calls = engine._lex, engine._calls
    again = EventStream.from_value(engine._c, engine._request, value, vocab=lex.vocab, atomic_tool_calls=calls.atomic)
    assert again.to_value() == value
    header, block, deferred = engine._header, engine._block, engine._deferred
    # what this cut is in the middle of
    call = calls.open
    if call is not None:
        seen["call:" + type(call.codec).__name__] += 1
        if call.phase in STREAMED:
            seen["streamed call"] += 1
    if lex.hold:
        seen["held marker prefix"] += 1
    if block.phase is not BlockPhase.OUTSIDE:
        seen[f"block:{block.phase.value}"] += 1
    if block.listing and block.list_text:
        seen["list"] += 1
    if header.to_value()[0] is not None:  # type: ignore[index]
        seen["header"] += 1
    if deferred.to_value():
        seen[f"deferred:{engine._phase.value}"] += 1
    if engine._phase is Phase.FRESH:
        seen["fresh"] += 1
    detok = lex.to_value()[3]  # type: ignore[index]
    if detok:
        seen["unfinished character"] += 1
    if lex.specials:
        seen[f"queued special ids:{lex.mode.value}"] += 1
    if lex.mode is Mode.DECODING:
        seen["decoding"] += 1


def _replay(case: dict[str, Any], seen: Counter[str]) -> None:
    options = dict(case.get("options") or {})
    if case.get("tools") is not None:
        options["tools"] = case["tools"]
    ids = token_ids(case)
    runs: list[tuple[Parser, list[tuple[str | None, list[int] | None]]]] = []
    if not case.get("ids_only"):
        runs.append((Parser(case["reasoning"], case["tools_format"]), [(ch, None) for ch in case["output"]]))
    if ids is not None:
        tok = tokenizers.load(case["tokenizer"])
        parser = Parser(case["reasoning"], case["tools_format"], tokenizer=tok)
        runs.append((parser, [(None, [t]) for t in ids]))
        if not case.get("ids_only"):  # text with its ids: one id and its text at a time
            pieces = [(tokenizers.decode(case["tokenizer"], [t]), [t]) for t in ids]
            if "".join(p for p, _ in pieces) == case["output"]:
                runs.append((parser, pieces))
    for parser, pieces in runs:
        # atomic streams hold calls differently only where a list of calls holds them
        for atomic in (False, True) if parser.spec.whole_list else (False,):
            engine = parser.stream(atomic_tool_calls=atomic, **options).engine
            _check(engine, seen)
            for text, piece_ids in pieces:
                engine.feed(text, piece_ids)
                _check(engine, seen)
            engine.finish()
            _check(engine, seen)


def test_every_component_reads_back_at_every_cut_and_the_cuts_meet_every_kind_of_state() -> None:
    seen: Counter[str] = Counter()
    for case in CASES:
        _replay(case, seen)
    codecs = {
        "JsonArgsCodec",
        "JsonEnvelopeCodec",
        "XmlParamsCodec",
        "PythonicCallCodec",
        "GemmaArgsCodec",
        "MistralCallCodec",
        "NameKeyCodec",
    }
    kinds = {
        *(f"call:{name}" for name in codecs),
        "streamed call",
        "held marker prefix",
        "block:undecided",
        "block:yielded",
        "block:spilled",
        "list",
        "header",
        "deferred:deferring",
        "deferred:holding",
        "fresh",
        "unfinished character",
        "queued special ids:aligned",
        "queued special ids:decoding",
        "decoding",
    }
    assert kinds - set(seen) == set(), dict(seen)


def test_a_value_of_another_shape_is_a_value_error() -> None:
    parser = Parser("qwen3", "hermes")
    engine = parser.stream().engine
    engine.feed("<think>a</think><tool_call>{")
    value = engine.to_value()
    assert type(value) is tuple and is_value(value)
    assert not is_value((1, [2])) and not is_value(object())
    c, request = engine._c, engine._request
    for bad in (None, value[:-1], (*value[:4], "lexer", *value[5:]), ("NO_SUCH_STATE", *value[1:])):
        with pytest.raises(ValueError):
            EventStream.from_value(c, request, bad)


def test_a_stream_read_back_continues_as_the_original() -> None:
    """The value is all a stream holds: read back at any cut (mid-marker, mid-call, mid-value),
    it sends what the original would have sent."""
    parser = Parser("qwen3", "qwen3_coder")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"a": {"type": "integer"}}}}}]
    text = "<think>\nhm\n</think>\n\nOK <tool_call>\n<function=f>\n<parameter=a>\n12\n</parameter>\n"
    text += "</function>\n</tool_call>"
    whole = parser.parse(text, tools=tools, id_factory=str)
    for cut in range(len(text) + 1):
        engine = parser.stream(tools=tools, id_factory=str).engine
        sent = MessageBuilder()
        sent.add(fold(engine.feed(text[:cut])))
        again = EventStream.from_value(engine._c, engine._request, engine.to_value())
        sent.add(fold(again.feed(text[cut:])))
        sent.add(fold(again.finish()))
        assert sent.message() == whole, cut


def test_a_stream_parser_reads_back_with_its_request_filter() -> None:
    """``StreamParser.to_value`` holds the request filter's state too (``parallel_tool_calls``):
    read back after the first call, the second is still dropped."""
    parser = Parser("qwen3", "hermes")
    options = {"parallel_tool_calls": False, "id_factory": str}
    first = '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>'
    second = '<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call>'
    stream = parser.stream(**options)
    sent = MessageBuilder()
    sent.add(stream.feed(first))
    again = parser._stream(parser.request(**options), False, stream.to_value())
    sent.add(again.feed(second))
    sent.add(again.finish())
    assert [c.name for c in sent.message().tool_calls] == ["a"]
    assert sent.message() == parser.parse(first + second, **options)
    with pytest.raises(ValueError):
        parser._stream(parser.request(), False, stream.to_value())  # another request: no filter
