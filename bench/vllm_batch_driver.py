#!/usr/bin/env python
"""vLLM 0.33's side of bench_batch.py and bench_setup.py, run with the vLLM venv's Python.

    $VLLM_VENV/bin/python bench/vllm_batch_driver.py JOB.json OUT.json

JOB.json holds ``mode`` and its inputs; this script writes its timings to OUT.json.

* ``loop``: a Python loop over vLLM's own parsers, what users do today: one request for the
  job (the tools), then per row a new parser (``ParserManager``'s class, as vLLM's serving code
  makes one per request), ``parse`` and ``assemble_chat_message_fields``. Reports wall and CPU
  seconds, the rows that raised, and how many rows got tool calls.
* ``setup``: the per-request set-up with N tools: ``ChatCompletionRequest`` + parser +
  ``ChatStreamProcessor`` (what ``OpenAIServingChat`` builds per streamed request), and the
  whole-output parse of a small output, each the best of several repeats.

vLLM's driving code comes from ../shared/bench/vllm_oracle.py (as bench/vllm_driver.py).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("TRISECT_SHARED") or HERE.parents[1] / "shared" / "bench")
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(SHARED))

import vllm_oracle as vo  # noqa: E402

from vllm_driver import build_hf_tokenizer  # noqa: E402


def _oracle(job: dict) -> vo.Oracle:
    tok_dir = build_hf_tokenizer(job["tokenizer_spec"], Path(job["tokenizer_cache"]) / job["tokenizer_spec"]["name"])
    return vo.Oracle(job["reasoning"], job["tool"], tokenizer_path=str(tok_dir))


def loop(job: dict) -> dict:
    from vllm.entrypoints.openai.chat_completion.message_assembly import assemble_chat_message_fields

    o = _oracle(job)
    request, ctk = o.make_request({"text": "", "tools": job["tools"], "tool_choice": "auto"}, stream=False)
    texts = [json.loads(line)["output"] for line in open(job["rows"], encoding="utf-8")]
    failed = with_calls = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for text in texts:
        try:
            parser = o.new_parser(request, ctk)
            r, c, tcs = parser.parse(text, request, enable_auto_tools=True, model_output_token_ids=[])
            fields = assemble_chat_message_fields(request, r, c, tcs, enable_auto_tools=True, parser_cls=o.parser_cls)
            with_calls += bool(fields.tool_calls)
        except Exception:  # noqa: BLE001 - a row vLLM cannot parse counts, the loop goes on
            failed += 1
    return {
        "rows": len(texts),
        "wall": time.perf_counter() - t0,
        "cpu": time.process_time() - c0,
        "raised": failed,
        "with_calls": with_calls,
    }


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def setup(job: dict) -> dict:
    from vllm.entrypoints.openai.chat_completion.message_assembly import assemble_chat_message_fields
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor

    o = _oracle(job)
    out: dict = {}
    for n, tools in job["tool_sets"].items():
        inp = {"text": "", "tools": tools, "tool_choice": "auto"} if tools else {"text": ""}

        def stream_setup(inp: dict = inp) -> None:
            request, ctk = o.make_request(inp, stream=True)
            ChatStreamProcessor(request, o.new_parser(request, ctk), enable_auto_tools=True, parser_cls=o.parser_cls)

        def parse_small(inp: dict = inp) -> None:
            request, ctk = o.make_request(inp, stream=False)
            parser = o.new_parser(request, ctk)
            r, c, tcs = parser.parse(job["small"], request, enable_auto_tools=True, model_output_token_ids=[])
            assemble_chat_message_fields(request, r, c, tcs, enable_auto_tools=True, parser_cls=o.parser_cls)

        k = 20 if int(n) >= 200 else 200
        out[n] = {
            "stream_setup_us": min(_best(stream_setup, 1) for _ in range(k)) * 1e6,
            "parse_small_us": min(_best(parse_small, 1) for _ in range(k)) * 1e6,
        }
    return out


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    result = loop(job) if job["mode"] == "loop" else setup(job)
    Path(argv[2]).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
