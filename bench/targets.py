#!/usr/bin/env python
"""The speed targets in one run, each measured pure and compiled: ratios of CPU time, medians of 3.

    .venv/bin/python bench/targets.py                   # builds the compiled wheel first (~3 min)
    .venv/bin/python bench/targets.py --wheel dist/trisect-*.whl --lengths 1k,4k
    TRISECT_SHARED=DIR .venv/bin/python bench/targets.py   # DIR: the folder with vLLM's oracle

Pure and compiled are the same source: the wheel (``pip wheel .``, compiled by mypyc) is unpacked
into a temporary directory that goes first on ``PYTHONPATH`` of every measuring process, and
``TRISECT_PURE=1`` makes the pure run load every module from its ``.py`` file. Each measurement is
one of the benches beside this file, run as a child process that writes JSON:

* ``bench.py`` (``--clock cpu --repeats 3``): streaming at 1 and 4 tokens per delta against the
  one-call floor (one ``feed()`` of the whole output plus one ``str.find`` per delta), whole
  outputs against ``floor.py``, and, in the compiled run, vLLM's parsers on the same outputs;
* this file's ``--layers`` child: ``ChatStream.feed`` against the engine's ``EventStream.feed`` per
  delta, on ``bench_layers.py``'s outputs and deltas (median of 3, CPU time);
* ``bench_vllm_plugin.py`` in the vLLM venv (if present): the plugin against native ``feed()``
  and trisect's share of vLLM's serving loop, 16k tokens;
* ``bench_serve.py --quick``: the trisect server's CPU time per chunk (the slope over chunks).

vLLM's own times do not depend on trisect's build, so the pure run's vLLM ratios use the compiled
run's vLLM times. The report prints each target with the worst row, pure and compiled, and the
per-row tables. Nothing is asserted; the load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BUILDS = ("pure", "compiled")

# (key, what is measured, the limit, whether the ratio must stay at most or at least the limit)
TARGETS = [
    ("stream_floor", "streaming / one-call floor, every row (goal 3x)", 5.0, "max"),
    ("vllm_stream", "vLLM / trisect, streaming, every row", 10.0, "min"),
    ("vllm_whole", "vLLM / trisect, whole outputs, every row", 10.0, "min"),
    ("whole_floor", "whole outputs: floor time / trisect time, every row", 0.67, "min"),
    ("chat_engine", "ChatStream / engine per delta, every row", 1.3, "max"),
    ("plugin_native", "vLLM plugin / native feed(), 16k tokens", 1.2, "max"),
    ("loop_share", "trisect's share of vLLM's serving loop, 16k tokens", 0.25, "max"),
    ("serve_chunk", "trisect serve, CPU µs per chunk over the upstream", 15.0, "max"),
]


def log(msg: str) -> None:
    print(f"[targets] {msg}", file=sys.stderr, flush=True)


def load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


# ---------------------------------------------------------------------------------- the layers child


def layers_child(out: Path, words: int, repeats: int) -> None:
    import trisect  # first: the wheel on PYTHONPATH, before bench_layers puts src/ on sys.path

    sys.path.insert(0, str(HERE))
    import bench_layers
    from bench_common import TOOLS
    from trisect.chat import ChatStream

    enc = bench_layers._qwen()
    rows = []
    for name, (reasoning, tools, text) in bench_layers.outputs(words).items():
        chunkings = [("word", bench_layers.word_deltas(text), False)]
        if enc is not None:
            chunkings.append(("4 tokens", bench_layers.token_deltas(enc, text, 4, False), False))
            chunkings.append(("4 tok+vocab", bench_layers.token_deltas(enc, text, 4, True), True))
        for label, deltas, with_ids in chunkings:
            parser = trisect.Parser(reasoning, tools, tokenizer=enc if label.endswith("vocab") else None)
            layers = {
                "engine": lambda p=parser: p.stream(tools=TOOLS).engine,
                "stream": lambda p=parser: p.stream(tools=TOOLS),
                "chat": lambda p=parser: ChatStream(p, tools=TOOLS),
            }
            runs: dict[str, list[float]] = {k: [] for k in layers}
            for _ in range(repeats):
                for key, make in layers.items():
                    runs[key].append(bench_layers._time(make, deltas, with_ids))
            row = {"output": name, "deltas": label, "n": len(deltas)}
            row |= {k: statistics.median(v) / len(deltas) * 1e6 for k, v in runs.items()}
            rows.append(row)
    out.write_text(json.dumps(rows))


# ---------------------------------------------------------------------------------- the parent


def unpack(wheel: Path, into: Path) -> Path:
    site = into / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    return site


def build_wheel(into: Path) -> Path:
    log("building the compiled wheel (pip wheel --no-deps .)")
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(into), str(REPO)],
        capture_output=True,
        text=True,
    )
    lines = [line.strip() for line in proc.stdout.splitlines() + proc.stderr.splitlines() if "trisect build:" in line]
    for line in lines:
        log(line)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    log(f"built in {time.perf_counter() - start:.0f} s")
    return next(into.glob("trisect-*.whl"))


def child_env(site: Path, build: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TRISECT_PURE", "PYTHONHOME")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    if build == "pure":
        env["TRISECT_PURE"] = "1"
    return env


def run_child(name: str, cmd: list[str], env: dict[str, str], out: Path, log_to: Path) -> Any:
    log(f"{name}: {' '.join(cmd[1:3])} ...")
    start = time.perf_counter()
    with open(log_to, "w", encoding="utf-8") as fh:
        proc = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, cwd=str(REPO))
    log(f"{name}: exit {proc.returncode} in {time.perf_counter() - start:.0f} s (log {log_to})")
    if not out.exists():
        return None
    return json.loads(out.read_text(encoding="utf-8"))


def worst(values: list[tuple[float, str]], direction: str) -> tuple[float, str] | None:
    if not values:
        return None
    return max(values) if direction == "max" else min(values)


def ratios(results: dict[str, dict[str, Any]]) -> tuple[dict[str, dict[str, list[tuple[float, str]]]], list[str]]:
    """target key -> build -> [(ratio, row label)]; and the failed correctness checks."""
    out: dict[str, dict[str, list[tuple[float, str]]]] = {key: {b: [] for b in BUILDS} for key, *_ in TARGETS}
    fails = []
    vllm_cases = {c["id"]: c.get("v") for c in (results["compiled"].get("bench") or [])}
    for build in BUILDS:
        for case in results[build].get("bench") or []:
            label = f"{case['combo']} {case['shape']} {case['tokens']:,}"
            t = case.get("t") or {}
            v = vllm_cases.get(case["id"]) or {}
            for k, entry in (t.get("stream") or {}).items():
                if entry.get("check") not in (None, "OK"):
                    fails.append(f"{build} {label} stream/{k}: {entry['check']}")
                if "cpu_us_per_tok" not in entry:
                    continue
                floor = (entry.get("floor") or {}).get("cpu_us_per_tok")
                if floor:
                    out["stream_floor"][build].append((entry["cpu_us_per_tok"] / floor, f"{label} {k}/delta"))
                ve = (v.get("stream") or {}).get(str(k)) or {}
                if ve.get("cpu_us_per_tok"):
                    out["vllm_stream"][build].append(
                        (ve["cpu_us_per_tok"] / entry["cpu_us_per_tok"], f"{label} {k}/delta")
                    )
            whole = t.get("whole") or {}
            if whole.get("check") not in (None, "OK"):
                fails.append(f"{build} {label} whole: {whole['check']}")
            if whole.get("cpu_s"):
                if (t.get("floor") or {}).get("cpu_s"):
                    out["whole_floor"][build].append((t["floor"]["cpu_s"] / whole["cpu_s"], label))
                if (v.get("whole") or {}).get("cpu_s"):
                    out["vllm_whole"][build].append((v["whole"]["cpu_s"] / whole["cpu_s"], label))
        for row in results[build].get("layers") or []:
            label = f"{row['output']} {row['deltas']}"
            out["chat_engine"][build].append((row["chat"] / row["engine"], label))
        for row in results[build].get("plugin") or []:
            label = f"{row['combo']} {row['tokens']:,} {row['chunk']}/delta"
            out["plugin_native"][build].append((row["trisect"] / row["native"], label))
            out["loop_share"][build].append((row["trisect"] / (row["detok"] + row["trisect"]), label))
            fails += [f"{build} plugin {label} {k}: {v}" for k, v in row.items() if k.startswith("check") and v != "OK"]
        serve = results[build].get("serve")
        if serve:
            out["serve_chunk"][build].append((serve["cpu_us_per_chunk"], "qwen3+hermes, 4 characters per chunk"))
    return out, fails


def fmt(value: float, key: str) -> str:
    if key == "loop_share":
        return f"{value:.0%}"
    if key == "serve_chunk":
        return f"{value:.1f} µs"
    return f"{value:.2f}x"


def report(results: dict[str, dict[str, Any]], header: list[str]) -> str:
    table, fails = ratios(results)
    lines = [*header, "", "Targets (the worst row of each; CPU time, medians of 3):", ""]
    rows = [["target", "limit", "pure", "compiled", "met (compiled)", "worst row (compiled)"]]
    for key, what, limit, direction in TARGETS:
        cells = [what, ("≤ " if direction == "max" else "≥ ") + fmt(limit, key)]
        got = {b: worst(table[key][b], direction) for b in BUILDS}
        for b in BUILDS:
            cells.append(fmt(got[b][0], key) if got[b] else "not measured")
        c = got["compiled"]
        if c is None:
            cells += ["-", ""]
        else:
            met = c[0] <= limit if direction == "max" else c[0] >= limit
            cells += ["yes" if met else "NO", c[1]]
        rows.append(cells)
    lines += text_table(rows)
    for key, what, _limit, _direction in TARGETS:
        if not any(table[key][b] for b in BUILDS):
            continue
        lines += ["", f"{what}, per row:"]
        labels = list(dict.fromkeys(label for b in BUILDS for _, label in table[key][b]))
        by = {b: {label: v for v, label in table[key][b]} for b in BUILDS}
        body = [["row", *BUILDS, "compiled / pure" if key != "loop_share" else ""]]
        for label in labels:
            p, c = by["pure"].get(label), by["compiled"].get(label)
            speed = ""
            if p and c and key in ("stream_floor", "chat_engine", "plugin_native", "serve_chunk"):
                speed = f"{c / p:.2f}"
            elif p and c and key in ("whole_floor", "vllm_stream", "vllm_whole"):
                speed = f"{p / c:.2f}"
            body.append([label, *(fmt(x, key) if x is not None else "-" for x in (p, c)), speed])
        lines += text_table(body)
    if fails:
        lines += ["", "Failed checks:", *(f"  {f}" for f in fails)]
    return "\n".join(lines)


def text_table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in rows
    ]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", help="a compiled wheel to measure (default: build one from this checkout)")
    ap.add_argument("--lengths", default="1k,4k,16k", help="bench.py's lengths (default %(default)s)")
    ap.add_argument("--combos", help="bench.py's combos (default: all)")
    ap.add_argument("--words", type=int, default=4000, help="words per output of the layer rows")
    ap.add_argument("--vllm-venv", help="the vLLM venv (default: $VLLM_VENV or ~/.cache/trisect-ci/vllm-venv)")
    ap.add_argument("--skip", default="", help="comma-separated parts to leave out: bench,layers,plugin,serve")
    ap.add_argument("--out", default=str(HERE / "results" / "targets.txt"), help="the report (git ignores results/)")
    ap.add_argument("--layers", metavar="OUT", help=argparse.SUPPRESS)  # the layers child
    args = ap.parse_args(argv)
    if args.layers:
        layers_child(Path(args.layers), args.words, 3)
        return 0
    skip = set(filter(None, args.skip.split(",")))
    venv = Path(args.vllm_venv or os.environ.get("VLLM_VENV") or Path.home() / ".cache/trisect-ci/vllm-venv")
    vllm_py = venv / "bin" / "python"
    start, load_start = time.perf_counter(), load()
    with tempfile.TemporaryDirectory(prefix="trisect-targets-") as name:
        tmp = Path(name)
        wheel = Path(args.wheel) if args.wheel else build_wheel(tmp)
        site = unpack(wheel, tmp)
        results: dict[str, dict[str, Any]] = {b: {} for b in BUILDS}
        for build in BUILDS:
            env = child_env(site, build)
            probe = subprocess.run(
                [sys.executable, "-c", "import trisect, trisect.native as n; print(n.build())"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            log(f"{build}: {probe}")
            results[build]["probe"] = probe
            if "bench" not in skip:
                out = tmp / f"bench-{build}.json"
                cmd = [sys.executable, str(HERE / "bench.py"), "--lengths", args.lengths, "--clock", "cpu"]
                cmd += ["--repeats", "3", "--json-out", str(out), "--out", str(tmp / f"bench-{build}.md")]
                cmd += ["--combos", args.combos] if args.combos else []
                cmd += ["--vllm-venv", str(venv)] if build == "compiled" else ["--no-vllm"]
                results[build]["bench"] = run_child(f"{build} bench.py", cmd, env, out, tmp / f"bench-{build}.log")
            if "layers" not in skip:
                out = tmp / f"layers-{build}.json"
                cmd = [sys.executable, str(HERE / "targets.py"), "--layers", str(out), "--words", str(args.words)]
                results[build]["layers"] = run_child(f"{build} layers", cmd, env, out, tmp / f"layers-{build}.log")
            if "plugin" not in skip and vllm_py.exists():
                out = tmp / f"plugin-{build}.json"
                cmd = [str(vllm_py), str(HERE / "bench_vllm_plugin.py"), "--lengths", "16k", "--json-out", str(out)]
                plugin_env = env | {"VLLM_TARGET_DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
                results[build]["plugin"] = run_child(
                    f"{build} plugin", cmd, plugin_env, out, tmp / f"plugin-{build}.log"
                )
            if "serve" not in skip:
                out = tmp / f"serve-{build}.json"
                cmd = [sys.executable, str(HERE / "bench_serve.py"), "--quick", "--json-out", str(out)]
                results[build]["serve"] = run_child(f"{build} serve", cmd, env, out, tmp / f"serve-{build}.log")
        header = [
            f"trisect speed targets: {wheel.name} ({wheel.stat().st_size / 1e6:.1f} MB), "
            f"{os.cpu_count()} CPUs, load average {load_start:.1f} at the start and {load():.1f} at the end, "
            f"{time.perf_counter() - start:.0f} s",
            *(f"{b}: {results[b]['probe']}" for b in BUILDS),
            "" if vllm_py.exists() else f"no vLLM venv at {venv}: the vLLM and plugin rows are not measured",
        ]
        text = report(results, [h for h in header if h])
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
