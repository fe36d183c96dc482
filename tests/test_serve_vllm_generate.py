"""``trisect serve --upstream-kind vllm-generate``: render here, vLLM's token-in, token-out
``/inference/v1/generate`` there, parse here (the ids straight from the engine, decoded by
the parser). A replay engine speaks the generate wire (``VllmGenerateWire.encode``)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from support import tokenizers
from support.serving import AppServer, served_model
from trisect.openai import chat_completion
from trisect.serve.plan import chat_plan
from trisect.serve.replay import ReplayChoice, ReplayPiece, ReplayServer
from trisect.serve.service import Service
from trisect.serve.upstream.http import HTTPUpstream

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
OUTPUT = (
    '<think>\nThe user wants the weather. 日本語\n</think>\n\nChecking.\n<tool_call>\n{"name": "get_weather", '
    '"arguments": {"city": "Paris"}}\n</tool_call>'
)
EOS = 151645


def _ids() -> list[int]:
    return tokenizers.encode("qwen3", OUTPUT) + [EOS]


def _responder(body: dict[str, Any]) -> list[ReplayChoice]:
    return [ReplayChoice(tuple(ReplayPiece("", (t,)) for t in _ids()))]


def test_the_engine_gets_the_rendered_prompt_as_ids_and_the_answer_is_parsed_from_ids() -> None:
    served = served_model("qwen3", "hermes", tokenizers.load("qwen3"))
    with ReplayServer("vllm-generate", _responder) as replay:
        upstream = HTTPUpstream(replay.url, "vllm-generate", vocab=served.parser.vocab)
        service = Service(served, upstream)
        assert service.kind == "vllm"  # the server decides everything as for a vLLM engine
        with AppServer(service) as app:
            body = {"model": "test-model", "messages": [{"role": "user", "content": "Weather?"}], "tools": TOOLS}
            whole = httpx.post(app.url + "/v1/chat/completions", json=body, timeout=30)
            assert whole.status_code == 200, whole.text
            sent = replay.requests[-1]
            prompt = service.render(chat_plan(body, kind="vllm"))
            assert sent["token_ids"] == tokenizers.encode("qwen3", prompt)
            assert sent["sampling_params"]["detokenize"] is False and sent["stream"] is True
            want = chat_completion(served.parser, None, token_ids=_ids(), tools=TOOLS, prompt_text=prompt)
            got = whole.json()["choices"][0]["message"]
            assert (got["reasoning"], got["content"]) == (
                want["choices"][0]["message"]["reasoning"],
                want["choices"][0]["message"]["content"],
            )
            assert [json.loads(c["function"]["arguments"]) for c in got["tool_calls"]] == [{"city": "Paris"}]
            assert whole.json()["choices"][0]["finish_reason"] == "tool_calls"
            assert whole.json()["usage"]["completion_tokens"] == len(_ids())

            streamed = httpx.post(app.url + "/v1/chat/completions", json={**body, "stream": True}, timeout=30)
            reasoning, content, args = "", "", ""
            for line in streamed.text.splitlines():
                if not line.startswith("data: {"):
                    continue
                for choice in json.loads(line[6:])["choices"]:
                    delta = choice["delta"]
                    reasoning += delta.get("reasoning") or ""
                    content += delta.get("content") or ""
                    args += "".join(tc["function"].get("arguments") or "" for tc in delta.get("tool_calls") or ())
            assert (reasoning, content, json.loads(args)) == (got["reasoning"], got["content"], {"city": "Paris"})


def test_a_required_tool_choice_sends_vllms_structured_outputs() -> None:
    served = served_model("qwen3", "hermes", tokenizers.load("qwen3"))
    with ReplayServer("vllm-generate", _responder) as replay:
        upstream = HTTPUpstream(replay.url, "vllm-generate", vocab=served.parser.vocab)
        with AppServer(Service(served, upstream)) as app:
            body = {
                "model": "test-model",
                "messages": [{"role": "user", "content": "Weather?"}],
                "tools": TOOLS,
                "tool_choice": "required",
                "max_tokens": 99,
            }
            httpx.post(app.url + "/v1/chat/completions", json=body, timeout=30)
            params = replay.requests[-1]["sampling_params"]
            assert params["max_tokens"] == 99 and "structured_outputs" in params


def test_the_generate_kind_needs_the_tokenizer() -> None:
    from trisect.serve.upstream.base import CompletionRequest, UpstreamError
    from trisect.serve.upstream.vllm_generate import VllmGenerateWire

    with pytest.raises(UpstreamError):
        VllmGenerateWire().body(CompletionRequest(prompt="hi"), model=None)


def test_raw_completions_get_the_text_the_ids_decode_to() -> None:
    served = served_model("qwen3", "hermes", tokenizers.load("qwen3"))
    with ReplayServer("vllm-generate", _responder) as replay:
        upstream = HTTPUpstream(replay.url, "vllm-generate", vocab=served.parser.vocab)
        with AppServer(Service(served, upstream)) as app:
            body = {"model": "test-model", "prompt": "Say it.", "max_tokens": 200}
            answer = httpx.post(app.url + "/v1/completions", json=body, timeout=30)
            assert answer.status_code == 200, answer.text
            assert answer.json()["choices"][0]["text"] == OUTPUT  # <|im_end|>, a control token, left out
            assert replay.requests[-1]["token_ids"] == tokenizers.encode("qwen3", "Say it.")
