#!/usr/bin/env python
"""A stream that travels: one reasoning + tool-call generation derendered one token per chunk,
each chunk stateless (the stream resumed from the previous chunk's ``stream_state``), against
vLLM 0.33's own streaming derender, which replays every earlier token on every chunk.

    .venv/bin/python bench/bench_state.py                 # trisect 1k..64k, HTTP 1k..16k, vLLM 1k, 2k, 4k
    .venv/bin/python bench/bench_state.py --quick         # 1k, 4k; vLLM 1k only
    .venv/bin/python bench/bench_state.py --no-vllm --no-http

The output is bench.py's ``qwen3+hermes`` ``tools`` shape (long reasoning, a short answer, 1-3
calls with long string arguments) tokenized with the real Qwen3 vocabulary. Measured, one token
per chunk, process CPU per chunk (``time.process_time_ns``, garbage collection paused and run
between chunks so it lands in no chunk):

* **function**: ``Derenderer.chat_chunk`` (``trisect.serve.scale_out``) on the request body a
  client sends: decode ``stream_state``, ``Parser.resume``, feed the chunk's id, build the chunk,
  ``to_state``, encode. Split into its parts: resume (unseal + rebuild), feed, to_state (seal).
* **in process**: the same stream kept in memory, ``StreamParser.feed(None, [id])`` per chunk:
  what the chunk costs when nothing travels.
* **HTTP**: ``POST /v1/chat/completions/derender`` to a ``trisect serve --scale-out`` process;
  its CPU per chunk from ``/proc/PID/stat`` (utime + stime over the whole stream / chunks).
* **vLLM**: ``OnlineDerenderer._derender_chat_stream_parsed`` with vLLM's ``qwen3`` + ``hermes``
  parsers (``bench/vllm_derender_driver.py``, the vLLM venv's Python): at 1k, 2k and 4k only,
  since its cost grows faster than n² (the replay of n chunks, each rescanning its text).

Printed: the per-chunk CPU against the chunk index (in 8 bands), the ``stream_state`` bytes per
chunk (and the held text, the UTF-8 bytes of the strings in the state's value), the totals, and
the targets with their measured ratios:

* flat: at the longest length, the median chunk of the last 1,000 at most 1.2x the first 1,000's;
* a stateless chunk (resume, feed, to_state) at most 2x an in-process ``feed()`` of it;
* at 4k, at least 1,000x less total CPU than vLLM's replay;
* ``stream_state`` at most 2 KiB plus the held text at every chunk.

Nothing asserts: the numbers are printed, with PASS / MISS per target. A heavy job: on shared
machines run it alone (about two cores for several minutes).
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "integrations"))
sys.path.insert(0, str(REPO / "src"))

from bench import find_vllm_python, make_output  # noqa: E402
from bench_common import TOOLS  # noqa: E402

KEY = b"bench key: thirty-two bytes long"
PROMPT = "<|im_start|>user\nGo.<|im_end|>\n<|im_start|>assistant\n"
EOS = 151645
BANDS = 8


def log(msg: str) -> None:
    print(f"[bench_state] {msg}", file=sys.stderr, flush=True)


def _lengths(text: str) -> list[int]:
    return [int(float(x[:-1]) * 1000) if x.endswith("k") else int(x) for x in text.split(",") if x]


def output(target: int) -> tuple[list[int], list[int], dict[str, Any]]:
    from support import tokenizers

    def count(text: str) -> int:
        return len(tokenizers.encode("qwen3", text))

    text, expect = make_output("qwen3+hermes", "tools", target, count)
    return tokenizers.encode("qwen3", text) + [EOS], tokenizers.encode("qwen3", PROMPT), expect


def _body(token: int, last: bool, state: Any, prompt: list[int] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "stream": True,
        "generate_chunk": {
            "request_id": "b",
            "choices": [{"index": 0, "token_ids": [token], "finish_reason": "stop" if last else None}],
        },
        "stream_state": state,
        "chat_request": {"messages": [{"role": "user", "content": "Go."}], "tools": TOOLS},
    }
    if prompt is not None:
        body["prompt_token_ids"] = prompt
    return body


def _check(folded: dict[str, str], expect: dict[str, Any]) -> str:
    args = folded["arguments"]
    calls = []
    decoder = json.JSONDecoder()
    pos = 0
    while pos < len(args):  # the calls' arguments, concatenated in order
        value, pos = decoder.raw_decode(args, pos)
        calls.append(value)
    want = [c[1] for c in expect["calls"]]
    if calls != want:
        return f"FAIL: arguments {str(calls)[:80]} != {str(want)[:80]}"
    if folded["reasoning"].strip() != expect["reasoning"].strip():
        return "FAIL: reasoning"
    if folded["content"].strip() != expect["content"].strip():
        return "FAIL: content"
    return "OK"


def run_function(ids: list[int], prompt: list[int], expect: dict[str, Any]) -> dict[str, Any]:
    """Every chunk through ``Derenderer.chat_chunk``, stateless; and the same stream in memory."""
    from support import tokenizers
    from trisect import Parser
    from trisect.serve.scale_out.derender import STATE_FIELD, Derenderer
    from trisect.testing import held_text

    parser = Parser("qwen3", "hermes", tokenizer=tokenizers.load("qwen3"))
    derender = Derenderer(parser, KEY, model_names=("bench",), eos_id=EOS)
    clock = time.process_time_ns
    cpu, resume_ns, feed_ns, seal_ns, sizes, held = [], [], [], [], [], []
    folded = {"reasoning": "", "content": "", "arguments": ""}
    state = None
    options = {"tools": TOOLS, "tool_choice": "auto", "parallel_tool_calls": True, "include_reasoning": True}
    options |= {"chat_template_kwargs": {}, "history_tool_calls": 0}
    gc.collect()
    gc.disable()
    try:
        for k, token in enumerate(ids):
            last = k == len(ids) - 1
            body = _body(token, last, state, prompt if k == 0 else None)
            t0 = clock()
            answer = derender.chat_chunk(body)
            cpu.append(clock() - t0)
            state = answer["stream_state"]
            raw = base64.urlsafe_b64decode(state[STATE_FIELD])
            sizes.append(len(raw))
            # the same chunk's parts, timed on their own: resume, feed, to_state
            t0 = clock()
            stream = parser.resume(raw, KEY, **options)
            t1 = clock()
            held.append(held_text(stream.to_value()))
            resume_ns.append(t1 - t0)
            t0 = clock()
            stream.to_state(KEY, carry=stream.carried)
            seal_ns.append(clock() - t0)
            delta = answer["chunk"]["choices"][0]["delta"]
            folded["reasoning"] += delta["reasoning"] or ""
            folded["content"] += delta["content"] or ""
            folded["arguments"] += "".join(tc["function"]["arguments"] or "" for tc in delta["tool_calls"])
            if k % 256 == 0:
                gc.collect()
        # in process: one stream kept in memory, fed the same chunks
        stream = parser.stream(prompt_token_ids=prompt, **options)
        gc.collect()
        for k, token in enumerate(ids):
            t0 = clock()
            stream.feed(None, [token])
            feed_ns.append(clock() - t0)
            if k % 256 == 0:
                gc.collect()
        stream.finish()
    finally:
        gc.enable()
    return {
        "cpu_ns": cpu,
        "resume_ns": resume_ns,
        "seal_ns": seal_ns,
        "feed_ns": feed_ns,
        "state_bytes": sizes,
        "held": held,
        "check": _check(folded, expect),
    }


def run_memory(lengths: list[int]) -> dict[int, dict[str, Any]]:
    """One call whose string argument is ``n`` tokens, streamed one token per ``feed()`` (ids
    alone): at 8 points of the argument, the memory the stream holds (``tracemalloc``: what was
    allocated since the stream started and is still alive), its state's size and held text, and
    the cost of ``copy()`` there. Flat means bounded by ``call_text_limit``, not by the argument."""
    import tracemalloc

    from support import tokenizers
    from trisect import Parser
    from trisect.testing import held_text

    parser = Parser("qwen3", "hermes", tokenizer=tokenizers.load("qwen3"))
    line = "for item in items:\\n    total += item.price * 2  # 😀 café\\n"
    out: dict[int, dict[str, Any]] = {}
    for n in lengths:
        head = '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.py", "content": "'
        body = line * (n // 20)
        ids = tokenizers.encode("qwen3", head + body)
        ids = ids[: len(tokenizers.encode("qwen3", head)) + n]
        stream = parser.stream(tools=TOOLS)
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        points = []
        marks = {len(ids) * (b + 1) // BANDS - 1 for b in range(BANDS)}
        for k, token in enumerate(ids):
            stream.feed(None, [token])
            if k in marks:
                gc.collect()
                live = tracemalloc.get_traced_memory()[0] - base
                tracemalloc.stop()
                t0 = time.perf_counter_ns()
                for _ in range(20):
                    stream.copy()
                copy_us = (time.perf_counter_ns() - t0) / 20 / 1e3
                state = stream.to_state(KEY)
                points.append((k + 1, live, len(state), held_text(stream.to_value()), copy_us))
                tracemalloc.start()
                base = tracemalloc.get_traced_memory()[0] - live
        tracemalloc.stop()
        out[n] = {"points": points}
        log(f"memory {n} tokens of argument: {points[-1][1] / 1024:.0f} KiB live at the end")
    return out


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_http(lengths: list[int], outputs: dict[int, Any]) -> dict[int, dict[str, Any]]:
    """Every chunk through ``POST /v1/chat/completions/derender`` of a ``trisect serve
    --scale-out`` process (its tokenizer: the same vocabulary as a Hugging Face tokenizer)."""
    import socket

    import hf_tokenizers
    import httpx

    folder = hf_tokenizers.hf_dir("qwen3")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    template = tempfile.NamedTemporaryFile("w", suffix=".jinja", delete=False)
    template.write("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}")
    template.write("{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    template.close()
    env = {**os.environ, "TRISECT_STATE_KEY": KEY.decode()}
    command = [sys.executable, "-m", "trisect", "serve", "--scale-out", "--tokenizer", str(folder / "tokenizer.json")]
    command += ["--chat-template", template.name, "--reasoning-parser", "qwen3", "--tool-call-parser", "hermes"]
    command += ["--port", str(port), "--log-level", "warning"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1/chat/completions/derender"
    out: dict[int, dict[str, Any]] = {}
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("the scale-out server did not start")
            time.sleep(0.2)
        with httpx.Client(timeout=60) as client:
            for target in lengths:
                ids, prompt, expect = outputs[target]
                state = None
                folded = {"reasoning": "", "content": "", "arguments": ""}
                latency = []
                cpu0 = _proc_cpu(server.pid)
                for k, token in enumerate(ids):
                    body = _body(token, k == len(ids) - 1, state, prompt if k == 0 else None)
                    t0 = time.perf_counter()
                    response = client.post(url, json=body)
                    latency.append(time.perf_counter() - t0)
                    answer = response.json()
                    state = answer["stream_state"]
                    delta = answer["chunk"]["choices"][0]["delta"]
                    folded["reasoning"] += delta["reasoning"] or ""
                    folded["content"] += delta["content"] or ""
                    folded["arguments"] += "".join(tc["function"]["arguments"] or "" for tc in delta["tool_calls"])
                cpu = _proc_cpu(server.pid) - cpu0
                out[target] = {
                    "server_cpu_s": cpu,
                    "latency_us": statistics.median(latency) * 1e6,
                    "check": _check(folded, expect),
                }
                log(
                    f"HTTP {len(ids)} chunks: server {cpu:.2f} s CPU, median latency {out[target]['latency_us']:.0f} µs"
                )
    finally:
        server.terminate()
        server.wait(30)
        os.unlink(template.name)
    return out


def run_vllm(py: Path, lengths: list[int], outputs: dict[int, Any]) -> dict[int, dict[str, Any]]:
    import hf_tokenizers

    job = {
        "hf_dir": str(hf_tokenizers.hf_dir("qwen3")),
        "cases": [{"target": t, "ids": outputs[t][0], "prompt_ids": outputs[t][1], "tools": TOOLS} for t in lengths],
    }
    with tempfile.TemporaryDirectory() as tmp:
        job_path, out_path = Path(tmp) / "job.json", Path(tmp) / "out.json"
        job_path.write_text(json.dumps(job))
        subprocess.run([str(py), str(HERE / "vllm_derender_driver.py"), str(job_path), str(out_path)], check=True)
        results = json.loads(out_path.read_text())
    out = {}
    for r in results:
        expect = outputs[r["target"]][2]
        folded = {"reasoning": r["reasoning"], "content": r["content"], "arguments": r["arguments"]}
        out[r["target"]] = {**r, "check": _check(folded, expect)}
    return out


# ---------------------------------------------------------------------------------------- report


def _bands(values: list[int], scale: float = 1e3) -> list[str]:
    n = len(values)
    out = []
    for b in range(BANDS):
        part = values[b * n // BANDS : (b + 1) * n // BANDS]
        out.append(f"{statistics.median(part) / scale:.1f}" if part else "-")
    return out


def _row(cells: list[Any]) -> str:
    return " | ".join(str(c) for c in cells)


def report(
    lengths: list[int],
    fn: dict[int, Any],
    http: dict[int, Any],
    vllm: dict[int, Any],
    memory: dict[int, Any],
) -> str:
    lines = ["## trisect: per-chunk CPU (µs, median per band of chunk index)", ""]
    lines.append(_row(["tokens", *[f"band {b + 1}" for b in range(BANDS)], "total s", "check"]))
    for t in lengths:
        r = fn[t]
        lines.append(_row([len(r["cpu_ns"]), *_bands(r["cpu_ns"]), f"{sum(r['cpu_ns']) / 1e9:.3f}", r["check"]]))
    lines += ["", "## trisect: a chunk's parts (µs, median)", ""]
    lines.append(_row(["tokens", "whole chunk", "resume", "to_state", "in-process feed()", "HTTP server CPU/chunk"]))
    for t in lengths:
        r = fn[t]
        h = http.get(t)
        per = f"{h['server_cpu_s'] / len(r['cpu_ns']) * 1e6:.1f}" if h else "-"
        lines.append(
            _row(
                [
                    len(r["cpu_ns"]),
                    f"{statistics.median(r['cpu_ns']) / 1e3:.1f}",
                    f"{statistics.median(r['resume_ns']) / 1e3:.1f}",
                    f"{statistics.median(r['seal_ns']) / 1e3:.1f}",
                    f"{statistics.median(r['feed_ns']) / 1e3:.2f}",
                    per,
                ]
            )
        )
    lines += ["", "## stream_state bytes per chunk (band max) and held text (band max)", ""]
    lines.append(_row(["tokens", *[f"band {b + 1}" for b in range(BANDS)], "max", "max - held"]))
    for t in lengths:
        r = fn[t]
        sizes, held = r["state_bytes"], r["held"]
        n = len(sizes)
        bands = [max(sizes[b * n // BANDS : (b + 1) * n // BANDS] or [0]) for b in range(BANDS)]
        over = max(s - h for s, h in zip(sizes, held, strict=True))
        lines.append(_row([n, *bands, max(sizes), over]))
    if vllm:
        lines += ["", "## vLLM 0.33 replay derender: per-chunk CPU (µs, median per band)", ""]
        lines.append(
            _row(["tokens", *[f"band {b + 1}" for b in range(BANDS)], "total s", "state bytes (last)", "check"])
        )
        for _t, r in sorted(vllm.items()):
            total = sum(r["cpu_ns"]) / 1e9
            lines.append(_row([r["tokens"], *_bands(r["cpu_ns"]), f"{total:.2f}", r["state_bytes"][-1], r["check"]]))
        lines += ["", "## vLLM replay against trisect (total CPU of one generation)", ""]
        lines.append(_row(["tokens", "vLLM s", "trisect s", "ratio"]))
        for t, r in sorted(vllm.items()):
            v, s = sum(r["cpu_ns"]) / 1e9, sum(fn[t]["cpu_ns"]) / 1e9
            lines.append(_row([r["tokens"], f"{v:.2f}", f"{s:.4f}", f"{v / s:,.0f}x"]))
    if memory:
        lines += ["", "## inside one argument: memory per stream (tracemalloc), state, copy()", ""]
        lines.append(_row(["argument tokens", "at token", "live KiB", "state bytes", "held text", "copy() µs"]))
        for n, m in sorted(memory.items()):
            for at, live, size, held, copy_us in m["points"]:
                lines.append(_row([n, at, f"{live / 1024:.1f}", size, held, f"{copy_us:.1f}"]))
    lines += ["", "## targets", ""]
    longest = max(lengths)
    r = fn[longest]
    first, last = statistics.median(r["cpu_ns"][:1000]), statistics.median(r["cpu_ns"][-1000:])
    flat = last / first
    lines.append(
        f"{'PASS' if flat <= 1.2 else 'MISS'} flat at {longest}: last 1,000 / first 1,000 = {flat:.2f}x (<= 1.2x)"
    )
    ratios = []
    for t in lengths:
        parts = [a + b + c for a, b, c in zip(fn[t]["resume_ns"], fn[t]["feed_ns"], fn[t]["seal_ns"], strict=True)]
        ratios.append(statistics.median(parts) / statistics.median(fn[t]["feed_ns"]))
    worst = max(ratios)
    lines.append(f"{'PASS' if worst <= 2 else 'MISS'} stateless chunk / in-process feed() = {worst:.1f}x (<= 2x)")
    if 4000 in vllm:
        v, s = sum(vllm[4000]["cpu_ns"]) / 1e9, sum(fn[4000]["cpu_ns"]) / 1e9
        lines.append(f"{'PASS' if v / s >= 1000 else 'MISS'} at 4k: vLLM replay / trisect = {v / s:,.0f}x (>= 1,000x)")
    else:
        lines.append("n/a at 4k against vLLM's replay (no vLLM run)")
    over = max(max(s - h for s, h in zip(fn[t]["state_bytes"], fn[t]["held"], strict=True)) for t in lengths)
    lines.append(
        f"{'PASS' if over <= 2048 else 'MISS'} stream_state - held text <= {over} bytes at every chunk (<= 2,048)"
    )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", default="1k,4k,16k,64k")
    ap.add_argument("--http-lengths", default="1k,4k,16k")
    ap.add_argument("--vllm-lengths", default="1k,2k,4k")
    ap.add_argument("--memory-lengths", default="16k,64k,256k", help="tokens of one argument (memory per stream)")
    ap.add_argument("--quick", action="store_true", help="1k and 4k; vLLM at 1k only")
    ap.add_argument("--no-vllm", action="store_true")
    ap.add_argument("--no-http", action="store_true")
    ap.add_argument("--vllm-venv", help="the vLLM venv (default: $VLLM_VENV, then the CI's or the bench's)")
    ap.add_argument("--json-out", help="write the raw timings here")
    args = ap.parse_args()
    if args.quick:
        args.lengths, args.http_lengths, args.vllm_lengths, args.memory_lengths = "1k,4k", "1k", "1k", "16k"
    lengths = _lengths(args.lengths)
    http_lengths = [] if args.no_http else _lengths(args.http_lengths)
    vllm_lengths = [] if args.no_vllm else _lengths(args.vllm_lengths)
    wanted = sorted(set(lengths) | set(http_lengths) | set(vllm_lengths))
    outputs = {t: output(t) for t in wanted}
    for t in wanted:
        log(f"{t}: {len(outputs[t][0])} tokens")
    fn = {}
    for t in sorted(set(lengths) | set(vllm_lengths)):
        fn[t] = run_function(*outputs[t])
        log(f"function {len(outputs[t][0])} chunks: {sum(fn[t]['cpu_ns']) / 1e9:.3f} s CPU, {fn[t]['check']}")
    http = run_http(http_lengths, outputs) if http_lengths else {}
    vllm: dict[int, Any] = {}
    if vllm_lengths:
        if not args.vllm_venv:
            ci = Path.home() / ".cache" / "trisect-ci" / "vllm-venv"
            if ci.exists() and not os.environ.get("VLLM_VENV"):
                args.vllm_venv = str(ci)
        py, why = find_vllm_python(args)
        if py is None:
            log(f"no vLLM venv ({why}): vLLM's replay is not measured")
        else:
            vllm = run_vllm(py, vllm_lengths, outputs)
    memory = run_memory(_lengths(args.memory_lengths)) if args.memory_lengths else {}
    shown = sorted(set(lengths) | set(vllm_lengths))
    print(report(shown, fn, http, vllm, memory))
    for t, h in sorted(http.items()):
        print(f"HTTP {t}: server {h['server_cpu_s']:.2f} s CPU, median latency {h['latency_us']:.0f} µs, {h['check']}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"function": fn, "http": http, "vllm": vllm, "memory": memory}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
