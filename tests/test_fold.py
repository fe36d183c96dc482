"""One fold: ``trisect.message.fold`` is the only place a stream's events become deltas, and every
consumer renders its deltas: ``StreamParser`` (``Delta``), ``ChatStream`` (chunk dicts), the engine
plugins' ``Fold`` (``Piece``) and the server's Responses stream (Responses events)."""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from trisect import Delta, Parser
from trisect.chat import ChatStream
from trisect.integrations._common import Fold
from trisect.serve.chat_completions import Answer
from trisect.serve.responses import ResponseFold, sse_events, whole
from trisect.serve.upstream.base import CompletionPiece

SRC = Path(__file__).resolve().parent.parent / "src" / "trisect"
_CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": _CITY}}]
OUTPUTS = {
    "hermes": (
        "qwen3",
        "hermes",
        "<think>\nplan it\n</think>\n\nSure, checking.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>',
    ),
    "qwen3_coder": (
        "qwen3",
        "qwen3_coder",
        "<think>\nplan it\n</think>\n\nSure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
        "</parameter>\n</function>\n</tool_call>",
    ),
    "malformed": (
        "qwen3",
        "hermes",
        '<think>\nhm\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}} oops\n'
        "</tool_call>\nafter",
    ),
    "cut": ("qwen3", "hermes", '<think>\nhm\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"ci'),
}
SPLITS = {"whole": 10**6, "chars": 1, "fives": 5}


def _ids(index: int) -> str:
    return f"call_{index}"


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _deltas(parser: Parser, pieces: list[str], atomic: bool) -> list[Delta | None]:
    stream = parser.stream(tools=TOOLS, id_factory=_ids, atomic_tool_calls=atomic)
    return [stream.feed(p) for p in pieces] + [stream.finish()]


# ---------------------------------------------------------------------------- the fold itself


@pytest.mark.parametrize("atomic", [False, True], ids=["incremental", "atomic"])
def test_a_delta_says_which_calls_ended_well_formed(atomic: bool) -> None:
    """Each complete call is ``ended`` once, in the delta where it ended; an aborted or cut-off
    call never is."""
    for name, (reasoning, tools, text) in OUTPUTS.items():
        parser = Parser(reasoning, tools)
        for size in SPLITS.values():
            deltas = [d for d in _deltas(parser, _pieces(text, size), atomic) if d is not None]
            ended = [i for d in deltas for i in d.ended]
            message = parser.parse(text, tools=TOOLS)
            assert sorted(ended) == list(range(len(message.tool_calls))), (name, size, ended)
            done: set[int] = set()
            for d in deltas:  # a call ends with or after its last argument piece, never before
                assert not done & {p.index for p in d.tool_calls}, (name, size)
                done.update(d.ended)


def test_only_the_message_fold_reads_call_events() -> None:
    """Outside the engine (which makes them), call events are read in one place that turns them
    into deltas, ``message/fold.py``; the request filter drops some and the server's metrics
    count outcomes from them, neither makes a delta."""
    names = {"ToolCallStart", "ToolCallArguments", "ToolCallEnd", "ToolCallAborted", "ToolCallUnfinished"}
    readers = set()
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("engine/") or rel == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.Name) and node.id in names for node in ast.walk(tree)):
            readers.add(rel)
    assert readers == {"message/fold.py", "request/filter.py", "serve/outcomes.py"}


