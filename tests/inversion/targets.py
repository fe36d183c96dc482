"""The templates the inversion tests render, each with the trisect formats it maps to.

A target is one chat template and what an engine serving it is told: the reasoning and tool
format names (``tests/data/detect/expected.json`` for the templates of ``tests/data/templates``;
``tests/data/detect/heldout/labels.json`` for the held-out ones read in place), the special
tokens the template renders, the text the engine stops at (its end-of-turn token, whose text an
engine does not send: docs/rules.md, "Token ids"), the request's ``chat_template_kwargs`` and the
tokenizer, where one is staged (``tests/support/tokenizers.py``).

What a template cannot write, or writes lossily, is not here: ``tests/inversion/lossy.py`` holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data"
TEMPLATES = DATA / "templates"
HELDOUT = DATA / "detect" / "heldout"


@dataclass(frozen=True, eq=False)  # hashed by identity: one target, one cache entry
class Target:
    name: str  # the test id
    template: Path
    reasoning: str | None  # the trisect reasoning format (None: no reasoning parser)
    tools: str | None  # the trisect tool format
    end: str  # what the rendered turn ends with that the model does not send: the stop token and after
    special: dict[str, str] = field(default_factory=dict)  # bos_token, eos_token, …
    kwargs: dict[str, Any] = field(default_factory=dict)  # chat_template_kwargs
    tokenizer: str | None = None  # tests/support/tokenizers.py name
    reasoning_key: str | None = "reasoning_content"  # the message key the template reads reasoning from
    also_ends: tuple[str, ...] = ()  # other stop texts a turn may end with (Harmony: <|call|> after a call)
    heavy_examples: int = 2000  # the heavy run's cap per target: ~21 CPU-ms a turn x 32 targets: ~9 min on 2 cores


QWEN = {"eos_token": "<|im_end|>"}
LLAMA3 = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
DS = {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}
MISTRAL = {"bos_token": "<s>", "eos_token": "</s>"}
GRANITE = {"eos_token": "<|end_of_text|>"}


def _t(name: str, file: str, reasoning: str | None, tools: str | None, end: str, **kw: Any) -> Target:
    folder = HELDOUT if kw.pop("heldout", False) else TEMPLATES
    return Target(name, folder / file, reasoning, tools, end, **kw)


TARGETS: tuple[Target, ...] = (
    _t("qwen3", "Qwen-Qwen3-0.6B.jinja", "qwen3", "hermes", "<|im_end|>\n", special=QWEN, tokenizer="qwen3"),
    _t(
        "qwen3-nothink",
        "Qwen-Qwen3-0.6B.jinja",
        "qwen3",
        "hermes",
        "<|im_end|>\n",
        special=QWEN,
        kwargs={"enable_thinking": False},
        tokenizer="qwen3",
    ),
    _t(
        "qwen2.5",
        "Qwen-Qwen2.5-7B-Instruct.jinja",
        None,
        "hermes",
        "<|im_end|>\n",
        special=QWEN,
        tokenizer="qwen3",
        reasoning_key=None,
    ),
    _t(
        "qwen3-coder",
        "Qwen3-Coder.jinja",
        None,
        "qwen3_coder",
        "<|im_end|>\n",
        special=QWEN,
        tokenizer="qwen3",
        reasoning_key=None,
    ),
    _t(
        "qwen3-coder-30b",
        "Qwen-Qwen3-Coder-30B-A3B-Instruct.jinja",
        None,
        "qwen3_coder",
        "<|im_end|>\n",
        special=QWEN,
        tokenizer="qwen3",
        reasoning_key=None,
    ),
    _t(
        "hermes2pro",
        "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja",
        None,
        "hermes",
        "<|im_end|>\n",
        special=QWEN,
        reasoning_key=None,
    ),
    _t(
        "hermes3",
        "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
        None,
        "hermes",
        "<|im_end|>\n",
        special=QWEN,
        reasoning_key=None,
    ),
    _t("glm46", "GLM-4.6.jinja", "glm45", "glm45", "", tokenizer="glm"),
    _t("glm47-flash", "GLM-4.7-Flash.jinja", "glm45", "glm47", "", tokenizer="glm"),
    _t(
        "kimi-k2-instruct",
        "Kimi-K2-Instruct.jinja",
        None,
        "kimi_k2",
        "<|im_end|>",
        reasoning_key=None,
        tokenizer="kimi_k2",
    ),
    _t("kimi-k2", "moonshotai-Kimi-K2.jinja", None, "kimi_k2", "<|im_end|>", reasoning_key=None, tokenizer="kimi_k2"),
    _t("kimi-k2-thinking", "Kimi-K2-Thinking.jinja", "kimi_k2", "kimi_k2", "<|im_end|>", tokenizer="kimi_k2"),
    _t("minimax-m2", "MiniMax-M2.jinja", "minimax_m2", "minimax_m2", "[e~[\n", tokenizer="minimax"),
    _t(
        "deepseek-v3.1",
        "deepseek-ai-DeepSeek-V3.1.jinja",
        "deepseek_v3",
        "deepseek_v31",
        "<｜end▁of▁sentence｜>",
        special=DS,
        tokenizer="deepseek_v3",
        reasoning_key=None,
    ),
    _t(
        "granite-3.3",
        "ibm-granite-granite-3.3-2B-Instruct.jinja",
        "granite",
        "granite",
        "<|end_of_text|>\n",
        special=GRANITE,
        reasoning_key=None,
    ),
    _t(
        "granite-4.0",
        "ibm-granite-granite-4.0.jinja",
        None,
        "granite4",
        "<|end_of_text|>\n",
        special=GRANITE,
        reasoning_key=None,
        tokenizer="granite4",
    ),
    _t(
        "granite-4.1",
        "ibm-granite-granite-4.1.jinja",
        None,
        "granite4",
        "<|end_of_text|>\n",
        special=GRANITE,
        reasoning_key=None,
        tokenizer="granite4",
    ),
    _t(
        "llama-3.1",
        "meta-llama-Llama-3.1-8B-Instruct.jinja",
        None,
        "llama3_json",
        "<|eot_id|>",
        special=LLAMA3,
        reasoning_key=None,
        tokenizer="llama3",
    ),
    _t(
        "llama-3.2",
        "meta-llama-Llama-3.2-3B-Instruct.jinja",
        None,
        "llama3_json",
        "<|eot_id|>",
        special=LLAMA3,
        reasoning_key=None,
        tokenizer="llama3",
    ),
    _t(
        "llama-3.3",
        "meta-llama-Llama-3.3-70B-Instruct.jinja",
        None,
        "llama3_json",
        "<|eot_id|>",
        special=LLAMA3,
        reasoning_key=None,
        tokenizer="llama3",
    ),
    _t(
        "llama4-json",
        "vllm-tool_chat_template_llama4_json.jinja",
        None,
        "llama4_json",
        "<|eot|>",
        special={"bos_token": "<|begin_of_text|>"},
        reasoning_key=None,
        tokenizer="llama4",
    ),
    _t(
        "mistral-small-3.2",
        "Mistral-Small-3.2-24B-Instruct-2506.jinja",
        None,
        "mistral",
        "</s>",
        special=MISTRAL,
        reasoning_key=None,
    ),
    _t(
        "mistral-nemo",
        "mistralai-Mistral-Nemo-Instruct-2407.jinja",
        None,
        "mistral",
        "</s>",
        special=MISTRAL,
        reasoning_key=None,
    ),
    _t(
        "devstral",
        "unsloth-mistral-Devstral-Small-2507.jinja",
        None,
        "mistral",
        "</s>",
        special=MISTRAL,
        reasoning_key=None,
    ),
    _t(
        "ministral-3-reasoning",
        "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
        "mistral",
        "mistral",
        "</s>",
        special=MISTRAL,
        reasoning_key=None,
    ),
    _t(
        "magistral-2509",
        "unsloth-Magistral-Small-2509.jinja",
        "mistral",
        "mistral",
        "</s>",
        special=MISTRAL,
        reasoning_key=None,
    ),
    _t(
        "granite-20b-fc",
        "vllm-tool_chat_template_granite_20b_fc.jinja",
        None,
        "granite-20b-fc",
        "<|endoftext|>\n",
        reasoning_key=None,
    ),
    _t(
        "minimax-m1",
        "vllm-tool_chat_template_minimax_m1.jinja",
        None,
        "minimax",
        "<end_of_sentence>\n",
        reasoning_key=None,
    ),
    _t(
        "xlam-llama",
        "vllm-tool_chat_template_xlam_llama.jinja",
        None,
        "xlam",
        "<|eot_id|>",
        special=LLAMA3,
        reasoning_key=None,
    ),
    _t(
        "internlm2",
        "vllm-tool_chat_template_internlm2_tool.jinja",
        None,
        "internlm",
        "<|im_end|>\n",
        reasoning_key=None,
    ),
    _t(
        "nemotron-json",
        "vllm-tool_chat_template_nemotron_json.jinja",
        "deepseek_r1",
        "nemotron_json",
        "\n<SPECIAL_12>\n",
        reasoning_key=None,
    ),
    # held-out templates (tests/data/detect/heldout), read in place: pythonic formats whose
    # templates write strings raw inside quotes (issue 20 §2); detection is not tuned on them
    _t("olmo3", "vllm-tool_chat_template_olmo3.jinja", None, "olmo3", "<|im_end|>\n", heldout=True, reasoning_key=None),
    _t(
        "llama3.2-pythonic",
        "vllm-tool_chat_template_llama3.2_pythonic.jinja",
        None,
        "pythonic",
        "<|eot_id|>",
        special=LLAMA3,
        heldout=True,
        reasoning_key=None,
        tokenizer="llama3",
    ),
    _t(
        "lfm2.5",
        "LFM2.5-8B-A1B.jinja",
        "qwen3",
        "lfm2",
        "<|im_end|>\n",
        special={"bos_token": "<|startoftext|>"},
        heldout=True,
        reasoning_key="thinking",
    ),
    # Harmony: the turn ends at <|return|> (no call) or <|call|> (the engine stops at both)
    _t(
        "gpt-oss",
        "openai-gpt-oss-120b.jinja",
        "openai_gptoss",
        "openai",
        "<|return|>",
        also_ends=("<|call|>",),
        reasoning_key="thinking",
        tokenizer="gpt_oss",
    ),
)
