"""The rendered prompt decides where the output starts: real chat templates rendered with jinja2
(``add_generation_prompt=True``, thinking on and off, single- and multi-turn), passed as
``prompt_text`` and as ``prompt_token_ids`` (the family's tokenizer)."""

from __future__ import annotations

from typing import Any

import pytest

from support import tokenizers
from support.render_reasoning import render_mutable
from trisect import Parser

USER = {"role": "user", "content": "What's the weather like in Paris today?"}
HISTORY = [
    {"role": "user", "content": "Hi!"},
    {"role": "assistant", "content": "Hello! How can I help?", "reasoning_content": "A greeting; greet back."},
    USER,
]
DS = {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}
R = "REASONING"
C = "CONTENT"

# (reasoning format, tokenizer, template, template kwargs, request switches, expected initial state)
ROWS: list[tuple[str, str, str, dict[str, Any], dict[str, Any], str]] = [
    # Qwen3: thinking on leaves the prompt undecided (the switch decides), off closes the block
    ("qwen3", "qwen3", "Qwen-Qwen3-0.6B.jinja", {}, {}, R),
    ("qwen3", "qwen3", "Qwen-Qwen3-0.6B.jinja", {"enable_thinking": False}, {"enable_thinking": True}, C),
    ("mimo", "qwen3", "Qwen-Qwen3-0.6B.jinja", {"enable_thinking": False}, {}, C),
    ("nemotron_v3", "nemotron_v3", "Qwen-Qwen3-0.6B.jinja", {"enable_thinking": False}, {}, C),
    # QwQ pre-fills '<think>\n' with enable_thinking: the prompt wins over a switch that says off
    ("qwen3", "qwen3", "Qwen-QwQ-32B.jinja", {"enable_thinking": True}, {"enable_thinking": False}, R),
    ("deepseek_r1", "qwen3", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", {"enable_thinking": True}, {}, R),
    ("deepseek_r1", "qwen3", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", {}, {}, C),
    ("deepseek_r1", "deepseek_v3", "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", {}, {}, R),
    # DeepSeek V3.1 / V3.2: '<think>' vs '<think></think>' at the end of the prompt
    ("deepseek_v3", "deepseek_v3", "deepseek-ai-DeepSeek-V3.1.jinja", {"thinking": True}, {}, R),
    ("deepseek_v3", "deepseek_v3", "deepseek-ai-DeepSeek-V3.1.jinja", {}, {"thinking": True}, C),
    ("holo2", "deepseek_v3", "deepseek-ai-DeepSeek-V3.1.jinja", {"thinking": False}, {}, C),
    ("deepseek_v3", "deepseek_v3", "deepseek-ai-DeepSeek-V3.2.jinja", {"thinking": True}, {}, R),
    ("deepseek_v4", "deepseek_v3", "deepseek-ai-DeepSeek-V3.2.jinja", {"thinking": False}, {}, C),
    # GLM-4.6: thinking on leaves '<|assistant|>' (the switch, default on, decides); off closes
    ("glm45", "glm", "GLM-4.6.jinja", {}, {}, R),
    ("glm45", "glm", "GLM-4.6.jinja", {"enable_thinking": False}, {}, C),
    # GLM-4.7: '<|assistant|><think>' or '<|assistant|></think>'
    ("glm47", "glm", "GLM-4.7-Flash.jinja", {}, {"enable_thinking": False}, R),
    ("glm47", "glm", "GLM-4.7-Flash.jinja", {"enable_thinking": False}, {"enable_thinking": True}, C),
    ("ling3", "glm", "GLM-4.7-Flash.jinja", {"enable_thinking": False}, {}, C),
    # Kimi K2 Thinking: the prompt ends at the assistant header; earlier '<think></think>' pairs
    # of the history never decide, the switch does
    ("kimi_k2", "kimi_k2", "Kimi-K2-Thinking.jinja", {}, {}, R),
    ("kimi_k2", "kimi_k2", "Kimi-K2-Thinking.jinja", {}, {"thinking": False}, C),
    # MiniMax-M2 always opens the block in the prompt
    ("minimax_m2", "minimax", "MiniMax-M2.jinja", {}, {}, R),
    # Ministral-3 Reasoning: the system prompt holds '[THINK]…[/THINK]'; the prompt ends '[/INST]'
    ("mistral", "magistral", "mistralai-Ministral-3-14B-Reasoning-2512.jinja", {}, {}, C),
    # Granite 3.3 with thinking: the system prompt asks for thoughts; the output opens the block
    ("granite", "granite3", "ibm-granite-granite-3.3-2B-Instruct.jinja", {"thinking": True}, {"thinking": True}, C),
]


def _prompt(template: str, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> str:
    return render_mutable(template, messages, add_generation_prompt=True, **DS, **kwargs)


@pytest.mark.parametrize("turns", ["single", "multi"])
@pytest.mark.parametrize(("fmt", "tok", "template", "kwargs", "switches", "want"), ROWS)
def test_prompt_decides_the_initial_state(
    fmt: str, tok: str, template: str, kwargs: dict, switches: dict, want: str, turns: str
) -> None:
    messages = [USER] if turns == "single" else HISTORY
    prompt = _prompt(template, messages, kwargs)
    options: dict[str, Any] = {"chat_template_kwargs": switches}
    text_only = Parser(fmt)
    assert text_only.stream(prompt_text=prompt, **options).state == want
    with_ids = Parser(fmt, tokenizer=tokenizers.load(tok))
    ids = tokenizers.encode(tok, prompt)
    assert with_ids.stream(prompt_token_ids=ids, **options).state == want
    # the token view reads the same ids the same way: prompt + nothing generated yet; a list of
    # ids alone carries no prompt, so where a switch turns thinking off and the family's markers
    # are then text (FormatSpec.plain_when_off: QwQ's and GLM-4.7's templates open the block
    # anyway), the switch decides there
    spec = with_ids.reasoning_spec
    plain = spec is not None and spec.plain_when_off and spec.initial(with_ids.request(**options)) == C
    assert with_ids.is_reasoning_end(ids, **options) == (want != R or plain)
    assert with_ids.is_reasoning_end([], prompt_token_ids=ids, **options) == (want != R)


def test_multi_turn_history_really_holds_earlier_blocks() -> None:
    """The multi-turn rows are meaningful: these templates keep earlier think pairs in the prompt."""
    glm = _prompt("GLM-4.7-Flash.jinja", HISTORY, {"clear_thinking": False})
    assert "<think>A greeting; greet back.</think>" in glm
    assert Parser("glm47").stream(prompt_text=glm, chat_template_kwargs={"enable_thinking": False}).state == R
    kimi = _prompt("Kimi-K2-Thinking.jinja", HISTORY, {})
    assert "<think></think>Hello!" in kimi
    ministral = _prompt("mistralai-Ministral-3-14B-Reasoning-2512.jinja", HISTORY, {})
    assert "[THINK]" in ministral and "[/THINK]" in ministral


def test_prompt_open_then_output() -> None:
    """A rendered prompt that opens the block makes the first generated token reasoning."""
    prompt = _prompt("deepseek-ai-DeepSeek-V3.2.jinja", [USER], {"thinking": True})
    msg = Parser("deepseek_v3").parse("Let me think.</think>Sunny.", prompt_text=prompt)
    assert (msg.reasoning, msg.content) == ("Let me think.", "Sunny.")
    msg = Parser("deepseek_v3").parse("Sunny.", prompt_text=_prompt("deepseek-ai-DeepSeek-V3.2.jinja", [USER], {}))
    assert (msg.reasoning, msg.content) == (None, "Sunny.")


def test_text_markers_given_as_ids_are_decoded() -> None:
    tok = tokenizers.load("olmo3")
    p = Parser("olmo3", tokenizer=tok)
    ids = tokenizers.encode("olmo3", "<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert p.stream(prompt_token_ids=ids).state == C
    ids = tokenizers.encode("olmo3", "<|im_start|>assistant\n<think>\n")
    assert p.stream(prompt_token_ids=ids, chat_template_kwargs={"enable_thinking": False}).state == R


@pytest.mark.parametrize(
    ("partial", "want"),
    [("<think>\nLet me see", R), ("<think>\nDone.\n</think>\n\nThe answer is", C)],
)
def test_continue_final_message(partial: str, want: str) -> None:
    """``continue_final_message``: the prompt is the conversation with the assistant's partial
    message, without its end-of-turn; a partial message inside the block continues reasoning."""
    full = render_mutable("Qwen-Qwen3-0.6B.jinja", [USER, {"role": "assistant", "content": partial}])
    prompt = full[: full.rindex("<|im_end|>")]
    assert Parser("qwen3").stream(prompt_text=prompt, chat_template_kwargs={"enable_thinking": True}).state == want
    ids = tokenizers.encode("qwen3", prompt)
    qwen = Parser("qwen3", tokenizer=tokenizers.load("qwen3"))
    assert qwen.stream(prompt_token_ids=ids).state == want
    assert qwen.is_reasoning_end(ids) == (want != R)


# families whose templates end the generation prompt at the assistant's turn with thinking on,
# leaving '<think>' to the model (FormatSpec.model_opens)
MODEL_OPENS = [
    ("qwen3", "qwen3", "Qwen-Qwen3-0.6B.jinja"),
    ("glm45", "glm", "GLM-4.6.jinja"),
    ("kimi_k2", "kimi_k2", "Kimi-K2-Thinking.jinja"),
]


def _message(parser: Parser, output: str, whole: bool, **options: Any) -> tuple[str | None, str | None]:
    if whole:
        msg = parser.parse(output, **options)
        return msg.reasoning, msg.content
    stream = parser.stream(**options)
    reasoning, content = [], []
    for delta in [stream.feed(ch) for ch in output] + [stream.finish()]:
        if delta is not None:
            reasoning.append(delta.reasoning or "")
            content.append(delta.content or "")
    return "".join(reasoning) or None, "".join(content) or None


@pytest.mark.parametrize("whole", [True, False], ids=["parse", "stream"])
@pytest.mark.parametrize("turns", ["single", "multi"])
@pytest.mark.parametrize(("fmt", "tok", "template"), MODEL_OPENS)
def test_a_prompt_that_left_the_opener_to_the_model_reads_what_it_wrote(
    fmt: str, tok: str, template: str, turns: str, whole: bool
) -> None:
    """The template rendered thinking on, and the prompt opens no block: the model thinks only by
    writing the opener, so an output without it is content from its first character, and one
    with it is reasoning then content. By text and by the prompt's ids alike; with no prompt,
    the family's default (reasoning first) stands."""
    prompt = _prompt(template, [USER] if turns == "single" else HISTORY, {})
    assert Parser(fmt).stream(prompt_text=prompt).state == R  # undecided until the output says
    with_ids = Parser(fmt, tokenizer=tokenizers.load(tok))
    ids = tokenizers.encode(tok, prompt)
    for given in ({"prompt_text": prompt}, {"prompt_token_ids": ids}):
        parser = with_ids if "prompt_token_ids" in given else Parser(fmt)
        assert _message(parser, "\nSunny, 21 C.", whole, **given) == (None, "Sunny, 21 C.")
        assert _message(parser, "<think>\nWarm.\n</think>\n\nSunny.", whole, **given) == ("Warm.", "Sunny.")
        # the stray closer of an answer is its text (the block never opened)
        assert _message(parser, "Sunny.</think>", whole, **given) == (None, "Sunny.</think>")
        # a closer before any text ends an empty block: no text is read as either field wrongly
        assert _message(parser, "</think>\n\nSunny.", whole, **given) == (None, "Sunny.")
    assert _message(Parser(fmt), "Sunny.", whole) == ("Sunny.", None)
    # grammar timing agrees: reasoning has not ended before the output, and ends with its first text
    assert not with_ids.is_reasoning_end([], prompt_token_ids=ids)
    tracker = with_ids.reasoning_tracker(prompt_token_ids=ids)
    assert not tracker.feed([])
    assert tracker.feed(tokenizers.encode(tok, "Sunny."))
    assert not with_ids.reasoning_ended_at_start(prompt_token_ids=ids)
    # the content ids a grammar is handed: all of a no-think answer, what follows the closer else
    answer = tokenizers.encode(tok, "Sunny.")
    assert with_ids.content_token_ids(answer, prompt_token_ids=ids) == answer
    assert with_ids.count_reasoning_tokens(answer, prompt_token_ids=ids) == 0
    thought = tokenizers.encode(tok, "<think>\nWarm.\n</think>")
    assert with_ids.content_token_ids(thought + answer, prompt_token_ids=ids) == answer
    assert with_ids.is_reasoning_end(thought + answer, prompt_token_ids=ids)
    assert not with_ids.is_reasoning_end(thought[:-1], prompt_token_ids=ids)
