"""What a new user meets first: ``trisect serve`` and ``trisect batch`` on the command line (the
``--model`` a vLLM user types, the start-up banner, format names checked before any row,
deterministic call ids, the progress bar's extra)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trisect.serve import cli

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("model", ["Qwen/Qwen3-0.6B", str(ROOT / "tests"), str(ROOT / "README.md")])
def test_a_model_the_embedded_upstream_cannot_load_is_exit_2_saying_what_to_pass(
    model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--model", model]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err  # one line, no traceback
    assert "--upstream URL --upstream-kind" in err and "GGUF" in err and f"--model {model}" in err


def test_the_banner_says_model_formats_why_url_and_a_client_line_that_works() -> None:
    from support.serving import ReplayChoice, ReplayPiece, served_model, stack

    with stack("vllm", lambda body: [ReplayChoice((ReplayPiece("Hello!"),))], served_model(None, "hermes")) as (
        replay,
        app,
    ):
        served = app.service.served
        served.formats = "reasoning none, tools hermes (named on the command line)"
        text = cli.banner(served, app.service.upstream, "127.0.0.1", app.port)
        assert f"model {served.name} (vllm: {replay.url})" in text
        assert "formats: reasoning none, tools hermes (named on the command line)" in text
        assert f"{app.url}/v1" in text and "/health" in text and "/ready" in text and "/metrics" in text
        (line,) = [line for line in text.splitlines() if line.strip().startswith("try: ")]
        command = line.strip()[len('try: python -c "') : -1]
        run = subprocess.run([sys.executable, "-c", command], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == "Hello!"


def test_detected_formats_say_so_with_their_confidence(capsys: pytest.CaptureFixture[str]) -> None:
    from trisect.serve.model import load_model

    served = load_model(model=None, chat_template=str(ROOT / "tests/data/templates/Qwen-Qwen3-0.6B.jinja"))
    assert served.formats.endswith("(detected from the chat template)") and "qwen3" in served.formats
    named = load_model(model=None, chat_template="{{ messages }}", reasoning_parser="qwen3", tool_call_parser="hermes")
    assert named.formats == "reasoning qwen3, tools hermes (named on the command line)"


def _batch(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trisect", "batch", *args], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )


def test_batch_checks_format_names_before_any_row(tmp_path: Path) -> None:
    rows = tmp_path / "in.jsonl"
    rows.write_text('{"output": "<think>a</think>b"}\n' * 3)
    run = _batch(tmp_path, str(rows), "-o", str(tmp_path / "out.jsonl"), "--reasoning", "qwen4")
    assert run.returncode == 2 and "did you mean qwen3?" in run.stderr
    assert not (tmp_path / "out.jsonl").exists()  # no row was parsed


def test_seeded_call_ids_are_the_same_on_every_run(tmp_path: Path) -> None:
    rows = tmp_path / "in.jsonl"
    call = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    rows.write_text(json.dumps({"output": call}) + "\n" + json.dumps({"output": "x " + call}) + "\n")
    outputs = []
    for i, seed in enumerate(("7", "7", "8")):
        out = tmp_path / f"out{i}.jsonl"
        run = _batch(tmp_path, str(rows), "-o", str(out), "--tools", "hermes", "--seed", seed)
        assert run.returncode == 0, run.stderr
        outputs.append([json.loads(line)["message"]["tool_calls"][0]["id"] for line in out.read_text().splitlines()])
    assert outputs[0] == outputs[1] != outputs[2]
    assert len(set(outputs[0])) == 2 and all(i.startswith("call_") for i in outputs[0])
    unseeded = [_batch(tmp_path, str(rows), "-o", str(tmp_path / f"r{i}.jsonl"), "--tools", "hermes") for i in (0, 1)]
    assert all(r.returncode == 0 for r in unseeded)
    ids = [(tmp_path / f"r{i}.jsonl").read_text() for i in (0, 1)]
    assert ids[0] != ids[1]  # without a seed, random as before


def test_serve_with_a_seed_mints_the_same_ids_in_request_order() -> None:
    import httpx

    from support.serving import ReplayChoice, ReplayPiece, served_model, stack

    call = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    runs = []
    for seed in (3, 3, 4):
        with stack(
            "vllm", lambda body: [ReplayChoice((ReplayPiece(call),))], served_model(None, "hermes"), seed=seed
        ) as (
            replay,
            app,
        ):
            body: dict[str, Any] = {"messages": [{"role": "user", "content": "x"}], "tools": tools}
            ids = [httpx.post(app.url + "/v1/chat/completions", json=body).json() for _ in range(2)]
            anthropic_body = {"max_tokens": 9, "model": "test-model", "messages": body["messages"]}
            anthropic_body["tools"] = [{"name": "f", "input_schema": {"type": "object"}}]
            message = httpx.post(app.url + "/v1/messages", json=anthropic_body).json()
            runs.append(
                [r["choices"][0]["message"]["tool_calls"][0]["id"] for r in ids] + [message["content"][0]["id"]]
            )
    assert runs[0] == runs[1] != runs[2]
    assert runs[0][0] != runs[0][1] and runs[0][2].startswith("toolu_")


def test_the_serve_extra_brings_the_progress_bar() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("tqdm") for d in extras["serve"]) and any(d.startswith("tqdm") for d in extras["batch"])


def test_without_tqdm_batch_says_how_to_get_the_progress_bar(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    import builtins

    from trisect.batch import cli as batch_cli

    real = builtins.__import__

    def no_tqdm(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "tqdm":
            raise ImportError("no tqdm")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    batch_cli._Progress(10, 0, True)
    assert "pip install 'trisect[batch]'" in capsys.readouterr().err
