"""The fuzzer's driver: ``python tests/fuzz/run.py [--cpu-minutes M] [--workers W] [--out FILE]``.

Every worker process takes its share of the cases (every ``W``-th one) and of the tokenizers
and goes round them: for each case a split job and a mutation job, and after every few cases an
id job for its next tokenizer. The first round is always completed (so every case is cut and
mutated, and every tokenizer gets id sequences); rounds go on until the worker's share of the
CPU budget is spent. A finding is shrunk to a small input that fails the same way, once per
class (format pair, job, check, message shape), and written to ``--out`` as a JSON line that
``tests/fuzz/regressions.jsonl`` can keep.

Exit status: 0 when the budget was spent with no finding; 1 with findings; 2 when it did not run
(a worker died, less CPU than ``--min-cpu-minutes``, or a case or tokenizer never covered).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: the support and fuzz packages

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

IDS_EVERY = 3  # an id job after every this many cases


def _chosen(limit: int, seed: int) -> tuple[list[Any], list[str]]:
    """The cases and tokenizers to fuzz: all of them, or ``limit`` cases (seeded) and theirs."""
    from fuzz import corpus

    items = list(corpus.items())
    if limit:
        items = random.Random(seed).sample(items, min(limit, len(items)))
        return items, sorted({it.tokenizer for it in items if it.tokenizer})
    return items, corpus.tokenizer_names()


def _worker(
    index: int, workers: int, cpu_seconds: float, wall_seconds: float, seed: int, limit: int, queue: Any
) -> None:
    from fuzz import oracle

    try:
        rng = random.Random(seed * 7919 + index)
        chosen, all_names = _chosen(limit, seed)
        items = [it for k, it in enumerate(chosen) if k % workers == index]
        rng.shuffle(items)
        names = [n for k, n in enumerate(all_names) if k % workers == index]
        volume: Counter[str] = Counter()
        covered = {"split": set(), "mutation": set(), "ids": set()}
        seen: set[tuple[str, str, str, str]] = set()
        findings = 0
        start_cpu, start_wall = time.process_time(), time.monotonic()
        rounds = 0
        next_name = 0
        last_report = start_wall
        while True:
            for k, item in enumerate(items):
                for kind, job in (("split", oracle.split_job), ("mutation", oracle.mutation_job)):
                    try:
                        volume += job(item, rng)
                    except oracle.Finding as finding:
                        findings += _report(finding, seen, queue, index)
                    covered[kind].add(item.key)
                if names and k % IDS_EVERY == 0:
                    name = names[next_name % len(names)]
                    next_name += 1
                    try:
                        volume += oracle.ids_job(name, rng)
                    except oracle.Finding as finding:
                        findings += _report(finding, seen, queue, index)
                    covered["ids"].add(name)
                now = time.monotonic()
                if now - last_report > 60:
                    last_report = now
                    queue.put(("progress", index, dict(volume), time.process_time() - start_cpu, rounds))
                done_first = rounds > 0 and len(covered["ids"]) == len(names)  # every case and tokenizer once
                spent = time.process_time() - start_cpu
                if done_first and (spent >= cpu_seconds or now - start_wall >= wall_seconds):
                    break
            else:
                rounds += 1
                continue
            break
        queue.put(
            (
                "done",
                index,
                dict(volume),
                time.process_time() - start_cpu,
                rounds,
                {k: sorted(v) for k, v in covered.items()},
                findings,
            )
        )
    except BaseException:
        queue.put(("died", index, traceback.format_exc()))


def _report(finding: Any, seen: set[Any], queue: Any, index: int) -> int:
    """Shrink a finding of a new class and send it to the parent; 1 if it was new."""
    if finding.signature in seen:
        return 0
    seen.add(finding.signature)
    from fuzz.replay import shrunk

    line = shrunk(finding)
    queue.put(("finding", index, {**line, "check": finding.check, "detail": finding.detail[:500]}))
    return 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu-minutes", type=float, default=float(os.environ.get("TRISECT_FUZZ_CPU_MINUTES", 20)))
    ap.add_argument("--min-cpu-minutes", type=float, default=None, help="fail below this (default: half the budget)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("TRISECT_FUZZ_SEED", time.time())))
    ap.add_argument(
        "--wall-minutes", type=float, default=None, help="stop at this wall time (default: 1.5 x the CPU share)"
    )
    ap.add_argument("--limit", type=int, default=0, help="fuzz only this many cases (a smoke test)")
    ap.add_argument("--out", type=Path, default=Path("fuzz-findings.jsonl"))
    args = ap.parse_args(argv)
    share = args.cpu_minutes * 60 / args.workers
    wall = args.wall_minutes * 60 if args.wall_minutes is not None else share * 1.5
    floor = (args.min_cpu_minutes if args.min_cpu_minutes is not None else args.cpu_minutes / 2) * 60
    print(f"::: fuzz: seed {args.seed}, {args.workers} workers, {args.cpu_minutes:g} CPU-minutes", flush=True)
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(i, args.workers, share, wall, args.seed, args.limit, queue))
        for i in range(args.workers)
    ]
    for p in procs:
        p.start()
    volume: Counter[str] = Counter()
    cpu = 0.0
    covered: dict[str, set[str]] = {"split": set(), "mutation": set(), "ids": set()}
    findings: list[dict[str, Any]] = []
    died = []
    finished = 0
    started = time.monotonic()
    while finished < args.workers:
        msg = queue.get()
        if msg[0] == "progress":
            _i, vol, spent, rounds = msg[1:]
            print(f"::: worker {msg[1]}: {spent / 60:.1f} CPU-min, round {rounds + 1}, {vol}", flush=True)
        elif msg[0] == "finding":
            findings.append(msg[2])
            print(f"::: finding ({msg[2]['case']}): {msg[2]['check']}: {msg[2]['detail'][:300]}", flush=True)
        elif msg[0] == "done":
            _i, vol, spent, _rounds, cov, _n = msg[1:]
            volume.update(vol)
            cpu += spent
            for k, v in cov.items():
                covered[k].update(v)
            finished += 1
        elif msg[0] == "died":
            died.append(msg[2])
            print(f"::: worker {msg[1]} died:\n{msg[2]}", flush=True)
            finished += 1
    for p in procs:
        p.join()
    elapsed = time.monotonic() - started
    print(
        f"::: fuzz volume: {volume['streams']} streams, {volume['mutations']} mutations, "
        f"{volume['id_sequences']} id sequences; {cpu / 60:.1f} CPU-minutes in {elapsed / 60:.1f} minutes",
        flush=True,
    )
    chosen, all_names = _chosen(args.limit, args.seed)
    keys = {it.key for it in chosen}
    names = set(all_names)
    gaps = [
        f"{kind}: {len(want - covered[kind])} not covered"
        for kind, want in (("split", keys), ("mutation", keys), ("ids", names))
        if want - covered[kind]
    ]
    print(
        f"::: coverage: {len(covered['split'])}/{len(keys)} cases cut, {len(covered['mutation'])}/{len(keys)} "
        f"mutated, {len(covered['ids'])}/{len(names)} tokenizers",
        flush=True,
    )
    if findings:
        with args.out.open("w", encoding="utf-8") as f:
            for line in findings:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
        print(f"::: {len(findings)} findings, shrunk, in {args.out}", flush=True)
    if died or gaps or cpu < floor:
        print(f"::: the fuzzer did not run as asked: {died and 'a worker died'} {gaps} cpu {cpu:.0f}s < {floor:.0f}s?")
        return 2
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
