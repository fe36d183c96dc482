"""Scale-out against vLLM 0.33 itself: its protocol models read trisect's answers, and inside
vLLM the plugin's streaming derender carries trisect's state instead of replaying.

* ``trisect serve --scale-out``'s answers (render, derender whole and per chunk, completions,
  errors) validate with vLLM's own pydantic models (``token_in_token_out/protocol.py``,
  ``chat_completion/protocol.py``, ``completion/protocol.py``, ``ErrorResponse``), and requests
  that vLLM's models write are read by trisect's endpoints; a stream's chunks, folded, give the
  message vLLM's own derender gives for the same ids with vLLM's own parsers.
* ``OnlineDerenderer.derender_chat_stream`` with ``trisect_*`` parsers (vLLM's code, the
  plugin's patch): each chunk resumes from ``stream_state`` alone, ``output_token_ids`` stays
  empty, the result is vLLM's replay's (``TRISECT_VLLM_DERENDER=0``) and the coupled
  ``parse()``'s; the state round-trips through ``DerenderChatStreamRequest``'s JSON; a tampered
  state is a 400 from ``ServingDerender``.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any
from unittest.mock import AsyncMock, MagicMock

import vllm_serving as vs
from vllm.plugins import load_general_plugins

from support import tokenizers
from trisect import Parser

load_general_plugins()


def _v() -> Any:
    """vLLM's protocol models (imported inside a test: importing them pulls torch, whose
    warnings only the tests' own filters silence)."""
    from types import SimpleNamespace

    from vllm.entrypoints.openai.chat_completion import protocol as chat
    from vllm.entrypoints.openai.completion import protocol as completion
    from vllm.entrypoints.scale_out.token_in_token_out import protocol as tito
    from vllm.entrypoints.serve.engine.protocol import ErrorResponse

    return SimpleNamespace(
        ChatCompletionRequest=chat.ChatCompletionRequest,
        ChatCompletionResponse=chat.ChatCompletionResponse,
        ChatCompletionStreamResponse=chat.ChatCompletionStreamResponse,
        CompletionResponse=completion.CompletionResponse,
        CompletionStreamResponse=completion.CompletionStreamResponse,
        DerenderChatStreamRequest=tito.DerenderChatStreamRequest,
        DerenderStreamState=tito.DerenderStreamState,
        GenerateRequest=tito.GenerateRequest,
        GenerateTokensStreamChoice=tito.GenerateTokensStreamChoice,
        GenerateTokensStreamResponse=tito.GenerateTokensStreamResponse,
        GenerateTokensChoice=tito.GenerateTokensChoice,
        GenerateTokensResponse=tito.GenerateTokensResponse,
        ErrorResponse=ErrorResponse,
    )


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
OUTPUT = (
    "<think>\nThe user wants the weather in Paris. 天気 😀\n</think>\n\nLet me check.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)
PROMPT = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"


def _tok() -> Any:
    return vs.tokenizer("qwen3")


def _ids(text: str) -> list[int]:
    return list(_tok().encode(text, add_special_tokens=False))


# ---------------------------------------------------------------------------------------- trisect's tier


def _client() -> Any:
    from starlette.testclient import TestClient

    from support.serving import served_model
    from trisect.serve.scale_out import RenderOnly
    from trisect.serve.scale_out.app import create_scale_out_app
    from trisect.serve.scale_out.derender import Derenderer
    from trisect.serve.scale_out.render import Renderer
    from trisect.serve.service import Service

    served = served_model("qwen3", "hermes", tokenizers.load("qwen3"))
    derender = Derenderer(served.parser, b"k" * 32, model_names=served.names, eos_id=151645)
    return TestClient(create_scale_out_app(derender, Renderer(Service(served, RenderOnly()))))


def test_trisect_render_is_a_generate_request_vllm_reads() -> None:
    client = _client()
    body = {"model": "test-model", "messages": [{"role": "user", "content": "Weather?"}], "tools": TOOLS}
    for extra in ({}, {"tool_choice": "required", "max_tokens": 64, "temperature": 0.5, "stream": True}):
        answer = client.post("/v1/chat/completions/render", json={**body, **extra})
        assert answer.status_code == 200, answer.text
        request = _v().GenerateRequest.model_validate(answer.json())
        assert request.token_ids == answer.json()["token_ids"]
        if extra:
            assert request.sampling_params.max_tokens == 64 and request.sampling_params.temperature == 0.5
            assert request.sampling_params.structured_outputs is not None


def _chunk_request(ids: list[int], state: Any, finish: str | None, **kw: Any) -> dict[str, Any]:
    """A streaming derender request written by vLLM's own models."""
    chunk = _v().GenerateTokensStreamResponse(
        request_id="r", choices=[_v().GenerateTokensStreamChoice(index=0, token_ids=ids, finish_reason=finish)]
    )
    chat = _v().ChatCompletionRequest(model="test-model", messages=[{"role": "user", "content": "hi"}], tools=TOOLS)
    request = _v().DerenderChatStreamRequest(
        stream=True, generate_chunk=chunk, chat_request=chat, prompt_token_ids=kw.get("prompt")
    )
    body: dict[str, Any] = request.model_dump(mode="json")
    body["stream_state"] = state  # trisect's state, passed back exactly as it came
    return body


def test_trisect_derender_answers_are_vllms_shapes_and_vllms_message() -> None:
    client = _client()
    ids = _ids(OUTPUT)
    prompt = _ids(PROMPT)
    state = None
    folded = {"reasoning": "", "content": "", "args": ""}
    for k, t in enumerate(ids):
        last = k == len(ids) - 1
        answer = client.post(
            "/v1/chat/completions/derender",
            json=_chunk_request([t], state, "stop" if last else None, prompt=prompt if k == 0 else None),
        )
        assert answer.status_code == 200, answer.text
        data = answer.json()
        chunk = _v().ChatCompletionStreamResponse.model_validate(data["chunk"])
        assert chunk.model_dump(mode="json").keys() == data["chunk"].keys()
        _v().DerenderStreamState.model_validate(data["stream_state"])
        state = data["stream_state"]
        delta = chunk.choices[0].delta
        folded["reasoning"] += delta.reasoning or ""
        folded["content"] += delta.content or ""
        folded["args"] += "".join(tc.function.arguments or "" for tc in delta.tool_calls)
    vllm_message = _vllm_whole(ids, prompt, reasoning="qwen3", tools="hermes")
    # vLLM's qwen3 parser keeps the newlines the template puts around the markers; trisect strips
    # them (its documented whitespace rule): the text between them is the same
    assert folded["reasoning"] == vllm_message.reasoning.strip()
    assert folded["content"] == vllm_message.content.strip()
    assert json.loads(folded["args"]) == json.loads(vllm_message.tool_calls[0].function.arguments)
    whole = client.post(
        "/v1/chat/completions/derender",
        json={
            "generate_response": {"request_id": "r", "choices": [{"index": 0, "token_ids": ids}]},
            "chat_request": {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS},
            "prompt_token_ids": prompt,
        },
    )
    response = _v().ChatCompletionResponse.model_validate(whole.json())
    assert response.model_dump(mode="json").keys() == whole.json().keys()
    error = client.post("/v1/chat/completions/derender", json=_chunk_request([1], {"trisect_state": "x"}, None))
    assert error.status_code == 400
    assert _v().ErrorResponse.model_validate(error.json()).error.code == 400


def test_trisect_completions_derender_is_vllms_shape() -> None:
    client = _client()
    ids = _ids("Plain completion text 日本語")
    responses = [{"request_id": "c", "choices": [{"index": 0, "token_ids": ids}]}]
    whole = client.post("/v1/completions/derender", json={"generate_responses": responses})
    _v().CompletionResponse.model_validate(whole.json())
    chunk = client.post(
        "/v1/completions/derender",
        json={"stream": True, "generate_chunk": {"request_id": "c", "choices": [{"index": 0, "token_ids": ids[:3]}]}},
    )
    _v().CompletionStreamResponse.model_validate(chunk.json()["chunk"])


# ---------------------------------------------------------------------------------------- vLLM's own derender


QWEN3_EOS = 151645  # <|im_end|>, Qwen3's EOS: a stop token whose text the engine does not send (docs/rules.md)


def _derenderer(reasoning: str, tools: str) -> Any:
    """vLLM's derender for a Qwen3 model: its renderer reports the model's EOS, so the stop
    token that ends a stream is left out of the text (``_drop_stop_token``) and reaches the
    parser as an id only, as in vLLM's serving."""
    return vs.derenderer(_tok(), reasoning, tools, eos_token_id=QWEN3_EOS)


def _chat() -> Any:
    return _v().ChatCompletionRequest(model=vs.MODEL, messages=[{"role": "user", "content": "hi"}], tools=TOOLS)


def _vllm_whole(ids: list[int], prompt: list[int], *, reasoning: str, tools: str) -> Any:
    v = _v()
    response = v.GenerateTokensResponse(request_id="w", choices=[v.GenerateTokensChoice(index=0, token_ids=ids)])
    (choice,) = asyncio.run(_derenderer(reasoning, tools).derender_chat(response, _chat(), prompt))
    return choice.message


def _vllm_stream(
    derender: Any, ids: list[int], prompt: list[int], sizes: list[int]
) -> tuple[dict[str, Any], list[Any]]:
    chat = _chat()
    state = None
    folded: dict[str, Any] = {"reasoning": "", "content": "", "calls": {}, "finish": None}
    states = []
    pos = 0
    for k, size in enumerate(sizes):
        piece = ids[pos : pos + size]
        pos += size
        finish = "stop" if k == len(sizes) - 1 else None
        chunk = _v().GenerateTokensStreamResponse(
            request_id="s", choices=[_v().GenerateTokensStreamChoice(index=0, token_ids=piece, finish_reason=finish)]
        )
        out, state = asyncio.run(
            derender.derender_chat_stream(
                model="m", generate_chunk=chunk, state=state, chat_request=chat, prompt_token_ids=prompt
            )
        )
        # the state crosses the wire as JSON, in the request vLLM's router would send back
        wire = _v().DerenderChatStreamRequest(stream=True, generate_chunk=chunk, stream_state=state).model_dump_json()
        state = _v().DerenderChatStreamRequest.model_validate_json(wire).stream_state
        states.append(state)
        delta = out.choices[0].delta
        folded["reasoning"] += delta.reasoning or ""
        folded["content"] += delta.content or ""
        for tc in delta.tool_calls:
            entry = folded["calls"].setdefault(tc.index, {"name": None, "args": ""})
            if tc.function is not None:
                entry["name"] = entry["name"] or tc.function.name
                entry["args"] += tc.function.arguments or ""
        folded["finish"] = out.choices[0].finish_reason or folded["finish"]
    return folded, states


def test_inside_vllm_the_trisect_derender_resumes_its_state_instead_of_replaying() -> None:
    ids = _ids(OUTPUT) + [151645]
    prompt = _ids(PROMPT)
    derender = _derenderer("trisect_qwen3", "trisect_hermes")
    for sizes in ([1] * len(ids), [4] * (len(ids) // 4) + [len(ids) % 4 or 4]):
        sizes[-1] += len(ids) - sum(sizes)
        sizes = [s for s in sizes if s > 0]
        folded, states = _vllm_stream(derender, ids, prompt, sizes)
        for state in states:
            assert state.output_token_ids == [] and state.output_chunk_lens == []
            assert "trisect_state" in (state.model_extra or {})
        saved = os.environ.get("TRISECT_VLLM_DERENDER")
        os.environ["TRISECT_VLLM_DERENDER"] = "0"
        try:
            replayed, replay_states = _vllm_stream(derender, ids, prompt, sizes)
        finally:
            os.environ.pop("TRISECT_VLLM_DERENDER") if saved is None else os.environ.update(TRISECT_VLLM_DERENDER=saved)
        assert len(replay_states[-1].output_token_ids) == len(ids)  # the replay path, for comparison
        assert folded == replayed
        want = Parser("qwen3", "hermes", tokenizer=tokenizers.load("qwen3")).parse(
            None, token_ids=ids, prompt_token_ids=prompt, tools=TOOLS
        )
        assert (folded["reasoning"], folded["content"]) == (want.reasoning, want.content)
        assert folded["finish"] == "tool_calls"
        # bounded: the state holds what the stream holds, not what it emitted
        assert max(len(s.model_dump_json()) for s in states) < 2048


def test_inside_vllm_a_tampered_trisect_state_is_a_400() -> None:
    from vllm.entrypoints.scale_out.derender.serving import ServingDerender

    derender = _derenderer("trisect_qwen3", "trisect_hermes")
    ids = _ids(OUTPUT)
    _, states = _vllm_stream(derender, ids[:5], _ids(PROMPT), [5])
    state = states[-1]
    sealed = state.model_extra["trisect_state"]
    state.__pydantic_extra__["trisect_state"] = sealed[:-4] + ("A" if sealed[-4] != "A" else "B") + sealed[-3:]
    models = MagicMock()
    models.is_base_model.return_value = True
    models.model_config = MagicMock()
    models.model_config.max_model_len = 1 << 20
    serving = ServingDerender(models=models, online_derenderer=derender)
    serving._check_model = AsyncMock(return_value=None)
    choices = [_v().GenerateTokensStreamChoice(index=0, token_ids=ids[5:6])]
    chunk = _v().GenerateTokensStreamResponse(request_id="s", choices=choices)
    request = _v().DerenderChatStreamRequest(
        stream=True, generate_chunk=chunk, stream_state=state, chat_request=_chat(), prompt_token_ids=_ids(PROMPT)
    )
    result = asyncio.run(serving.derender_chat_stream_response(request))
    assert isinstance(result, _v().ErrorResponse) and result.error.code == 400
    assert "stream_state" in result.error.message
