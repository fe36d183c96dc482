"""Thinking switched off, but the model thinks anyway.

One rule per family, from its vLLM 0.33 reasoning parser (docs/formats/vllm-engine.md, "Thinking
off"), the same from text and from token ids:

* the families whose reference has no think terminals when thinking is off (qwen3, mimo,
  seed_oss, glm45 / glm47 / ling3, nemotron_v3, granite_thinking_parser, hy_v3, hy_v4:
  ``FormatSpec.plain_when_off``): the markers are text, the output is content as
  written (``Qwen3Parser.extract_reasoning`` returns the raw output, ``parser/qwen3.py:337-344``;
  ``parser/glm47_moe.py:279-286``), and reasoning has ended
  (``is_reasoning_end`` is true: thinking off means no wait for reasoning,
  ``parser/engine/parser_engine.py:712-735``);
* deepseek_v4 / deepseek_v41 (``parser/deepseek_v4.py:170-173``) and gemma4: the start marker opens a
  block in either mode: reasoning ``hmm``, content ``Hello``; so does plamo3, where vLLM has no
  think terminals with thinking off but the markers are special pieces of the vocabulary that a
  parse from ids alone would drop (the block rule loses nothing, from text or ids).

So qwen3 with thinking off gives content ``<think>\\nhmm\\n</think>\\n\\nHello`` as written (not the
opener kept and the closer swallowed), and ``is_reasoning_end(prompt + output)`` stays true after
the output's ``<think>``.
"""

from __future__ import annotations

import pytest

from support import tokenizers as tk
from trisect import Parser
from trisect.testing import Case, check_case

OFF = {"chat_template_kwargs": {"enable_thinking": False}}
THINKING_FALSE = {"chat_template_kwargs": {"thinking": False}}
PLAIN = [
    # (format, tokenizer, options, start, end)
    ("qwen3", "qwen3", OFF, "<think>", "</think>"),
    ("qwen3", "qwen3", THINKING_FALSE, "<think>", "</think>"),
    ("mimo", None, OFF, "<think>", "</think>"),
    ("seed_oss", "seed_oss", OFF, "<seed:think>", "</seed:think>"),
    ("glm45", "glm", THINKING_FALSE, "<think>", "</think>"),
    ("glm47", "glm", OFF, "<think>", "</think>"),
    ("ling3", None, OFF, "<think>", "</think>"),
    ("nemotron_v3", "nemotron_v3", OFF, "<think>", "</think>"),
    ("granite_thinking_parser", "granite4", OFF, "<think>", "</think>"),
    ("hy_v3", None, {}, "<think>", "</think>"),  # default effort no_think
    ("hy_v4", None, {"reasoning_effort": "no_think"}, "<think>", "</think>"),
]


@pytest.mark.parametrize(
    "row", PLAIN, ids=lambda r: f"{r[0]}-{next(iter(r[2].get('chat_template_kwargs', {'effort': 0})))}"
)
def test_thinking_off_the_markers_are_text(row: tuple) -> None:
    fmt, tok, options, start, end = row
    output = f"{start}hmm{end}Hello"
    case = Case(
        id=f"{fmt}-thinking-off-model-thinks",
        output=output,
        reasoning=fmt,
        tokenizer=tk.load(tok) if tok else None,
        options=options,
        expected={"reasoning": None, "content": output, "tool_calls": []},
    )
    assert check_case(case) > 0
    if tok is not None:  # the token view agrees: reasoning never began
        parser = Parser(fmt, tokenizer=tk.load(tok))
        ids = tk.encode(tok, output)
        assert parser.is_reasoning_end(ids, **options)
        assert parser.content_token_ids(ids, **options) == ids
        assert parser.count_reasoning_tokens(ids, **options) == 0


def test_thinking_off_the_prompt_and_the_output_agree() -> None:
    """Qwen3's template with thinking off closes an empty block in the prompt; the model's own
    block after it is content, so reasoning has ended at every point of prompt + output."""
    qwen = tk.load("qwen3")
    parser = Parser("qwen3", tokenizer=qwen)
    prompt = tk.encode("qwen3", "<|im_start|>assistant\n<think>\n\n</think>\n\n")
    output = tk.encode("qwen3", "<think>hmm</think>Hello")
    for k in range(len(output) + 1):
        assert parser.is_reasoning_end(prompt + output[:k], **OFF)


@pytest.mark.parametrize(
    ("fmt", "tok", "options", "output"),
    [
        ("deepseek_v4", "deepseek_v3", THINKING_FALSE, "<think>hmm</think>Hello"),
        ("deepseek_v4", "deepseek_v3", {"reasoning_effort": "none"}, "<think>hmm</think>Hello"),
        ("deepseek_v41", "deepseek_v3", THINKING_FALSE, "<think>hmm</think>Hello"),
        ("gemma4", "gemma4", OFF, "<|channel>thought\nhmm<channel|>Hello"),
        # vLLM has no think terminals with thinking off (raw content), but its markers are special
        # pieces of the PLaMo vocabulary that ids alone would drop: the block rule keeps them
        ("plamo3", "plamo3", OFF, "<|plamo:begin_think:plamo|>hmm<|plamo:end_think:plamo|>Hello"),
    ],
)
def test_thinking_off_the_start_marker_still_opens_a_block(fmt: str, tok: str, options: dict, output: str) -> None:
    case = Case(
        id=f"{fmt}-thinking-off-block",
        output=output,
        reasoning=fmt,
        tokenizer=tk.load(tok),
        options=options,
        expected={"reasoning": "hmm", "content": "Hello", "tool_calls": []},
    )
    assert check_case(case) > 0


def test_thinking_on_is_unchanged() -> None:
    assert Parser("qwen3").parse("<think>hmm</think>Hello").reasoning == "hmm"
    assert Parser("qwen3").parse("hmm</think>Hello", chat_template_kwargs={"enable_thinking": True}).reasoning == "hmm"


@pytest.mark.parametrize("template", ["tests/data/templates/Qwen-Qwen3-0.6B.jinja", "src/trisect/serve/smollm2.jinja"])
@pytest.mark.parametrize("output", ["<think>\nhmm\n</think>\n\nHello", "Hello</think> there", "a <think> b"])
def test_thinking_off_by_the_templates_default_is_thinking_off(template: str, output: str) -> None:
    # Qwen3's template renders an empty block into the prompt exactly when enable_thinking is
    # false (trisect's template for the default model does the same, and is off by default):
    # a prompt that closed the block is thinking off, whether or not the request said so, and
    # then both markers are text; never the opener kept and the closer swallowed
    from pathlib import Path

    from trisect.templates import load_template

    root = Path(__file__).resolve().parent.parent
    prompt = load_template(root / template).render(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, enable_thinking=False
    )
    assert prompt.endswith("<think>\n\n</think>\n\n")
    parser = Parser("qwen3", "hermes")
    by_default = parser.parse(output, prompt_text=prompt)
    assert by_default == parser.parse(output, prompt_text=prompt, **OFF) == parser.parse(output, **OFF)
    assert by_default.reasoning is None and by_default.content == output
    stream = parser.stream(prompt_text=prompt)
    for ch in output:
        stream.feed(ch)
    stream.finish()
    assert not stream.in_reasoning
