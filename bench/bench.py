#!/usr/bin/env python
"""trisect benchmark: streaming cost per token and whole-output throughput,
side by side with vLLM's own parsers when a vLLM venv is present.

    .venv/bin/python bench/bench.py             # 1k..256k tokens, all combos
    .venv/bin/python bench/bench.py --quick     # 1k, 4k, 16k only
    .venv/bin/python bench/bench.py --lengths 1k,64k --combos qwen3+hermes --no-vllm

For every format combination and length it builds one synthetic model output
("tools": long reasoning, then 1-3 tool calls with long string arguments) and
one marker-free output ("content"), cuts it into token pieces with the family's
real tokenizer (tiktoken; a regex word splitter when tiktoken or the data is
missing), and times outside of any set-up:

  * stream, one token per delta and N (default 4) tokens per delta: cost per
    token in microseconds, and its growth cost(longest)/cost(shortest);
  * whole output: ``parser.parse(text, tools=...)`` in MB/s.

With a vLLM venv (env VLLM_VENV, default ~/.cache/trisect-bench/vllm-venv) the
same token ids and deltas go, in the same run, through vLLM's parsers via
bench/vllm_driver.py (vLLM's serving code path from ../shared/bench/vllm_oracle.py).
Each result is checked against what was rendered (OK / FAIL per row). No timing
is asserted anywhere. Medians over a few repeats of time.perf_counter (and of
time.process_time, shown with --clock cpu and in the growth lines).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("TRISECT_SHARED") or HERE.parents[1] / "shared" / "bench")
DATA = SHARED.parent / "data"
CACHE = Path(os.environ.get("TRISECT_BENCH_CACHE") or Path.home() / ".cache" / "trisect-bench")
DEFAULT_VENV = CACHE / "vllm-venv"

sys.path.insert(0, str(HERE))
from bench_common import (  # noqa: E402
    TOOLS,
    add_run,
    check_result,
    clock_start,
    clock_stop,
    estimate_seconds,
    settle_gc,
    summarize,
)
from floor import FLOORS  # noqa: E402

# combo -> (reasoning format, tool format, tokenizer family)
COMBOS = {
    "qwen3+qwen3_coder": ("qwen3", "qwen3_coder", "qwen2-qwen3"),
    "deepseek_r1+hermes": ("deepseek_r1", "hermes", "qwen2-qwen3"),  # R1-Distill-Qwen
    "qwen3+hermes": ("qwen3", "hermes", "qwen2-qwen3"),
    "llama3_json": (None, "llama3_json", "llama3"),
}
MARKERS = {
    "qwen3": ["<think>", "</think>"],
    "deepseek_r1": ["<think>", "</think>"],
    "hermes": ["<tool_call>", "</tool_call>"],
    "qwen3_coder": ["<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>"],
    "llama3_json": ["<|python_tag|>"],
}
DEFAULT_LENGTHS = [1000, 4000, 16000, 64000, 256000]
QUICK_LENGTHS = [1000, 4000, 16000]
SHAPES = ["tools", "content"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Synthetic model outputs
# ---------------------------------------------------------------------------

_THOUGHTS = [
    "Alright, the task is to migrate the config loader to the new schema without breaking callers.",
    "First I need to see which modules import `load_config` directly.",
    "Hmm, the old loader silently ignored unknown keys; the new one should warn instead.",
    'Let me reconsider: if a value is "null" in YAML it becomes None, not the string.',
    "The tricky part is a path like C:\\Users\\dev\\app.toml, where backslashes must survive.",
    "I could use a dict comprehension, but a plain loop is clearer when a < b or b > c.",
    "Note to self: the HTML table uses </thead> and <tbody>, which are not our tags.",
    "A placeholder such as <tool-name> or <function-id> is just text in the docs.",
    "需要注意：配置文件里可能有中文路径，比如 /数据/项目/设置.json。",
    "用户提到测试在周五之前必须全部通过，所以先写测试再改实现。",
    "The emoji in the changelog (🚀, ✅, ⚠️) must be preserved byte for byte.",
    "Counting again: 12 modules, 3 of them call `load_config(strict=True)`.",
    "Wait, that's wrong; `strict` defaults to False in version 2.4 and later.",
    "Maybe the cleanest plan is: write the new module, then run the test-suite, then fix.",
    "Edge case: an empty file should yield {} rather than raising ValueError.",
    "So, step one is writing src/config/loader.py with the new code.",
]
_CODE = [
    "import os",
    "from pathlib import Path",
    "def load_config(path: str, *, strict: bool = False) -> dict:",
    '    """Load the configuration at `path`; unknown keys warn unless strict."""',
    '    raw = Path(path).read_text(encoding="utf-8")',
    "    data = {'version': 2, 'name': \"demo\", 'tags': [\"a\", \"b\"]}",
    "    if len(raw) < 1 or raw.isspace():",
    "        return {}",
    "    for key, value in sorted(data.items()):",
    "        print(f\"{key!r} -> {value!r}\\n\", end='')",
    '    win = "C:\\\\Users\\\\dev\\\\app.toml"  # Windows path, 中文注释',
    "    if a < b and b > c:\t# tab before this comment",
    "    html = '<table><thead><tr><th>x</th></tr></thead></table>'",
    '    raise ValueError("missing key: " + repr(key))',
    "class Loader:",
    '    def __init__(self, root: str = "/etc/app") -> None:',
    "        self.root = root  # où sont les fichiers ✅",
    "    def __repr__(self) -> str:",
    '        return f"Loader(root={self.root!r})"',
]
_SHELL = [
    'grep -rn "load_config(" src/ | sort | uniq -c',
    "sed -i 's/strict=True/strict=False/g' src/app/*.py",
    'python -m pytest -q tests/test_config.py -k "not slow"',
    'echo "done: $(date +%H:%M)" >> /tmp/log.txt',
    "find . -name '*.toml' -newer setup.cfg -print0 | xargs -0 ls -la",
    "awk -F: '{print $1}' /etc/passwd | head -n 5",
]
_PROSE = [
    "Here is a summary of the changes and why each one was needed.",
    "The loader now validates every key against the schema and reports the first error.",
    "Unknown keys produce a warning that names the file and the line.",
    "Paths with backslashes, such as C:\\tools\\bin, are kept exactly as written.",
    "性能方面，新的加载器比旧版本快了大约百分之三十。",
    "If a < b, the comparison short-circuits; otherwise the fallback runs.",
    "You can run the tests with `pytest -q` and expect 42 passed.",
    "Thanks for the detailed report — the 🚀 release notes are updated too.",
]
_MD_CODE = [
    "    total = 0",
    "    for item in items:",
    "        total += item.price * item.count",
    "    return round(total, 2)",
    "def parse_line(line):",
    "    name, _, value = line.partition('=')",
    "    return name.strip(), value.strip()",
]


def _sentences(rnd: random.Random, pool: list[str], n: int, para_every: int = 7) -> str:
    out = []
    for i in range(n):
        out.append(rnd.choice(pool))
        out.append("\n\n" if i % para_every == para_every - 1 else " ")
    return "".join(out).strip()


def _code(rnd: random.Random, n_lines: int) -> str:
    return "\n".join(rnd.choice(_CODE) for _ in range(max(1, n_lines))).strip()


def _content(rnd: random.Random, units: float) -> str:
    """Marker-free answer text: prose, bullet lists and fenced code, about `units` tokens."""
    out = [rnd.choice(_PROSE)]
    used = 0.0
    while used < units:
        x = rnd.random()
        if x < 0.6:
            piece = " " + rnd.choice(_PROSE)
        elif x < 0.7:
            piece = "\n\n" + rnd.choice(_PROSE)
        elif x < 0.9:
            piece = "\n\n- " + rnd.choice(_PROSE) + "\n- " + rnd.choice(_PROSE) + "\n\n" + rnd.choice(_PROSE)
        else:
            lines = "\n".join(rnd.choice(_MD_CODE) for _ in range(rnd.randint(2, 6)))
            piece = "\n\n```python\n" + lines + "\n```\n\n" + rnd.choice(_PROSE)
        out.append(piece)
        used += len(piece) / 4
    return "".join(out)


def _calls(rnd: random.Random, n_calls: int, arg_tokens: float) -> list[list]:
    """1-3 calls whose string arguments hold about arg_tokens tokens in total."""
    kinds = ["write_file", "run_shell", "write_file"]
    weights = {"write_file": 1.0, "run_shell": 0.3}
    total_w = sum(weights[kinds[k]] for k in range(n_calls))
    calls = []
    for k in range(n_calls):
        name = kinds[k]
        share = arg_tokens * weights[name] / total_w
        if name == "write_file":
            args = {"path": f"src/config/module_{k}.py", "content": _code(rnd, int(share / 12))}
        else:
            n_cmd = max(1, int(share / 16))
            args = {"command": " && ".join(rnd.choice(_SHELL) for _ in range(n_cmd)), "timeout": 300 + 30 * k}
        calls.append([name, args])
    return calls


def _render_calls(tool: str, calls: list[list]) -> str:
    if tool == "qwen3_coder":
        parts = []
        for name, args in calls:
            s = f"<tool_call>\n<function={name}>\n"
            for k, v in args.items():
                s += f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
            parts.append(s + "</function>\n</tool_call>")
        return "\n".join(parts)
    if tool == "hermes":
        return "\n".join(
            "<tool_call>\n" + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) + "\n</tool_call>"
            for n, a in calls
        )
    if tool == "llama3_json":
        return "<|python_tag|>" + "; ".join(
            json.dumps({"name": n, "parameters": a}, ensure_ascii=False) for n, a in calls
        )
    raise ValueError(tool)


def build_output(combo: str, shape: str, units: float, target: int, seed: int = 7) -> tuple[str, dict]:
    """One model output of roughly `units` tokens, and what a parser must return."""
    r_fmt, t_fmt, _ = COMBOS[combo]
    rnd = random.Random(f"{combo}/{shape}/{target}/{seed}")
    if shape == "content":
        text = _content(rnd, units)
        return text, {"shape": "content", "text": text}
    n_calls = 1 if target <= 1500 else (2 if target <= 6000 else 3)
    reasoning = _sentences(rnd, _THOUGHTS, int(units * 0.55 / 19)) if r_fmt else ""
    calls = _calls(rnd, n_calls, units * (0.45 if r_fmt else 1.0))
    content = ""
    if t_fmt == "qwen3_coder" or combo == "qwen3+hermes":
        content = "I'll write the new loader first, then run the tests."
    text = ""
    if r_fmt:
        text = f"<think>\n{reasoning}\n</think>\n\n"
    if content:
        text += content + "\n\n"
    text += _render_calls(t_fmt, calls)
    return text, {"shape": "tools", "reasoning": reasoning, "content": content, "calls": calls}


def make_output(combo: str, shape: str, target: int, count) -> tuple[str, dict]:
    units = float(target)
    best = None
    for _ in range(12):
        text, expect = build_output(combo, shape, units, target)
        n = count(text)
        if best is None or abs(n - target) < abs(best[0] - target):
            best = (n, text, expect)
        if abs(n / target - 1) < 0.02:
            break
        units *= target / max(1, n)
    return best[1], best[2]


# ---------------------------------------------------------------------------
# Token pieces
# ---------------------------------------------------------------------------


def tokenizer_spec(family: str) -> dict | None:
    """Where the real vocabulary lives (also sent to the vLLM driver)."""
    if family == "qwen2-qwen3":
        d = DATA / "tokenizers" / "qwen2-qwen3"
        if not (d / "qwen.tiktoken").exists():
            return None
        meta = json.loads((d / "added_tokens.json").read_text(encoding="utf-8"))
        return {
            "name": family,
            "tiktoken": str(d / "qwen.tiktoken"),
            "pat_str": meta["pat_str"],
            "added": [[t["content"], t["id"], t["special"]] for t in meta["added_tokens"]],
            "bos": None,
            "eos": "<|im_end|>",
            "pad": "<|endoftext|>",
        }
    if family == "llama3":
        d = DATA / "tokenizers" / "llama3"
        if not (d / "tokenizer.model").exists():
            return None
        meta = json.loads((d / "special_tokens.json").read_text(encoding="utf-8"))
        return {
            "name": family,
            "tiktoken": str(d / "tokenizer.model"),
            "pat_str": meta["pat_str"],
            "added": [[t, i, True] for t, i in meta["special_tokens"].items()],
            "bos": "<|begin_of_text|>",
            "eos": "<|eot_id|>",
            "pad": "<|finetune_right_pad_id|>",
        }
    return None


class TiktokenPieces:
    """Real token ids, and each token's text as an incremental detokenizer emits it."""

    kind = "tiktoken"

    def __init__(self, spec: dict):
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        self.name = spec["name"]
        self.enc = tiktoken.Encoding(
            name=f"trisect-bench-{spec['name']}",
            pat_str=spec["pat_str"],
            mergeable_ranks=load_tiktoken_bpe(spec["tiktoken"]),
            special_tokens={t: i for t, i, _ in spec["added"]},
        )

    def encode(self, text: str) -> list[int]:
        return self.enc.encode(text, allowed_special="all")

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def pieces(self, text: str) -> tuple[list[str], list[int]]:
        ids = self.encode(text)
        tb = self.enc.decode_single_token_bytes
        pieces = []
        pending = b""
        for i in ids:
            # Like an engine's incremental detokenizer: a token that ends inside a
            # UTF-8 character yields nothing; its text comes with the completing token.
            pending += tb(i)
            try:
                pieces.append(pending.decode("utf-8"))
                pending = b""
            except UnicodeDecodeError:
                pieces.append("")
        if pending or "".join(pieces) != text:
            raise RuntimeError(f"{self.name}: pieces do not rebuild the text")
        return pieces, ids


