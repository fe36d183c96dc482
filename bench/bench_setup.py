#!/usr/bin/env python
"""Per-request cost: ``stream()`` / ``parse()`` set-up with 1, 20 and 200 tools, and ``parse()`` of
a 50-token output beside the hand-written floor, with vLLM 0.33's set-up in the same run.

    .venv/bin/python bench/bench_setup.py            # about a minute (vLLM's import: ~10 s)
    .venv/bin/python bench/bench_setup.py --no-vllm

trisect: each request passes a *new* list of the same tools (as a server decodes them from every
request's JSON), so what is measured is the content cache's hit (a ``marshal`` and a hash), not a
reused object. ``stream()`` is the set-up alone; ``parse()`` is the set-up plus the whole-output
parse of a 50-token hermes output (reasoning, an answer, one call). The floor: ``str.find`` of
the markers, ``json.loads`` of the call and ``json.dumps`` of its arguments (bench/floor.py's
hermes plus the dumps). vLLM (bench/vllm_batch_driver.py ``setup``): ``ChatCompletionRequest`` +
parser + ``ChatStreamProcessor`` for a stream, and request + parser + ``parse`` +
``assemble_chat_message_fields`` for the small output. Best of many repeats, microseconds of
wall clock; targets (issue 13): set-up with 200 tools at most vLLM's, with 20 tools under 20 us,
``parse()`` of the 50-token output within 3x of the floor.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "src"))

import bench  # noqa: E402
import floor  # noqa: E402
import trisect  # noqa: E402
from bench_batch import run_vllm_job  # noqa: E402
from bench_common import settle_gc  # noqa: E402

SMALL = (
    "<think>\nThe user wants the file written.\n</think>\n\nSure, writing it now."
    '<tool_call>\n{"name": "tool_0", "arguments": {"path": "src/app/main.py", "n": 3}}\n</tool_call>'
)
COUNTS = (0, 1, 20, 200)


def tool(i: int) -> dict:
    return {
        "type": "function",
        "function": {
            "name": f"tool_{i}",
            "description": f"Tool number {i}: does one thing to a file and reports what it did.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "the file"},
                    "n": {"type": "integer"},
                    "flags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["path"],
            },
        },
    }


def tool_json(n: int) -> str:
    return json.dumps([tool(i) for i in range(n)])


def best_us(fn, repeats: int, number: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best * 1e6


def trisect_side() -> dict:
    parser = trisect.Parser("qwen3", "hermes")
    out = {}
    for n in COUNTS:
        text = tool_json(n)
        number = 50 if n >= 200 else 500
        # a new list of the same tools per request: json.loads is outside the timed call
        lists = [json.loads(text) if n else None for _ in range(number)]
        feed = {"it": iter(lists * 20)}

        def stream(feed: dict = feed) -> None:
            tools = next(feed["it"])
            parser.stream(tools=tools) if tools else parser.stream()

        def parse(feed: dict = feed) -> None:
            tools = next(feed["it"])
            parser.parse(SMALL, tools=tools) if tools else parser.parse(SMALL)

        stream()
        settle_gc()  # the tool lists are set-up: a collection inside the timing must not walk them
        out[n] = {"stream_us": best_us(stream, 7, number)}
        feed["it"] = iter(lists * 20)
        out[n]["parse_us"] = best_us(parse, 7, number)
    return out


def floor_us() -> float:
    def f() -> None:
        _r, _c, calls = floor.hermes(SMALL)
        for _name, args in calls:
            json.dumps(args)

    return best_us(f, 7, 5000)


def vllm_side(args) -> dict | None:
    spec = bench.tokenizer_spec("qwen2-qwen3")
    if args.no_vllm or spec is None:
        return None
    job = {
        "mode": "setup",
        "reasoning": "qwen3",
        "tool": "hermes",
        "tool_sets": {str(n): [tool(i) for i in range(n)] for n in COUNTS},
        "small": SMALL,
        "tokenizer_spec": spec,
        "tokenizer_cache": str(bench.CACHE / "hf-tokenizers"),
    }
    out = run_vllm_job(args, job, "trisect-bench-setup-")
    return None if out is None else {int(k): v for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-vllm", action="store_true")
    ap.add_argument("--vllm-venv")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    t = trisect_side()
    fl = floor_us()
    v = vllm_side(args)
    head = ["tools", "trisect stream()", "trisect parse(50 tok)", "parse/floor"]
    if v:
        head += ["vLLM stream set-up", "vLLM parse(50 tok)", "vLLM/tri set-up", "vLLM/tri parse"]
    rows = [head]
    for n in COUNTS:
        row = [str(n), f"{t[n]['stream_us']:.1f}", f"{t[n]['parse_us']:.1f}", f"{t[n]['parse_us'] / fl:.2f}x"]
        if v:
            vs, vp = v[n]["stream_setup_us"], v[n]["parse_small_us"]
            row += [f"{vs:.1f}", f"{vp:.1f}", f"{vs / t[n]['stream_us']:.1f}x", f"{vp / t[n]['parse_us']:.1f}x"]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    print(f"per-request cost, us (best of 7; load average {load:.1f}); floor for the 50-token output: {fl:.1f} us")
    for j, r in enumerate(rows):
        print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))
        if j == 0:
            print("  ".join("-" * w for w in widths))
    if not v:
        print("vLLM not measured")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
