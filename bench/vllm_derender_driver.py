#!/usr/bin/env python
"""Time vLLM 0.33's own streaming chat derender (replay) on the outputs bench_state.py built.

Run by bench_state.py with the vLLM venv's interpreter:

    $VLLM_VENV/bin/python bench/vllm_derender_driver.py JOB.json OUT.json

For each output, one token per chunk, it calls ``OnlineDerenderer._derender_chat_stream_parsed``
(``vllm/renderers/online_derenderer.py``: what ``ServingDerender`` runs for each
``/v1/chat/completions/derender`` chunk once a parser is configured) with vLLM's own parsers
(``--reasoning-parser qwen3 --tool-call-parser hermes``), threading the ``DerenderStreamState``
it returns into the next chunk as a client does. Each call builds a fresh parser and replays
every earlier chunk (``output_token_ids``). Per chunk: process CPU (ns) and the state's JSON size.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "integrations"), str(REPO / "tests")]  # vllm_serving, support

for key, value in {
    "VLLM_LOGGING_LEVEL": "ERROR",
    "VLLM_NO_USAGE_STATS": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "VLLM_PLUGINS": "",  # vLLM's own parsers: the trisect plugin stays out of this process
}.items():
    os.environ.setdefault(key, value)


def log(msg: str) -> None:
    print(f"[vllm-derender] {msg}", file=sys.stderr, flush=True)


def derenderer(hf_dir: str) -> object:
    """vLLM's ``OnlineDerenderer`` with its own ``qwen3`` and ``hermes`` parsers."""
    import vllm_serving
    from vllm.tokenizers.hf import CachedHfTokenizer

    return vllm_serving.derenderer(CachedHfTokenizer.from_pretrained(hf_dir), "qwen3", "hermes")


def run(d: object, case: dict) -> dict:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.scale_out.token_in_token_out.protocol import (
        DerenderStreamState,
        GenerateTokensStreamChoice,
        GenerateTokensStreamResponse,
    )

    chat = ChatCompletionRequest(model="bench", messages=[{"role": "user", "content": "go"}], tools=case["tools"])
    ids, prompt = case["ids"], case["prompt_ids"]
    chunks = [
        GenerateTokensStreamResponse(
            request_id="b",
            choices=[
                GenerateTokensStreamChoice(index=0, token_ids=[t], finish_reason="stop" if k == len(ids) - 1 else None)
            ],
        )
        for k, t in enumerate(ids)
    ]
    state = DerenderStreamState()
    cpu: list[int] = []
    sizes: list[int] = []
    content = reasoning = args = ""
    step = d._derender_chat_stream_parsed  # type: ignore[attr-defined]
    parser = d.parser  # type: ignore[attr-defined]
    clock = time.process_time_ns
    gc.collect()
    gc.disable()
    started = time.perf_counter()
    try:
        for k, chunk in enumerate(chunks):
            t0 = clock()
            out, state = step(parser, "bench", chunk, state, chat, None, prompt)
            cpu.append(clock() - t0)
            sizes.append(len(state.model_dump_json()))
            delta = out.choices[0].delta
            content += delta.content or ""
            reasoning += delta.reasoning or ""
            args += "".join(tc.function.arguments or "" for tc in delta.tool_calls if tc.function)
            if k % 512 == 0:
                gc.collect()
    finally:
        gc.enable()
    log(f"{len(ids)} tokens: {sum(cpu) / 1e9:.1f} s CPU ({time.perf_counter() - started:.0f} s wall)")
    return {
        "target": case["target"],
        "tokens": len(ids),
        "cpu_ns": cpu,
        "state_bytes": sizes,
        "content": content,
        "reasoning": reasoning,
        "arguments": args,
    }


def main() -> int:
    job = json.loads(Path(sys.argv[1]).read_text())
    d = derenderer(job["hf_dir"])
    results = [run(d, case) for case in job["cases"]]
    Path(sys.argv[2]).write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
