#!/usr/bin/env python
"""Time vLLM's own parsers on the outputs bench.py built.

Run by bench.py with the vLLM venv's interpreter, never by hand in normal use:

    $VLLM_VENV/bin/python bench/vllm_driver.py JOB.json OUT.jsonl

JOB.json (written by bench.py) holds the tokenizer specs, the settings and the
cases: text, token ids (or per-token delta texts when no real tokenizer was
available), and what the generator rendered. For every case this script times

  * stream: ``ChatStreamProcessor.step`` (what ``OpenAIServingChat`` calls per
    engine chunk) over the same token chunks trisect was fed, 1 and N tokens
    per chunk. Delta texts come from vLLM's engine-side IncrementalDetokenizer
    and are computed before the timed loop;
  * whole: ``Parser.parse`` + ``assemble_chat_message_fields`` on the full text
    (parser construction is outside the timed region, as for trisect).

It writes one JSON object per case to OUT.jsonl and progress to stderr.
vLLM's driving code comes from ../shared/bench/vllm_oracle.py, imported at run
time (env TRISECT_SHARED overrides the folder).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("TRISECT_SHARED") or HERE.parents[1] / "shared" / "bench")
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(SHARED))

import vllm_oracle as vo  # noqa: E402  (sets its offline/logging env vars before vLLM loads)

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


def log(msg: str) -> None:
    print(f"[vllm] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# A Hugging Face tokenizer with the real vocabulary, built from the tiktoken
# ranks bench.py tokenized with, so the token ids are the same on both sides.
# ---------------------------------------------------------------------------


def _byte_to_unicode() -> dict[int, str]:
    # GPT-2's reversible byte -> printable character table (byte-level BPE).
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def build_hf_tokenizer(spec: dict, out_dir: Path) -> Path:
    stamp_src = json.dumps(spec, sort_keys=True) + str(os.path.getsize(spec["tiktoken"]))
    stamp = hashlib.sha256(stamp_src.encode()).hexdigest()[:16]
    marker = out_dir / "TRISECT_BENCH_STAMP"
    if marker.exists() and marker.read_text().strip() == stamp:
        return out_dir
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        decoders,
        models,
        pre_tokenizers,
    )
    from transformers import PreTrainedTokenizerFast

    t0 = time.perf_counter()
    ranks: dict[bytes, int] = {}
    with open(spec["tiktoken"], "rb") as fh:
        for line in fh:
            if line.strip():
                tok, rank = line.split()
                ranks[base64.b64decode(tok)] = int(rank)
    enc = _byte_to_unicode()

    def u(b: bytes) -> str:
        return "".join(enc[x] for x in b)

    vocab = {u(b): r for b, r in ranks.items()}
    # tiktoken merges the adjacent pair whose concatenation has the lowest rank;
    # listing every (left, right) split of a token at that token's rank gives
    # HF's BPE the same order.
    merges = []
    for tok, r in ranks.items():
        for i in range(1, len(tok)):
            a, b = tok[:i], tok[i:]
            if a in ranks and b in ranks:
                merges.append((r, ranks[a], a, b))
    merges.sort()
    tk = Tokenizer(models.BPE(vocab, [(u(a), u(b)) for _, _, a, b in merges], fuse_unk=False))
    tk.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(spec["pat_str"]), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tk.decoder = decoders.ByteLevel()
    for content, tid, special in sorted(spec["added"], key=lambda x: x[1]):
        at = AddedToken(content, special=special, normalized=False)
        if special:
            tk.add_special_tokens([at])
        else:
            tk.add_tokens([at])
        got = tk.token_to_id(content)
        if got != tid:
            raise RuntimeError(f"{spec['name']}: {content!r} got id {got}, expected {tid}")
    kw = {f"{r}_token": spec[r] for r in ("bos", "eos", "pad") if spec.get(r)}
    hf = PreTrainedTokenizerFast(tokenizer_object=tk, model_max_length=1 << 21, **kw)
    out_dir.mkdir(parents=True, exist_ok=True)
    hf.save_pretrained(str(out_dir))
    marker.write_text(stamp + "\n")
    log(f"built HF tokenizer {spec['name']} ({len(ranks)} ranks) in {out_dir} in {time.perf_counter() - t0:.1f}s")
    return out_dir


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------


class TooSlow(Exception):
    """A vLLM stream ran past its deadline (the projection from shorter lengths was wrong)."""

    def __init__(self, at: int, of: int, seconds: float):
        super().__init__(f"stopped after {seconds:.0f}s at chunk {at:,} of {of:,}")


class Runner:
    def __init__(self, oracle: vo.Oracle):
        self.o = oracle
        self.inp = {"text": "", "tools": TOOLS, "tool_choice": "auto"}

    def _request(self, stream: bool):
        request, ctk = self.o.make_request(self.inp, stream=stream)
        request, _notes = self.o.adjust(request, ctk, [])
        return request, ctk

    def token_texts(self, ids: list[int], stream: bool) -> list[str]:
        """Each token's text from vLLM's engine-side detokenizer (its ``decode_next``,
        with the request's skip_special_tokens etc.). ``update()`` itself is not used
        because it grows the output with ``str +=`` on an attribute, which is
        quadratic and would dominate the wall time of a 256k-token set-up."""
        request, _ = self._request(stream)
        detok, _sp = self.o.detokenizer(request, [])
        out = []
        for t in ids:
            detok.token_ids.append(t)
            out.append(detok.decode_next(t))
        return out

    def stream_once(
        self, texts: list[str], chunks: list[list[int]], deadline: float
    ) -> tuple[tuple[float, float], dict]:
        from vllm.entrypoints.openai.chat_completion.stream_processor import (
            ChatStreamProcessor,
        )

        request, ctk = self._request(True)
        proc = ChatStreamProcessor(
            request, self.o.new_parser(request, ctk), enable_auto_tools=True, parser_cls=self.o.parser_cls
        )
        step = proc.step
        prompt: list[int] = []
        out = []
        append = out.append
        last = len(chunks) - 1
        settle_gc()
        t0 = clock_start()
        for i in range(last):
            d = step(texts[i], chunks[i], None, prompt).delta
            if d is not None:
                append(d)
            if not i & 1023 and time.perf_counter() - t0[0] > deadline:
                raise TooSlow(i, len(chunks), time.perf_counter() - t0[0])
        d = step(texts[last], chunks[last], "stop", prompt).delta
        if d is not None:
            append(d)
        t = clock_stop(t0)
        agg = vo._Aggregator()
        for d in out:
            agg.add(d)
        return t, agg.result()

    def whole_once(self, ids: list[int], text: str) -> tuple[tuple[float, float], dict]:
        from vllm.entrypoints.openai.chat_completion.message_assembly import (
            assemble_chat_message_fields,
        )

        request, ctk = self._request(False)
        parser = self.o.new_parser(request, ctk)
        parser.set_prompt_token_ids([])
        settle_gc()
        t0 = clock_start()
        r, c, tcs = parser.parse(text, request, enable_auto_tools=True, model_output_token_ids=ids)
        fields = assemble_chat_message_fields(request, r, c, tcs, enable_auto_tools=True, parser_cls=self.o.parser_cls)
        t = clock_stop(t0)
        return t, {
            "reasoning": fields.reasoning,
            "content": fields.content,
            "tool_calls": [{"name": tc.function.name, "arguments": tc.function.arguments} for tc in fields.tool_calls],
        }


def _group(seq: list, k: int) -> list:
    return [seq[i : i + k] for i in range(0, len(seq), k)]


def main(argv: list[str]) -> int:
    job_path, out_path = argv[1], argv[2]
    with open(job_path, encoding="utf-8") as fh:
        job = json.load(fh)
    st = job["settings"]
    cache = Path(st["tokenizer_cache"])
    hf_dirs: dict[str, str] = {}
    for name, spec in job.get("tokenizers", {}).items():
        hf_dirs[name] = str(build_hf_tokenizer(spec, cache / name))

    import vllm

    log(f"vLLM {vllm.__version__}; {len(job['cases'])} outputs")
    runners: dict[tuple, Runner] = {}
    history: dict[tuple, list[tuple[int, float]]] = {}
    skipped_from: dict[tuple, str] = {}
    with open(out_path, "w", encoding="utf-8") as out:
        for case in job["cases"]:
            try:
                run_case(case, st, hf_dirs, runners, history, skipped_from, out)
            except Exception as e:  # noqa: BLE001 - report the case, keep going
                msg = f"FAIL: vLLM raised {type(e).__name__}: {str(e)[:100]}"
                log(f"{case['id']}: {msg}")
                out.write(json.dumps({"id": case["id"], "error": msg}) + "\n")
                out.flush()
    return 0


def run_case(case: dict, st: dict, hf_dirs: dict, runners: dict, history: dict, skipped_from: dict, out) -> None:
    tok_name = case.get("tokenizer")
    key = (case["reasoning"], case["tool"], tok_name)
    if key not in runners:
        path = hf_dirs.get(tok_name) if tok_name else None
        runners[key] = Runner(
            vo.Oracle(case["reasoning"], case["tool"], tokenizer_path=path, tokenizer_root=st["oracle_tokenizers"])
        )
    run = runners[key]
    n_tok = len(case["pieces"])
    if case.get("ids") is not None:
        tok_chunks = [[i] for i in case["ids"]]
        id_source = f"same ids ({tok_name})"
    else:
        # No shared tokenizer: same delta texts, ids from vLLM's family tokenizer.
        tok_chunks = [run.o.encode(p) if p else [] for p in case["pieces"]]
        id_source = f"ids re-encoded per delta ({os.path.basename(run.o.tokenizer_path)})"
    all_ids = [i for ch in tok_chunks for i in ch]
    expect = case["expect"]
    res: dict = {
        "id": case["id"],
        "tokenizer": run.o.tokenizer_path,
        "id_source": id_source,
        "stream": {},
        "whole": None,
    }
    reps = int(st["repeats"].get(str(case["target"]), 3))
    piece_texts: list[str] | None = None  # vLLM's text for each of trisect's pieces
    for k in st["chunk_sizes"]:
        skey = (case["combo"], case["shape"], k)
        chunks = [[i for ch in g for i in ch] for g in _group(tok_chunks, k)]
        ours = ["".join(g) for g in _group(case["pieces"], k)]
        entry: dict = {"runs": [], "check": None}
        res["stream"][str(k)] = entry
        if skey in skipped_from:
            entry["skipped"] = skipped_from[skey]
            continue
        est = estimate_seconds(history.get(skey, []), n_tok)
        if est is not None and est > st["max_stream_seconds"]:
            entry["skipped"] = f"est. {est:.0f}s/run > {st['max_stream_seconds']:.0f}s"
            skipped_from[skey] = "longer than a skipped length"
            log(f"{case['id']} stream/{k}: skipped ({entry['skipped']})")
            continue
        if piece_texts is None:
            flat = run.token_texts(all_ids, stream=True)
            piece_texts = []
            pos = 0
            for ch in tok_chunks:
                piece_texts.append("".join(flat[pos : pos + len(ch)]))
                pos += len(ch)
        texts = ["".join(g) for g in _group(piece_texts, k)]
        diff = [i for i, (a, b) in enumerate(zip(texts, ours, strict=True)) if a != b]
        entry["delta_mismatches"] = len(diff)
        if diff:
            entry["first_mismatch"] = [diff[0], texts[diff[0]][:40], ours[diff[0]][:40]]
        entry["text_equal"] = "".join(texts) == "".join(ours)
        for _ in range(reps):
            try:
                t, result = run.stream_once(texts, chunks, 1.5 * st["max_stream_seconds"])
            except TooSlow as e:
                if not entry["runs"]:
                    entry["skipped"] = str(e)
                    skipped_from[skey] = "longer than a skipped length"
                log(f"{case['id']} stream/{k}: {e}")
                break
            except Exception as e:  # noqa: BLE001 - a crash is a FAIL, not the end of the run
                entry["check"] = f"FAIL: vLLM raised {type(e).__name__}: {str(e)[:100]}"
                break
            add_run(entry, t)
            if entry["check"] is None:
                entry["check"] = check_result(result, expect)
            if t[0] > st["long_run_seconds"]:
                break
        if not entry["runs"]:
            continue
        summarize(entry, n_tok)
        history.setdefault(skey, []).append((n_tok, entry["us_per_tok"]))
        log(
            f"{case['id']} stream/{k}: {entry['us_per_tok']:.2f} us/token "
            f"(CPU {entry['cpu_us_per_tok']:.2f}; {len(entry['runs'])} runs, {entry['check']})"
        )
    whole: dict = {"runs": [], "check": None}
    whole_text = "".join(run.token_texts(all_ids, stream=False))
    for _ in range(max(reps, 3)):
        try:
            t, result = run.whole_once(all_ids, whole_text)
        except Exception as e:  # noqa: BLE001
            whole["check"] = f"FAIL: vLLM raised {type(e).__name__}: {str(e)[:100]}"
            break
        add_run(whole, t)
        if whole["check"] is None:
            whole["check"] = check_result(result, expect)
        if t[0] > st["long_run_seconds"]:
            break
    if whole["runs"]:
        summarize(whole)
        log(f"{case['id']} whole: {whole['s'] * 1e3:.2f} ms ({whole['check']})")
    res["whole"] = whole
    out.write(json.dumps(res) + "\n")
    out.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
