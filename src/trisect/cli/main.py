"""The ``trisect`` command: parse outputs, list formats, and a demo.

    trisect parse FILE|- --reasoning NAME --tools NAME [--tools-file tools.json] [--stream]
    trisect parse FILE|- --format-file FORMAT.toml …
    trisect formats
    trisect demo [--delay SECONDS] [--live [--threads N]]
    trisect serve [--upstream URL --upstream-kind KIND] [--model …] (``trisect serve --help``)
    trisect detect PATH [--flags]
    trisect batch FILE -o OUT [--reasoning NAME --tools NAME --workers N …]  (trisect.batch)
    trisect --version

A thin shell over the library: it reads input, builds a ``Parser``, prints JSON.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from .. import __version__
from ..batch.cli import add_parser as add_batch
from ..engine.spec import FormatSpec
from ..errors import TrisectError
from ..formats import hf, load_format
from ..grammar import grammar_support
from ..message.types import MessageBuilder
from ..parser import Parser, formats
from .detect import add_parser as add_detect
from .examples import EXAMPLES, WEATHER_TOOLS


def _read(path: str, errors: str = "strict") -> str:
    """A file (``-``: stdin) as the model wrote it: bytes decoded as UTF-8 and nothing else
    changed (no newline translation: CRLF stays CRLF). A leading byte-order mark is the file's
    encoding signature, not model text, and is dropped. Invalid UTF-8 is an ``InputError``
    naming the byte, unless ``errors="replace"`` (U+FFFD for each bad sequence)."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        name = "stdin" if path == "-" else path
        raise InputError(
            f"{name} is not UTF-8 (byte {exc.start}: {data[exc.start : exc.start + 4]!r}); "
            "pass --errors replace to read it with U+FFFD for the bad bytes"
        ) from None


class InputError(Exception):
    """Input the command cannot read as text (reported in one line, never as a traceback)."""


_BOM = b"\xef\xbb\xbf"


def _options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.tools_file:
        options["tools"] = json.loads(_read(args.tools_file))
    if args.chat_template_kwargs:
        options["chat_template_kwargs"] = json.loads(args.chat_template_kwargs)
    if args.prompt_file:
        options["prompt_text"] = _read(args.prompt_file, args.errors)
    return options


def _formats(args: argparse.Namespace) -> tuple[str | FormatSpec | None, str | FormatSpec | None]:
    """``--reasoning`` / ``--tools`` names, or formats read with ``--format-file`` (each file's
    ``kind`` says which of the two it is)."""
    chosen: dict[str, str | FormatSpec | None] = {"reasoning": args.reasoning, "tools": args.tools}
    for path in args.format_file or ():
        spec = load_format(path)
        if chosen[spec.kind] is not None:
            flag = "--reasoning" if spec.kind == "reasoning" else "--tools"
            raise InputError(f"{path} is a {spec.kind} format, and {flag} or another --format-file gives one too")
        chosen[spec.kind] = spec
    return chosen["reasoning"], chosen["tools"]


def cmd_parse(args: argparse.Namespace, out: TextIO) -> int:
    parser = Parser(*_formats(args))
    text = _read(args.input, args.errors)
    options = _options(args)
    if not args.stream:
        message = parser.parse(text, **options)
        out.write(json.dumps(message.to_dict(reasoning_content=args.reasoning_content), ensure_ascii=False, indent=2))
        out.write("\n")
        return 0
    stream = parser.stream(**options)
    size = max(1, args.chunk)
    for i in range(0, len(text), size):
        delta = stream.feed(text[i : i + size])
        if delta:
            out.write(json.dumps(delta.to_dict(reasoning_content=args.reasoning_content), ensure_ascii=False) + "\n")
    delta = stream.finish()
    if delta:
        out.write(json.dumps(delta.to_dict(reasoning_content=args.reasoning_content), ensure_ascii=False) + "\n")
        if delta.aborted:
            out.write(json.dumps({"aborted_tool_calls": list(delta.aborted)}) + "\n")
    return 0


def cmd_formats(args: argparse.Namespace, out: TextIO) -> int:
    specs = formats()
    if args.json:
        rows = [
            {
                "kind": spec.kind,
                "names": [spec.name, *spec.aliases],
                "models": list(spec.models),
                "reference": spec.reference,
                "grammar": grammar_support(spec),
            }
            for spec in specs
        ]
        rows += [
            {"kind": kind, "names": list(hf.NAMES), "models": list(hf.MODELS), "reference": hf.REFERENCE, "grammar": ""}
            for kind in ("reasoning", "tools")
        ]
        out.write(json.dumps(rows, ensure_ascii=False) + "\n")
        return 0
    for kind in ("reasoning", "tools"):
        title = "Reasoning formats (--reasoning)" if kind == "reasoning" else "Tool-call formats (--tools)"
        out.write(f"{title}\n")
        for spec in specs:
            if spec.kind == kind:
                names = ", ".join((spec.name, *spec.aliases))
                out.write(f"  {names:<34} {'; '.join(spec.models)}\n")
                if kind == "tools":
                    out.write(f"  {'':<34} grammar: {grammar_support(spec)}\n")
        out.write(f"  {', '.join(hf.NAMES):<34} {'; '.join(hf.MODELS)} (built from its tokenizer's template)\n\n")
    return 0


