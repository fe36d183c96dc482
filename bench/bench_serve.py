"""What ``trisect serve`` adds: latency per request and per chunk, and chunks/s under concurrency.

    .venv/bin/python bench/bench_serve.py            # ~1 min on a shared 2-core box
    .venv/bin/python bench/bench_serve.py --quick

Three processes, as in production: a zero-latency replay engine (``trisect.serve.replay``, vLLM
wire format, every chunk written as soon as it is asked for), the trisect server (uvicorn, one
worker) in front of it, and this client (httpx, async). The same output (Qwen3 + hermes: reasoning,
content, one tool call; one chunk per 4 characters) is fetched

* **direct**: a raw ``/v1/completions`` stream from the engine, read line by line;
* **proxy**: ``/v1/chat/completions`` (stream) through trisect, which renders the template,
  calls the engine and parses every chunk.

Added latency = proxy - direct, per request (an 8-chunk output, median of N sequential
requests) and per chunk (the slope between a 16-chunk and a 512-chunk output). Throughput:
chunks/s the client receives through the proxy with 1, 16 and 256 streams at once. Nothing is
asserted; the table is printed and the ratios are measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import multiprocessing
import os
import socket
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("trisect") is None:  # else the installed trisect (bench/targets.py: a built wheel)
    sys.path.insert(0, str(ROOT / "src"))

TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def output(chunks: int) -> str:
    words = "".join(f"w{i % 10}  " for i in range(max(1, chunks - 24)))
    call = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    return f"<think>plan it</think>{words}{call}"


def _pieces(text: str) -> tuple:
    from trisect.serve.replay import ReplayPiece

    return tuple(ReplayPiece(text[i : i + 4]) for i in range(0, len(text), 4))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_engine(port: int) -> None:
    from trisect.serve.replay import ReplayChoice, ReplayServer

    cache: dict[int, tuple] = {}

    def responder(body: dict) -> list:
        n = int(body["prompt"].split("chunks=")[1].split("<")[0])
        if n not in cache:
            cache[n] = _pieces(output(n))
        return [ReplayChoice(cache[n])]

    async def main() -> None:
        server = ReplayServer("vllm", responder)
        server._server = await asyncio.start_server(server._connection, "127.0.0.1", port, backlog=1024)
        await asyncio.Event().wait()

    asyncio.run(main())


def run_proxy(port: int, engine: int) -> None:
    import uvicorn

    from trisect import Parser
    from trisect.serve.app import create_app
    from trisect.serve.model import ServedModel
    from trisect.serve.service import Service
    from trisect.serve.upstream.http import HTTPUpstream
    from trisect.templates import ChatTemplate

    served = ServedModel(
        names=("bench",), parser=Parser("qwen3", "hermes"), template=ChatTemplate(TEMPLATE), reasoning_end=("</think>",)
    )
    app = create_app(Service(served, HTTPUpstream(f"http://127.0.0.1:{engine}", "vllm")))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", workers=1, backlog=2048)


async def _wait(port: int) -> None:
    import httpx

    for _ in range(400):
        try:
            async with httpx.AsyncClient() as c:
                await c.get(f"http://127.0.0.1:{port}/v1/models")
                return
        except httpx.HTTPError:
            await asyncio.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


async def direct(client: object, engine: int, chunks: int) -> int:
    body = {"prompt": f"<|im_start|>user\nchunks={chunks}<|im_end|>\n", "stream": True, "max_tokens": None}
    seen = 0
    async with client.stream("POST", f"http://127.0.0.1:{engine}/v1/completions", json=body) as r:  # type: ignore[attr-defined]
        async for line in r.aiter_lines():
            seen += line.startswith("data: {")
    return seen


async def proxy(client: object, port: int, chunks: int) -> int:
    body = {
        "model": "bench",
        "messages": [{"role": "user", "content": f"chunks={chunks}"}],
        "tools": TOOLS,
        "stream": True,
    }
    seen = 0
    async with client.stream("POST", f"http://127.0.0.1:{port}/v1/chat/completions", json=body) as r:  # type: ignore[attr-defined]
        async for line in r.aiter_lines():
            seen += line.startswith("data: {")
    return seen


async def timed(fn: object, *args: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        await fn(*args)  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of process ``pid`` so far (Linux: /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def cpu_timed(pid: int, fn: object, *args: object, repeat: int) -> float:
    """CPU seconds process ``pid`` spends per call of ``fn`` (``repeat`` calls, then the mean)."""
    start = cpu_seconds(pid)
    for _ in range(repeat):
        await fn(*args)  # type: ignore[operator]
    return (cpu_seconds(pid) - start) / repeat


async def measure(engine: int, port: int, quick: bool, proxy_pid: int, result: dict) -> list[tuple[str, str, str, str]]:
    import httpx

    repeat = 15 if quick else 40
    rows = []
    async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=300)) as client:
        for _ in range(5):  # warm-up: connections, template compile, parser compile
            await proxy(client, port, 16)
            await direct(client, engine, 16)
        d8 = await timed(direct, client, engine, 8, repeat=repeat)
        p8 = await timed(proxy, client, port, 8, repeat=repeat)
        rows.append(("request, 8 chunks", f"{d8 * 1e3:.2f} ms", f"{p8 * 1e3:.2f} ms", f"+{(p8 - d8) * 1e3:.2f} ms"))
        long = 512
        d16 = await timed(direct, client, engine, 16, repeat=repeat)
        p16 = await timed(proxy, client, port, 16, repeat=repeat)
        dl = await timed(direct, client, engine, long, repeat=max(3, repeat // 5))
        pl = await timed(proxy, client, port, long, repeat=max(3, repeat // 5))
        per_direct = (dl - d16) / (long - 16)
        per_proxy = (pl - p16) / (long - 16)
        rows.append(
            (
                "per chunk (slope 16→512)",
                f"{per_direct * 1e6:.1f} µs",
                f"{per_proxy * 1e6:.1f} µs",
                f"+{(per_proxy - per_direct) * 1e6:.1f} µs",
            )
        )
        # what the trisect server's process spends per chunk, in CPU time (the replay engine and
        # this client do the same work with or without it): the slope of its CPU time
        reps = max(10, repeat // 2)
        c16 = await cpu_timed(proxy_pid, proxy, client, port, 16, repeat=reps)
        cl = await cpu_timed(proxy_pid, proxy, client, port, long, repeat=reps)
        per_cpu = (cl - c16) / (long - 16)
        rows.append(("trisect server CPU per chunk", "", f"{per_cpu * 1e6:.1f} µs", f"+{per_cpu * 1e6:.1f} µs"))
        result.update(wall_us_per_chunk=(per_proxy - per_direct) * 1e6, cpu_us_per_chunk=per_cpu * 1e6)
    for streams in (1, 16, 256):
        async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=300)) as client:
            per_stream = 64
            t = time.perf_counter()
            counts = await asyncio.gather(*(proxy(client, port, per_stream) for _ in range(streams)))
            elapsed = time.perf_counter() - t
            t = time.perf_counter()
            direct_counts = await asyncio.gather(*(direct(client, engine, per_stream) for _ in range(streams)))
            direct_elapsed = time.perf_counter() - t
            rate, direct_rate = sum(counts) / elapsed, sum(direct_counts) / direct_elapsed
            rows.append(
                (f"chunks/s, {streams} streams", f"{direct_rate:,.0f}", f"{rate:,.0f}", f"x{rate / direct_rate:.2f}")
            )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json-out", help="also write the per-chunk figures here as JSON")
    args = ap.parse_args()
    engine, port = _free_port(), _free_port()
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=run_engine, args=(engine,), daemon=True),
        ctx.Process(target=run_proxy, args=(port, engine), daemon=True),
    ]
    for p in procs:
        p.start()
    try:
        asyncio.run(_wait(port))
        result: dict = {}
        rows = asyncio.run(measure(engine, port, args.quick, procs[1].pid, result))
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(result))
    finally:
        for p in procs:
            p.terminate()
            p.join(5)
    header = ("measure", "direct (engine)", "proxy (trisect)", "added")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(4)]
    fast = [m for m in ("httptools", "uvloop") if importlib.util.find_spec(m) is not None]
    print(
        f"trisect serve bench (cpu count {os.cpu_count()}, load {os.getloadavg()[0]:.1f}, uvicorn with "
        f"{' + '.join(fast) or 'h11 + asyncio'}); chunks/s: chunks the client receives"
    )
    for r in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
