"""The embedded upstream's own logic, over a scripted stand-in for ``xllamacpp.Server``
(portable: no model, no xllamacpp). The chunk shapes are the ones llama.cpp's
``/v1/completions`` handler streams through xllamacpp (the ``[serve]`` extra's pinned version): one
token per chunk with its id in ``logprobs.content``, the end-of-generation token as a chunk with
empty text, then a chunk with the finish reason and usage. The same code runs against the real
model in ``tests/test_embedded_model.py``, which fails if the real server streams otherwise.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from support.work import HANG
from trisect.serve.upstream.base import CompletionPiece, CompletionRequest, Constraint, UpstreamError
from trisect.serve.upstream.embedded import EmbeddedUpstream, default_threads, request_body

EOS = 2


def token(text: str, tid: int) -> dict[str, Any]:
    entry = {
        "id": tid,
        "token": text,
        "bytes": list(text.encode()),
        "logprob": -0.5,
        "top_logprobs": [
            {"id": tid, "token": text, "bytes": list(text.encode()), "logprob": -0.5},
            {"id": 9, "token": "z", "bytes": [122], "logprob": -3.0},
        ],
    }
    return {"choices": [{"text": text, "index": 0, "logprobs": {"content": [entry]}, "finish_reason": None}]}


def finish(reason: str = "stop", completion: int = 0) -> dict[str, Any]:
    return {
        "choices": [{"text": "", "index": 0, "logprobs": None, "finish_reason": reason}],
        "usage": {"prompt_tokens": 7, "completion_tokens": completion, "total_tokens": 7 + completion},
    }


PROGRESS = {"choices": [], "prompt_progress": {"total": 7, "cache": 0, "processed": 7, "time_ms": 1.0}}


def words(*pieces: str, end: str = "stop") -> list[dict[str, Any]]:
    chunks = [PROGRESS] + [token(p, 100 + k) for k, p in enumerate(pieces)]
    if end == "stop":
        chunks.append(token("", EOS))
    return [*chunks, finish(end, len(pieces) + (end == "stop"))]


def until_stopped(*pieces: str) -> Iterator[dict[str, Any]]:
    """The pieces, then more text for as long as nobody stops the generation (as llama.cpp goes
    on until it is cancelled), so a test sees the cancel however late it arrives (``HANG``)."""
    yield from words(*pieces)[:-2]
    for _ in range(int(HANG / 0.001)):
        yield token(" more", 99)


class FakeServer:
    """``handle_completions(body, callback)`` streaming a script chosen by ``script(body)``."""

    listening_address = "http://127.0.0.1:9"

    def __init__(self, script: Callable[[dict[str, Any]], Iterable[Any]], delay: float = 0.0) -> None:
        self.script = script
        self.delay = delay
        self.bodies: list[dict[str, Any]] = []
        self.cancelled = 0
        self.finished = threading.Event()

    def handle_completions(self, body: dict[str, Any], callback: Callable[[Any], Any]) -> None:
        self.bodies.append(body)
        try:
            for chunk in self.script(body):
                if isinstance(chunk, BaseException):
                    raise chunk
                if self.delay:
                    time.sleep(self.delay)
                if callback(chunk):
                    self.cancelled += 1
                    return
        finally:
            self.finished.set()


def upstream(
    script: Callable[[dict[str, Any]], Iterable[Any]], delay: float = 0.0
) -> tuple[EmbeddedUpstream, FakeServer]:
    server = FakeServer(script, delay)
    return EmbeddedUpstream.from_server(server, model_name="fake", single_token=lambda t: False), server


def run(up: EmbeddedUpstream, request: CompletionRequest) -> list[CompletionPiece]:
    async def go() -> list[CompletionPiece]:
        out = [p async for p in up.complete(request)]
        await up.aclose()
        return out

    return asyncio.run(go())


def text_of(pieces: list[CompletionPiece], index: int = 0) -> str:
    return "".join(p.text for p in pieces if p.index == index)


def ids_of(pieces: list[CompletionPiece], index: int = 0) -> list[int]:
    return [i for p in pieces if p.index == index for i in (p.token_ids or ())]


# ---------------------------------------------------------------------------- the stream


def test_pieces_carry_text_and_ids_without_the_end_of_generation_token() -> None:
    up, _ = upstream(lambda body: words("Hello", ",", " world"))
    pieces = run(up, CompletionRequest(prompt="p"))
    assert text_of(pieces) == "Hello, world"
    assert ids_of(pieces) == [100, 101, 102]  # the EOS id (text "") is not part of the output
    last = pieces[-1]
    assert last.finish_reason == "stop" and last.prompt_tokens == 7 and last.text == ""
    assert last.stop_reason is None and last.completion_tokens == 4  # llama.cpp counts the EOS token
    assert all(p.finish_reason is None for p in pieces[:-1]) and all(p.logprobs is None for p in pieces)


def test_length_keeps_the_last_token() -> None:
    up, _ = upstream(lambda body: words("a", "b", end="length"))
    pieces = run(up, CompletionRequest(prompt="p", max_tokens=2))
    assert ids_of(pieces) == [100, 101] and pieces[-1].finish_reason == "length"


def test_logprobs_in_the_chat_shape() -> None:
    up, server = upstream(lambda body: words("a", "b"))
    pieces = run(up, CompletionRequest(prompt="p", logprobs=1))
    entries = [e for p in pieces for e in (p.logprobs or ())]
    assert [e["token"] for e in entries] == ["a", "b"]
    assert set(entries[0]) == {"token", "logprob", "bytes", "top_logprobs"}
    assert [t["token"] for t in entries[0]["top_logprobs"]] == ["a"]  # k = 1 alternatives
    assert server.bodies[0]["n_probs"] == 1


def test_request_mapping() -> None:
    request = CompletionRequest(
        prompt="<|im_start|>user\nhi",
        max_tokens=5,
        seed=3,
        temperature=0.5,
        top_p=0.9,
        sampling={"top_k": 20, "repetition_penalty": 1.1, "min_p": 0.05},
        stop=("\n\n",),
        keep_tokens=("<think>",),
    )
    body = request_body(request, lambda t: False)
    assert body["prompt"] == "<|im_start|>user\nhi" and body["stream"] is True and body["n_probs"] == 1
    assert (body["n_predict"], body["seed"], body["temperature"], body["top_p"]) == (5, 3, 0.5, 0.9)
    assert (body["top_k"], body["repeat_penalty"], body["min_p"]) == (20, 1.1, 0.05)
    assert body["preserved_tokens"] == ["<think>"] and body["return_progress"] is True
    assert "stop" not in body  # matched here, not by llama.cpp (see test_stop_strings)
    assert request_body(CompletionRequest(prompt="p"), lambda t: False)["n_predict"] == -1
    with pytest.raises(UpstreamError, match="'best_of'") as err:
        request_body(CompletionRequest(prompt="p", sampling={"best_of": 2}), lambda t: False)
    assert err.value.status == 400
    with pytest.raises(UpstreamError):
        request_body(CompletionRequest(prompt="p", max_tokens=0), lambda t: False)


def test_constraints_map_to_llama_cpp_fields() -> None:
    def body(constraint: Constraint, single: Callable[[str], bool] = lambda t: False) -> dict[str, Any]:
        return request_body(CompletionRequest(prompt="p", constraint=constraint), single)

    lazy = body(Constraint("gbnf", 'root ::= "<tool_call>"', ("<tool_call>",)))
    assert lazy["grammar_lazy"] is True and lazy["grammar_triggers"] == [{"type": 1, "value": "<tool_call>"}]
    assert "preserved_tokens" not in lazy
    special = body(Constraint("gbnf", 'root ::= "<|tc|>"', ("<|tc|>",)), lambda t: t == "<|tc|>")
    assert special["preserved_tokens"] == ["<|tc|>"]  # llama.cpp turns a one-token WORD into a TOKEN trigger
    assert body(Constraint("gbnf", "root ::= x"))["grammar"] == "root ::= x"
    assert "grammar_lazy" not in body(Constraint("gbnf", "root ::= x"))
    assert body(Constraint("lark", "start: /a+/"))["grammar"] == "%llguidance {}\nstart: /a+/"
    headed = "%llguidance {}\n\nstart: /a+/\n"  # what trisect.grammar.lark writes
    assert body(Constraint("lark", headed))["grammar"] == headed
    assert body(Constraint("json_schema", {"type": "object"}))["json_schema"] == {"type": "object"}
    for bad in (Constraint("structural_tag", {"type": "structural_tag"}), Constraint("lark", "x", ("t",))):
        with pytest.raises(UpstreamError) as err:
            body(bad)
        assert err.value.status == 400


def test_stop_strings_are_matched_across_pieces_and_end_the_choice() -> None:
    up, server = upstream(lambda body: until_stopped("Hel", "lo", " EN", "D more", " never"), delay=0.001)
    pieces = run(up, CompletionRequest(prompt="p", stop=("END",)))
    assert text_of(pieces) == "Hello " and pieces[-1].finish_reason == "stop"
    assert pieces[-1].stop_reason == "END" and pieces[-1].completion_tokens is not None
    assert server.cancelled == 1  # the generation was stopped there
    # held text that turns out not to be a stop string is passed on, in order
    up, _ = upstream(lambda body: words("a E", "N", "x", "E"))
    pieces = run(up, CompletionRequest(prompt="p", stop=("ENDING",)))
    assert text_of(pieces) == "a ENxE" and ids_of(pieces) == [100, 101, 102, 103]


def test_n_choices_run_concurrently_with_distinct_seeds() -> None:
    up, server = upstream(lambda body: words(f"seed {body['seed']}"))
    pieces = run(up, CompletionRequest(prompt="p", n=3, seed=10))
    assert sorted(server.bodies[k]["seed"] for k in range(3)) == [10, 11, 12]
    texts = {text_of(pieces, i) for i in range(3)}
    assert texts == {"seed 10", "seed 11", "seed 12"}
    assert [p.index for p in pieces if p.finish_reason] and len([p for p in pieces if p.finish_reason]) == 3


def test_closing_the_iterator_cancels_the_generation() -> None:
    up, server = upstream(lambda body: until_stopped("x"), delay=0.001)

    async def go() -> None:
        stream = up.complete(CompletionRequest(prompt="p"))
        async for piece in stream:
            if piece.text:
                break
        await stream.aclose()  # what the server does when its client disconnects
        assert await asyncio.to_thread(server.finished.wait, HANG)
        await up.aclose()

    asyncio.run(go())
    assert server.cancelled == 1


def test_engine_errors_are_upstream_errors() -> None:
    error = {"error": {"code": 400, "message": "the request exceeds the available context size", "type": "x"}}
    up, _ = upstream(lambda body: [PROGRESS, error])
    with pytest.raises(UpstreamError, match="context size") as err:
        run(up, CompletionRequest(prompt="p"))
    assert err.value.status == 400
    up, _ = upstream(lambda body: [token("a", 1), RuntimeError("boom")])
    with pytest.raises(UpstreamError, match="boom") as err:
        run(up, CompletionRequest(prompt="p"))
    assert err.value.status == 502
    up, _ = upstream(lambda body: [ValueError("bad json")])
    with pytest.raises(UpstreamError) as err:
        run(up, CompletionRequest(prompt="p"))
    assert err.value.status == 400


def test_a_callback_that_cannot_reach_the_loop_stops_the_generation() -> None:
    """xllamacpp swallows exceptions raised in the stream callback; the callback catches its
    own (here: the event loop is gone) and tells llama.cpp to stop."""
    up, server = upstream(lambda body: until_stopped("x"), delay=0.001)
    loop = asyncio.new_event_loop()
    stream = up.complete(CompletionRequest(prompt="p"))
    first = loop.run_until_complete(stream.__anext__())
    assert first.text == "x"
    loop.close()
    assert server.finished.wait(HANG) and server.cancelled == 1
    up._executor.shutdown()


def test_a_trigger_token_llama_cpp_rejects_continues_under_the_grammar() -> None:
    """The token that completes a lazy grammar's trigger is sampled before the grammar applies;
    when it carries text the grammar forbids (``>,`` after ``<tool_call``) llama.cpp fails the
    request. The upstream continues instead: the prompt plus the text passed on (the held
    trigger prefix dropped), the grammar from its first token."""
    grammar_error = {
        "error": {"code": 500, "message": "got exception: Unexpected empty grammar stack after accepting piece: >,"}
    }

    def script(body: dict[str, Any]) -> list[Any]:
        if body.get("grammar_lazy"):
            return [token("Use", 1), token(" <", 2), token("tool", 3), token("_", 4), token("call", 5), grammar_error]
        return [token("<tool_call>", 6), token("\n{}", 7), token("", EOS), finish()]

    up, server = upstream(script)
    constraint = Constraint("gbnf", 'root ::= "<tool_call>" [^x]*', ("<tool_call>",))
    pieces = run(up, CompletionRequest(prompt="P:", max_tokens=50, constraint=constraint))
    assert text_of(pieces) == "Use <tool_call>\n{}" and pieces[-1].finish_reason == "stop"
    assert len(server.bodies) == 2
    again = server.bodies[1]
    assert again["prompt"] == "P:Use " and "grammar_lazy" not in again and "grammar_triggers" not in again
    assert again["grammar"] == constraint.value and again["n_predict"] == 45
    assert ids_of(pieces) == [1, 6, 7]  # " <" was cut: its id went with the dropped "<"


def test_default_threads_follow_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.3, 0.0, 0.0))
    assert default_threads() == 7
    monkeypatch.setattr(os, "getloadavg", lambda: (7.9, 0.0, 0.0))
    assert default_threads() == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (30.0, 0.0, 0.0))
    assert default_threads() == 1

    def no_load() -> tuple[float, float, float]:
        raise OSError

    monkeypatch.setattr(os, "getloadavg", no_load)
    assert default_threads() == 4