class RegexPieces:
    """Fallback when no real tokenizer is available: marker strings whole, words and
    punctuation runs as pieces (roughly token-sized)."""

    kind = "regex"

    def __init__(self, markers: list[str]):
        self.name = "regex-words"
        alts = [re.escape(m) for m in sorted(set(markers), key=len, reverse=True)]
        alts += [r" ?[^\W\d_]{1,10}", r"\d{1,3}", r" ?[^\w\s]{1,3}", r"\n+", r"[ \t]+", r"."]
        self.rx = re.compile("|".join(alts), re.DOTALL)

    def count(self, text: str) -> int:
        return sum(1 for _ in self.rx.finditer(text))

    def pieces(self, text: str) -> tuple[list[str], None]:
        return self.rx.findall(text), None


def get_tokenizer(combo: str, force_regex: bool, cache: dict):
    r_fmt, t_fmt, family = COMBOS[combo]
    if not force_regex:
        if family not in cache:
            cache[family] = None
            spec = tokenizer_spec(family)
            if spec is None:
                log(f"note: no {family} tokenizer data under {DATA}; using the regex word splitter")
            else:
                try:
                    tok = TiktokenPieces(spec)
                    tok.spec = spec
                    cache[family] = tok
                except Exception as e:  # noqa: BLE001 - e.g. no tiktoken: fall back
                    log(
                        f"note: real tokenizer {family} unavailable ({type(e).__name__}: {e}); "
                        "using the regex word splitter"
                    )
        if cache[family] is not None:
            return cache[family]
    tok = RegexPieces(MARKERS.get(r_fmt, []) + MARKERS[t_fmt])
    tok.spec = None
    return tok


