"""Helpers shared by bench.py (project venv) and vllm_driver.py (vLLM venv).

Standard library only: this module is imported by both interpreters.
"""

from __future__ import annotations

import gc
import json
import math
import statistics
import time

# The OpenAI tool definitions every benchmark request carries.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Create or overwrite a text file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_shell",
            "description": "Run a shell command and return its output.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the web.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        },
    },
]


def _norm_text(s) -> str:
    return (s or "").strip()


def _args_equal(got: str, want: dict) -> bool:
    try:
        ga = json.loads(got) if got else {}
    except (TypeError, ValueError):
        return False
    if ga == want:
        return True
    # XML formats may return a schema-less value as a string; accept "600" for 600.
    if isinstance(ga, dict) and set(ga) == set(want):
        return all(ga[k] == v or str(ga[k]) == str(v) for k, v in want.items())
    return False


def check_result(result: dict, expect: dict) -> str:
    """Compare a parsed result with what the generator rendered.

    result: {"reasoning": str|None, "content": str|None,
             "tool_calls": [{"name": str, "arguments": str}]}
    expect: {"shape": "tools"|"content", "text": str (content shape only),
             "reasoning": str, "content": str, "calls": [[name, args_dict], ...]}
    Returns "OK" or "FAIL: <first difference>".
    """
    calls = result.get("tool_calls") or []
    if expect["shape"] == "content":
        if calls:
            return f"FAIL: {len(calls)} tool call(s) in a marker-free output"
        joined = (result.get("reasoning") or "") + (result.get("content") or "")
        if joined.strip() != expect["text"].strip():
            return f"FAIL: reasoning+content differ from the text ({len(joined)} vs {len(expect['text'])} chars)"
        return "OK"
    want = expect["calls"]
    if len(calls) != len(want):
        return f"FAIL: {len(calls)} tool calls, expected {len(want)}"
    for i, (c, (name, args)) in enumerate(zip(calls, want, strict=True)):
        if c.get("name") != name:
            return f"FAIL: call {i} name {c.get('name')!r}, expected {name!r}"
        if not _args_equal(c.get("arguments"), args):
            got = c.get("arguments") or ""
            return f"FAIL: call {i} arguments differ ({len(got)} chars: {got[:40]!r}...)"
    if _norm_text(result.get("reasoning")) != _norm_text(expect.get("reasoning")):
        r = result.get("reasoning") or ""
        return f"FAIL: reasoning differs ({len(r)} vs {len(expect.get('reasoning') or '')} chars)"
    if _norm_text(result.get("content")) != _norm_text(expect.get("content")):
        return f"FAIL: content {_norm_text(result.get('content'))[:40]!r}"
    return "OK"


def estimate_seconds(history: list[tuple[int, float]], n_tokens: int) -> float | None:
    """Projected seconds for one stream of n_tokens.

    history: (tokens, microseconds per token) measured at shorter lengths, in order.
    The per-token cost is extrapolated as tokens**a, with a taken from the last two
    lengths (a = 0 for a flat cost, a = 1 for a quadratic total).
    """
    if not history:
        return None
    n1, c1 = history[-1]
    growth = 0.0
    if len(history) >= 2:
        n0, c0 = history[-2]
        if c0 > 0 and c1 > 0 and n1 > n0:
            growth = max(0.0, math.log(c1 / c0) / math.log(n1 / n0))
    cost = c1 * (n_tokens / n1) ** growth if n_tokens > n1 else c1
    return cost * n_tokens / 1e6


def settle_gc() -> None:
    """Collect garbage, then move every surviving object to the permanent generation.

    Called before each timed run. Without the freeze, a collection triggered inside the
    timed region would walk the whole set-up heap: the token pieces, vLLM's modules and
    the 150k-entry vocabularies. That would charge a cost growing with the set-up to
    whichever parser happened to trigger it. Objects still die by reference counting,
    and this function collects cycles before each freeze.
    """
    gc.collect()
    gc.freeze()


def clock_start() -> tuple[float, float]:
    """Start a timed region: wall clock (time.perf_counter) and process CPU time."""
    return time.perf_counter(), time.process_time()


def clock_stop(start: tuple[float, float]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) since clock_start().

    On a shared machine, the wall clock also counts the time other processes held the
    CPU. That inflates long runs more than short ones, because a short run often fits in
    one scheduler slice. CPU time does not count it.
    """
    wall = time.perf_counter() - start[0]
    return wall, time.process_time() - start[1]


def add_run(entry: dict, t: tuple[float, float]) -> None:
    entry.setdefault("runs", []).append(t[0])
    entry.setdefault("cpu_runs", []).append(t[1])


def summarize(entry: dict, n_tokens: int | None = None) -> None:
    """Medians: stream entries get us_per_tok / cpu_us_per_tok, whole entries s / cpu_s."""
    wall = statistics.median(entry["runs"])
    cpu = statistics.median(entry["cpu_runs"])
    if n_tokens:
        entry["us_per_tok"] = wall / n_tokens * 1e6
        entry["cpu_us_per_tok"] = cpu / n_tokens * 1e6
    else:
        entry["s"] = wall
        entry["cpu_s"] = cpu