_COLORS = {"reasoning": "\033[2;36m", "content": "\033[0m", "tool": "\033[1;33m", "reset": "\033[0m"}


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    if args.live:
        from ..serve.cli import live_demo as live  # the serve extra, imported only for --live

        return live(threads=args.threads, out=out, color=False if args.no_color else None)
    color = out.isatty() and not args.no_color
    paint = (lambda kind, s: f"{_COLORS[kind]}{s}{_COLORS['reset']}") if color else (lambda _kind, s: s)
    for example in EXAMPLES:
        out.write(f"== {example['title']}  (--reasoning {example['reasoning']} --tools {example['tools']})\n")
        parser = Parser(example["reasoning"], example["tools"])
        stream = parser.stream(tools=WEATHER_TOOLS, **example.get("options", {}))
        builder = MessageBuilder()
        field = None
        text = example["output"]
        pieces = [text[i : i + 3] for i in range(0, len(text), 3)]  # a few characters per delta
        for piece in [*pieces, None]:
            delta = stream.feed(piece) if piece is not None else stream.finish()
            builder.add(delta)
            if delta is None:
                continue
            for kind, value in (("reasoning", delta.reasoning), ("content", delta.content)):
                if value:
                    if field != kind:
                        out.write(paint(kind, f"\n[{kind}] "))
                        field = kind
                    out.write(paint(kind, value))
            for call in delta.tool_calls:
                if call.name is not None:
                    out.write(paint("tool", f"\n[tool_call #{call.index}] {call.name} "))
                    field = "tool"
                out.write(paint("tool", call.arguments))
            out.flush()
            if args.delay:
                time.sleep(args.delay)
        message = builder.message()
        out.write("\n\n-- the assembled message (OpenAI JSON):\n")
        out.write(json.dumps(message.to_dict(), ensure_ascii=False, indent=2) + "\n\n")
    return 0


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    from ..serve.cli import main as serve_main  # the serve extra, imported only for this command

    return serve_main(args.serve_args)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="trisect", description="Raw LLM output -> reasoning, content, tool calls.")
    ap.add_argument("--version", action="version", version=f"trisect {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("parse", help="parse a model output and print the message as OpenAI JSON")
    p.add_argument("input", help="file with the raw output, or - for stdin")
    p.add_argument("--reasoning", default=None, help="reasoning format (as vLLM's --reasoning-parser)")
    p.add_argument("--tools", default=None, help="tool-call format (as vLLM's --tool-call-parser)")
    p.add_argument(
        "--format-file",
        action="append",
        metavar="FORMAT.toml",
        help="a format of your own (trisect.load_format); its kind replaces --reasoning or --tools (repeatable)",
    )
    p.add_argument("--tools-file", help="JSON file with the request's OpenAI tool definitions")
    p.add_argument("--chat-template-kwargs", help="JSON, e.g. '{\"enable_thinking\": false}'")
    p.add_argument("--prompt-file", help="the rendered prompt (decides whether output starts in reasoning)")
    p.add_argument("--stream", action="store_true", help="print the streamed deltas as JSON lines")
    p.add_argument("--chunk", type=int, default=4, help="characters per delta with --stream (default 4)")
    p.add_argument("--reasoning-content", action="store_true", help="also emit the older reasoning_content field")
    p.add_argument(
        "--errors",
        choices=("strict", "replace"),
        default="strict",
        help="input that is not UTF-8: an error (strict, the default) or U+FFFD for each bad sequence",
    )
    p.set_defaults(func=cmd_parse)
    f = sub.add_parser("formats", help="list every format name with the models it serves")
    f.add_argument("--json", action="store_true")
    f.set_defaults(func=cmd_formats)
    d = sub.add_parser("demo", help="stream bundled example outputs and show the fields arriving")
    d.add_argument("--delay", type=float, default=0.01, help="seconds between deltas (0: no pause)")
    d.add_argument("--no-color", action="store_true")
    d.add_argument(
        "--live",
        action="store_true",
        help="ask a real model instead: the embedded default (fetched on first use) behind trisect serve",
    )
    d.add_argument("--threads", type=int, default=None, help="with --live: CPU threads (default: the free cores)")
    d.set_defaults(func=cmd_demo)
    s = sub.add_parser(
        "serve", help="an OpenAI-compatible server over any raw-completion engine", add_help=False, prefix_chars="\0"
    )
    s.add_argument("serve_args", nargs=argparse.REMAINDER, help="see trisect serve --help")
    s.set_defaults(func=cmd_serve)
    add_detect(sub)
    add_batch(sub)  # trisect.batch.cli: the batch shell's command
    return ap


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command; returns the exit status (2: an error, reported on one line of stderr)."""
    args = build_parser().parse_args(argv)
    if out is None:
        out = sys.stdout
        if isinstance(out, io.TextIOWrapper):
            out.reconfigure(encoding="utf-8", errors="strict")  # JSON out is UTF-8 whatever the locale
    try:
        status: int = args.func(args, out)
        out.flush()
    except BrokenPipeError:
        # the reader went away (`trisect parse … | head`): stop quietly, as a SIGPIPE would
        _silence_stdout()
        return 141
    except KeyboardInterrupt:
        return 130
    except (TrisectError, InputError, OSError, json.JSONDecodeError) as exc:
        sys.stderr.write(f"trisect: error: {_one_line(exc)}\n")
        return 2
    return status


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 2000 else text[:1997] + "..."


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
