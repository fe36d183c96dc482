"""The SGLang plugin: registration in a fresh process, the truncation rule against SGLang's
back-fill, grammars through ``FunctionCallParser.get_structure_constraint``, and the reasoning
detector's surface (``sglang_serving`` runs SGLang's own serving code)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest
import sglang_serving as sg
from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.plugins import load_plugins
from xgrammar import StructuralTag

import trisect
from trisect import grammar
from trisect.integrations._common import plugin_names

load_plugins()

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]
OUTPUT = (
    "<think>\nThe user wants the forecast.\n</think>\n\nLet me check.\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>'
)
CUT = OUTPUT[: OUTPUT.index('"days"') + 3]  # max_tokens inside the arguments: ..."Paris", "d


def pieces(text: str, per: int) -> list[str]:
    from support import tokenizers

    return sg.chunks("qwen3", tokenizers.encode("qwen3", text), per)


def server(reasoning: str | None = "trisect_qwen3", tools: str | None = "trisect_hermes") -> sg.Server:
    return sg.Server(reasoning, tools)


def test_the_entry_point_registers_every_name_in_a_fresh_process() -> None:
    code = """
        import importlib.util, json, sys, types
        spec = importlib.util.find_spec("sglang")  # the parser modules without sglang/__init__
        pkg = types.ModuleType("sglang"); pkg.__path__ = list(spec.submodule_search_locations); pkg.__spec__ = spec
        sys.modules["sglang"] = pkg
        from importlib.metadata import entry_points
        from sglang.srt.function_call.function_call_parser import FunctionCallParser
        from sglang.srt.parser.reasoning_parser import ReasoningParser
        from sglang.srt.plugins import load_plugins
        before = "trisect_qwen3" in ReasoningParser.DetectorMap
        load_plugins()
        load_plugins()  # idempotent: the hand-off is wrapped once
        init = ReasoningParser.__init__
        print(json.dumps({"before": before, "entry_points": [e.value for e in entry_points(group="sglang.srt.plugins")],
                          "tools": sorted(FunctionCallParser.ToolCallParserEnum),
                          "reasoning": sorted(ReasoningParser.DetectorMap),
                          "wrapped_once": getattr(init, "__trisect__", False)
                          and not getattr(init.__wrapped__, "__trisect__", False)}))
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=dict(os.environ), timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["before"] is False
    assert "trisect.integrations.sglang:register" in got["entry_points"]
    assert set(plugin_names("tools")) | {"trisect_auto"} <= set(got["tools"])
    assert set(plugin_names("reasoning")) | {"trisect_auto"} <= set(got["reasoning"])
    assert "hermes" in got["tools"] and "qwen3" in got["reasoning"]  # SGLang's own names stay
    assert got["wrapped_once"]


def test_the_launch_line_names_parse_with_sglangs_serving_code() -> None:
    reply = server("trisect_qwen3", "trisect_qwen3_coder").stream(
        sg.request(TOOLS, stream=True), ["<think>x</think>", "Hi"]
    )
    assert (reply.reasoning, reply.content) == ("x", "Hi")


def test_sglangs_own_detectors_are_left_as_they_are() -> None:
    parser = ReasoningParser("qwen3", stream_reasoning=True, request=sg.request(), force_reasoning=True)
    assert type(parser.detector).__name__ == "Qwen3Detector"
    assert parser.parse_non_stream("plan</think>Hi") == ("plan", "Hi")


# ---------------------------------------------------------------------------------------- truncation


@pytest.mark.parametrize("finish", ["length", "stop"])
def test_a_cut_off_call_is_never_completed_by_sglangs_back_fill(finish: str) -> None:
    for per in (1, 4):
        reply = server().stream(sg.request(TOOLS, stream=True), pieces(CUT, per), finish)
        assert reply.tool_calls == [] and reply.backfill == [] and reply.finish_reason == finish, per
    whole = server().whole(sg.request(TOOLS), CUT, finish)
    assert whole.tool_calls == [] and whole.finish_reason == finish


def test_a_cut_off_calls_markup_is_not_content() -> None:
    for per in (1, 4):
        reply = server().stream(sg.request(TOOLS, stream=True), pieces(CUT, per), "length")
        assert reply.content == "Let me check.", per
    whole = server().whole(sg.request(TOOLS), CUT, "length")
    assert whole.content == "Let me check."


def test_sglangs_own_parser_invents_the_rest_of_a_cut_call() -> None:
    # the research's finding, kept as a check that the comparison above is meaningful
    reply = server("qwen3", "hermes").stream(sg.request(TOOLS, stream=True), pieces(CUT, 1), "length")
    assert reply.backfill and json.loads(reply.tool_calls[0][2]) == {"city": "Paris"}