# ---------------------------------------------------------------------------
# trisect side
# ---------------------------------------------------------------------------


def import_trisect():
    try:
        import trisect
    except ImportError:
        sys.path.insert(0, str(REPO / "src"))
        import trisect
    return trisect


def trisect_supported(trisect, r_fmt: str | None, t_fmt: str) -> tuple[bool, str]:
    formats = getattr(trisect, "formats", None)
    if callable(formats):
        try:
            have = {(getattr(f, "kind", None), getattr(f, "name", None)) for f in formats()}
        except Exception as e:  # noqa: BLE001
            have = None
            why = f"trisect.formats() raised {type(e).__name__}: {e}"
        if have is not None:
            names = {n for _, n in have}
            for kind, name in (("reasoning", r_fmt), ("tools", t_fmt)):
                if name and (kind, name) not in have and name not in names:
                    return False, f"trisect.formats() has no {kind} format {name!r}"
            return True, ""
    else:
        why = "trisect.formats() not available"
    try:
        trisect.Parser(reasoning=r_fmt, tools=t_fmt)
    except Exception as e:  # noqa: BLE001
        return False, f"{why}; Parser(reasoning={r_fmt!r}, tools={t_fmt!r}) raised {type(e).__name__}: {e}"
    return True, ""


def _get(obj, name, default=None):
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def fold_deltas(deltas: list) -> dict:
    """Accumulate trisect Deltas the way an OpenAI streaming client does."""
    reasoning: list[str] = []
    content: list[str] = []
    calls: dict[int, dict] = {}
    aborted: set[int] = set()
    for d in deltas:
        if d is None:
            continue
        if _get(d, "reasoning"):
            reasoning.append(_get(d, "reasoning"))
        if _get(d, "content"):
            content.append(_get(d, "content"))
        for tc in _get(d, "tool_calls") or ():
            idx = _get(tc, "index", 0)
            slot = calls.setdefault(idx, {"name": None, "arguments": []})
            fn = _get(tc, "function")
            name = _get(tc, "name") or (fn and _get(fn, "name"))
            args = _get(tc, "arguments") or (fn and _get(fn, "arguments")) or ""
            if name:
                slot["name"] = name
            if args:
                slot["arguments"].append(args)
        aborted.update(_get(d, "aborted") or ())
    return {
        "reasoning": "".join(reasoning) or None,
        "content": "".join(content) or None,
        "tool_calls": [
            {"name": c["name"], "arguments": "".join(c["arguments"])}
            for i, c in sorted(calls.items())
            if i not in aborted
        ],
    }


