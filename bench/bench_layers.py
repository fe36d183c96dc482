"""What each layer adds per delta: the engine, the message fold, the OpenAI chunk layer.

    python bench/bench_layers.py            # all outputs, both chunkings (about 1 minute)
    python bench/bench_layers.py --rounds 3 --words 4000

For each output and chunking, the same deltas go through

* ``EventStream.feed``  (the engine: typed events),
* ``StreamParser.feed`` (``Parser.stream()``: events folded into ``Delta`` objects),
* ``ChatStream.feed``   (``trisect.chat``: ``chat.completion.chunk`` dicts),

and the table prints the cost per delta of each (µs of CPU time, ``time.process_time``: the
wall clock of a shared machine counts other processes' time too; the fastest of ``--rounds``
runs, the layers interleaved within each round so that a busy machine slows them alike) and the
ratios ``StreamParser / engine`` and ``ChatStream / StreamParser``, all measured in this run.
Nothing asserts on the numbers; compare rows of one run, not runs.

Outputs (qwen3 + hermes, the commonest serving pair): ``reasoning`` (a long ``<think>`` block,
a short answer), ``content`` (prose), ``tool-args`` (one ``write_file`` call whose ``content``
argument is long code with quotes and escapes; the deltas are then JSON string pieces) and
``xml-args`` (the same call in qwen3_coder's XML parameters). Chunkings: ``word`` (one
space-separated word per delta, text only) and ``4 tokens`` (the text of 4 real Qwen tokens
per delta, cut with the vocabulary in ``tests/data/tokenizers``; ``+ids``: the ids ride along,
the parser has no tokenizer and the OpenAI layer counts reasoning tokens by the engine's state;
``+vocab``: the parser has the tokenizer, so markers match by id and the token view counts).
Without tiktoken the token rows are skipped. Last, the cost of a ``StreamParser.copy()`` by how
much output came before it, and of one digit of a JSON number streamed a digit per delta by the
number's length (both should not grow).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

import trisect  # noqa: E402
from bench_common import TOOLS  # noqa: E402
from trisect.chat import ChatStream  # noqa: E402

QWEN = REPO / "tests" / "data" / "tokenizers" / "qwen2-qwen3"

PROSE = (
    "The parser reads every marker once and keeps only what may still become one, so a long "
    "answer costs what its deltas cost. Whitespace around markers is formatting; text between "
    "them is the model's, kept exactly as written, with its commas, quotes and numbers like 42."
).split()
CODE = [
    'def load(path: str) -> dict:\n    with open(path, encoding="utf-8") as f:\n',
    '        return {"rows": [line.rstrip("\\n") for line in f], "tab": "\\t"}\n',
    "# a comment with <angle brackets> & ampersands, 'single' quotes and a backslash \\ here\n",
]


def _words(n: int) -> str:
    return " ".join(PROSE[i % len(PROSE)] for i in range(n))


def _code(n_words: int) -> str:
    out: list[str] = []
    words = 0
    while words < n_words:
        line = CODE[len(out) % len(CODE)]
        out.append(line)
        words += len(line.split())
    return "".join(out)


def outputs(n: int) -> dict[str, tuple[str, str, str]]:
    """name -> (reasoning format, tool format, output)."""
    code = _code(n)
    call = json.dumps({"name": "write_file", "arguments": {"path": "app/load.py", "content": code}})
    xml = (
        "<tool_call>\n<function=write_file>\n<parameter=path>\napp/load.py\n</parameter>\n"
        f"<parameter=content>\n{code}\n</parameter>\n</function>\n</tool_call>"
    )
    head = "<think>\nWrite the loader.\n</think>\n\nHere it is.\n"
    return {
        "reasoning": ("qwen3", "hermes", f"<think>\n{_words(n)}\n</think>\n\nThe answer is 42."),
        "content": ("qwen3", "hermes", f"<think>\nShort.\n</think>\n\n{_words(n)}"),
        "tool-args": ("qwen3", "hermes", f"{head}<tool_call>\n{call}\n</tool_call>"),
        "xml-args": ("qwen3", "qwen3_coder", head + xml),
    }


def word_deltas(text: str) -> list[tuple[str, None]]:
    parts = text.split(" ")
    return [(p + " ", None) for p in parts[:-1]] + [(parts[-1], None)]


def _qwen():
    try:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
    except ImportError:
        return None
    meta = json.loads((QWEN / "added_tokens.json").read_text(encoding="utf-8"))
    return tiktoken.Encoding(
        name="bench-qwen",
        pat_str=meta["pat_str"],
        mergeable_ranks=load_tiktoken_bpe(str(QWEN / "qwen.tiktoken")),
        special_tokens={t["content"]: t["id"] for t in meta["added_tokens"]},
    )


def token_deltas(enc, text: str, k: int, with_ids: bool) -> list[tuple[str, list[int] | None]]:
    """The text of ``k`` tokens per delta, as an incremental detokenizer emits it."""
    ids = enc.encode(text, allowed_special="all")
    out: list[tuple[str, list[int] | None]] = []
    pending = b""
    for i in range(0, len(ids), k):
        group = ids[i : i + k]
        pending += b"".join(enc.decode_single_token_bytes(t) for t in group)
        try:
            piece, pending = pending.decode("utf-8"), b""
        except UnicodeDecodeError:
            piece = ""
        out.append((piece, group if with_ids else None))
    if "".join(p for p, _ in out) != text:
        raise RuntimeError("token pieces do not rebuild the text")
    return out


def _time(make: Callable[[], object], deltas: list[tuple[str, list[int] | None]], with_ids: bool) -> float:
    stream = make()
    feed = stream.feed  # type: ignore[attr-defined]
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        if with_ids:
            for text, ids in deltas:
                feed(text, ids)
        else:
            for text, _ids in deltas:
                feed(text)
        stream.finish()  # type: ignore[attr-defined]
        return time.process_time() - t0
    finally:
        gc.enable()


def measure(parser: trisect.Parser, deltas: list, with_ids: bool, rounds: int) -> tuple[float, float, float]:
    layers = {
        "engine": lambda: parser.stream(tools=TOOLS).engine,
        "stream": lambda: parser.stream(tools=TOOLS),
        "chat": lambda: ChatStream(parser, tools=TOOLS),
    }
    best = dict.fromkeys(layers, float("inf"))
    for _ in range(rounds):
        for name, make in layers.items():
            best[name] = min(best[name], _time(make, deltas, with_ids))
    n = len(deltas)
    return best["engine"] / n * 1e6, best["stream"] / n * 1e6, best["chat"] / n * 1e6


def copy_cost(words: int, rounds: int) -> list[tuple[str, float]]:
    """µs per ``StreamParser.copy()`` after ``words`` words of output, at three kinds of point."""
    code = _code(words)
    points = {
        "in reasoning": ("qwen3", "hermes", f"<think>\n{_words(words)}"),
        "in a JSON string": (
            "qwen3",
            "hermes",
            '<tool_call>\n{"name": "write_file", "arguments": {"content": ' + json.dumps(code)[:-1],
        ),
        "in an XML value": ("qwen3", "qwen3_coder", f"<tool_call>\n<function=write_file>\n<parameter=content>\n{code}"),
    }
    out = []
    for label, (reasoning, tools, text) in points.items():
        stream = trisect.Parser(reasoning, tools).stream(tools=TOOLS)
        for text_piece, _ids in word_deltas(text):
            stream.feed(text_piece)
        best = float("inf")
        for _ in range(rounds):
            t0 = time.process_time()
            for _ in range(200):
                stream.copy()
            best = min(best, (time.process_time() - t0) / 200)
        out.append((label, best * 1e6))
    return out


def number_cost(digits: int, rounds: int) -> float:
    """µs per digit of one JSON number in a call's arguments, streamed one digit per delta: the
    scanner keeps the number's grammar state, so a digit costs the same however long the number
    is (issue 10 §5: it was re-checked whole on every feed, O(length) per digit)."""
    head = '<tool_call>\n{"name": "f", "arguments": {"n": '
    best = float("inf")
    for _ in range(rounds):
        stream = trisect.Parser("qwen3", "hermes").stream(chat_template_kwargs={"enable_thinking": False})
        stream.feed(head)
        t0 = time.process_time()
        for _ in range(digits):
            stream.feed("7")
        best = min(best, time.process_time() - t0)
    return best / digits * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--words", type=int, default=12000, help="words of prose / code per output")
    ap.add_argument("--rounds", type=int, default=7, help="runs per layer; the fastest counts")
    args = ap.parse_args(argv)
    enc = _qwen()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"trisect layer cost per delta, µs of CPU time (fastest of {args.rounds}); load average {load:.1f}")
    columns = ("engine", "stream", "chat", "stream/eng", "chat/stream")
    head = f"{'output':10s} {'deltas':12s} {'n':>6s} " + " ".join(f"{c:>{max(7, len(c))}s}" for c in columns)
    print(head)
    print("-" * len(head))
    worst = 0.0
    for name, (reasoning, tools, text) in outputs(args.words).items():
        chunkings: list[tuple[str, list, bool]] = [("word", word_deltas(text), False)]
        if enc is not None:
            chunkings.append(("4 tokens", token_deltas(enc, text, 4, False), False))
            chunkings.append(("4 tok+ids", token_deltas(enc, text, 4, True), True))
            chunkings.append(("4 tok+vocab", token_deltas(enc, text, 4, True), True))
        for label, deltas, with_ids in chunkings:
            vocab = enc if label.endswith("vocab") else None
            e, s, c = measure(trisect.Parser(reasoning, tools, tokenizer=vocab), deltas, with_ids, args.rounds)
            worst = max(worst, c / s)
            print(f"{name:10s} {label:12s} {len(deltas):6d} {e:7.2f} {s:7.2f} {c:7.2f} {s / e:10.2f} {c / s:11.2f}")
    print(f"\nlargest ChatStream / StreamParser ratio: {worst:.2f}")
    print("\nStreamParser.copy(), µs per copy, by output length before the fork (O(held state), not O(output)):")
    sizes = (1_000, 16_000, 256_000)
    table = {n: dict(copy_cost(n, args.rounds)) for n in sizes}
    print(f"{'':18s}" + "".join(f"{f'{n // 1000}k words':>12s}" for n in sizes))
    for label in table[sizes[0]]:
        print(f"{label:18s}" + "".join(f"{table[n][label]:12.1f}" for n in sizes))
    print("\nA JSON number streamed one digit per delta, µs per digit by its length (O(delta): flat):")
    lengths = (1_000, 16_000, 256_000)
    costs = [number_cost(n, max(1, args.rounds // 2)) for n in lengths]
    print("".join(f"{f'{n // 1000}k digits':>14s}" for n in lengths) + f"{'longest/shortest':>18s}")
    print("".join(f"{c:14.2f}" for c in costs) + f"{costs[-1] / costs[0]:18.2f}")
    if enc is None:
        print("(tiktoken not installed: token rows skipped)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
