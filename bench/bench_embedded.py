"""The embedded default model's speed: load, prompt and generation tokens/s, and what the lazy
grammar and the server add.

    .venv/bin/python bench/bench_embedded.py             # ~1 min on a shared 2-core box
    .venv/bin/python bench/bench_embedded.py --threads 1,2 --runs 3

SmolLM2-135M-Instruct (Q4_1) in llama.cpp through ``EmbeddedUpstream`` (the ``[serve]`` extra;
the model is fetched on first use). Per thread count: the model's load time; a ~270-token prompt
(a new one each run, so that llama.cpp's prompt cache does not hide the work)
and 128 generated tokens (``ignore_eos``), timed to the first token (prompt evaluation) and from
there to the last (generation); the same generation under the hermes lazy GBNF grammar (not
triggered: what a grammar that waits costs) and forced from the first token (a call; what
constraining costs). Then one chat request with a tool through the real server and the official
``openai`` client (``trisect demo --live``'s request). Medians of ``--runs``; the 1-minute load
average is printed with each row, since the cores are shared. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def prompt(run: int) -> str:
    """A ~270-token prompt that differs from the previous run's from its first token (llama.cpp
    reuses a cached prompt prefix; a repeated prompt would time nothing)."""
    return (
        f"<|im_start|>user\nRun {run}. "
        + "Summarise: the quick brown fox jumps over the lazy dog. " * 20
        + "<|im_end|>\n<|im_start|>assistant\n"
    )


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


async def timed(upstream: object, request: object) -> tuple[float, float, int, int]:
    """(seconds to the first piece with text, seconds from there to the end, prompt tokens,
    generated tokens)."""
    started = time.perf_counter()
    first = None
    last = None
    async for piece in upstream.complete(request):  # type: ignore[attr-defined]
        if first is None and (piece.text or piece.token_ids):
            first = time.perf_counter()
        last = piece
    end = time.perf_counter()
    assert first is not None and last is not None
    return first - started, end - first, last.prompt_tokens or 0, last.completion_tokens or 0


def row(label: str, runs: list[tuple[float, float, int, int]]) -> str:
    ttft = statistics.median(r[0] for r in runs)
    gen = statistics.median(r[1] for r in runs)
    prompt, tokens = runs[0][2], runs[0][3]
    return (
        f"  {label:<34} prompt {prompt:>4} tok {prompt / ttft:7.0f} tok/s | "
        f"generation {tokens:>4} tok {(tokens - 1) / gen:6.0f} tok/s | load avg {os.getloadavg()[0]:.1f}"
    )


def bench_threads(threads: int, runs: int, path: Path) -> None:
    from trisect import Parser, grammar
    from trisect.serve.upstream.base import CompletionRequest, Constraint
    from trisect.serve.upstream.embedded import EmbeddedUpstream

    started = time.perf_counter()
    upstream = EmbeddedUpstream(path, threads=threads, slots=1)
    load = time.perf_counter() - started
    print(f"threads={threads}: model loaded in {load:.2f} s")
    lazy = grammar.gbnf(Parser(None, "hermes"), TOOLS, strict_level="function")
    assert lazy is not None

    def cases(run: int) -> dict[str, CompletionRequest]:
        def free(k: int) -> CompletionRequest:
            text = prompt(3 * run + k)
            return CompletionRequest(prompt=text, max_tokens=128, temperature=0, sampling={"ignore_eos": True})

        return {
            "free": free(0),
            "lazy grammar, not triggered": replace(free(1), constraint=Constraint("gbnf", lazy.text, lazy.triggers)),
            "grammar from the first token": replace(
                free(2), temperature=0.7, seed=run, sampling={}, constraint=Constraint("gbnf", lazy.text)
            ),
        }

    async def go() -> None:
        labels = list(cases(0))
        measured: dict[str, list[tuple[float, float, int, int]]] = {label: [] for label in labels}
        for run in range(runs):
            for label, request in cases(run + 100 * threads).items():
                measured[label].append(await timed(upstream, request))
        for label in labels:
            print(row(label, measured[label]))
        await upstream.aclose()

    asyncio.run(go())


def bench_server(threads: int) -> None:
    import io

    from trisect.serve.demo import run

    out = io.StringIO()
    started = time.perf_counter()
    run(threads=threads, out=out, color=False)
    total = time.perf_counter() - started
    summary = [line for line in out.getvalue().splitlines() if line.startswith("finish_reason")]
    print(f"through the server (threads={threads}, model load included): {total:.1f} s")
    print(f"  {summary[0] if summary else 'no summary line'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1", help="comma-separated thread counts (default 1: the cores are shared)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from trisect.serve import default_model

    path = default_model.fetch()
    import xllamacpp  # type: ignore[import-not-found,unused-ignore]

    print(f"xllamacpp {xllamacpp.__version__}, {default_model.MODEL_NAME} (Q4_1), {os.cpu_count()} CPUs")
    for threads in (int(t) for t in args.threads.split(",")):
        bench_threads(threads, args.runs, path)
    bench_server(int(args.threads.split(",")[0]))


if __name__ == "__main__":
    main()