def message_dict(msg) -> dict:
    return {
        "reasoning": _get(msg, "reasoning"),
        "content": _get(msg, "content"),
        "tool_calls": [
            {
                "name": _get(c, "name") or _get(_get(c, "function", {}), "name"),
                "arguments": _get(c, "arguments") or _get(_get(c, "function", {}), "arguments"),
            }
            for c in (_get(msg, "tool_calls") or ())
        ],
    }


def time_trisect_stream(parser, deltas: list[str], id_groups: list | None) -> tuple[tuple[float, float], list]:
    stream = parser.stream(tools=TOOLS)
    feed = stream.feed
    out: list = []
    append = out.append
    settle_gc()
    if id_groups is None:
        t0 = clock_start()
        for piece in deltas:
            d = feed(piece)
            if d is not None:
                append(d)
        d = stream.finish()
        t = clock_stop(t0)
    else:
        t0 = clock_start()
        for piece, ids in zip(deltas, id_groups, strict=True):
            d = feed(piece, ids)
            if d is not None:
                append(d)
        d = stream.finish()
        t = clock_stop(t0)
    if d is not None:
        out.append(d)
    return t, out


def time_stream_floor(parser, text: str, deltas: list[str]) -> tuple[float, float]:
    """The one-call floor of a stream: the same stream fed the whole output in one ``feed()``,
    plus one ``str.find`` per delta (the least any incremental scanner does per delta)."""
    stream = parser.stream(tools=TOOLS)
    settle_gc()
    t0 = clock_start()
    stream.feed(text)
    stream.finish()
    for piece in deltas:
        piece.find("<")
    return clock_stop(t0)


def time_trisect_whole(parser, text: str) -> tuple[tuple[float, float], object]:
    settle_gc()
    t0 = clock_start()
    msg = parser.parse(text, tools=TOOLS)
    return clock_stop(t0), msg


def _group(seq: list, k: int) -> list:
    return [seq[i : i + k] for i in range(0, len(seq), k)]


def _safe(fn, *a):
    try:
        return fn(*a), None
    except Exception as e:  # noqa: BLE001 - a crash is a FAIL row, not a crashed bench
        return None, f"FAIL: {type(e).__name__}: {str(e)[:80]}"


