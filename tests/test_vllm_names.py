"""Every parser name vLLM 0.33 registers is a trisect format name.

The lists are vLLM 0.33.0's ``_REASONING_PARSERS_TO_REGISTER`` (``vllm/reasoning/__init__.py``,
42 names) and ``_TOOL_PARSERS_TO_REGISTER`` (``vllm/tool_parsers/__init__.py``, 58 names).
``hf`` and ``beam`` read the checkpoint's ``response_template`` metadata at run time (vLLM's
``ResponseTemplateParser``; ``BeamParser`` is one with Beam's grammar options): they construct
with a tokenizer that carries a template. Each name constructs a ``Parser``, is listed by
``trisect formats``, and its module's docstring shows the wire format and a reference.
"""

from __future__ import annotations

import inspect
import json

import pytest

import trisect
from support.format_modules import module_of
from trisect.cli import main as cli_main
from trisect.formats import reasoning_format, tool_format

VLLM_REASONING = (
    "beam", "cohere_command3", "cohere_command4", "deepseek_r1", "deepseek_v3", "deepseek_v4", "deepseek_v41",
    "ernie45", "gemma4", "glm45", "glm47", "granite", "granite_thinking_parser", "hf", "holo2", "hunyuan_a13b",
    "hy_v3", "hy_v4", "inkling", "k2_horizon", "kimi_k2", "kimi_k3", "ling3", "mimo", "minicpmv", "minimax_m2",
    "minimax_m2_append_think", "minimax_m3", "mistral", "muse", "muse_glimmer", "musespark1x", "nemotron_v3",
    "olmo3", "openai_gptoss", "plamo3", "poolside_v1", "qwen3", "seed_oss", "step3", "step3p5", "step5",
)  # fmt: skip
VLLM_TOOLS = (
    "apertus", "beam", "cohere_command3", "cohere_command4", "deepseek_v3", "deepseek_v31", "deepseek_v32",
    "deepseek_v4", "deepseek_v41", "dots", "ernie45", "functiongemma", "gemma4", "gigachat3", "glm45", "glm47",
    "granite", "granite-20b-fc", "granite4", "hermes", "hf", "hunyuan_a13b", "hy_v3", "hy_v4", "inkling", "internlm",
    "jamba", "k2_horizon", "kimi_k2", "kimi_k3", "lfm2", "ling3", "llama3_json", "llama4_json", "llama4_pythonic",
    "longcat", "mimo", "minicpm5", "minimax_m2", "minimax_m3", "mistral", "muse", "muse_glimmer", "musespark1x",
    "olmo3", "openai", "phi4_mini_json", "plamo3", "poolside_v1", "pythonic", "qwen3_coder", "qwen3_json",
    "qwen3_xml", "seed_oss", "step3", "step3p5", "step5", "xlam",
)  # fmt: skip
RUN_TIME = {"hf", "beam"}  # response-template formats: built from the tokenizer's template
TEMPLATE = {
    "version": 1,
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "content": {},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "content": "json",
            "repeats": True,
            "transform": {
                "type": "function",
                "function": {"name": "{content.name}", "arguments": "{content.arguments}"},
            },
        },
    },
}


class _WithTemplate:
    """A tokenizer that carries a response_template, as a transformers tokenizer does."""

    def __init__(self, tokenizer: object) -> None:
        self._tokenizer = tokenizer
        self.init_kwargs = {"response_template": TEMPLATE}

    def __getattr__(self, name: str) -> object:
        return getattr(self._tokenizer, name)


@pytest.mark.parametrize("name", sorted(RUN_TIME))
def test_the_response_template_names_construct_from_the_tokenizer(name: str) -> None:
    from support import tokenizers

    parser = trisect.Parser(name, name, tokenizer=_WithTemplate(tokenizers.load("qwen3")))
    out = '<think>plan</think>ok<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
    msg = parser.parse(out, tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}])
    assert (msg.reasoning, msg.content, [c.name for c in msg.tool_calls]) == ("plan", "ok", ["f"])


def test_the_lists_are_vllm_033s() -> None:
    assert len(VLLM_REASONING) == len(set(VLLM_REASONING)) == 42
    assert len(VLLM_TOOLS) == len(set(VLLM_TOOLS)) == 58


@pytest.mark.parametrize("name", sorted(set(VLLM_REASONING) - RUN_TIME))
def test_every_reasoning_name_constructs(name: str) -> None:
    parser = trisect.Parser(name)
    assert parser.spec.kind == "reasoning" and parser.spec.models
    doc = inspect.getdoc(module_of(reasoning_format(name))) or ""
    assert "wire format" in doc.lower() and "Reference:" in doc, name


@pytest.mark.parametrize("name", sorted(set(VLLM_TOOLS) - RUN_TIME))
def test_every_tool_name_constructs(name: str) -> None:
    parser = trisect.Parser(None, name)
    assert parser.spec.codec is not None and parser.spec.models
    doc = inspect.getdoc(module_of(tool_format(name))) or ""
    assert "wire format" in doc.lower() and "Reference:" in doc, name


def test_trisect_formats_lists_every_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["formats", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    listed = {(row["kind"], n) for row in rows for n in row["names"]}
    missing = {("reasoning", n) for n in VLLM_REASONING} | {("tools", n) for n in VLLM_TOOLS}
    assert not missing - listed, sorted(missing - listed)
