"""Which sampling parameters each upstream kind takes, and under which name (one table).

``CompletionRequest.sampling`` carries the chat-completions request's sampling fields by their
OpenAI / vLLM names; each wire renames them with ``SAMPLING`` when it builds its body. A field
that a kind does not list is rejected by the server with a 400 naming it, before any upstream
is called (``trisect.serve.request_fields``), so a wire never silently drops one.

Names: vLLM ``SamplingParams`` (``vllm/sampling_params.py``), SGLang ``sampling_params`` of
``/generate``, llama.cpp ``/completion`` (``tools/server/README.md``), and the OpenAI legacy
completions request for ``openai``. ``embedded`` is llama.cpp in-process: llama.cpp's names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KINDS = ("vllm", "sglang", "llamacpp", "embedded", "openai")

# field -> {kind: the name on that kind's wire}
SAMPLING: dict[str, dict[str, str]] = {
    "top_k": {"vllm": "top_k", "sglang": "top_k", "llamacpp": "top_k", "embedded": "top_k"},
    "min_p": {"vllm": "min_p", "sglang": "min_p", "llamacpp": "min_p", "embedded": "min_p"},
    "presence_penalty": {k: "presence_penalty" for k in KINDS},
    "frequency_penalty": {k: "frequency_penalty" for k in KINDS},
    "repetition_penalty": {
        "vllm": "repetition_penalty",
        "sglang": "repetition_penalty",
        "llamacpp": "repeat_penalty",
        "embedded": "repeat_penalty",
    },
    "logit_bias": {k: "logit_bias" for k in KINDS},
    "stop_token_ids": {"vllm": "stop_token_ids", "sglang": "stop_token_ids"},
    "ignore_eos": {"vllm": "ignore_eos", "sglang": "ignore_eos", "llamacpp": "ignore_eos", "embedded": "ignore_eos"},
    "min_tokens": {"vllm": "min_tokens", "sglang": "min_new_tokens"},
    "spaces_between_special_tokens": {
        "vllm": "spaces_between_special_tokens",
        "sglang": "spaces_between_special_tokens",
    },
    "truncate_prompt_tokens": {"vllm": "truncate_prompt_tokens"},
    "allowed_token_ids": {"vllm": "allowed_token_ids"},
    "bad_words": {"vllm": "bad_words"},
    "priority": {"vllm": "priority"},
    "cache_salt": {"vllm": "cache_salt"},
    "add_special_tokens": {"vllm": "add_special_tokens"},
}


def wire_sampling(kind: str, sampling: Mapping[str, Any]) -> dict[str, Any]:
    """``sampling`` renamed for ``kind`` (fields the kind does not take were rejected before)."""
    out: dict[str, Any] = {}
    for name, value in sampling.items():
        wire = SAMPLING.get(name, {}).get(kind)
        if wire is None:
            raise KeyError(f"{kind} does not take {name!r} (the server should have rejected it)")
        out[wire] = value
    return out