def run_trisect(trisect, cases: list[dict], args) -> None:
    parsers: dict = {}
    history: dict = {}
    skipped_from: dict = {}
    for case in cases:
        key = (case["reasoning"], case["tool"])
        if key not in parsers:
            kw = {}
            if args.feed_ids and case.get("tok_enc") is not None:
                kw["tokenizer"] = case["tok_enc"]  # markers matched by token id
            parsers[key] = trisect.Parser(reasoning=case["reasoning"], tools=case["tool"], **kw)
        parser = parsers[key]
        n_tok = len(case["pieces"])
        reps = repeats_for(case["target"], args)
        case["t"] = {"stream": {}}
        for k in args.chunk_sizes:
            entry = {"runs": [], "check": None}
            case["t"]["stream"][k] = entry
            skey = (case["combo"], case["shape"], k)
            if skey in skipped_from:
                entry["skipped"] = skipped_from[skey]
                continue
            est = estimate_seconds(history.get(skey, []), n_tok)
            if est is not None and est > args.max_stream_seconds:
                entry["skipped"] = f"est. {est:.0f}s/run"
                skipped_from[skey] = "longer than a skipped length"
                log(f"[trisect] {case['id']} stream/{k}: skipped ({entry['skipped']})")
                continue
            deltas = ["".join(g) for g in _group(case["pieces"], k)]
            id_groups = None
            if args.feed_ids and case["ids"] is not None:
                id_groups = _group(case["ids"], k)
            floor = {"runs": []}
            entry["floor"] = floor
            for _ in range(reps):
                add_run(floor, time_stream_floor(parser, case["text"], deltas))
                res, err = _safe(time_trisect_stream, parser, deltas, id_groups)
                if err:
                    entry["check"] = err
                    break
                t, out = res
                add_run(entry, t)
                if entry["check"] is None:
                    folded, err = _safe(fold_deltas, out)
                    entry["check"] = err or check_result(folded, case["expect"])
                if t[0] > args.long_run_seconds:
                    break
            if entry["runs"]:
                summarize(floor, n_tok)
                summarize(entry, n_tok)
                history.setdefault(skey, []).append((n_tok, entry["us_per_tok"]))
                log(
                    f"[trisect] {case['id']} stream/{k}: {entry['us_per_tok']:.2f} us/token "
                    f"(CPU {entry['cpu_us_per_tok']:.2f}; {len(entry['runs'])} runs, {entry['check']})"
                )
        whole = {"runs": [], "check": None}
        for _ in range(max(reps, 5)):
            res, err = _safe(time_trisect_whole, parser, case["text"])
            if err:
                whole["check"] = err
                break
            t, msg = res
            add_run(whole, t)
            if whole["check"] is None:
                md, err = _safe(message_dict, msg)
                whole["check"] = err or check_result(md, case["expect"])
            if t[0] > args.long_run_seconds:
                break
        if whole["runs"]:
            summarize(whole)
            log(f"[trisect] {case['id']} whole: {case['bytes'] / whole['s'] / 1e6:.2f} MB/s ({whole['check']})")
        case["t"]["whole"] = whole
        floor = FLOORS.get(case["tool"])
        if floor is not None and whole["runs"]:
            # the hand-written floor (bench/floor.py): str.find of the markers + json.loads per call
            entry = {"runs": []}
            for _ in range(len(whole["runs"])):
                settle_gc()
                t0 = clock_start()
                floor(case["text"])
                add_run(entry, clock_stop(t0))
            summarize(entry)
            case["t"]["floor"] = entry


def repeats_for(target: int, args) -> int:
    if args.repeats:
        return args.repeats
    return 5 if target <= 4000 else 3


# ---------------------------------------------------------------------------
# vLLM side (subprocess in the vLLM venv)
# ---------------------------------------------------------------------------


def find_vllm_python(args) -> tuple[Path | None, str]:
    if args.no_vllm:
        return None, "vLLM not measured (--no-vllm)"
    venv = Path(args.vllm_venv or os.environ.get("VLLM_VENV") or DEFAULT_VENV)
    py = venv / "bin" / "python"
    if not py.exists():
        return None, f"vLLM not measured: no vLLM venv at {venv} (see bench/README.md)"
    if not (SHARED / "vllm_oracle.py").exists():
        return None, f"vLLM not measured: {SHARED}/vllm_oracle.py not found (set TRISECT_SHARED)"
    return py, str(venv)


def run_vllm(py: Path, cases: list[dict], specs: dict, args) -> str | None:
    tmp = Path(tempfile.mkdtemp(prefix="trisect-bench-"))
    try:
        job = {
            "settings": {
                "chunk_sizes": args.chunk_sizes,
                "repeats": {str(c["target"]): repeats_for(c["target"], args) for c in cases},
                "max_stream_seconds": args.vllm_max_seconds,
                "long_run_seconds": args.long_run_seconds,
                "tokenizer_cache": str(CACHE / "hf-tokenizers"),
                "oracle_tokenizers": os.environ.get("VLLM_ORACLE_TOKENIZERS") or str(CACHE / "tokenizers"),
            },
            "tokenizers": specs,
            "cases": [
                {
                    k: c[k]
                    for k in (
                        "id",
                        "combo",
                        "shape",
                        "target",
                        "reasoning",
                        "tool",
                        "tokenizer",
                        "ids",
                        "pieces",
                        "expect",
                    )
                }
                for c in cases
            ],
        }
        job_path = tmp / "job.json"
        out_path = tmp / "out.jsonl"
        with open(job_path, "w", encoding="utf-8") as fh:
            json.dump(job, fh, ensure_ascii=False)
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env.pop("PYTHONHOME", None)
        env["TRISECT_SHARED"] = str(SHARED)
        for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env.setdefault(v, "1")
        log(f"[vllm] starting {py} {HERE / 'vllm_driver.py'} ({len(cases)} outputs)")
        proc = subprocess.run(
            [str(py), str(HERE / "vllm_driver.py"), str(job_path), str(out_path)], env=env, cwd=str(HERE), check=False
        )
        by_id = {c["id"]: c for c in cases}
        if out_path.exists():
            for line in out_path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    r = json.loads(line)
                    by_id[r["id"]]["v"] = r
        if proc.returncode != 0:
            return f"vLLM driver exited with status {proc.returncode}; vLLM columns may be partial"
        return None
    finally:
        if args.keep_job:
            log(f"job kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def _fmt(x: float | None, nd: int = 2) -> str:
    if x is None:
        return "-"
    if x >= 1000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.{nd}f}"


