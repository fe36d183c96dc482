"""The upstream wire formats, against what the engines really send.

* llama.cpp: streams recorded from llama-server (``tests/serve/data/llamacpp_completion.json``)
  decode to the text, ids and finish the recording holds; the replay encoder produces the same
  shape.
* vLLM / OpenAI completions: legacy logprobs become chat logprobs as vLLM's chat layer builds
  them; finishes wait for the usage chunk.
* SGLang: cumulative and incremental streaming decode to the same pieces.
* Sampling fields: each kind's name from the one table, and every field in the table maps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trisect.serve.upstream.base import CompletionRequest, Constraint, UpstreamError
from trisect.serve.upstream.llamacpp import LlamacppWire
from trisect.serve.upstream.sampling import KINDS, SAMPLING, wire_sampling
from trisect.serve.upstream.sglang import SglangWire
from trisect.serve.upstream.vllm import CompletionsWire, VllmWire
from trisect.serve.upstream.wire import ReplayChoice, ReplayPiece

RECORDED = json.loads((Path(__file__).parent / "serve" / "data" / "llamacpp_completion.json").read_text("utf-8"))


def _decode(wire: Any, request: CompletionRequest, events: list[dict[str, Any]]) -> list[Any]:
    decoder = wire.decoder(request)
    out = []
    for event in events:
        out += decoder.decode(event)
    return out + decoder.close()


@pytest.mark.parametrize("name", sorted(RECORDED["streams"]))
def test_llamacpp_recorded_streams_decode(name: str) -> None:
    recorded = RECORDED["streams"][name]
    chunks = recorded["chunks"]
    request = CompletionRequest("p", logprobs=recorded["request"].get("n_probs"))
    pieces = _decode(LlamacppWire(), request, chunks)
    *body, end = pieces
    assert "".join(p.text for p in body) == "".join(c["content"] for c in chunks)
    assert [i for p in body for i in p.token_ids or ()] == [i for c in chunks for i in c["tokens"]]
    final = chunks[-1]
    assert end.completion_tokens == final["tokens_predicted"] and end.prompt_tokens == final["tokens_evaluated"]
    expected = {
        "limit": ("length", None),
        "stop_word": ("stop", " Mar"),
        "n_probs": ("length", None),
        "eos": ("stop", None),
    }[name]
    assert (end.finish_reason, end.stop_reason) == expected
    if name == "n_probs":
        entry = body[0].logprobs[0]
        raw = chunks[0]["completion_probabilities"][0]
        assert entry == {
            "token": raw["token"],
            "logprob": raw["logprob"],
            "bytes": raw["bytes"],
            "top_logprobs": [{k: t[k] for k in ("token", "logprob", "bytes")} for t in raw["top_logprobs"]][:2],
        }
    if name == "stop_word":  # the stop word's token arrives with its id and no text
        assert body[-1].text == "" and body[-1].token_ids == (2828,)
    if name == "eos":
        assert body[-1].text == "" and body[-1].token_ids == (2,)


def test_llamacpp_replay_encodes_the_recorded_shape() -> None:
    recorded = RECORDED["streams"]["stop_word"]["chunks"]
    pieces = tuple(ReplayPiece(c["content"], tuple(c["tokens"])) for c in recorded[:-1])
    encoded = list(LlamacppWire().encode({}, [ReplayChoice(pieces, "stop", " Mar")], prompt_tokens=37))
    for got, want in zip(encoded, recorded, strict=True):
        assert set(got) == set(want), (got, want)
        for key in ("content", "tokens", "stop", "stop_type", "stopping_word", "tokens_predicted"):
            assert got.get(key) == want.get(key)


def test_llamacpp_body() -> None:
    request = CompletionRequest(
        "p",
        max_tokens=5,
        stop=("x",),
        seed=1,
        logprobs=0,
        keep_tokens=("<tool_call>",),
        sampling={"top_k": 3, "repetition_penalty": 1.1},
        constraint=Constraint("gbnf", 'root ::= "<tool_call>" x', ("<tool_call>",)),
    )
    body = LlamacppWire().body(request, model=None)
    assert body["n_predict"] == 5 and body["n_probs"] == 1 and body["stream"] and body["return_tokens"]
    assert body["preserved_tokens"] == ["<tool_call>"] and body["repeat_penalty"] == 1.1
    assert body["grammar_lazy"] is True and body["grammar_triggers"] == [{"type": 1, "value": "<tool_call>"}]
    assert LlamacppWire().body(CompletionRequest("p"), model=None)["n_predict"] == -1
    with pytest.raises(UpstreamError):
        LlamacppWire().body(CompletionRequest("p", constraint=Constraint("structural_tag", {})), model=None)


def test_vllm_logprobs_and_held_finishes() -> None:
    request = CompletionRequest("p", n=2, logprobs=1)
    events = [
        {
            "choices": [
                {
                    "index": 0,
                    "text": "Hi",
                    "token_ids": [5],
                    "prompt_token_ids": [1, 2, 3],
                    "logprobs": {
                        "tokens": ["Hi"],
                        "token_logprobs": [-0.5],
                        "top_logprobs": [{"Hi": -0.5, "Yo": -2}],
                        "text_offset": [0],
                    },
                    "finish_reason": None,
                }
            ]
        },
        {"choices": [{"index": 1, "text": "Yo", "token_ids": [6], "finish_reason": "length", "stop_reason": None}]},
        {"choices": [{"index": 0, "text": "", "token_ids": [7], "finish_reason": "stop", "stop_reason": "END"}]},
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 3}},
    ]
    pieces = _decode(VllmWire(), request, events)
    assert [(p.index, p.text, p.token_ids) for p in pieces[:3]] == [(0, "Hi", (5,)), (1, "Yo", (6,)), (0, "", (7,))]
    assert pieces[0].logprobs == (
        {
            "token": "Hi",
            "logprob": -0.5,
            "bytes": [72, 105],
            "top_logprobs": [{"token": "Hi", "logprob": -0.5, "bytes": [72, 105]}],
        },
    )
    ends = pieces[3:]
    assert [(p.index, p.finish_reason, p.stop_reason, p.completion_tokens) for p in ends] == [
        (0, "stop", "END", 2),
        (1, "length", None, 1),
    ]
    assert ends[0].prompt_tokens == 3
    with pytest.raises(UpstreamError):
        _decode(VllmWire(), CompletionRequest("p"), events[:1])  # ended before the choice finished


def test_vllm_and_openai_bodies() -> None:
    request = CompletionRequest("p", sampling={"top_k": 2}, constraint=Constraint("json_schema", {"type": "object"}))
    body = VllmWire().body(request, model="m")
    assert body["structured_outputs"] == {"json": {"type": "object"}} and body["top_k"] == 2
    assert body["max_tokens"] is None and body["model"] == "m"
    assert body["skip_special_tokens"] is False and body["add_special_tokens"] is False and body["return_token_ids"]
    tag = VllmWire().body(CompletionRequest("p", constraint=Constraint("structural_tag", {"a": 1})), model=None)
    assert json.loads(tag["structured_outputs"]["structural_tag"]) == {"a": 1}
    plain = CompletionsWire().body(CompletionRequest("p", n=2, logprobs=3), model=None)
    assert plain["n"] == 2 and plain["logprobs"] == 3 and "return_token_ids" not in plain
    with pytest.raises(UpstreamError):  # no grammar on a plain completions server
        CompletionsWire().body(CompletionRequest("p", constraint=Constraint("json_schema", {})), model=None)


def test_sglang_cumulative_and_incremental_are_the_same() -> None:
    steps = [("Hel", [1]), ("lo", [2]), ("", [3]), (" you", [4, 5])]
    cumulative, incremental, text, ids = [], [], "", []
    for n, (t, i) in enumerate(steps, 1):
        text += t
        ids += i
        meta = {
            "completion_tokens": len(ids),
            "prompt_tokens": 4,
            "finish_reason": {"type": "stop", "matched": "</think>"} if n == len(steps) else None,
        }
        cumulative.append({"text": text, "output_ids": list(ids), "meta_info": meta})
        incremental.append({"text": t, "output_ids": i, "meta_info": meta})
    a = _decode(SglangWire(), CompletionRequest("p"), cumulative)
    b = _decode(SglangWire(), CompletionRequest("p"), incremental)
    assert a == b
    assert "".join(p.text for p in a) == "Hello you" and [i for p in a for i in p.token_ids or ()] == [1, 2, 3, 4, 5]
    assert (a[-1].finish_reason, a[-1].stop_reason, a[-1].completion_tokens) == ("stop", "</think>", 5)
    with pytest.raises(UpstreamError):
        _decode(
            SglangWire(),
            CompletionRequest("p"),
            [{"text": "", "output_ids": [], "meta_info": {"finish_reason": {"type": "abort", "message": "x"}}}],
        )


def test_sampling_table() -> None:
    for name, kinds in SAMPLING.items():
        assert set(kinds) <= set(KINDS), name
        for kind in kinds:
            assert wire_sampling(kind, {name: 1}) == {kinds[kind]: 1}
    with pytest.raises(KeyError):
        wire_sampling("openai", {"top_k": 1})
