"""The trisect command: parse, formats, demo."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.work import HANG
from trisect.cli import main

OUTPUT = (
    "<think>\nplan\n</think>\n\nSure.\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)


def test_parse_prints_the_openai_message(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text(OUTPUT, encoding="utf-8")
    out = io.StringIO()
    assert main(["parse", str(path), "--reasoning", "qwen3", "--tools", "hermes"], out=out) == 0
    msg = json.loads(out.getvalue())
    assert msg["role"] == "assistant" and msg["reasoning"] == "plan" and msg["content"] == "Sure."
    assert msg["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}


def test_parse_stream_prints_deltas_that_fold_to_the_message(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text(OUTPUT, encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]))
    out = io.StringIO()
    args = ["parse", str(path), "--reasoning", "qwen3", "--tools", "hermes", "--stream", "--tools-file", str(tools)]
    assert main(args, out=out) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) > 5
    assert "".join(d.get("reasoning", "") for d in lines) == "plan"
    args_text = "".join(c["function"]["arguments"] for d in lines for c in d.get("tool_calls", []))
    assert json.loads(args_text) == {"city": "Paris"}


def test_formats_lists_every_name_with_models() -> None:
    out = io.StringIO()
    assert main(["formats", "--json"], out=out) == 0
    rows = json.loads(out.getvalue())
    names = {n for row in rows for n in row["names"]}
    assert {"qwen3", "deepseek_r1", "hermes", "qwen3_coder", "qwen3_xml"} <= names
    assert all(row["models"] for row in rows)
    tools = {row["names"][0]: row["grammar"] for row in rows if row["kind"] == "tools"}
    assert tools["hermes"].startswith("structural tag")
    assert tools["pythonic"].startswith("no structural tag:")  # xgrammar cannot express it, and says why


def test_bad_input_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert main(["parse", str(tmp_path / "missing.txt"), "--tools", "hermes"]) == 2
    assert main(["parse", "-", "--tools", "nope"]) == 2
    assert "unknown tool-call format" in capsys.readouterr().err


def test_demo_runs_as_a_module() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "trisect", "demo", "--delay", "0"], capture_output=True, text=True, check=True
    )
    assert "[reasoning]" in result.stdout and "[tool_call #0] get_weather" in result.stdout
    assert '"name": "write_file"' in result.stdout


# ---------------------------------------------------------------------------- bytes in, bytes kept


def _cli(args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "trisect", *args], input=stdin, capture_output=True, timeout=HANG)


def test_text_is_kept_exact_crlf_and_all(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_bytes(b"<think>a\r\nb</think>x\r\ny")
    for args, stdin in ((["parse", str(path)], None), (["parse", "-"], path.read_bytes())):
        run = _cli([*args, "--reasoning", "qwen3"], stdin)
        assert run.returncode == 0, run.stderr
        msg = json.loads(run.stdout.decode("utf-8"))
        assert (msg["reasoning"], msg["content"]) == ("a\r\nb", "x\r\ny")


def test_a_byte_order_mark_is_not_model_text(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_bytes(b"\xef\xbb\xbf<think>plan</think>answer")
    for reasoning in ("qwen3", "deepseek_r1"):
        msg = json.loads(_cli(["parse", str(path), "--reasoning", reasoning]).stdout)
        assert (msg["reasoning"], msg["content"]) == ("plan", "answer")


def test_input_that_is_not_utf8_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_bytes(b"<think>caf\xe9</think>ok")
    for args, stdin in ((["parse", str(path)], None), (["parse", "-"], path.read_bytes())):
        run = _cli([*args, "--reasoning", "qwen3"], stdin)
        err = run.stderr.decode()
        assert run.returncode == 2 and run.stdout == b""
        assert err.count("\n") == 1 and "is not UTF-8 (byte 10" in err and "Traceback" not in err


def test_errors_replace_reads_bad_bytes_as_replacement_characters(tmp_path: Path) -> None:
    raw = b"<think>caf\xe9</think>ok\xff"
    run = _cli(["parse", "-", "--reasoning", "qwen3", "--errors", "replace"], raw)
    assert run.returncode == 0
    msg = json.loads(run.stdout.decode("utf-8"))  # valid UTF-8 out
    assert (msg["reasoning"], msg["content"]) == ("caf\ufffd", "ok\ufffd")
    stream = _cli(["parse", "-", "--reasoning", "qwen3", "--errors", "replace", "--stream", "--chunk", "1"], raw)
    lines = [json.loads(line) for line in stream.stdout.decode("utf-8").splitlines()]
    assert "".join(d.get("content", "") for d in lines) == "ok\ufffd"


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("<think>" + "word " * 20000 + "</think>done", encoding="utf-8")
    args = [sys.executable, "-m", "trisect", "parse", str(path), "--reasoning", "qwen3", "--stream", "--chunk", "1"]
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()  # as `| head -1` does
        err = proc.stderr.read()
        status = proc.wait(timeout=HANG)
    assert err == b"" and status == 141


def test_an_unknown_name_suggests_the_closest_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "-", "--reasoning", "deepseek-r1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trisect: error: unknown reasoning format 'deepseek-r1'; did you mean deepseek_r1?")
    assert err.count("\n") == 1