def _stream_cell(entry: dict | None, key: str) -> tuple[float | None, str]:
    if not entry:
        return None, "-"
    if entry.get("skipped"):
        return None, "skip"
    v = entry.get(key)
    return v, _fmt(v)


def _ratio(v: float | None, t: float | None) -> str:
    if v is None or t is None or t <= 0:
        return "-"
    r = v / t
    return f"{r:.2f}x" if r < 1 else f"{r:.1f}x" if r < 100 else f"{r:.0f}x"


def _check_summary(entries: list[dict | None]) -> str:
    checks = [e.get("check") for e in entries if e and e.get("check")]
    if not checks:
        return "-"
    fails = [c for c in checks if c != "OK"]
    return "OK" if not fails else "FAIL"


def build_tables(cases: list[dict], args, vllm_on: bool) -> tuple:
    ks = args.chunk_sizes
    tok_key, s_key = ("cpu_us_per_tok", "cpu_s") if args.clock == "cpu" else ("us_per_tok", "s")
    s_head = ["combo", "shape", "tokens"]
    for k in ks:
        lab = f"{k}tok"
        s_head += [f"trisect {lab}"] + ([f"vLLM {lab}", "vLLM/tri"] if vllm_on else [])
    s_head += ["check trisect"] + (["check vLLM"] if vllm_on else [])
    w_head = (
        ["combo", "shape", "tokens", "MB", "trisect MB/s", "floor MB/s", "tri/floor time"]
        + (["vLLM MB/s", "vLLM/tri time"] if vllm_on else [])
        + ["check trisect"]
        + (["check vLLM"] if vllm_on else [])
    )
    s_rows, w_rows, fails = [s_head], [w_head], []
    for c in cases:
        t = c.get("t") or {}
        v = c.get("v") or {}
        row = [c["combo"], c["shape"], f"{len(c['pieces']):,}"]
        t_entries, v_entries = [], []
        for k in ks:
            te = (t.get("stream") or {}).get(k)
            ve = (v.get("stream") or {}).get(str(k))
            tv, ts = _stream_cell(te, tok_key)
            vv, vs = _stream_cell(ve, tok_key)
            row.append(ts)
            if vllm_on:
                row += [vs, _ratio(vv, tv)]
            t_entries.append(te)
            v_entries.append(ve)
        tw, vw = t.get("whole"), v.get("whole")
        t_entries.append(tw)
        v_entries.append(vw)
        if v.get("error"):
            v_entries = [{"check": v["error"]}]
        row.append(_check_summary(t_entries) if t else "n/a")
        if vllm_on:
            row.append(_check_summary(v_entries) if v else "n/a")
        s_rows.append(row)
        mb = c["bytes"] / 1e6
        ts_, vs_ = (tw or {}).get(s_key), (vw or {}).get(s_key)
        tmb = mb / ts_ if ts_ else None
        vmb = mb / vs_ if vs_ else None
        fs_ = (t.get("floor") or {}).get(s_key)
        wrow = [c["combo"], c["shape"], f"{len(c['pieces']):,}", f"{mb:.3f}", _fmt(tmb)]
        wrow += [_fmt(mb / fs_ if fs_ else None), _ratio(ts_, fs_)]
        if vllm_on:
            wrow += [_fmt(vmb, 3), _ratio(vs_, ts_)]
        wrow.append(tw.get("check") if tw and tw.get("check") else "n/a")
        if vllm_on:
            wrow.append(vw.get("check") if vw and vw.get("check") else "n/a")
        w_rows.append([x if len(x) < 40 else "FAIL" for x in wrow])
        v_names = ["run"] if v.get("error") else ks + ["whole"]
        for side, entries, names in (("trisect", t_entries, ks + ["whole"]), ("vLLM", v_entries, v_names)):
            for e, nm in zip(entries, names, strict=False):
                if e and e.get("check") and e["check"] != "OK":
                    what = nm if isinstance(nm, str) else f"stream {nm} tok/delta"
                    fails.append(f"{side} {c['id']} {what}: {e['check']}")
    # growth of the per-token cost, longest length vs shortest
    growth = []
    groups: dict = {}
    for c in cases:
        groups.setdefault((c["combo"], c["shape"]), []).append(c)
    for (combo, shape), cs in groups.items():
        if len(cs) < 2:
            continue
        parts = []
        for side, key in (("trisect", "t"), ("vLLM", "v")):
            if side == "vLLM" and not vllm_on:
                continue
            for k in ks:
                es = [
                    (len(c["pieces"]), ((c.get(key) or {}).get("stream") or {}).get(k if key == "t" else str(k)))
                    for c in cs
                ]
                es = [(n, e) for n, e in es if e and e.get("us_per_tok")]
                if len(es) >= 2:
                    (_, e0), (n1, e1) = es[0], es[-1]
                    wall = e1["us_per_tok"] / e0["us_per_tok"]
                    cpu = e1["cpu_us_per_tok"] / e0["cpu_us_per_tok"]
                    upto = "" if n1 == len(cs[-1]["pieces"]) else f" to {n1:,} tokens"
                    parts.append(f"{side} {k}tok {wall:.2f} (CPU {cpu:.2f}){upto}")
        if parts:
            growth.append(
                f"{combo} / {shape}: cost per token {len(cs[-1]['pieces']):,} vs "
                f"{len(cs[0]['pieces']):,} tokens: " + ", ".join(parts)
            )
    detok_notes = []
    for c in cases:
        for k, e in ((c.get("v") or {}).get("stream") or {}).items():
            if e.get("delta_mismatches") or e.get("text_equal") is False:
                first = e.get("first_mismatch")
                detok_notes.append(
                    f"{c['id']} {k} tok/delta: vLLM's detokenizer gave other text than trisect was fed "
                    f"in {e['delta_mismatches']} of {-(-len(c['pieces']) // int(k))} deltas"
                    + (f", first at delta {first[0]}: vLLM {first[1]!r}, trisect {first[2]!r}" if first else "")
                    + ("" if e.get("text_equal") else "; the total text differs too")
                )
    return s_rows, w_rows, growth, fails, detok_notes


