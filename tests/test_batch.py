"""``trisect batch`` and ``trisect.parse_many`` on real files with bad rows mixed in.

One output row per input row, in order, each equal to ``Parser.parse`` of that row (call ids
aside: they are random); bad rows (invalid JSON, a missing field, an unknown format, invalid
tools, ids that do not decode) get a typed ``error`` and the run goes on; the exit status and
the last line count the failures; Ctrl-C (SIGINT to the process group, as a terminal sends it)
leaves a valid partial output that ``--resume`` completes; a progress bar only on a terminal.
Parquet (the ``batch`` extra) is the ``batch`` heavy suite: skipped without pyarrow, a failure
under CI=true.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

import trisect
from support import tokenizers
from support.extras import require
from support.work import HANG
from trisect import Parser
from trisect.many import message_dict

ROOT = Path(__file__).resolve().parent.parent
QWEN_TIKTOKEN = ROOT / "tests" / "data" / "tokenizers" / "qwen2-qwen3" / "qwen.tiktoken"
DEEPSEEK_JSON = ROOT / "tests" / "data" / "tokenizers" / "deepseek-v3" / "tokenizer.json.gz"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "lines": {"type": "integer"}},
            },
        },
    }
]


def _call(path: str, lines: int) -> str:
    args = json.dumps({"path": path, "lines": lines})
    return f'<tool_call>\n{{"name": "write_file", "arguments": {args}}}\n</tool_call>'


def mixed_rows(n: int) -> list[Any]:
    """``n`` rows of every kind, bad ones among them; a row is a dict, or a str for a raw line."""
    rows: list[Any] = []
    for i in range(n):
        kind = i % 12
        think = f"<think>\nstep {i}\n</think>\n\n"
        if kind == 0:
            rows.append({"id": i, "output": think + f"Answer {i}."})
        elif kind == 1:
            rows.append({"id": i, "output": think + "Writing." + _call(f"f{i}.py", i)})
        elif kind == 2:  # cut off inside a call (max_tokens)
            rows.append({"id": i, "output": think + _call(f"g{i}.py", i)[:-25]})
        elif kind == 3:  # malformed call JSON: its text stays content
            rows.append(
                {"id": i, "output": think + '<tool_call>\n{"name": "write_file", "arguments": {"x": }\n</tool_call>'}
            )
        elif kind == 4:
            rows.append("{this line is not json")
        elif kind == 5:
            rows.append({"id": i, "text": "no output field"})
        elif kind == 6:
            rows.append({"id": i, "output": "x", "tool_call_parser": "no_such_format"})
        elif kind == 7:  # per-row tools as JSON text, tool_choice none: the call stays text
            rows.append({"id": i, "output": "ok " + _call("p", 1), "tools": json.dumps(TOOLS), "tool_choice": "none"})
        elif kind == 8:  # thinking off for this row; a per-row format
            rows.append(
                {
                    "id": i,
                    "output": "plain " + _call("q", 2),
                    "chat_template_kwargs": {"enable_thinking": False},
                    "reasoning_parser": "qwen3",
                }
            )
        elif kind == 9:  # the rendered prompt opened the think block
            rows.append({"id": i, "output": f"thinking {i}</think>done", "prompt": "<|im_start|>assistant\n<think>\n"})
        elif kind == 10:
            rows.append({"id": i, "output": "bad tools", "tools": "[{not json"})
        else:
            rows.append({"id": i, "output": think + "Two." + _call("a", 1) + _call("b", 2), "meta": {"k": [1, 2]}})
    return rows


BAD_KINDS = {4: "InvalidJSON", 5: "MissingField", 6: "FormatError", 10: "InvalidRow"}


def write_jsonl(path: Path, rows: list[Any]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write((row if isinstance(row, str) else json.dumps(row, ensure_ascii=False)) + "\n")
            if len(rows) < 100:
                fh.write("\n")  # blank lines are not rows


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def without_ids(message: dict[str, Any] | None) -> dict[str, Any] | None:
    if message is None:
        return None
    out = dict(message)
    if "tool_calls" in out:
        out["tool_calls"] = [{**c, "id": None} for c in out["tool_calls"]]
    return out


def reference(row: Any, raw: str = "InvalidJSON") -> tuple[dict[str, Any] | None, str | None]:
    """What one row must give: ``Parser.parse`` by hand, or the error type (``raw``: that of a
    line that is not a JSON object)."""
    if isinstance(row, str):
        return None, raw
    if "output" not in row:
        return None, "MissingField"
    tools_format = row.get("tool_call_parser") or "hermes"
    if tools_format == "no_such_format":
        return None, "FormatError"
    options: dict[str, Any] = {"tools": TOOLS}
    if "tools" in row:
        try:
            options["tools"] = json.loads(row["tools"])
        except ValueError:
            return None, "InvalidRow"
    for key, option in (("tool_choice", "tool_choice"), ("chat_template_kwargs", "chat_template_kwargs")):
        if key in row:
            options[option] = row[key]
    if "prompt" in row:
        options["prompt_text"] = row["prompt"]
    msg = Parser(row.get("reasoning_parser") or "qwen3", tools_format).parse(row["output"], **options)
    return message_dict(msg), None  # the OpenAI shape plus the message's further facts (a cut-off call)


def check_output(rows: list[Any], out: list[dict[str, Any]], raw: str = "InvalidJSON") -> int:
    """Every output row matches its input row; returns how many failed."""
    assert len(out) == len(rows)
    failed = 0
    for row, got in zip(rows, out, strict=True):
        message, error = reference(row, raw)
        if isinstance(row, str):
            assert got["input"] == row
        else:
            assert {k: v for k, v in got.items() if k not in ("message", "error")} == row
        assert without_ids(got["message"]) == without_ids(message), row
        if error is None:
            assert got["error"] is None
        else:
            failed += 1
            assert got["error"]["type"] == error and got["error"]["message"]
    return failed


def trisect_batch(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "trisect", "batch", *args], capture_output=True, text=True, env=env, **kwargs
    )


JOB = ["--reasoning", "qwen3", "--tools", "hermes"]


# ---------------------------------------------------------------------------- parse_many


@pytest.mark.parametrize("workers", [1, 2])
def test_parse_many_keeps_order_and_reports_bad_rows(workers: int) -> None:
    rows = mixed_rows(600)
    job = {"reasoning": "qwen3", "tools": "hermes", "tool_definitions": TOOLS}
    out = list(trisect.parse_many(rows, workers=workers, chunk_size=37, **job))
    failed = check_output(rows, out, raw="InvalidRow")  # a str is no row (JSON lines are the CLI's)
    assert failed == sum(1 for i in range(600) if i % 12 in BAD_KINDS)


def test_parse_many_rejects_unknown_options() -> None:
    with pytest.raises(TypeError, match="unknown batch option"):
        list(trisect.parse_many([{"output": "x"}], tool="hermes"))


def test_token_ids_with_a_tokenizer_file() -> None:
    from trisect.batch.tokenizer import load_tokenizer

    tok = load_tokenizer(QWEN_TIKTOKEN)  # added_tokens.json beside it: the markers are special tokens
    text = "<think>\nhm\n</think>\n\nOK" + _call("z.py", 3)
    ids = tokenizers.encode("qwen3", text)
    rows = [
        {"ids": ids},  # ids alone: detokenized
        {"output": text, "ids": ids},  # text with ids: markers matched by id
        {"ids": [ids[0], 10**9]},  # an id the vocabulary does not have
        {"ids": "not a list"},
    ]
    out = list(trisect.parse_many(rows, reasoning="qwen3", tools="hermes", ids_field="ids", tokenizer=tok, workers=1))
    expected = Parser("qwen3", "hermes").parse(text).to_dict()
    assert without_ids(out[0]["message"]) == without_ids(expected) == without_ids(out[1]["message"])
    assert out[2]["error"]["type"] == "TokenIdError" and out[2]["message"] is None
    assert out[3]["error"]["type"] == "InvalidRow"
    hf = load_tokenizer(DEEPSEEK_JSON)  # an HF tokenizer.json (gzipped)
    assert hf.decode(hf.encode("hello").ids) == "hello"


# ---------------------------------------------------------------------------- the command


def test_the_command_on_a_file_with_bad_rows(tmp_path: Path) -> None:
    rows = mixed_rows(60)
    write_jsonl(tmp_path / "in.jsonl", rows)
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    run = trisect_batch(
        str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl"), *JOB, "--tools-file",
        str(tmp_path / "tools.json"), "--workers", "2", "--chunk-size", "7",
    )  # fmt: skip
    failed = check_output(rows, read_jsonl(tmp_path / "out.jsonl"))
    assert failed == 20
    assert run.returncode == 1, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("trisect batch: parsed 60 rows, 20 failed")
    assert "\r" not in run.stderr and "rows/s]" not in run.stderr  # no progress bar in a pipe


def test_exit_status_zero_when_no_row_failed_and_stdin_stdout(tmp_path: Path) -> None:
    rows = [{"output": f"<think>a</think>b{i}"} for i in range(30)]
    data = "".join(json.dumps(r) + "\n" for r in rows)
    run = trisect_batch("-", "-o", "-", "--reasoning", "qwen3", "--workers", "1", input=data)
    assert run.returncode == 0, run.stderr
    out = [json.loads(line) for line in run.stdout.splitlines()]
    assert [o["message"]["content"] for o in out] == [f"b{i}" for i in range(30)]
    assert run.stderr.strip().splitlines()[-1].startswith("trisect batch: parsed 30 rows, 0 failed")


def test_a_run_that_cannot_start_is_status_2(tmp_path: Path) -> None:
    run = trisect_batch(str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "o.jsonl"))
    assert run.returncode == 2 and "does not exist" in run.stderr
    write_jsonl(tmp_path / "in.jsonl", [{"output": "x"}])
    run = trisect_batch(str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "o.parquet"))
    assert run.returncode == 2 and "Parquet output needs Parquet input" in run.stderr


def test_ctrl_c_leaves_a_valid_partial_output_and_resume_completes_it(tmp_path: Path) -> None:
    rows = mixed_rows(30000)
    write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    job = [*JOB, "--tools-file", str(tmp_path / "tools.json"), "--workers", "2", "--chunk-size", "50"]
    cmd = [sys.executable, "-m", "trisect", "batch", str(tmp_path / "in.jsonl"), "-o", str(out), *job]
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    # The first run reads stdin, which stays open: it cannot finish before the Ctrl-C however
    # fast it parses.
    first = [sys.executable, "-m", "trisect", "batch", "-", "-o", str(out), *job]
    # SIGINT as a terminal's foreground job has it: a CI runner that starts the suite as a
    # background job (`cmd &` in a script) hands its children SIGINT ignored, and Python then
    # installs no KeyboardInterrupt handler
    proc = subprocess.Popen(
        first,
        env=env,
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdin is not None
    with open(tmp_path / "in.jsonl") as fh:
        for _ in range(20000):
            proc.stdin.write(fh.readline())
    proc.stdin.flush()
    deadline = time.monotonic() + HANG  # however busy the machine: the output grows until then
    while not out.exists() or out.stat().st_size < 100_000:
        assert time.monotonic() < deadline and proc.poll() is None, "the first run wrote no output"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    _, stderr = proc.communicate(timeout=HANG)
    assert proc.returncode == 130, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("trisect batch: interrupted after") and "--resume continues" in last
    partial = read_jsonl(out)  # every line is whole JSON
    assert 0 < len(partial) < len(rows)
    assert out.read_bytes().endswith(b"\n")
    check_output(rows[: len(partial)], partial)
    done = len(partial)
    with open(out, "ab") as fh:  # a hard kill in the middle of a line: resume drops the torn line
        fh.write(b'{"id": "torn')
    run = subprocess.run([*cmd, "--resume"], env=env, capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert f"(+{done:,} already in the output)" in run.stderr.strip().splitlines()[-1]
    check_output(rows, read_jsonl(out))


def test_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    require("tqdm", "batch")
    write_jsonl(tmp_path / "in.jsonl", [{"output": f"<think>a</think>b{i}"} for i in range(2000)])
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a terminal's size
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "trisect", "batch", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "o.jsonl")]
    proc = subprocess.Popen([*cmd, "--reasoning", "qwen3", "--workers", "1"], env=env, stderr=child)
    os.close(child)
    seen = b""
    while True:
        try:
            data = os.read(main, 4096)
        except OSError:
            break
        if not data:
            break
        seen += data
    proc.wait(timeout=HANG)
    os.close(main)
    text = seen.decode("utf-8", "replace")
    assert proc.returncode == 0
    assert "2000/2000" in text and "rows/s" in text  # rows, rate and (while running) the ETA
    assert text.strip().splitlines()[-1].startswith("trisect batch: parsed 2,000 rows, 0 failed")


# ---------------------------------------------------------------------------- Parquet (heavy: batch)


@pytest.mark.batch
def test_parquet_in_and_out_with_ids_and_resume(tmp_path: Path) -> None:
    pa = require("pyarrow", "batch")
    pq = require("pyarrow.parquet", "batch")

    rows = [r for r in mixed_rows(240) if isinstance(r, dict)]
    table = pa.table(
        {
            "id": [r["id"] for r in rows],
            "output": [r.get("output") for r in rows],
            "tools": [r.get("tools") for r in rows],
            "tool_choice": [r.get("tool_choice") for r in rows],
            "tool_call_parser": [r.get("tool_call_parser") for r in rows],
            "prompt": [r.get("prompt") for r in rows],
        }
    )
    pq.write_table(table, tmp_path / "in.parquet", row_group_size=50)
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    job = [*JOB, "--tools-file", str(tmp_path / "tools.json"), "--workers", "2", "--chunk-size", "32"]
    run = trisect_batch(str(tmp_path / "in.parquet"), "-o", str(tmp_path / "out.parquet"), *job)
    assert run.returncode == 1, run.stderr
    got = pq.read_table(tmp_path / "out.parquet")
    assert got.column_names == [*table.column_names, "message", "error"]
    as_rows = [{k: v for k, v in r.items() if v is not None or k in ("message", "error")} for r in got.to_pylist()]
    expect = [
        {k: v for k, v in r.items() if k not in ("chat_template_kwargs", "reasoning_parser", "meta")} for r in rows
    ]
    cut = 0
    for row, out in zip(expect, as_rows, strict=True):
        message, error = reference(row)
        got_message = out["message"]
        if got_message is not None:  # a struct has every field: the facts a message lacks are null
            cut += got_message["unfinished_call"] is not None
            got_message = {k: v for k, v in got_message.items() if v or k not in ("tool_calls", "unfinished_call")}
        assert without_ids(got_message) == without_ids(message)
        assert (out["error"] or {}).get("type") == error
    assert cut == sum(1 for r in rows if r["id"] % 12 == 2) > 0  # every cut-off call kept in the file
    # the same rows as JSONL output, then a resumed Parquet output equal to the full one
    run = trisect_batch(str(tmp_path / "in.parquet"), "-o", str(tmp_path / "out.jsonl"), *job)
    as_jsonl = read_jsonl(tmp_path / "out.jsonl")
    assert [r["id"] for r in as_jsonl] == [r["id"] for r in rows]
    for row, out in zip(expect, as_jsonl, strict=True):
        assert without_ids(out["message"]) == without_ids(reference(row)[0])
    pq.write_table(got.slice(0, 70), tmp_path / "part.parquet")
    run = trisect_batch(str(tmp_path / "in.parquet"), "-o", str(tmp_path / "part.parquet"), *job, "--resume")
    assert "(+70 already in the output)" in run.stderr
    resumed = pq.read_table(tmp_path / "part.parquet")
    assert resumed.num_rows == got.num_rows
    assert resumed.column("id").to_pylist() == got.column("id").to_pylist()
    assert resumed.column("error").to_pylist() == got.column("error").to_pylist()


@pytest.mark.batch
def test_the_columns_hold_every_fact_of_a_message() -> None:
    """``pa.array`` drops a key its struct type does not name without a word: each field of
    ``Message`` (and of ``UnfinishedCall``) needs its field in the ``message`` column's type."""
    pa = require("pyarrow", "batch")
    from trisect.many import arrow_types
    from trisect.message.types import UnfinishedCall

    message, error = arrow_types(pa)
    fields = {message.field(i).name: message.field(i).type for i in range(message.num_fields)}
    assert set(fields) == {"role", *trisect.Message.__dataclass_fields__}
    cut = fields["unfinished_call"]
    assert {cut.field(i).name for i in range(cut.num_fields)} == set(UnfinishedCall.__dataclass_fields__)
    msg = Parser("qwen3", "hermes").parse(_call("x.py", 1)[:-20], tools=TOOLS)
    assert msg.unfinished_call is not None  # the case this column exists for
    column = pa.array([message_dict(msg)], type=message)
    assert column.to_pylist()[0]["unfinished_call"] == msg.unfinished_call.to_dict()


