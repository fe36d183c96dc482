#!/usr/bin/env python
"""Batch throughput: 100,000 mixed rollouts through trisect on 1 and 2 workers, Ray Data's overhead
per row, and the same rows through a Python loop over vLLM 0.33's own parsers, in one run.

    .venv/bin/python bench/bench_batch.py                     # 100,000 rows (a few minutes)
    .venv/bin/python bench/bench_batch.py --rows 20000 --no-ray --no-vllm

Rows: ``qwen3`` reasoning + ``hermes`` calls (bench.py's generators): content-only answers, tool
calls with long string arguments, outputs cut off inside a call, and calls with broken JSON, each
100 to 8,000 tokens (log-uniform). ``--pool`` distinct outputs are generated (default 4,000) and
the rows draw from them, so that generating the input does not dominate the run; parsing gets no
benefit from repeats (nothing is cached per output).

Measured, wall clock (the CPU time of worker processes is not the parent's):

* ``parse_many``: the rows in memory (already decoded), 1 and 2 workers;
* ``trisect batch``: the command on the JSONL file, end to end (process start, JSON decoding and
  encoding of every row, writing the output), 1 and 2 workers;
* Ray Data: ``ParseBatch`` actors (2) over the same rows from ``ray.data.from_items`` (already in
  the object store; Ray's start-up not timed); overhead per row = (Ray - parse_many, 2 workers) / rows;
* vLLM: one request, then per row a new parser, ``parse`` and ``assemble_chat_message_fields``
  (bench/vllm_batch_driver.py in the vLLM venv), one process.

MB/s counts the outputs' UTF-8 bytes. The scaling ratio is the 1-worker time over the 2-worker time
(2.0 is perfect on 2 cores). Nothing is asserted; compare within one run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "src"))

import bench  # noqa: E402  (the output generators and the tokenizer spec)
import trisect  # noqa: E402
from bench_common import TOOLS  # noqa: E402

SHAPES = (("content", 0.35), ("tools", 0.40), ("truncated", 0.15), ("malformed", 0.10))
JOB = {"reasoning": "qwen3", "tools": "hermes", "tool_definitions": TOOLS}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def make_pool(n: int, seed: int = 11) -> list[str]:
    rnd = random.Random(seed)
    pool = []
    for k in range(n):
        shape = rnd.choices([s for s, _ in SHAPES], [w for _, w in SHAPES])[0]
        tokens = int(math.exp(rnd.uniform(math.log(100), math.log(8000))))
        text, _ = bench.build_output("qwen3+hermes", "content" if shape == "content" else "tools", tokens, tokens, k)
        if shape == "truncated":
            start = text.find("<tool_call>")
            text = text[: rnd.randint(start + 12, len(text) - 14)]
        elif shape == "malformed":
            text = text.replace('{"name": "', '{"name": , "', 1)
        pool.append(text)
    return pool


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run_parse_many(rows: list[dict], workers: int) -> float:
    def go() -> None:
        for _ in trisect.parse_many(rows, workers=workers, **JOB):
            pass

    return timed(go)


def run_command(path: Path, out: Path, tools: Path, workers: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    cmd = [sys.executable, "-m", "trisect", "batch", str(path), "-o", str(out), "--reasoning", "qwen3"]
    cmd += ["--tools", "hermes", "--tools-file", str(tools), "--workers", str(workers), "--no-progress"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise RuntimeError(proc.stderr[-2000:])
    log(proc.stderr.strip().splitlines()[-1])
    return seconds


def run_ray(rows: list[dict], workers: int, tmp: Path) -> float | None:
    try:
        import ray
    except ImportError:
        return None
    from trisect.integrations.ray import ParseBatch

    # the actors import trisect from this checkout, as this process does
    env = {"env_vars": {"PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}}
    # Ray's session (logs, sockets, the object store's spill files: GBs for 100k rows) in this run's
    # temporary directory, which main() removes, not in /tmp/ray where it would stay
    ray.init(
        num_cpus=workers + 1, include_dashboard=False, log_to_driver=False, runtime_env=env, _temp_dir=str(tmp / "ray")
    )
    try:
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True
        context.enable_progress_bars = False
        ds = ray.data.from_items(rows).materialize()

        def go() -> None:
            mapped = ds.map_batches(
                ParseBatch,
                fn_constructor_kwargs=JOB,
                batch_format="pyarrow",
                batch_size=256,
                compute=ray.data.ActorPoolStrategy(size=workers),
            )
            n = sum(b.num_rows for b in mapped.iter_batches(batch_format="pyarrow", batch_size=None))
            assert n == len(rows)

        return timed(go)
    finally:
        ray.shutdown()


def run_vllm_job(args, job: dict, prefix: str, note: str | None = None) -> dict | None:
    """``vllm_batch_driver.py`` run on ``job`` in the vLLM venv (``--vllm-venv``, ``VLLM_VENV`` or
    bench.py's default), one thread; its JSON result, or ``None`` (no venv, or the driver failed:
    its stderr's tail is logged). bench_setup.py runs its set-up job through this too."""
    venv = Path(args.vllm_venv or os.environ.get("VLLM_VENV") or bench.DEFAULT_VENV)
    py = venv / "bin" / "python"
    if not py.exists():
        return None
    if note:
        log(note)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["TRISECT_SHARED"] = str(bench.SHARED)
    env.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix=prefix) as name:
        tmp = Path(name)
        (tmp / "job.json").write_text(json.dumps(job))
        proc = subprocess.run(
            [str(py), str(HERE / "vllm_batch_driver.py"), str(tmp / "job.json"), str(tmp / "out.json")],
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            log(proc.stderr[-3000:])
            return None
        out: dict = json.loads((tmp / "out.json").read_text())
    return out


def run_vllm(path: Path, args) -> dict | None:
    spec = bench.tokenizer_spec("qwen2-qwen3")
    if args.no_vllm or spec is None:
        return None
    job = {
        "mode": "loop",
        "reasoning": "qwen3",
        "tool": "hermes",
        "tools": TOOLS,
        "rows": str(path),
        "tokenizer_spec": spec,
        "tokenizer_cache": str(bench.CACHE / "hf-tokenizers"),
    }
    return run_vllm_job(args, job, "trisect-bench-batch-", "[vllm] the same rows through vLLM's parsers (one process)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--pool", type=int, default=4000, help="distinct outputs the rows draw from")
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--no-vllm", action="store_true")
    ap.add_argument("--vllm-venv")
    args = ap.parse_args(argv)

    log(f"generating {args.pool:,} outputs for {args.rows:,} rows")
    pool = make_pool(args.pool)
    rnd = random.Random(5)
    rows = [{"id": i, "output": rnd.choice(pool)} for i in range(args.rows)]
    mb = sum(len(r["output"].encode("utf-8")) for r in rows) / 1e6
    with tempfile.TemporaryDirectory(prefix="trisect-bench-batch-") as tmp:  # rows, outputs, Ray: all removed
        return run(args, rows, mb, Path(tmp))


def run(args: argparse.Namespace, rows: list[dict], mb: float, tmp: Path) -> int:
    path, tools = tmp / "rows.jsonl", tmp / "tools.json"
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    tools.write_text(json.dumps(TOOLS))
    load = os.getloadavg()[0]
    log(f"{args.rows:,} rows, {mb:,.1f} MB of outputs; load average {load:.1f}")

    results: list[tuple[str, float]] = []
    for w in (1, 2):
        results.append((f"parse_many, {w} worker{'s' if w > 1 else ''}", run_parse_many(rows, w)))
        log(f"{results[-1][0]}: {results[-1][1]:.2f} s")
    for w in (1, 2):
        results.append(
            (f"trisect batch, {w} worker{'s' if w > 1 else ''}", run_command(path, tmp / "o.jsonl", tools, w))
        )
        log(f"{results[-1][0]}: {results[-1][1]:.2f} s")
    ray_s = None if args.no_ray else run_ray(rows, 2, tmp)
    if ray_s is not None:
        results.append(("Ray Data ParseBatch, 2 actors", ray_s))
    vllm = run_vllm(path, args)
    if vllm is not None:
        results.append(("vLLM 0.33 parser loop, 1 process", vllm["wall"]))

    table = [["run", "seconds", "rows/s", "MB/s"]]
    for name, s in results:
        table.append([name, f"{s:.2f}", f"{args.rows / s:,.0f}", f"{mb / s:,.0f}"])
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    lines = []
    for r in table:
        cells = enumerate(zip(r, widths, strict=True))
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in cells))
    lines.insert(1, "  ".join("-" * w for w in widths))
    t = dict(results)
    notes = [
        f"scaling, parse_many 1 -> 2 workers: {t['parse_many, 1 worker'] / t['parse_many, 2 workers']:.2f}x",
        f"scaling, trisect batch 1 -> 2 workers: {t['trisect batch, 1 worker'] / t['trisect batch, 2 workers']:.2f}x",
    ]
    if ray_s is not None:
        per_row = (ray_s - t["parse_many, 2 workers"]) / args.rows * 1e6
        notes.append(f"Ray's overhead per row against parse_many with 2 workers: {per_row:.1f} us")
    if vllm is not None:
        notes.append(
            f"vLLM loop / trisect parse_many (1 worker) time: {vllm['wall'] / t['parse_many, 1 worker']:.1f}x; "
            f"vLLM raised on {vllm['raised']:,} rows, gave calls on {vllm['with_calls']:,}"
        )
    else:
        notes.append("vLLM not measured")
    print(f"trisect batch bench: {args.rows:,} rows, {mb:,.1f} MB, load average {load:.1f} at the start")
    print("\n".join(lines))
    print("\n".join(notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
