"""``trisect batch INPUT -o OUTPUT``: parse every row of a file on every core.

    trisect batch rollouts.jsonl -o parsed.jsonl --reasoning qwen3 --tools hermes --tools-file tools.json
    trisect batch rollouts.parquet -o parsed.parquet --text-field response --ids-field response_ids \\
        --tokenizer tokenizer.json --workers 8
    trisect batch rollouts.jsonl -o parsed.jsonl --model path/to/model   # formats from its chat template

Rows, fields and errors: ``trisect.many``; files, resume and partial outputs: ``files``. A progress
bar (rows/s, ETA) goes to stderr when it is a terminal, never into a pipe. The last line on
stderr says how many rows were parsed and how many failed. Exit status: 0 when no row failed,
1 when some did (each has its ``error``), 2 when the run could not start or stopped on an error
of its own, 130 when interrupted (Ctrl-C or SIGTERM: the output so far is valid and ``--resume``
continues it). ``--ray`` runs the same job on Ray Data (``ray``).

``--model`` / ``--chat-template``: the formats not named by ``--reasoning`` / ``--tools`` are
detected from the chat template (``trisect.many.job_formats``, ``trisect.detect``), and one line
on stderr says what was chosen; a part detection cannot tell stops the run before it starts
(status 2), naming the option to pass.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections import deque
from pathlib import Path
from types import FrameType
from typing import Any

from ..errors import TrisectError
from ..many import BatchOptions, job_formats, ordered_map, parse_json_lines, parse_rows
from ..parser import Parser
from .files import BatchFileError, JsonlSink, ParquetSource, open_sink, open_source
from .tokenizer import TokenizerFileError, load_tokenizer

FLAGS = {"reasoning": "--reasoning NAME", "tools": "--tools NAME"}  # the options a DetectionError tells to pass


def add_parser(sub: Any) -> None:
    """Register ``batch`` on the CLI's subparsers."""
    b = sub.add_parser("batch", help="parse every row of a JSONL or Parquet file, on every core")
    b.add_argument("input", help="JSONL or Parquet (.parquet) file of model outputs, or - for JSONL on stdin")
    b.add_argument("-o", "--output", required=True, help="output file (.jsonl or .parquet), or - for stdout")
    b.add_argument("--reasoning", help="reasoning format (as vLLM's --reasoning-parser)")
    b.add_argument("--tools", help="tool-call format (as vLLM's --tool-call-parser)")
    b.add_argument(
        "--model",
        metavar="PATH",
        help="model directory, GGUF file or tokenizer_config.json: the formats not named by --reasoning / "
        "--tools are detected from its chat template; its tokenizer.json decodes --ids-field",
    )
    b.add_argument("--chat-template", metavar="FILE", help="chat template to detect the formats from (over --model's)")
    b.add_argument("--tools-file", help="JSON file with the OpenAI tool definitions of rows without their own")
    b.add_argument("--tool-choice", help="tool_choice of rows without their own (auto, none, required, or JSON)")
    b.add_argument(
        "--chat-template-kwargs", help="JSON, for rows without their own, e.g. '{\"enable_thinking\": false}'"
    )
    b.add_argument("--text-field", default="output", help="the field with the output text (default: output)")
    b.add_argument("--ids-field", help="the field with the output's token ids (decoded with --tokenizer)")
    b.add_argument("--tokenizer", help="local tokenizer file: HF tokenizer.json, or tiktoken ranks")
    b.add_argument("--special-tokens", help="JSON file of special tokens, for a tiktoken ranks file")
    for name, default in (
        ("tools", "tools"),
        ("tool-choice", "tool_choice"),
        ("kwargs", "chat_template_kwargs"),
        ("prompt", "prompt"),
        ("reasoning", "reasoning_parser"),
        ("tool-parser", "tool_call_parser"),
    ):
        b.add_argument(f"--{name}-field", default=default, help=f"per-row field (default: {default})")
    b.add_argument("--workers", type=int, help="worker processes (default: the free cores, CPUs minus load)")
    b.add_argument("--chunk-size", type=int, default=256, help="rows per task sent to a worker (default 256)")
    b.add_argument("--resume", action="store_true", help="continue a partial output instead of starting over")
    b.add_argument("--no-progress", action="store_true", help="no progress bar, even on a terminal")
    b.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="call ids the model did not write: from N and each row's output, the same on every run (default: random)",
    )
    b.add_argument("--ray", action="store_true", help="run on Ray Data (the ray extra); --ray-address for a cluster")
    b.add_argument("--ray-address", help="Ray cluster address (default: a local Ray, or RAY_ADDRESS)")
    b.set_defaults(func=lambda args, _out: run(args))


