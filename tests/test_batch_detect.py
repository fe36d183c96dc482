"""``trisect batch --model / --chat-template`` and ``parse_many(chat_template=...)``: the formats
not named come from ``trisect.detect``.

Each test would fail if detection were not used: the outputs are written in the wire format the
template renders (GLM-4.7's ``<arg_key>`` calls, a ``<reflect>`` / ``<fn>`` family no format
covers), which no default and no other name parses into the expected calls. Expected names come
from ``tests/data/detect/expected.json`` (vLLM's documentation and the model cards); expected
messages are written by hand from the template's own render of the turn.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import trisect
from trisect.errors import DetectionError, FormatError
from trisect.many import BatchOptions, job_formats

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "tests" / "data" / "templates"
EXPECTED = json.loads((ROOT / "tests" / "data" / "detect" / "expected.json").read_text())["templates"]
GLM = TEMPLATES / "GLM-4.7-Flash.jinja"
GRANITE33 = TEMPLATES / "ibm-granite-granite-3.3-2B-Instruct.jinja"  # renders neither part: unknown
QWEN3 = TEMPLATES / "Qwen-Qwen3-0.6B.jinja"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]
# GLM-4.7-Flash's render of an assistant turn with reasoning, an answer and one call, after its
# generation prompt (which ends with "<|assistant|><think>"): what the model writes
GLM_OUTPUT = (
    "Need the tool.</think>Checking.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
    "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>"
)
GLM_CALL = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}

# a family no registered format reads: detection synthesises both formats
SYNTH_TEMPLATE = """\
{%- for m in messages -%}
{%- if m.role == 'assistant' -%}
<|bot|>{% if m.reasoning_content %}<reflect>{{ m.reasoning_content }}</reflect>{% endif %}{{ m.content or '' }}
{%- for c in m.tool_calls or [] -%}
<fn>{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}</fn>
{%- endfor -%}<|end|>
{%- else -%}
<|{{ m.role }}|>{{ m.content }}<|end|>
{%- endif -%}
{%- endfor -%}
{%- if tools %}<|tools|>{{ tools | tojson }}<|end|>{% endif -%}
{%- if add_generation_prompt %}<|bot|>{% endif -%}
"""


def trisect_batch(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "trisect", "batch", *args], capture_output=True, text=True, env=env)


def calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
        for c in message.get("tool_calls", [])
    ]


def run_one(tmp_path: Path, output: str, *flags: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    (tmp_path / "in.jsonl").write_text(json.dumps({"output": output}) + "\n")
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    out = tmp_path / "out.jsonl"
    run = trisect_batch(
        str(tmp_path / "in.jsonl"), "-o", str(out), "--tools-file", str(tmp_path / "tools.json"), *flags
    )
    return run, (json.loads(out.read_text()) if out.exists() and out.read_text() else {})


def test_the_command_takes_the_formats_from_the_chat_template(tmp_path: Path) -> None:
    expected = EXPECTED[GLM.name]
    run, row = run_one(tmp_path, GLM_OUTPUT, "--chat-template", str(GLM), "--workers", "1")
    assert run.returncode == 0, run.stderr
    message = row["message"]
    assert (message["reasoning"], message["content"], calls(message)) == ("Need the tool.", "Checking.", [GLM_CALL])
    names = f"reasoning {expected['reasoning']}, tools {expected['tools']}"
    assert f"trisect batch: detected from the chat template: {names}" in run.stderr
    # without the template, nothing says which formats: the whole output is content
    run, row = run_one(tmp_path, GLM_OUTPUT, "--workers", "1")
    assert row["message"]["content"] == GLM_OUTPUT and "detected" not in run.stderr


def test_a_model_directory_names_the_formats(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    config = {"chat_template": QWEN3.read_text(), "eos_token": "<|im_end|>"}
    (model / "tokenizer_config.json").write_text(json.dumps(config))
    args = json.dumps({"city": "Oslo", "days": 1})
    output = f'<think>\nhm\n</think>\n\nSure.<tool_call>\n{{"name": "get_weather", "arguments": {args}}}\n</tool_call>'
    run, row = run_one(tmp_path, output, "--model", str(model), "--workers", "2")
    assert run.returncode == 0, run.stderr
    message = row["message"]
    assert (message["reasoning"], message["content"]) == ("hm", "Sure.")  # qwen3 trims the block's newlines
    assert calls(message) == [{"name": "get_weather", "arguments": {"city": "Oslo", "days": 1}}]
    expected = EXPECTED[QWEN3.name]
    assert f"reasoning {expected['reasoning']}, tools {expected['tools']}" in run.stderr


def test_a_named_format_wins_and_the_other_is_detected(tmp_path: Path) -> None:
    run, row = run_one(tmp_path, GLM_OUTPUT, "--chat-template", str(GLM), "--tools", "hermes", "--workers", "1")
    assert run.returncode == 0, run.stderr
    message = row["message"]
    assert message["reasoning"] == "Need the tool."  # detected: glm45
    assert message["content"] == GLM_OUTPUT.split("</think>", 1)[1] and not calls(message)  # hermes reads no GLM call


def test_an_unknown_part_stops_the_run_naming_what_to_pass(tmp_path: Path) -> None:
    run, _ = run_one(tmp_path, "x", "--chat-template", str(GRANITE33))
    assert run.returncode == 2
    error = run.stderr.strip().splitlines()[-1]
    assert error.startswith("trisect batch: error: the chat template of")
    assert "pass --reasoning NAME" in error and "pass --tools NAME" in error
    assert "suggest granite" in error  # the tool-call format the template's tool prompt mentions
    assert not (tmp_path / "out.jsonl").exists()  # stopped before any output was opened
    # a part that is named needs no detection: only the other one is reported
    run, _ = run_one(tmp_path, "x", "--chat-template", str(GRANITE33), "--reasoning", "granite")
    assert run.returncode == 2 and "--tools NAME" in run.stderr and "--reasoning NAME" not in run.stderr
    run, row = run_one(tmp_path, "x", "--chat-template", str(GRANITE33), "--reasoning", "granite", "--tools", "granite")
    assert run.returncode == 0 and row["message"]["content"] == "x"
    # Python: the typed error, raised in the caller before any row is parsed, naming the keyword
    with pytest.raises(DetectionError, match=r"pass tools=NAME") as caught:
        next(trisect.parse_many([{"output": "x"}], chat_template=str(GRANITE33), reasoning="granite", workers=2))
    assert isinstance(caught.value, FormatError)


def test_synthesised_formats_are_rebuilt_in_each_worker(tmp_path: Path) -> None:
    template = tmp_path / "chat_template.jinja"
    template.write_text(SYNTH_TEMPLATE)
    job, detection = job_formats(BatchOptions(chat_template=str(template)))
    assert detection is not None and (detection.reasoning_status, detection.tools_status) == ("synthesised",) * 2
    assert job.chat_template is not None  # kept: the spec itself cannot go to a worker
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(detection.reasoning_spec)
    call = '<fn>{{"name": "get_weather", "arguments": {{"days": {i}}}}}</fn>'
    rows = [{"output": f"<reflect>step {i}</reflect>Answer {i}." + call.format(i=i)} for i in range(40)]
    out = list(trisect.parse_many(rows, chat_template=str(template), tool_definitions=TOOLS, workers=2, chunk_size=7))
    assert [r["error"] for r in out] == [None] * 40
    for i, row in enumerate(out):
        message = row["message"]
        assert (message["reasoning"], message["content"]) == (f"step {i}", f"Answer {i}.")
        assert calls(message) == [{"name": "get_weather", "arguments": {"days": i}}]


def test_registered_formats_go_to_the_workers_by_name() -> None:
    job, detection = job_formats(BatchOptions(chat_template=str(GLM), tools="hermes"))
    assert detection is not None
    assert (job.reasoning, job.tools, job.chat_template) == (EXPECTED[GLM.name]["reasoning"], "hermes", None)
    job, detection = job_formats(BatchOptions(chat_template=str(GRANITE33), reasoning="granite", tools="granite"))
    assert detection is None and job.chat_template is None  # both named: nothing to detect


def test_ray_parse_batch_takes_the_chat_template() -> None:
    """``ParseBatch``'s keywords are ``parse_many``'s: ``chat_template`` included (no Ray needed to
    build one: it is the class each actor instantiates)."""
    from trisect.integrations.ray import ParseBatch

    batch = ParseBatch(chat_template=str(GLM), tool_definitions=TOOLS)
    message, error = batch._rows.parse({"output": GLM_OUTPUT})
    assert error is None and message is not None
    assert (message["reasoning"], calls(message)) == ("Need the tool.", [GLM_CALL])
