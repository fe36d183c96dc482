"""The trisect command: parse, formats, demo."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

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
