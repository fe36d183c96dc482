"""The streaming derender driven the way vLLM's own tests drive its derender, in
vLLM tests/entrypoints/scale_out/derender/test_derender_stream.py (``TestDerenderCompletionStream``,
``TestDerenderChatStream``, ``TestDerenderChatStreamParsed``): the same request shapes and the
same expectations, sent to trisect's endpoints, each chunk resumed from the previous answer's
``stream_state`` alone. Where vLLM's test uses a stub parser keyed on token ids, these use
Qwen3's real vocabulary and trisect's ``qwen3`` + ``hermes`` formats. (The shapes validated with
vLLM's own pydantic models, and vLLM's derender with the plugin: the vLLM step,
tests/integrations/test_vllm_scale_out.py.)"""

from __future__ import annotations

import json
from typing import Any

from support import tokenizers
from trisect import Parser
from trisect.serve.scale_out.derender import Derenderer

KEY = b"a state key of thirty-two bytes!"
EOS = 151645  # <|im_end|>
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def _derender() -> Derenderer:
    return Derenderer(
        Parser("qwen3", "hermes", tokenizer=tokenizers.load("qwen3")), KEY, model_names=("m",), eos_id=EOS
    )


def _ids(text: str) -> list[int]:
    return tokenizers.encode("qwen3", text)


def _chunk(ids: list[int], finish: str | None = None, **more: Any) -> dict[str, Any]:
    """vLLM's ``_make_stream_chunk``: one choice of ``token_ids``."""
    return {"request_id": "test-req", "choices": [{"index": 0, "token_ids": ids, "finish_reason": finish}], **more}


def _usage_chunk(completion_tokens: int, prompt_tokens: int = 0) -> dict[str, Any]:
    """vLLM's ``_make_usage_chunk``: no choices, the usage only."""
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    return {
        "request_id": "test-req",
        "choices": [],
        "usage": usage | {"total_tokens": prompt_tokens + completion_tokens},
    }


def _chat(
    d: Derenderer, chunk: dict[str, Any], state: Any = None, chat: dict[str, Any] | None = None, **more: Any
) -> tuple[dict[str, Any], Any]:
    body = {"stream": True, "model": "m", "generate_chunk": chunk, "stream_state": state, **more}
    body["chat_request"] = chat if chat is not None else {"messages": [{"role": "user", "content": "hi"}]}
    if state is None:
        body.setdefault("prompt_token_ids", [])
    answer = d.chat_chunk(json.loads(json.dumps(body)))
    return answer["chunk"], answer["stream_state"]


def _completion(
    d: Derenderer, chunk: dict[str, Any], state: Any = None, request: dict[str, Any] | None = None, **more: Any
) -> tuple[dict[str, Any], Any]:
    body = {"stream": True, "model": "m", "generate_chunk": chunk, "stream_state": state, **more}
    if request is not None:
        body["completion_request"] = request
    answer = d.completion_chunk(json.loads(json.dumps(body)))
    return answer["chunk"], answer["stream_state"]


def _assemble(d: Derenderer, chunks: list[list[int]], chat: dict[str, Any]) -> dict[str, str]:
    state = None
    out = {"content": "", "reasoning": "", "tool_args": ""}
    for k, ids in enumerate(chunks):
        chunk, state = _chat(d, _chunk(ids, "stop" if k == len(chunks) - 1 else None), state, chat)
        delta = chunk["choices"][0]["delta"]
        out["content"] += delta["content"] or ""
        out["reasoning"] += delta["reasoning"] or ""
        out["tool_args"] += "".join(tc["function"]["arguments"] or "" for tc in delta["tool_calls"])
    return out


# ---------------------------------------------------------------------- completions


def test_completion_chunked_equals_one_shot() -> None:
    d = _derender()
    ids = _ids("streaming completion test, 日本語 ✅")
    state = None
    texts = []
    for k, t in enumerate(ids):
        chunk, state = _completion(d, _chunk([t], "stop" if k == len(ids) - 1 else None), state)
        texts.append(chunk["choices"][0]["text"])
    assert "".join(texts) == "streaming completion test, 日本語 ✅"


def test_completion_usage_chunk_passthrough_and_prompt_tokens() -> None:
    d = _derender()
    chunk, _ = _completion(d, _usage_chunk(completion_tokens=10, prompt_tokens=5))
    assert chunk["choices"] == []
    assert (chunk["usage"]["completion_tokens"], chunk["usage"]["prompt_tokens"]) == (10, 5)
    chunk, _ = _completion(d, _usage_chunk(completion_tokens=3), prompt_tokens=7)
    assert chunk["usage"]["prompt_tokens"] == 7  # the body's prompt_tokens, as vLLM forwards it