def test_the_message_carries_its_further_facts() -> None:
    """``message`` is the OpenAI shape plus what else the message says (a dataclass field of
    ``Message`` beyond reasoning / content / tool_calls, e.g. a call cut off by the end)."""
    from dataclasses import dataclass, field

    from trisect.many import message_dict

    @dataclass(frozen=True)
    class Cut:
        text: str
        reason: str

    @dataclass(frozen=True)
    class Richer(trisect.Message):
        unfinished_call: Cut | None = None
        extra: list[int] = field(default_factory=list)

    plain = message_dict(trisect.Message(content="x"))
    assert plain == {"role": "assistant", "content": "x", "reasoning": None}
    rich = message_dict(Richer(content="x", unfinished_call=Cut("<tool_call>{", "cut")))
    assert rich["unfinished_call"] == {"text": "<tool_call>{", "reason": "cut"} and rich["extra"] == []
    json.dumps(rich)


def test_a_script_without_the_main_guard_fails_fast(tmp_path: Path) -> None:
    """Workers start with forkserver / spawn, which run the script's top level again: without
    ``if __name__ == "__main__":`` they die at start, and parse_many says so instead of hanging."""
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import trisect\n"
        "rows = [{'output': '<think>a</think>b'}] * 500\n"
        "print(sum(1 for _ in trisect.parse_many(rows, reasoning='qwen3', workers=2)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=HANG)
    assert run.returncode != 0
    assert "BrokenProcessPool" in run.stderr
    guarded = tmp_path / "guarded.py"
    guarded.write_text(
        "if __name__ == '__main__':\n" + "".join("    " + line + "\n" for line in script.read_text().splitlines())
    )
    run = subprocess.run([sys.executable, str(guarded)], env=env, capture_output=True, text=True, timeout=HANG)
    assert run.returncode == 0 and run.stdout.strip() == "500", run.stderr


def _pid(rows: object, chunk: list[int]) -> int:
    return os.getpid()


def test_workers_default_to_the_free_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """More workers than free cores is slower than one (the caller's process works beside them):
    ``workers=None`` is ``free_cores()``, the usable CPUs minus the load average, at least 1."""
    from trisect import many

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.5, 0.0, 0.0))
    assert many.free_cores() == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.0, 0.0))
    assert many.free_cores() == 3
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 0.0, 0.0))
    assert many.free_cores() == 1
    options = many.BatchOptions.of({"reasoning": "qwen3"})
    assert list(many.ordered_map(_pid, [[1], [2]], options, None)) == [os.getpid()] * 2  # busy: in this process