def _json_arg(text: str | None, what: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise BatchFileError(f"{what} is not JSON: {exc}") from None


def options_from(args: argparse.Namespace) -> BatchOptions:
    tool_definitions = None
    if args.tools_file:
        try:
            tool_definitions = json.loads(Path(args.tools_file).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BatchFileError(f"--tools-file {args.tools_file}: {exc}") from None
    choice = args.tool_choice
    if choice is not None and choice.lstrip().startswith("{"):
        choice = _json_arg(choice, "--tool-choice")
    tokenizer = args.tokenizer
    if tokenizer is None and args.model and args.ids_field and (Path(args.model) / "tokenizer.json").is_file():
        tokenizer = str(Path(args.model) / "tokenizer.json")  # the model directory's, as trisect serve does
    return BatchOptions(
        reasoning=args.reasoning,
        tools=args.tools,
        tool_definitions=tool_definitions,
        tool_choice=choice,
        chat_template_kwargs=_json_arg(args.chat_template_kwargs, "--chat-template-kwargs"),
        tokenizer=load_tokenizer(tokenizer, args.special_tokens) if tokenizer else None,
        text_field=args.text_field,
        ids_field=args.ids_field,
        tools_field=args.tools_field,
        tool_choice_field=args.tool_choice_field,
        kwargs_field=args.kwargs_field,
        prompt_field=args.prompt_field,
        reasoning_field=args.reasoning_field,
        tool_parser_field=args.tool_parser_field,
        chat_template=args.chat_template or args.model,
        seed=args.seed,
    )


class _Progress:
    """tqdm on a terminal (rows/s, ETA); nothing in a pipe; without tqdm, one line saying how to
    get it (the ``[serve]`` and ``[batch]`` extras bring it)."""

    def __init__(self, total: int | None, done: int, enabled: bool) -> None:
        self.bar: Any = None
        if enabled and sys.stderr.isatty():
            try:
                from tqdm import tqdm
            except ImportError:
                sys.stderr.write("trisect batch: no progress bar without tqdm: pip install 'trisect[batch]'\n")
                return
            self.bar = tqdm(total=total, initial=done, unit=" rows", file=sys.stderr, dynamic_ncols=True)

    def update(self, rows: int) -> None:
        if self.bar is not None:
            self.bar.update(rows)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    try:
        options, detection = job_formats(options_from(args), FLAGS)
        if detection is not None:
            sys.stderr.write(f"trisect batch: detected from the chat template: {detection.summary()}\n")
        Parser(options.reasoning, options.tools)  # format names checked before any row (FormatError)
        source = open_source(args.input)
        sink = open_sink(args.output, source, resume=args.resume)
    except (BatchFileError, TokenizerFileError, TrisectError, OSError) as exc:
        sys.stderr.write(f"trisect batch: error: {exc}\n")
        return 2
    done = sink.done
    show = not args.no_progress and sys.stderr.isatty()
    progress = _Progress(source.count() if show else None, done, show)
    rows = failed = 0
    status = 0
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        if args.ray:
            from .ray import run as run_on_ray  # the ray extra, imported only with --ray

            rows, failed = run_on_ray(
                source,
                sink,
                options,
                skip=done,
                workers=args.workers,
                chunk_size=args.chunk_size,
                address=args.ray_address,
                progress=progress.update,
            )
        elif isinstance(source, ParquetSource):
            pending: deque[Any] = deque()

            def batches() -> Any:
                for batch in source.chunks(args.chunk_size, skip=done):
                    pending.append(batch)
                    yield batch.to_pylist()

            for results in ordered_map(parse_rows, batches(), options, args.workers):
                batch = pending.popleft()
                if isinstance(sink, JsonlSink):
                    rows_in = batch.to_pylist()
                    merged = [{**row, "message": m, "error": e} for row, (m, e) in zip(rows_in, results, strict=True)]
                    sink.write_rows(merged)
                else:
                    sink.write_batch(batch, results)
                rows += len(results)
                failed += sum(e is not None for _, e in results)
                progress.update(len(results))
        else:
            assert isinstance(sink, JsonlSink)
            for data, bad in ordered_map(
                parse_json_lines, source.chunks(args.chunk_size, skip=done), options, args.workers
            ):
                sink.write_lines(data)
                n = data.count(b"\n")
                rows += n
                failed += bad
                progress.update(n)
    except KeyboardInterrupt:
        status = 130
    except (BatchFileError, TrisectError, OSError) as exc:
        sys.stderr.write(f"trisect batch: error: {exc}\n")
        status = 2
    finally:
        signal.signal(signal.SIGTERM, previous)
        progress.close()
        sink.close()
    seconds = time.perf_counter() - start
    already = f" (+{done:,} already in the output)" if done else ""
    rate = f", {rows / seconds:,.0f} rows/s" if seconds > 0 and rows else ""
    verb = "interrupted after" if status == 130 else "parsed"
    hint = "; --resume continues" if status == 130 else ""
    summary = f"{verb} {rows:,} rows{already}, {failed:,} failed, {seconds:.1f} s{rate}{hint}"
    sys.stderr.write(f"trisect batch: {summary} -> {args.output}\n")
    if status:
        return status
    return 1 if failed else 0
