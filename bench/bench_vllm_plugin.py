#!/usr/bin/env python
"""vLLM's serving loop with vLLM's own parsers and with the trisect plugin, side by side.

Run with the vLLM venv's interpreter (trisect installed there, ``.ci/vllm-venv.sh`` builds one):

    $VLLM_VENV/bin/python bench/bench_vllm_plugin.py              # 1k..64k tokens
    $VLLM_VENV/bin/python bench/bench_vllm_plugin.py --lengths 1k,16k --combos qwen3+hermes

For each combo and length, one synthetic output from ``bench.py``'s generator (long reasoning,
a short answer, 1-3 tool calls with long string arguments), tokenized with the family's real
vocabulary, goes through what ``OpenAIServingChat`` runs per engine chunk, at 1 and 4 tokens per
chunk, in the same run, alternating the two parsers per repeat:

* detokenizer: vLLM's ``IncrementalDetokenizer`` (``update`` + ``get_next_output_text``), the
  same for both parsers (timed once per repeat);
* parser: ``ChatStreamProcessor.step`` per chunk (``parse_delta`` plus serving's filters), with
  ``--reasoning-parser R --tool-call-parser T`` (vLLM's parsers) and ``trisect_R`` /
  ``trisect_T`` (the plugin: one ``TrisectParser``);
* native: trisect's own ``feed(text, ids)`` on the same texts and ids, no engine around it
  (``plugin / native`` is what the adapter adds);
* loop: detokenizer + parser, what the serving loop spends per token on text and parsing;
  "trisect share" is the plugin's part of its loop;
* whole: ``Parser.parse`` + ``assemble_chat_message_fields`` on the full text (non-streaming).

Every result (both parsers, streamed and whole) is checked against what the generator rendered
(``bench_common.check_result``). CPU time (``time.process_time``), median of 3 repeats up to
16k tokens, 1 above. Nothing is asserted on timings. ``--json-out FILE`` saves the rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for path in (HERE, REPO / "tests", REPO / "tests" / "integrations"):
    sys.path.insert(0, str(path))
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import bench  # noqa: E402  (the generator: stdlib only)
from bench_common import TOOLS, check_result, settle_gc  # noqa: E402

COMBOS = {  # combo -> test tokenizer
    "qwen3+qwen3_coder": "qwen3",
    "qwen3+hermes": "qwen3",
    "deepseek_r1+hermes": "qwen3",
}
LENGTHS = [1000, 4000, 16000, 64000]


def log(msg: str) -> None:
    print(f"[bench_vllm_plugin] {msg}", file=sys.stderr, flush=True)


def parse_lengths(text: str) -> list[int]:
    return [int(float(x[:-1]) * 1000) if x.endswith("k") else int(x) for x in text.split(",")]


class Loop:
    """One serving configuration: a parser class and the request it serves."""

    def __init__(self, tok: Any, reasoning: str | None, tools: str | None) -> None:
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.parser import ParserManager

        self.tok = tok
        self.parser_cls = ParserManager.get_parser(
            tool_parser_name=tools,
            reasoning_parser_name=reasoning,
            enable_auto_tools=True,
            model_name="bench",
            tokenizer=tok,
        )
        self.request = ChatCompletionRequest(
            model="bench", messages=[{"role": "user", "content": "go"}], tools=TOOLS, stream=True
        )
        self.parser_cls(tok, self.request.tools).adjust_request(self.request)  # the renderer's instance

    def stream(self, texts: list[str], groups: list[list[int]]) -> tuple[float, list[Any]]:
        from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor

        parser = self.parser_cls(self.tok, self.request.tools, chat_template_kwargs={}, model_config=None)
        processor = ChatStreamProcessor(self.request, parser, enable_auto_tools=True, parser_cls=self.parser_cls)
        step = processor.step
        last = len(groups) - 1
        deltas = []
        settle_gc()
        start = time.process_time()
        for n, (text, ids) in enumerate(zip(texts, groups, strict=True)):
            deltas.append(step(text, ids, "stop" if n == last else None, []).delta)
        return time.process_time() - start, deltas

    def whole(self, text: str, ids: list[int]) -> tuple[float, dict[str, Any]]:
        from vllm.entrypoints.openai.chat_completion.message_assembly import assemble_chat_message_fields

        request = self.request.model_copy(update={"stream": False})
        parser = self.parser_cls(self.tok, request.tools, chat_template_kwargs={}, model_config=None)
        settle_gc()
        start = time.process_time()
        reasoning, content, calls = parser.parse(text, request, enable_auto_tools=True, model_output_token_ids=ids)
        fields = assemble_chat_message_fields(
            request, reasoning, content, calls, enable_auto_tools=True, parser_cls=self.parser_cls
        )
        seconds = time.process_time() - start
        message = {
            "reasoning": fields.reasoning,
            "content": fields.content,
            "tool_calls": [{"name": c.function.name, "arguments": c.function.arguments} for c in fields.tool_calls],
        }
        return seconds, message


class Native:
    """trisect's own stream on the same texts and ids, no engine around it: ``Parser(R, T,
    tokenizer=tok).stream(tools=...)`` and one ``feed(text, ids)`` per chunk (what the plugin wraps)."""

    def __init__(self, tok: Any, reasoning: str | None, tools: str | None) -> None:
        import trisect

        self.parser = trisect.Parser(reasoning=reasoning, tools=tools, tokenizer=tok)

    def stream(self, texts: list[str], groups: list[list[int]]) -> tuple[float, list[Any]]:
        stream = self.parser.stream(tools=TOOLS)
        feed = stream.feed
        deltas = []
        settle_gc()
        start = time.process_time()
        for text, ids in zip(texts, groups, strict=True):
            deltas.append(feed(text, ids))
        deltas.append(stream.finish())
        return time.process_time() - start, deltas


def detokenize(tok: Any, groups: list[list[int]], skip_special_tokens: bool) -> tuple[float, list[str]]:
    from vllm.sampling_params import SamplingParams
    from vllm.v1.engine import EngineCoreRequest
    from vllm.v1.engine.detokenizer import IncrementalDetokenizer

    request = EngineCoreRequest(
        request_id="bench",
        prompt_token_ids=[],
        mm_features=None,
        sampling_params=SamplingParams(max_tokens=1 << 20, skip_special_tokens=skip_special_tokens),
        pooling_params=None,
        arrival_time=0.0,
        lora_request=None,
        cache_salt=None,
        data_parallel_rank=None,
    )
    detok = IncrementalDetokenizer.from_new_request(tok, request)
    texts = []
    last = len(groups) - 1
    settle_gc()
    start = time.process_time()
    for n, ids in enumerate(groups):
        detok.update(ids, False)
        texts.append(detok.get_next_output_text(n == last, True))
    return time.process_time() - start, texts


def median(values: list[float]) -> float:
    return statistics.median(values)


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    import vllm_serving
    from vllm.plugins import load_general_plugins

    from support import tokenizers

    load_general_plugins()
    rows = []
    for combo in args.combos:
        reasoning, tools, _family = bench.COMBOS[combo]
        name = COMBOS[combo]
        tok = vllm_serving.tokenizer(name)
        loops: dict[str, Any] = {
            "vllm": Loop(tok, reasoning, tools),
            "trisect": Loop(tok, f"trisect_{reasoning}" if reasoning else None, f"trisect_{tools}"),
            "native": Native(tok, reasoning, tools),
        }
        assert loops["trisect"].parser_cls.__name__.startswith("TrisectParser"), loops["trisect"].parser_cls
        for target in args.lengths:
            text, expect = bench.make_output(combo, "tools", target, lambda t, n=name: len(tokenizers.encode(n, t)))
            ids = tokenizers.encode(name, text)
            repeats = 3 if len(ids) <= 16000 else 1
            for chunk in args.chunks:
                groups = [ids[i : i + chunk] for i in range(0, len(ids), chunk)]
                times: dict[str, list[float]] = {"detok": [], "vllm": [], "trisect": [], "native": []}
                checks: dict[str, str] = {}
                for r in range(repeats):
                    seconds, texts = detokenize(tok, groups, loops["vllm"].request.skip_special_tokens is not False)
                    times["detok"].append(seconds)
                    assert "".join(texts) == text, "the detokenizer gave other text"
                    for which in ("vllm", "trisect", "native") if r % 2 == 0 else ("native", "trisect", "vllm"):
                        seconds, deltas = loops[which].stream(texts, groups)
                        times[which].append(seconds)
                        checks[which] = check_result(bench.fold_deltas(deltas), expect)
                row = {"combo": combo, "tokens": len(ids), "chunk": chunk}
                for key, values in times.items():
                    row[key] = median(values) / len(ids) * 1e6
                for which in ("vllm", "trisect", "native"):
                    row[f"check_{which}"] = checks[which]
                if chunk == args.chunks[0]:
                    for which in ("vllm", "trisect"):
                        runs = [loops[which].whole(text, ids) for _ in range(repeats)]
                        row[f"whole_{which}"] = median([s for s, _ in runs]) * 1e3
                        row[f"check_whole_{which}"] = check_result(runs[0][1], expect)
                rows.append(row)
                log(
                    f"{combo} {len(ids)} tokens, {chunk}/delta: detok {row['detok']:.1f}, vLLM {row['vllm']:.1f}, "
                    f"trisect {row['trisect']:.1f} us/token"
                )
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    head = [
        "combo",
        "tokens",
        "tok/delta",
        "detokenizer µs/tok",
        "vLLM parsers µs/tok",
        "trisect plugin µs/tok",
        "native feed() µs/tok",
        "loop vLLM µs/tok",
        "loop trisect µs/tok",
        "trisect share of its loop",
        "parser vLLM/trisect",
        "whole ms vLLM / trisect",
        "check",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        loop_v, loop_t = row["detok"] + row["vllm"], row["detok"] + row["trisect"]
        whole = f"{row['whole_vllm']:.1f} / {row['whole_trisect']:.1f}" if "whole_vllm" in row else ""
        checks = {v for k, v in row.items() if k.startswith("check")}
        check = (
            "OK"
            if checks == {"OK"}
            else "; ".join(f"{k}: {v}" for k, v in row.items() if k.startswith("check") and v != "OK")
        )
        cells = [
            row["combo"],
            f"{row['tokens']:,}",
            str(row["chunk"]),
            f"{row['detok']:.1f}",
            f"{row['vllm']:.1f}",
            f"{row['trisect']:.1f}",
            f"{row['native']:.1f}",
            f"{loop_v:.1f}",
            f"{loop_t:.1f}",
            f"{row['trisect'] / loop_t:.0%}",
            f"{row['vllm'] / row['trisect']:.1f}x",
            whole,
            check,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--combos", type=lambda s: s.split(","), default=list(COMBOS))
    ap.add_argument("--lengths", type=parse_lengths, default=LENGTHS)
    ap.add_argument("--chunks", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4])
    ap.add_argument("--json-out", help="also write the rows here as JSON")
    args = ap.parse_args(argv)
    unknown = [c for c in args.combos if c not in COMBOS]
    if unknown:
        ap.error(f"unknown combo(s) {unknown}; known: {', '.join(COMBOS)}")
    import vllm

    rows = run(args)
    print(f"vLLM {vllm.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; one process, same run\n")
    print(table(rows))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows))
    failed = [r for r in rows if any(v != "OK" for k, v in r.items() if k.startswith("check"))]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