@pytest.mark.parametrize("finish", ["length", "stop"])
def test_incremental_calls_stream_and_a_cut_call_keeps_the_engines_reason(
    finish: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRISECT_TOOL_CALLS", "incremental")
    whole = server().stream(sg.request(TOOLS, stream=True), pieces(OUTPUT, 1))
    assert [(n, json.loads(a)) for _, n, a in whole.tool_calls] == [("get_weather", {"city": "Paris", "days": 3})]
    assert whole.finish_reason == "tool_calls" and whole.backfill == []
    for per in (1, 4):
        reply = server().stream(sg.request(TOOLS, stream=True), pieces(CUT, per), finish)
        assert [n for _, n, _ in reply.tool_calls] == ["get_weather"]  # partly sent
        assert reply.backfill == [] and reply.finish_reason == finish, per  # never "tool_calls"


# ---------------------------------------------------------------------------------------- grammars


def constraint(fmt: str, choice: Any, **kw: Any) -> Any:
    parser = FunctionCallParser([Tool(**t) for t in TOOLS], f"trisect_{fmt}")
    return parser.get_structure_constraint(choice, **kw)


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "get_weather"}}])
def test_required_and_named_get_trisects_structural_tag(choice: Any) -> None:
    from sglang.srt.entrypoints.openai.protocol import ToolChoice

    sglang_choice = choice if isinstance(choice, str) else ToolChoice(**choice)
    kind, tag = constraint("hermes", sglang_choice)
    assert kind == "structural_tag"
    want = grammar.structural_tag(trisect.Parser(tools="hermes"), TOOLS, tool_choice=choice)
    assert tag == StructuralTag.model_validate(want)


def test_auto_is_free_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert constraint("hermes", "auto") is None
    monkeypatch.setenv("TRISECT_AUTO_GRAMMAR", "1")
    kind, tag = constraint("hermes", "auto")
    want = grammar.structural_tag(trisect.Parser(tools="hermes"), TOOLS, tool_choice="auto")
    assert kind == "structural_tag" and tag == StructuralTag.model_validate(want)


def test_a_format_without_a_structural_tag_gets_sglangs_json_schema() -> None:
    kind, _schema = constraint("pythonic", "required")
    assert kind == "json_schema"


# ---------------------------------------------------------------------------------------- reasoning


def test_the_reasoning_detector_gives_sglang_the_formats_markers() -> None:
    import hf_tokenizers
    from transformers import PreTrainedTokenizerFast

    detector = ReasoningParser("trisect_qwen3", stream_reasoning=True).detector
    assert (detector.think_start_token, detector.think_end_token) == ("<think>", "</think>")
    tok = PreTrainedTokenizerFast(tokenizer_file=str(hf_tokenizers.hf_dir("qwen3") / "tokenizer.json"))
    assert detector.get_think_end_token_ids(tok) == [tok.convert_tokens_to_ids("</think>")]


def test_stream_reasoning_false_sends_the_block_at_its_end() -> None:
    reply = server(tools=None).stream(sg.request(stream=True, stream_reasoning=False), pieces(OUTPUT, 1))
    parser = ReasoningParser("trisect_qwen3", stream_reasoning=False, request=sg.request(stream=True))
    got = [parser.parse_stream_chunk(p) for p in pieces(OUTPUT, 1)]
    assert [r for r, _ in got if r] == ["The user wants the forecast."]
    assert reply.reasoning == "The user wants the forecast."


@pytest.mark.parametrize(
    ("force", "want"), [(True, ("Plain.", None)), (False, (None, "Plain.")), (None, ("Plain.", None))]
)
def test_without_a_request_force_reasoning_is_the_switch(force: bool | None, want: tuple[Any, Any]) -> None:
    """A caller that passes no request (SGLang's scheduler and grammar backend build parsers so)
    gets ``force_reasoning`` read as the thinking switch: True opens the block; False turns
    thinking off (Qwen3: the output is content); None leaves trisect's default (on)."""
    parser = ReasoningParser("trisect_qwen3", stream_reasoning=True, force_reasoning=force)
    assert parser.parse_non_stream("Plain.") == (want[0] or "", want[1] or "")
    streaming = ReasoningParser("trisect_qwen3", stream_reasoning=True, force_reasoning=force)
    got = [streaming.parse_stream_chunk(p) for p in ("Pla", "in.")] + [streaming.parse_stream_end()]
    assert ("".join(r or "" for r, _ in got) or None, "".join(n or "" for _, n in got) or None) == want


def test_without_a_request_thinking_off_still_reads_a_block_the_model_opens() -> None:
    parser = ReasoningParser("trisect_mistral", stream_reasoning=True, force_reasoning=False)
    assert parser.parse_non_stream("[THINK]plan[/THINK]Answer.") == ("plan", "Answer.")