def text_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for j, r in enumerate(rows):
        cells = zip(r, widths, strict=True)
        out.append("  ".join(x.ljust(w) if i < 2 else x.rjust(w) for i, (x, w) in enumerate(cells)))
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def md_table(rows: list[list[str]]) -> str:
    out = [
        "| " + " | ".join(rows[0]) + " |",
        "|" + "|".join(":--" if i < 2 else "--:" for i in range(len(rows[0]))) + "|",
    ]
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(out)


def machine_note() -> str:
    model = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "?")
    except OSError:
        pass
    load = os.getloadavg()[0]
    busy = ""
    if load > (os.cpu_count() or 1):
        busy = " (busy machine: other processes share the CPUs; wall-clock timings are inflated, long runs most)"
    return f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, load {load:.2f}{busy}"


# ---------------------------------------------------------------------------


def parse_lengths(s: str) -> list[int]:
    out = []
    for x in s.split(","):
        x = x.strip().lower()
        if x:
            out.append(int(float(x[:-1]) * 1000) if x.endswith("k") else int(x))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="lengths 1k,4k,16k only")
    ap.add_argument("--lengths", help="comma-separated token counts, e.g. 1k,4k,64k (default 1k..256k)")
    ap.add_argument("--combos", default=",".join(COMBOS), help="default: %(default)s")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="tools, content (default: both)")
    ap.add_argument("--chunk", type=int, default=4, help="tokens per delta of the second stream (default 4)")
    ap.add_argument("--repeats", type=int, help="runs per measurement (default 5 up to 4k tokens, else 3)")
    ap.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="clock of the tables: wall = time.perf_counter (default), cpu = time.process_time "
        "(steadier on a shared machine); growth is always shown in both",
    )
    ap.add_argument("--regex-pieces", action="store_true", help="use the regex word splitter, not tiktoken")
    ap.add_argument("--feed-ids", action="store_true", help="give trisect the tokenizer and feed(text, token_ids)")
    ap.add_argument("--no-vllm", action="store_true", help="time trisect only")
    ap.add_argument("--vllm-venv", help=f"vLLM venv (default: $VLLM_VENV or {DEFAULT_VENV})")
    ap.add_argument(
        "--vllm-max-seconds",
        type=float,
        default=20.0,
        help="skip a vLLM stream whose projected run time exceeds this (default 20)",
    )
    ap.add_argument("--max-stream-seconds", type=float, default=60.0, help="the same for trisect (default 60)")
    ap.add_argument(
        "--long-run-seconds", type=float, default=5.0, help="a run longer than this is not repeated (default 5)"
    )
    ap.add_argument("--out", default=str(HERE / "results" / "latest.md"), help="markdown report path")
    ap.add_argument("--json-out", help="also write raw timings as JSON here")
    ap.add_argument("--keep-job", action="store_true", help="keep the temp job file for the vLLM driver")
    args = ap.parse_args(argv)
    lengths = QUICK_LENGTHS if args.quick else DEFAULT_LENGTHS
    if args.lengths:
        lengths = parse_lengths(args.lengths)
    lengths = sorted(set(lengths))
    args.chunk_sizes = [1] + ([args.chunk] if args.chunk and args.chunk != 1 else [])
    combos = [c.strip() for c in args.combos.split(",") if c.strip()]
    for c in combos:
        if c not in COMBOS:
            ap.error(f"unknown combo {c!r}; known: {', '.join(COMBOS)}")
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]

    t_start = time.perf_counter()
    trisect = import_trisect()
    notes: list[str] = []
    version = getattr(trisect, "__version__", "?")
    run_combos = []
    for combo in combos:
        r_fmt, t_fmt, _ = COMBOS[combo]
        ok, why = trisect_supported(trisect, r_fmt, t_fmt)
        if ok:
            run_combos.append(combo)
        else:
            msg = f"skipped {combo}: {why}"
            notes.append(msg)
            print(f"note: {msg}")

    # Build the outputs and their token pieces (outside every timed region).
    tok_cache: dict = {}
    specs: dict = {}
    cases: list[dict] = []
    for combo in run_combos:
        r_fmt, t_fmt, family = COMBOS[combo]
        tok = get_tokenizer(combo, args.regex_pieces, tok_cache)
        if tok.spec:
            specs[family] = tok.spec
        for shape in shapes:
            for L in lengths:
                text, expect = make_output(combo, shape, L, tok.count)
                pieces, ids = tok.pieces(text)
                cases.append(
                    {
                        "id": f"{combo}/{shape}/{L}",
                        "combo": combo,
                        "shape": shape,
                        "target": L,
                        "reasoning": r_fmt,
                        "tool": t_fmt,
                        "tokenizer": family if ids is not None else None,
                        "tok_name": tok.name,
                        "text": text,
                        "bytes": len(text.encode("utf-8")),
                        "pieces": pieces,
                        "ids": ids,
                        "expect": expect,
                        "tok_enc": getattr(tok, "enc", None),
                    }
                )
    log(f"built {len(cases)} outputs in {time.perf_counter() - t_start:.1f}s")

    t_built = time.perf_counter()
    run_trisect(trisect, cases, args)
    t_trisect = time.perf_counter() - t_built

    py, vinfo = find_vllm_python(args)
    vllm_on = py is not None
    t_vllm = 0.0
    if vllm_on:
        t0 = time.perf_counter()
        err = run_vllm(py, cases, specs, args)
        t_vllm = time.perf_counter() - t0
        if err:
            notes.append(err)
        vinfo = f"vLLM measured from {vinfo} in the same run"
    else:
        notes.append(vinfo)

    s_rows, w_rows, growth, fails, detok_notes = build_tables(cases, args, vllm_on)
    notes += detok_notes
    toks = sorted({c["tok_name"] for c in cases})
    head = [
        f"trisect {version} benchmark — {machine_note()}",
        f"token pieces: {', '.join(toks) or '-'}; {vinfo}",
        (
            f"clock: {'CPU time (time.process_time)' if args.clock == 'cpu' else 'wall (time.perf_counter)'}; "
            f"medians of {args.repeats or '5 (<=4k tokens) / 3'} runs; total wall time "
            f"{time.perf_counter() - t_start:.0f}s (set-up {t_built - t_start:.0f}s, trisect {t_trisect:.0f}s"
            + (f", vLLM {t_vllm:.0f}s)" if vllm_on else ")")
        ),
    ]
    print()
    print("\n".join(head))
    print()
    print("Streaming: microseconds per token (Ntok = N tokens per delta); vLLM/tri = how many times")
    print("longer vLLM takes; skip = projected run too long, not measured")
    print(text_table(s_rows))
    print()
    print("Whole output: parse(text) throughput in MB/s; vLLM/tri time = how many times longer vLLM takes")
    print(text_table(w_rows))
    if growth:
        print()
        print("Growth of the per-token stream cost, longest / shortest length (1.0 = flat), wall clock")
        print("and (CPU time); on a busy machine only the CPU-time ratio is meaningful")
        for g in growth:
            print("  " + g)
    for n in notes:
        print("note: " + n)
    if fails:
        print()
        print("Failures:")
        for f in fails:
            print("  " + f)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    md = [
        "# trisect benchmark",
        "",
        *[f"- {h}" for h in head],
        "",
        "## Streaming (µs per token)",
        "",
        (
            "Ntok = N tokens per delta; vLLM/tri = how many times longer vLLM takes; "
            "skip = projected run too long, not measured."
        ),
        "",
        md_table(s_rows),
        "",
        "## Whole output (MB/s)",
        "",
        md_table(w_rows),
        "",
    ]
    if growth:
        md += [
            "## Growth of the per-token stream cost",
            "",
            "Longest / shortest length (1.0 = flat), wall clock and (CPU time); on a busy machine only the "
            "CPU-time ratio is meaningful.",
            "",
            *[f"- {g}" for g in growth],
            "",
        ]
    if notes:
        md += ["## Notes", "", *[f"- {n}" for n in notes], ""]
    if fails:
        md += ["## Failures", "", *[f"- {f}" for f in fails], ""]
    out.write_text("\n".join(md), encoding="utf-8")
    print(f"\nwrote {out}")
    if args.json_out:
        raw = [
            {k: c.get(k) for k in ("id", "combo", "shape", "target", "bytes", "tok_name", "t", "v")}
            | {"tokens": len(c["pieces"])}
            for c in cases
        ]
        Path(args.json_out).write_text(json.dumps(raw, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