def test_completion_without_state_starts_a_stream() -> None:
    d = _derender()
    chunk, state = _completion(d, _chunk(_ids("hello")), None)
    assert chunk["choices"][0]["text"] == "hello"
    assert isinstance(state, dict) and state  # a state to send with the next chunk


def test_completion_skip_special_tokens_is_honoured() -> None:
    d = _derender()
    ids = [*_ids("hi"), EOS]
    kept, _ = _completion(d, _chunk(ids), request={"prompt": "x", "skip_special_tokens": False})
    skipped, _ = _completion(d, _chunk(ids), request={"prompt": "x", "skip_special_tokens": True})
    assert kept["choices"][0]["text"] == "hi<|im_end|>"
    assert skipped["choices"][0]["text"] == "hi"


def test_completion_finish_reason_forwarded() -> None:
    chunk, _ = _completion(_derender(), _chunk(_ids("done"), "length"))
    assert chunk["choices"][0]["finish_reason"] == "length"


# ---------------------------------------------------------------------- chat


def test_chat_role_on_the_first_chunk_only() -> None:
    d = _derender()
    ids = _ids("hello world")
    first, state = _chat(d, _chunk(ids[:1]))
    second, _ = _chat(d, _chunk(ids[1:], "stop"), state)
    assert first["choices"][0]["delta"]["role"] == "assistant"
    assert second["choices"][0]["delta"]["role"] is None


def test_chat_a_finish_only_chunk_finishes_the_stream_from_its_state() -> None:
    """vLLM's finish-only chunk: no new ids, ``finish_reason`` set. The stream finishes from the
    state alone, and the call the earlier chunk completed (a count the state carries) makes
    the finish reason ``tool_calls``."""
    d = _derender()
    chat = {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
    first, state = _chat(d, _chunk(_ids("<think>\n\n</think>\n\nSure.\n" + CALL)), chat=chat)
    (call,) = first["choices"][0]["delta"]["tool_calls"]
    assert first["choices"][0]["finish_reason"] is None
    last, _ = _chat(d, _chunk([], "stop"), state, chat)
    (choice,) = last["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert (choice["delta"]["content"], choice["delta"]["reasoning"], choice["delta"]["tool_calls"]) == (None, None, [])
    assert call["function"]["name"] == "get_weather"


def test_chat_chunking_invariance() -> None:
    d = _derender()
    chat = {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, "tool_choice": "auto"}
    chat["include_reasoning"] = True
    ids = _ids("<think>\nrr\n</think>\n\n" + CALL)
    whole = _assemble(d, [ids], chat)
    one_at_a_time = _assemble(d, [[t] for t in ids], chat)
    assert whole == one_at_a_time
    assert whole["reasoning"] == "rr" and json.loads(whole["tool_args"]) == {"city": "Paris"}


def test_chat_a_tool_call_id_is_sent_once_and_kept_across_chunks() -> None:
    d = _derender()
    chat = {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, "tool_choice": "auto"}
    ids = _ids(CALL)
    state = None
    seen = []
    for k, t in enumerate(ids):
        chunk, state = _chat(d, _chunk([t], "stop" if k == len(ids) - 1 else None), state, chat)
        seen += [(tc["index"], tc["id"]) for tc in chunk["choices"][0]["delta"]["tool_calls"]]
    ids_sent = [i for _, i in seen if i is not None]
    assert len(ids_sent) == 1 and ids_sent[0].startswith("call")
    assert {index for index, _ in seen} == {0}


def test_chat_finish_reason_becomes_tool_calls() -> None:
    chat = {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, "tool_choice": "auto"}
    chunk, _ = _chat(_derender(), _chunk(_ids(CALL), "stop"), chat=chat)
    assert chunk["choices"][0]["finish_reason"] == "tool_calls"


def test_chat_include_reasoning_false_suppresses_reasoning() -> None:
    chat = {"messages": [{"role": "user", "content": "hi"}], "include_reasoning": False}
    chunk, _ = _chat(_derender(), _chunk(_ids("<think>\nr\n</think>\n\nc"), "stop"), chat=chat)
    delta = chunk["choices"][0]["delta"]
    assert delta["reasoning"] is None
    assert delta["content"] == "c"