# ---------------------------------------------------------------------------- its renderings


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("case", OUTPUTS)
def test_chat_chunks_render_the_stream_deltas(case: str, split: str) -> None:
    """Each chunk's ``delta`` is the stream's delta of the same feed, rendered."""
    reasoning, tools, text = OUTPUTS[case]
    parser = Parser(reasoning, tools)
    pieces = _pieces(text, SPLITS[split])
    want = [d.to_dict() for d in _deltas(parser, pieces, atomic=False) if d is not None and d.to_dict()]
    chat = ChatStream(parser, tools=TOOLS, id_factory=_ids)
    chunks = [c for p in pieces for c in chat.feed(p)] + chat.finish()
    got = [{k: v for k, v in c["choices"][0]["delta"].items() if k != "role"} for c in chunks]
    assert [g for g in got if g] == want


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("case", OUTPUTS)
def test_plugin_pieces_render_the_stream_deltas(case: str, split: str) -> None:
    """The plugins' ``Piece`` of a feed is the stream's delta; which calls completed or were
    aborted is what the deltas said."""
    reasoning, tools, text = OUTPUTS[case]
    parser = Parser(reasoning, tools)
    pieces = _pieces(text, SPLITS[split])
    deltas = _deltas(parser, pieces, atomic=False)
    fold = Fold(parser.stream(tools=TOOLS, id_factory=_ids))
    got = [fold.feed(p) for p in pieces] + [fold.finish()]
    for delta, piece in zip(deltas, got, strict=True):
        if delta is None or not (delta.reasoning or delta.content or delta.tool_calls):
            assert piece is None
            continue
        assert piece is not None
        assert (piece.reasoning, piece.content) == (delta.reasoning or "", delta.content or "")
        assert piece.calls == [(c.index, c.id, c.name, c.arguments) for c in delta.tool_calls]
    assert fold.completed == {i for d in deltas if d is not None for i in d.ended}
    assert fold.aborted == {i for d in deltas if d is not None for i in d.aborted}
    for i in fold.completed:  # the engines' back-fill finds every argument sent
        assert fold.prev_tool_call_arr[i]["arguments"] == fold.streamed_args[i] == "".join(fold.arguments[i])


# ---------------------------------------------------------------------------- Responses


async def _source(pieces: list[CompletionPiece]) -> AsyncIterator[CompletionPiece]:
    for piece in pieces:
        yield piece


def _answer(parser: Parser) -> Answer:
    return Answer(parser, model="m", n=1, options={"tools": TOOLS, "tool_call_id": "kimi"})


def _no_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the Responses stream read chat chunks")

    monkeypatch.setattr(ChatStream, "feed", refuse)
    monkeypatch.setattr(ChatStream, "finish", refuse)


def test_responses_events_are_built_from_deltas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streamed and not, the Responses answer comes from the choice's deltas (no chunk dict is
    made): text, the logprobs that rode with it, and the calls with the ids chat would send."""
    _no_chunks(monkeypatch)
    reasoning, tools, text = OUTPUTS["hermes"]
    parser = Parser(reasoning, tools)
    cut = _pieces(text, 7)
    logprob = {"token": "x", "logprob": -0.5, "bytes": [120], "top_logprobs": []}
    pieces = [CompletionPiece(0, p, logprobs=(logprob,)) for p in cut]
    pieces.append(CompletionPiece(0, "", finish_reason="stop", prompt_tokens=3))
    message = parser.parse(text, tools=TOOLS)

    async def streamed() -> list[dict[str, Any]]:
        out = []
        async for line in sse_events(ResponseFold(_answer(parser), {}), _source(pieces)):
            out.append(json.loads(line.decode().split("data: ", 1)[1]))
        return out

    events = asyncio.run(streamed())
    assert events[-1]["type"] == "response.completed"
    response = events[-1]["response"]
    whole_response = asyncio.run(whole(ResponseFold(_answer(parser), {}), _source(pieces)))
    for r in (response, whole_response):
        kinds = [item["type"] for item in r["output"]]
        assert kinds == ["reasoning", "message", "function_call", "function_call"]
        assert r["output"][0]["content"][0]["text"] == message.reasoning
        assert r["output"][1]["content"][0]["text"] == message.content
        calls = r["output"][2:]
        assert [(c["name"], c["arguments"]) for c in calls] == [(c.name, c.arguments) for c in message.tool_calls]
        assert [c["call_id"] for c in calls] == ["functions.get_weather:0", "functions.get_weather:1"]
        assert r["usage"]["input_tokens"] == 3
    text_deltas = [e for e in events if e["type"] == "response.output_text.delta"]
    assert "".join(e["delta"] for e in text_deltas) == message.content
    assert all(e["logprobs"] for e in text_deltas)  # each content delta carries the logprobs that came with it
