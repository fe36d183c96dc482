"""Generate tests/cases/<reasoning format>/reasoning.jsonl for every reasoning format.

Run from anywhere: ``python tests/support/render_reasoning.py`` (``--check`` only compares).
Output is deterministic; the generated files are committed.

Where the family's chat template is in tests/data/templates the output is a *round trip*
(``render_cases.py`` explains it): the conversation rendered with the assistant message minus
the conversation rendered with the generation prompt, up to the end-of-turn marker, so the
markers, newlines and whatever the template pre-fills are the template's. Where there is no
template (or the template cannot render the shape needed: truncated, duplicated or missing
markers) the output is written by hand in the wire format the format module's docstring shows
(taken from the vLLM 0.33 parser it names), and ``source`` says so.

Expected values come from how each output was built (the reasoning and content strings put
into it) and the format's documented rules, never from running trisect. Normalisation as in
``render_cases.py``: each field is the concatenation of its runs of text, stripped as a whole;
markers never reach a field; empty -> null.

Every family gets the same core set (``core()``): thinking on and off per request, start marker
missing, end marker missing (truncated: all reasoning), an empty block, a duplicate end marker,
reasoning directly followed by a tool-call marker (the harness cuts every case in every way, so
markers are split across deltas and arrive together in one delta), multi-byte characters that
the family's byte-level tokenizer splits across tokens, a special-token marker mentioned with
ordinary tokens, and a prompt that pre-fills the start marker. Then each family's own rules.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
if __name__ == "__main__":  # run as a script: import `support` as a package, not by file
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    sys.path.insert(0, str(TESTS))

from support import casefile  # noqa: E402
from support import tokenizers as tk  # noqa: E402
from support.render_cases import Book, render, tool  # noqa: E402

R = "The user asks for the weather in Paris. I should check the forecast first."
C = "It is sunny in Paris today, 22 °C."
R_MB = "用户想知道巴黎的天气 🤔 — Straße, naïve café, 한국어 텍스트."
C_MB = "巴黎今天晴天 ☀️，22 °C。Ça va très bien 👍"
R_LONG = "First, list what I know.\n\n- Paris is in France\n- it is summer\n\nSecond, answer briefly."
OFF = {"chat_template_kwargs": {"enable_thinking": False}}
ON = {"chat_template_kwargs": {"enable_thinking": True}}

GET_WEATHER = tool(
    "get_weather",
    "Get the current weather for a location.",
    {"location": {"type": "string", "description": "City name"}},
    ["location"],
)


def ordinary(tokenizer: str, pieces: list[tuple[str, bool]]) -> list[int]:
    """Ids of the concatenated pieces; pieces marked True are spelled with ordinary tokens (the
    real tokenizers through ``tokenizers.encode_ordinary``, synthetic ones through their
    ``load_ordinary()``)."""
    ordinary_tok = None
    if tokenizer not in ("qwen3", "deepseek_v3"):
        ordinary_tok = importlib.import_module(f"support.tok_{tokenizer}").load_ordinary()
    ids: list[int] = []
    for text, as_ordinary in pieces:
        if not as_ordinary:
            ids += tk.encode(tokenizer, text)
        elif ordinary_tok is None:
            ids += tk.encode_ordinary(tokenizer, text)
        else:
            ids += ordinary_tok.encode(text, add_special_tokens=False).ids
    return ids


@dataclass
class Family:
    """How one reasoning format writes a block, and how a request turns thinking on and off."""

    fmt: str
    tokenizer: str
    start: str | None  # the start marker as the model writes it (None: the family has none)
    end: str
    source: str  # where the wire format comes from (for hand-written cases)
    block: Callable[[str, str], str] | None = None  # (reasoning, content) -> output
    on: dict[str, Any] = field(default_factory=lambda: dict(ON))
    off: dict[str, Any] | None = field(default_factory=lambda: dict(OFF))  # None: no switch
    off_prompt: str | None = None  # a prompt that closes the block, for families without a switch
    opt_in: bool = False  # the output starts in content; the start marker opens reasoning
    tool_marker: str = "<tool_call>"  # how the family's tool calls start
    tool_ends_reasoning: bool = False  # the reasoning format itself ends on tool_marker
    special: bool = True  # the markers are added tokens of the (synthetic) tokenizer
    prompt_open: str | None = None  # a prompt tail that pre-fills the start marker
    unended_is_content: bool = False  # reasoning that never ends is the content (K2 Horizon)

    def write(self, reasoning: str, content: str) -> str:
        if self.block is not None:
            return self.block(reasoning, content)
        return f"{self.start or ''}{reasoning}{self.end}{content}"


def core(b: Book, f: Family) -> None:
    """The cases every reasoning format must pass (see the module docstring)."""
    p = f.fmt
    src = f"hand-written in the {f.fmt} wire format ({f.source})"
    tok = f.tokenizer
    b.add(f"{p}-thinking-on", src + "; thinking on", f.write(R, C), reasoning=R, content=C, tokenizer=tok, options=f.on)
    b.add(
        f"{p}-multiline",
        src,
        f.write(R_LONG, "**Sunny.**\n\n22 °C"),
        reasoning=R_LONG,
        content="**Sunny.**\n\n22 °C",
        tokenizer=tok,
        options=f.on,
    )
    if f.off is not None:
        b.add(
            f"{p}-thinking-off",
            src + "; thinking off: the output is all content",
            C,
            content=C,
            tokenizer=tok,
            options=f.off,
        )
    if f.off_prompt is not None:
        b.add(
            f"{p}-prompt-closed",
            src + "; the prompt already closed the block: all content",
            C,
            content=C,
            tokenizer=tok,
            options={**f.on, "prompt_text": f.off_prompt},
        )
    # start marker missing
    out = f"{R}{f.end}\n\n{C}"
    if f.opt_in:
        b.add(
            f"{p}-start-marker-missing",
            src
            + "; no start marker: reasoning is opted into by the marker, so all "
            + "is content, the stray end marker included (text where no block is open)",
            out,
            content=out.strip(),
            tokenizer=tok,
            options=f.on,
        )
    else:
        b.add(
            f"{p}-start-marker-missing",
            src + "; thinking on, no start marker in the output: everything before the end marker is reasoning",
            out,
            reasoning=R,
            content=C,
            tokenizer=tok,
            options=f.on,
        )
    # end marker missing
    out = f"{f.start or ''}{R}" if f.start or not f.opt_in else R
    unended = {"content": R} if f.unended_is_content else {"reasoning": R}
    b.add(
        f"{p}-end-marker-missing-truncated",
        src
        + ("; reasoning that never ends is content" if f.unended_is_content else "")
        + "; cut by max_tokens while thinking: all "
        + ("content" if f.unended_is_content else "reasoning"),
        out,
        tokenizer=tok,
        options=f.on,
        truncated=True,
        **unended,
    )
    partial = f"{R} {f.end[:-2]}"
    b.add(
        f"{p}-truncated-inside-end-marker",
        src
        + "; cut in the middle of the end marker: the partial marker is "
        + ("text of the unended reasoning, which is content" if f.unended_is_content else "reasoning text"),
        f"{f.start or ''}{partial}",
        tokenizer=None,
        options=f.on,
        truncated=True,
        **({"content": partial} if f.unended_is_content else {"reasoning": partial}),
    )
    if f.start:
        b.add(
            f"{p}-empty-block", src + "; an empty block", f"{f.start}{f.end}{C}", content=C, tokenizer=tok, options=f.on
        )
    b.add(
        f"{p}-duplicate-end-marker",
        src + "; the end marker twice: the second is content text, as the template writes content verbatim"
        " after the end marker (no block is open there; nothing is dropped)",
        f.write(R, f"{f.end}\n{C}"),
        reasoning=R,
        content=f"{f.end}\n{C}".strip(),
        tokenizer=tok,
        options=f.on,
    )
    call = f'{f.tool_marker}{{"name": "get_weather", "arguments": {{"location": "Paris"}}}}'
    b.add(
        f"{p}-end-then-tool-marker",
        src + "; reasoning ends and a tool-call marker follows at once; no tool format: the call text is content",
        f.write(R, call),
        reasoning=R,
        content=call,
        tokenizer=tok,
        options=f.on,
    )
    if f.tool_ends_reasoning:
        rest = '{"name": "get_weather", "arguments": {"location": "Paris"}}'
        b.add(
            f"{p}-tool-marker-ends-reasoning",
            src + "; a tool-call marker while thinking ends reasoning; without a tool format the "
            "marker and the rest are content, as written (vLLM's reasoning pass re-emits the marker)",
            f"{f.start or ''}{R}{f.tool_marker}{rest}",
            reasoning=R,
            content=f.tool_marker + rest,
            tokenizer=tok,
            options=f.on,
            ids_only=f.fmt == "mistral",  # [TOOL_CALLS] ends an explicit [THINK] block only by id
            token_ids=tk.encode(tok, f"{f.start or ''}{R}{f.tool_marker}{rest}") if f.fmt == "mistral" else None,
        )
        if f.fmt == "mistral":
            b.add(
                f"{p}-tool-marker-text-inside-think",
                src + "; [TOOL_CALLS] written as text inside an explicit [THINK] block is reasoning text: "
                "only [/THINK] ends the block (by id the special token ends it, above)",
                f"{f.start}{R}{f.tool_marker}{rest}",
                reasoning=f"{R}{f.tool_marker}{rest}",
                options=f.on,
                tokenizer=None,  # text: with ids the marker is the special token
                truncated=True,
            )
    b.add(
        f"{p}-multibyte",
        src + "; CJK, emoji and accents: the byte-level tokenizer splits them across tokens",
        f.write(R_MB, C_MB),
        reasoning=R_MB,
        content=C_MB,
        tokenizer=tok,
        options=f.on,
    )
    if f.special and f.start:
        mention = f"Blocks close with {f.end} in this format."
        out = f.write(mention, C)
        i = out.index(f.end)
        b.add(
            f"{p}-ids-end-marker-as-ordinary-tokens",
            src + "; the reasoning mentions the end marker with ordinary tokens: with ids it is text",
            out,
            reasoning=mention,
            content=C,
            tokenizer=tok,
            options=f.on,
            token_ids=ordinary(tok, [(out[:i], False), (f.end, True), (out[i + len(f.end) :], False)]),
            ids_only=True,
        )
    if f.prompt_open is not None:
        b.add(
            f"{p}-prompt-ends-in-block",
            src + "; the prompt pre-fills the start marker, the output has only the end marker",
            f"{R}{f.end}\n\n{C}",
            reasoning=R,
            content=C,
            tokenizer=tok,
            options={"prompt_text": f.prompt_open},
        )


# --------------------------------------------------------------------------------------
# Families
# --------------------------------------------------------------------------------------


def nl_block(start: str, end: str) -> Callable[[str, str], str]:
    return lambda r, c: f"{start}\n{r}\n{end}\n\n{c}"


def prefilled(end: str) -> Callable[[str, str], str]:
    return lambda r, c: f"{r}\n{end}\n\n{c}"


QWEN_OPEN = "<|im_start|>assistant\n<think>\n"
DS_OPEN = "<｜User｜>Hi<｜Assistant｜><think>"
DS_ON = {"chat_template_kwargs": {"thinking": True}}
DS_OFF = {"chat_template_kwargs": {"thinking": False}}

FAMILIES: list[Family] = [
    Family(
        "deepseek_v3",
        "deepseek_v3",
        None,
        "</think>",
        "DeepSeek-V3.1/V3.2 templates: prompt ends '<think>'",
        block=lambda r, c: f"{r}</think>{c}",
        on=DS_ON,
        off=DS_OFF,
        prompt_open=DS_OPEN,
        tool_marker="<｜tool▁calls▁begin｜>",
    ),
    Family(
        "holo2",
        "qwen3",
        "<think>",
        "</think>",
        "vLLM 0.33 deepseek_v3_reasoning_parser.py: holo2 is deepseek_v3 with thinking on when no switch is given",
        block=nl_block("<think>", "</think>"),
        on={},
        off=DS_OFF,
        prompt_open=QWEN_OPEN,
    ),
    Family(
        "deepseek_v4",
        "deepseek_v3",
        "<think>",
        "</think>",
        "vLLM 0.33 parser/deepseek_v4.py",
        block=lambda r, c: f"{r}</think>{c}",
        on={},
        off=DS_OFF,
        prompt_open=DS_OPEN,
        tool_marker="<｜DSML｜tool_calls>",
    ),
    Family(
        "deepseek_v41",
        "deepseek_v3",
        "<think>",
        "</think>",
        "vLLM 0.33 parser/deepseek_v41.py",
        block=lambda r, c: f"{r}</think>{c}",
        on={},
        off={"reasoning_effort": "none"},
        prompt_open=DS_OPEN,
        tool_marker="<｜DSML｜ calls>",
    ),
    Family(
        "mimo",
        "qwen3",
        "<think>",
        "</think>",
        "vLLM 0.33 parser/mimo.py: the Qwen3 grammar",
        block=nl_block("<think>", "</think>"),
        on={},
        prompt_open=QWEN_OPEN,
    ),
    Family(
        "seed_oss",
        "seed_oss",
        "<seed:think>",
        "</seed:think>",
        "vLLM 0.33 parser/seed_oss.py",
        on={},
        tool_marker="<seed:tool_call>",
    ),
    Family(
        "nemotron_v3",
        "nemotron_v3",
        "<think>",
        "</think>",
        "vLLM 0.33 parser/nemotron_v3.py: the Qwen3 grammar",
        block=nl_block("<think>", "</think>"),
        on={},
        prompt_open=QWEN_OPEN,
    ),
    Family(
        "glm45",
        "glm",
        "<think>",
        "</think>",
        "GLM-4.6 template spelling",
        block=lambda r, c: f"\n<think>{r}</think>\n{c}",
        on={},
        tool_ends_reasoning=True,
        prompt_open="<|user|>\nHi<|assistant|>\n<think>",
    ),
    Family(
        "glm47",
        "glm",
        "<think>",
        "</think>",
        "GLM-4.7-Flash template spelling",
        block=lambda r, c: f"<think>{r}</think>{c}",
        on={},
        tool_ends_reasoning=True,
        prompt_open="<|user|>Hi<|assistant|><think>",
    ),
    Family(
        "ling3",
        "glm",
        "<think>",
        "</think>",
        "vLLM 0.33 parser/ling3.py: the GLM-4.7 grammar",
        on={},
        tool_ends_reasoning=True,
    ),
    Family(
        "kimi_k2",
        "kimi_k2",
        "<think>",
        "</think>",
        "Kimi-K2-Thinking template spelling",
        on={"chat_template_kwargs": {"thinking": True}},
        off={"chat_template_kwargs": {"thinking": False}},
        opt_in=False,
        tool_marker="<|tool_calls_section_begin|>",
        tool_ends_reasoning=True,
    ),
    Family(
        "minimax_m2",
        "minimax",
        "<think>",
        "</think>",
        "MiniMax-M2 template: the prompt ends '<think>\\n'",
        block=prefilled("</think>"),
        on={},
        off=None,
        off_prompt="]~b]ai\n<think>\nok\n</think>\n\n",
        tool_marker="<minimax:tool_call>",
        prompt_open="]~b]ai\n<think>\n",
    ),
    Family(
        "mistral",
        "magistral",
        "[THINK]",
        "[/THINK]",
        "Ministral-3-Reasoning template spelling",
        on={},
        opt_in=True,
        tool_marker="[TOOL_CALLS]",
        tool_ends_reasoning=True,
    ),
    Family(
        "gemma4",
        "gemma4",
        "<|channel>thought\n",
        "<channel|>",
        "vLLM 0.33 parser/gemma4.py",
        on={},
        opt_in=True,
        tool_marker="<|tool_call>",
    ),
    Family(
        "granite",
        "granite3",
        "Here's my thought process:\n",
        "\nHere's my response:\n",
        "vLLM 0.33 granite_reasoning_parser.py: plain-text markers",
        on={"chat_template_kwargs": {"thinking": True}},
        off={"chat_template_kwargs": {"thinking": False}},
        opt_in=True,
        special=False,
        tool_marker="<|tool_call|>",
    ),
    Family(
        "ernie45",
        "ernie45",
        "<think>",
        "</think>",
        "vLLM Ernie45ReasoningParser docstring",
        block=lambda r, c: f"{r}\n</think>\n\n<response>\n{c}\n</response>\n",
        on={},
        off=None,
        off_prompt="<think>\n\n</think>\n\n",
    ),
    Family(
        "hunyuan_a13b",
        "hunyuan_a13b",
        "<think>",
        "</think>",
        "vLLM 0.33 hunyuan_a13b_reasoning_parser.py",
        block=lambda r, c: f"<think>\n{r}\n</think>\n<answer>\n{c}\n</answer>",
        on={},
        opt_in=True,  # vLLM: content ("idle") until <think>\n
        special=False,
        tool_marker="<tool_calls>",
    ),
    Family(
        "hy_v3",
        "hy_v3",
        "<think>",
        "</think>",
        "vLLM 0.33 hy_v3_reasoning_parser.py",
        on={"reasoning_effort": "high"},
        off={"reasoning_effort": "no_think"},
    ),
    Family(
        "olmo3",
        "olmo3",
        "<think>",
        "</think>",
        "vLLM 0.33 olmo3_reasoning_parser.py: markers as text",
        on={},
        special=False,
        prompt_open="<|im_start|>assistant\n<think>",
    ),
    Family(
        "step3",
        "step3",
        None,
        "</think>",
        "vLLM 0.33 step3_reasoning_parser.py: end marker only",
        block=lambda r, c: f"{r}</think>{c}",
        on={},
        off=None,
        off_prompt="</think>",
    ),
    Family(
        "step3p5",
        "step3",
        "<think>",
        "</think>",
        "vLLM 0.33 parser/step3p5.py",
        block=nl_block("<think>", "</think>"),
        on={},
        off=None,
        off_prompt="<think>\n</think>\n",
    ),
    Family(
        "cohere_command3",
        "cohere",
        "<|START_THINKING|>",
        "<|END_THINKING|>",
        "vLLM 0.33 cohere_command_reasoning_parser.py",
        block=lambda r, c: f"<|START_THINKING|>{r}<|END_THINKING|><|START_RESPONSE|>{c}<|END_RESPONSE|>",
        on={},
        tool_marker="<|START_ACTION|>",
    ),
    Family(
        "cohere_command4",
        "cohere",
        "<|START_THINKING|>",
        "<|END_THINKING|>",
        "vLLM 0.33 cohere_command_reasoning_parser.py",
        block=lambda r, c: f"<|START_THINKING|>{r}<|END_THINKING|><|START_RESPONSE|>{c}<|END_RESPONSE|>",
        on={},
        tool_marker="<|START_ACTION|>",
    ),
    Family(
        "step5",
        "step5",
        "<think>",
        "</think>",
        "vLLM 0.33 registers step5 as DeepSeekR1ReasoningParser (<think> / </think>)",
        block=nl_block("<think>", "</think>"),
        on={},
        off=None,
        off_prompt="<|im_start|>assistant\n<think>\n</think>\n",
        prompt_open="<|im_start|>assistant\n<think>\n",
    ),
    Family(
        "poolside_v1",
        "poolside",
        None,
        "</think>",
        "vLLM 0.33 poolside_v1_reasoning_parser.py (deepseek_v3: thinking from thinking/enable_thinking)",
        block=lambda r, c: f"{r}</think>{c}",
        on=DS_ON,
        off=DS_OFF,
        prompt_open="<assistant><think>",
    ),
    Family(
        "granite_thinking_parser",
        "granite4",
        "<think>",
        "</think>",
        "vLLM 0.33 parser/granite_thinking.py (the Nemotron V3 / Qwen3 format; content after '\\n</think>\\n')",
        block=nl_block("<think>", "</think>"),
        on={},
        prompt_open="<|start_of_role|>assistant<|end_of_role|><think>\n",
    ),
    Family(
        "hy_v4",
        "hy",
        "<think>",
        "</think>",
        "vLLM 0.33 hy_v4_reasoning_parser.py (<think> pre-filled by the prompt; effort default 'high')",
        on={},
        off={"reasoning_effort": "no_think"},
    ),
    Family(
        "k2_horizon",
        "k2_horizon",
        "<ifm|think>",
        "</ifm|think>",
        "vLLM 0.33 k2_horizon_reasoning_parser.py (reasoning_effort 'high' markers)",
        on={},
        off=None,
        tool_marker="<ifm|tool_calls>",
        tool_ends_reasoning=True,
        unended_is_content=True,
    ),
    Family(
        "minimax_m3",
        "minimax_m3",
        "<mm:think>",
        "</mm:think>",
        "vLLM 0.33 minimax_m3_reasoning_parser.py (thinking_mode 'enabled' pre-fills <mm:think>)",
        on={"chat_template_kwargs": {"thinking_mode": "enabled"}},
        off={},
        special=False,
        tool_marker="]<]minimax[>[<tool_call>",
    ),
    Family(
        "plamo3",
        "plamo3",
        "<|plamo:begin_think:plamo|>",
        "<|plamo:end_think:plamo|>",
        "vLLM 0.33 parser/plamo3.py (plamo3_config)",
        on={},
        special=False,
        tool_marker="<|plamo:begin_tool_requests:plamo|>",
        tool_ends_reasoning=True,
    ),
    Family(
        "minicpmv",
        "minicpmv",
        "<think>",
        "</think>",
        "vLLM 0.33 parser/minicpmv.py (the Qwen3 grammar)",
        block=nl_block("<think>", "</think>"),
        on={},
        prompt_open=QWEN_OPEN,
    ),
    Family(
        "kimi_k3",
        "kimi_k3",
        "<|open|>think<|sep|>",
        "<|close|>think<|sep|>",
        "vLLM 0.33 kimi_k3_reasoning_parser.py (think and response channels)",
        block=lambda r, c: (
            f"<|open|>think<|sep|>{r}<|close|>think<|sep|><|open|>response<|sep|>{c}<|close|>response<|sep|>"
        ),
        on={},
        off={"chat_template_kwargs": {"thinking": False}},
        special=False,
        tool_marker="<|open|>tools<|sep|>",
        prompt_open="<|close|>message<|sep|><|open|>think<|sep|>",
    ),
]


# --------------------------------------------------------------------------------------
# Template round trips
# --------------------------------------------------------------------------------------

USER = {"role": "user", "content": "What's the weather like in Paris today?"}


_MUTABLE: dict[str, Any] = {}


def render_mutable(template: str, messages: list[dict[str, Any]], **kwargs: Any) -> str:
    """Like ``render_cases.render`` in a sandbox that allows ``list.append`` (the Kimi-K2-Thinking
    template queues tool-call ids that way) and with transformers' ``strftime_now`` (Granite),
    fixed to one date so renders are deterministic."""
    if template not in _MUTABLE:
        import jinja2.ext
        from jinja2.sandbox import SandboxedEnvironment

        from support import render_cases

        env = SandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
        env.filters["tojson"] = render_cases._ENV.filters["tojson"]
        env.globals["raise_exception"] = render_cases._ENV.globals["raise_exception"]
        env.globals["strftime_now"] = lambda fmt: "November 30, 2026"  # fixed: deterministic renders
        _MUTABLE[template] = env.from_string((render_cases.TEMPLATES / template).read_text("utf-8"))
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    return _MUTABLE[template].render(messages=messages, **kwargs)


def round_trip(
    template: str, history: list[dict[str, Any]], assistant: dict[str, Any], *, eot: str, **kwargs: Any
) -> tuple[str, str]:
    """(generated text, prompt): the rendered turn minus the generation prompt, up to ``eot``
    (``""``: the template writes no end-of-turn marker after an assistant turn)."""
    draw = render_mutable if template.startswith(("Kimi", "ibm-granite")) else render
    prompt = draw(template, history, add_generation_prompt=True, **kwargs)
    full = draw(template, [*history, assistant], add_generation_prompt=False, **kwargs)
    if not full.startswith(prompt):
        raise ValueError(f"{template}: the prompt is not a prefix of the rendered turn")
    gen = full[len(prompt) :]
    if eot:
        if not gen.endswith(eot):
            raise ValueError(f"{template}: the turn does not end with {eot!r}: {gen[-40:]!r}")
        gen = gen[: -len(eot)]
    return gen, prompt


def deepseek_templates(b: Book) -> None:
    v31, v32 = "deepseek-ai-DeepSeek-V3.1.jinja", "deepseek-ai-DeepSeek-V3.2.jinja"
    kw = {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}
    eos = "<｜end▁of▁sentence｜>"
    gen, prompt = round_trip(
        v32, [USER], {"role": "assistant", "content": C, "reasoning_content": R}, eot=eos, thinking=True, **kw
    )
    assert prompt.endswith("<｜Assistant｜><think>") and gen == f"{R}</think>{C}"
    b.add(
        "deepseek_v3-rt-v32-thinking",
        f"{v32} round trip with thinking=true: the prompt ends '<think>'",
        gen,
        reasoning=R,
        content=C,
        tokenizer="deepseek_v3",
        options={"chat_template_kwargs": {"thinking": True}},
    )
    b.add(
        "deepseek_v3-rt-v32-thinking-prompt",
        f"{v32}: same output, thinking decided by the prompt (its ids "
        "when a tokenizer is given, else its text; no switch)",
        gen,
        reasoning=R,
        content=C,
        tokenizer="deepseek_v3",
        options={"prompt_token_ids": tk.encode("deepseek_v3", prompt), "prompt_text": prompt},
    )
    gen, prompt = round_trip(v31, [USER], {"role": "assistant", "content": C}, eot=eos, **kw)
    assert prompt.endswith("<｜Assistant｜><think></think>") and gen == C
    b.add(
        "deepseek_v3-rt-v31-default-off",
        f"{v31} round trip, thinking undefined (off): the prompt closes the block",
        gen,
        content=C,
        tokenizer="deepseek_v3",
    )
    b.add(
        "deepseek_v3-rt-v31-prompt-closed-overrides-switch",
        f"{v31}: the prompt closed the block; the prompt decides over the thinking switch",
        gen,
        content=C,
        tokenizer="deepseek_v3",
        options={"chat_template_kwargs": {"thinking": True}, "prompt_text": prompt[prompt.rindex("<｜Assistant｜>") :]},
    )
    # multi-turn: the V3.2 template renders earlier turns as '</think>' + content
    hist = [
        USER,
        {"role": "assistant", "content": "Sunny.", "reasoning_content": "old"},
        {"role": "user", "content": "And tomorrow?"},
    ]
    gen, prompt = round_trip(
        v32, hist, {"role": "assistant", "content": C, "reasoning_content": R}, eot=eos, thinking=True, **kw
    )
    b.add(
        "deepseek_v3-rt-v32-multi-turn-prompt",
        f"{v32} second turn with thinking: earlier turns' '</think>' in the prompt do not decide",
        gen,
        reasoning=R,
        content=C,
        tokenizer="deepseek_v3",
        options={"prompt_text": prompt},
    )


def glm_templates(b: Book, fmt: str) -> None:
    template = "GLM-4.6.jinja" if fmt == "glm45" else "GLM-4.7-Flash.jinja"
    for thinking in (None, False):
        kw = {} if thinking is None else {"enable_thinking": False}
        msg: dict[str, Any] = {"role": "assistant", "content": C}
        if thinking is None:
            msg["reasoning_content"] = R
        gen, prompt = round_trip(template, [USER], msg, eot="", **kw)
        tail = prompt[prompt.rindex("<|assistant|>") :]
        label = "on" if thinking is None else "off"
        b.add(
            f"{fmt}-rt-thinking-{label}",
            f"{template} round trip, enable_thinking "
            f"{'undefined (on)' if thinking is None else 'false'}; prompt tail {tail!r}",
            gen,
            reasoning=R if thinking is None else None,
            content=C,
            tokenizer="glm",
            options={"chat_template_kwargs": kw} if kw else {},
        )
        b.add(
            f"{fmt}-rt-thinking-{label}-prompt",
            f"{template} round trip as above, decided by the prompt text only",
            gen,
            reasoning=R if thinking is None else None,
            content=C,
            tokenizer="glm",
            options={"prompt_text": prompt},
        )
    msg = {
        "role": "assistant",
        "content": "",
        "reasoning_content": R,
        "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"location": "Paris"}}}],
    }
    gen, _ = round_trip(template, [USER], msg, eot="", tools=[GET_WEATHER])
    call = gen[gen.index("<tool_call>") :]
    b.add(
        f"{fmt}-rt-reasoning-then-call-no-tool-format",
        f"{template} round trip with a call; no tool format: the call text is content",
        gen,
        reasoning=R,
        content=call,
        tokenizer="glm",
        tools=[GET_WEATHER],
    )


def kimi_template(b: Book) -> None:
    template = "Kimi-K2-Thinking.jinja"
    gen, prompt = round_trip(template, [USER], {"role": "assistant", "content": C}, eot="<|im_end|>")
    assert prompt.endswith("<|im_assistant|>assistant<|im_middle|>") and gen == f"<think></think>{C}"
    for label, opts in (("on", {}), ("off", {"chat_template_kwargs": {"thinking": False}})):
        b.add(
            f"kimi_k2-rt-empty-block-thinking-{label}",
            f"{template} round trip of a final answer (the template "
            "renders '<think></think>' before it); the empty block opens and closes whatever the switch",
            gen,
            content=C,
            tokenizer="kimi_k2",
            options=opts,
        )
    msg = {
        "role": "assistant",
        "content": "Let me check.",
        "reasoning_content": R,
        "tool_calls": [
            {
                "id": "functions.get_weather:0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'},
            }
        ],
    }
    gen, prompt = round_trip(template, [USER], msg, eot="<|im_end|>", tools=[GET_WEATHER])
    assert gen.startswith(f"<think>{R}</think>Let me check.<|tool_calls_section_begin|>"), gen
    b.add(
        "kimi_k2-rt-reasoning-content-and-call",
        f"{template} round trip with reasoning, content and a call; no tool format: the section is content",
        gen,
        reasoning=R,
        content=gen[gen.index("Let me") :],
        tokenizer="kimi_k2",
        tools=[GET_WEATHER],
        options={"prompt_text": prompt},
    )
    cut = gen[gen.index("<|tool_calls_section_begin|>") :]
    b.add(
        "kimi_k2-section-begin-ends-reasoning",
        f"from the {template} spelling: the tool section starts while "
        "thinking (no '</think>'): reasoning ends there; without a tool format the section is "
        "content, as written (vLLM parser/kimi_k2.py:103-106, the marker re-emitted as text)",
        f"<think>{R}{cut}",
        reasoning=R,
        content=cut,
        tokenizer="kimi_k2",
        tools=[GET_WEATHER],
    )


def minimax_template(b: Book) -> None:
    template = "MiniMax-M2.jinja"
    gen, prompt = round_trip(
        template, [USER], {"role": "assistant", "content": C, "reasoning_content": R}, eot="[e~[\n"
    )
    tail = prompt[prompt.rindex("]~b]ai") :]
    assert tail == "]~b]ai\n<think>\n" and gen == f"{R}\n</think>\n\n{C}", (tail, gen)
    b.add(
        "minimax_m2-rt-prompt-opens-block",
        f"{template} round trip: the prompt ends ']~b]ai\\n<think>\\n'",
        gen,
        reasoning=R,
        content=C,
        tokenizer="minimax",
        options={"prompt_text": tail},
    )
    b.add(
        "minimax_m2-rt-no-prompt",
        f"{template} round trip without the prompt: minimax_m2 always starts in reasoning",
        gen,
        reasoning=R,
        content=C,
        tokenizer="minimax",
    )
    b.add(
        "minimax_m2-rt-thinking-off-ignored",
        f"{template}: the template always opens the block, so a thinking switch does not change the start",
        gen,
        reasoning=R,
        content=C,
        tokenizer="minimax",
        options=OFF,
    )
    hist = [
        USER,
        {"role": "assistant", "content": "Sunny.", "reasoning_content": "old"},
        {"role": "user", "content": "And tomorrow?"},
    ]
    gen2, prompt2 = round_trip(
        template, hist, {"role": "assistant", "content": C, "reasoning_content": R}, eot="[e~[\n"
    )
    b.add(
        "minimax_m2-rt-multi-turn-prompt",
        f"{template} second turn: the whole prompt as prompt_text",
        gen2,
        reasoning=R,
        content=C,
        tokenizer="minimax",
        options={"prompt_text": prompt2},
    )


def append_think_cases() -> Book:
    b = Book("minimax_m2_append_think/reasoning.jsonl", "minimax_m2_append_think", None)
    src = (
        "vLLM 0.33 minimax_m2_reasoning_parser.py (MiniMaxM2AppendThinkReasoningParser): '<think>' + the output, "
        "all content"
    )
    template = "MiniMax-M2.jinja"
    gen, _ = round_trip(template, [USER], {"role": "assistant", "content": C, "reasoning_content": R}, eot="[e~[\n")
    b.add("append-think-rt", f"{template} round trip; {src}", gen, content=f"<think>{gen}", tokenizer="minimax")
    b.add(
        "append-think-thinking-off",
        src + "; no switch changes it",
        gen,
        content=f"<think>{gen}",
        tokenizer="minimax",
        options=OFF,
    )
    b.add(
        "append-think-truncated",
        src + "; cut while thinking",
        R,
        content=f"<think>{R}",
        tokenizer="minimax",
        truncated=True,
    )
    b.add(
        "append-think-empty-output",
        src + "; the model stopped at once: the prefix alone",
        "",
        content="<think>",
        tokenizer="minimax",
    )
    out = f"{R_MB}\n</think>\n\n{C_MB}"
    b.add("append-think-multibyte", src + "; multi-byte text", out, content=f"<think>{out}", tokenizer="minimax")
    out = f"{R}\n</think>\n</think>\n\n{C}"
    b.add(
        "append-think-duplicate-end", src + "; nothing is a marker", out, content=f"<think>{out}", tokenizer="minimax"
    )
    out = f'{R}\n</think>\n\n<minimax:tool_call>\n<invoke name="get_weather"></invoke>\n</minimax:tool_call>'
    b.add(
        "append-think-then-tool-marker",
        src + "; no tool format: all content",
        out,
        content=f"<think>{out}",
        tokenizer="minimax",
    )
    b.add(
        "append-think-start-marker-missing",
        src,
        f"{R}</think>{C}",
        content=f"<think>{R}</think>{C}",
        tokenizer="minimax",
    )
    return b


def mistral_template(b: Book) -> None:
    template = "mistralai-Ministral-3-14B-Reasoning-2512.jinja"
    kw = {"bos_token": "<s>", "eos_token": "</s>"}
    msg = {"role": "assistant", "content": [{"type": "thinking", "thinking": R}, {"type": "text", "text": C}]}
    gen, prompt = round_trip(template, [USER], msg, eot="</s>", **kw)
    assert prompt.endswith("[/INST]") and gen == f"[THINK]{R}[/THINK]{C}", gen
    b.add(
        "mistral-rt-thinking-chunk",
        f"{template} round trip of a thinking chunk + text",
        gen,
        reasoning=R,
        content=C,
        tokenizer="magistral",
        options={"prompt_text": prompt},
    )
    b.add(
        "mistral-rt-thinking-chunk-v11-text-markers",
        f"{template} round trip spelled with the v11 '<think>' "
        "text markers (Magistral 2506); the v11 tokenizer has no [THINK] token",
        f"<think>{R}</think>{C}",
        reasoning=R,
        content=C,
        tokenizer="magistral_v11",
    )
    mention = "In v13 a block opens with [THINK] and closes with [/THINK]."
    out = f"[THINK]{mention}[/THINK]{C}"
    b.add(
        "mistral-ids-start-marker-as-ordinary-tokens",
        "hand-written: the reasoning mentions [THINK] and [/THINK] with ordinary tokens",
        out,
        reasoning=mention,
        content=C,
        tokenizer="magistral",
        token_ids=ordinary(
            "magistral",
            [
                ("[THINK]In v13 a block opens with ", False),
                ("[THINK]", True),
                (" and closes with ", False),
                ("[/THINK]", True),
                (".[/THINK]" + C, False),
            ],
        ),
        ids_only=True,
    )
    msg = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": R}],
        "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"location": "Paris"}}}],
    }
    gen, _ = round_trip(template, [USER], msg, eot="</s>", **kw)
    assert gen.startswith(f"[THINK]{R}[/THINK][TOOL_CALLS]get_weather[ARGS]"), gen
    b.add(
        "mistral-rt-reasoning-then-tool-calls",
        f"{template} round trip: reasoning then [TOOL_CALLS] in the same "
        "breath; no tool format: the call text is content",
        gen,
        reasoning=R,
        content=gen[len(f"[THINK]{R}[/THINK]") :],
        tokenizer="magistral",
        tools=[GET_WEATHER],
    )
    b.add(
        "mistral-answer-without-block",
        "hand-written: Mistral starts in content: an answer without [THINK] is all content",
        C,
        content=C,
        tokenizer="magistral",
    )


def granite_template(b: Book) -> None:
    template = "ibm-granite-granite-3.3-2B-Instruct.jinja"
    for spelling in ("Here's", "Here is"):
        body = f"{spelling} my thought process:\n{R}\n\n{spelling} my response:\n{C}"
        gen, prompt = round_trip(
            template, [USER], {"role": "assistant", "content": body}, eot="<|end_of_text|>\n", thinking=True
        )
        assert prompt.endswith("<|start_of_role|>assistant<|end_of_role|>") and gen == body
        slug = spelling.replace("'", "").replace(" ", "-").lower()
        b.add(
            f"granite-rt-{slug}",
            f"{template} round trip with thinking=true, markers spelled '{spelling} …' as "
            "the vLLM granite parser reads them",
            gen,
            reasoning=R,
            content=C,
            tokenizer="granite3",
            options={"chat_template_kwargs": {"thinking": True}, "prompt_text": prompt},
        )
    b.add(
        "granite-mixed-spellings",
        "hand-written: one spelling for each marker",
        f"Here is my thought process:\n{R}\nHere's my response:\n{C}",
        reasoning=R,
        content=C,
        tokenizer="granite3",
        options={"chat_template_kwargs": {"thinking": True}},
    )
    b.add(
        "granite-second-opener-is-reasoning-text",
        "hand-written; vLLM 0.33 granite_reasoning_parser.py's lazy (.*?) between the first thought-process "
        "marker and the response marker keeps a second thought-process marker in the reasoning (run here: "
        "('a Here is my thought process: b ', ' c'))",
        "Here is my thought process:\nFirst idea. Here is my thought process: second idea.\n"
        "Here is my response:\nDone.",
        reasoning="First idea. Here is my thought process: second idea.",
        content="Done.",
        tokenizer="granite3",
        options={"chat_template_kwargs": {"thinking": True}},
    )
    b.add(
        "granite-no-markers-is-content",
        "hand-written: thinking on but no marker: all content (the granite parser needs the thought-process marker)",
        C,
        content=C,
        tokenizer="granite3",
        options={"chat_template_kwargs": {"thinking": True}},
    )


def nemotron_extras(b: Book) -> None:
    src = "vLLM 0.33 parser/nemotron_v3.py swap rule"
    force = {"chat_template_kwargs": {"force_nonempty_content": True}}
    b.add(
        "nemotron_v3-swap-force-nonempty-truncated",
        src + ": force_nonempty_content and no '</think>': the reasoning is the content",
        f"<think>\n{R}",
        content=R,
        tokenizer="nemotron_v3",
        options=force,
        truncated=True,
    )
    b.add(
        "nemotron_v3-swap-force-nonempty-no-markers",
        src + ": force_nonempty_content, the model never closed the block",
        R,
        content=R,
        tokenizer="nemotron_v3",
        options=force,
    )
    b.add(
        "nemotron_v3-swap-not-needed",
        src + ": force_nonempty_content but the block closed: no swap",
        f"<think>\n{R}\n</think>\n{C}",
        reasoning=R,
        content=C,
        tokenizer="nemotron_v3",
        options=force,
    )
    b.add(
        "nemotron_v3-swap-thinking-off-prompt-open",
        src + ": enable_thinking=false but the prompt left '<think>' open and the output never closed it: content",
        C,
        content=C,
        tokenizer="nemotron_v3",
        options={**OFF, "prompt_text": QWEN_OPEN},
    )
    b.add(
        "nemotron_v3-swap-thinking-off-block-closed",
        src + ": enable_thinking=false, prompt open, the output closed the block: reasoning and content as written",
        f"{R}\n</think>\n{C}",
        reasoning=R,
        content=C,
        tokenizer="nemotron_v3",
        options={**OFF, "prompt_text": QWEN_OPEN},
    )
    b.add(
        "nemotron_v3-no-swap-by-default",
        "vLLM 0.33 parser/nemotron_v3.py: without the switches an unclosed block stays reasoning",
        f"<think>\n{R}",
        reasoning=R,
        tokenizer="nemotron_v3",
        truncated=True,
    )
    b.add(
        "nemotron_v3-swap-multibyte",
        src + ": held multi-byte reasoning becomes content",
        R_MB,
        content=R_MB,
        tokenizer="nemotron_v3",
        options=force,
    )


def gemma_extras(b: Book) -> None:
    src = "vLLM 0.33 parser/gemma4.py"
    b.add(
        "gemma4-content-then-channel",
        src + ": content first, then a thought channel, then more content",
        f"Let me think.<|channel>thought\n{R}<channel|>{C}",
        reasoning=R,
        content=f"Let me think.{C}",
        tokenizer="gemma4",
    )
    b.add(
        "gemma4-thought-word-in-reasoning",
        src + ": only the channel name is dropped; 'thought' inside the reasoning stays",
        f"<|channel>thought\nMy first thought was rain.<channel|>{C}",
        reasoning="My first thought was rain.",
        content=C,
        tokenizer="gemma4",
    )
    b.add(
        "gemma4-thinking-disabled-plain-answer",
        src + ": enable_thinking=false, a plain answer",
        C,
        content=C,
        tokenizer="gemma4",
        options=OFF,
    )


def hunyuan_extras(b: Book) -> None:
    src = "vLLM 0.33 hunyuan_a13b_reasoning_parser.py"
    b.add(
        "hunyuan_a13b-empty-think-then-answer",
        src + ": /no_think style output, an empty block then the answer",
        f"<think>\n\n</think>\n<answer>\n{C}\n</answer>",
        content=C,
        tokenizer="hunyuan_a13b",
        options=OFF,
    )
    b.add(
        "hunyuan_a13b-answer-ends-reasoning",
        "trisect's rule (src/trisect/formats/hunyuan_a13b.py): '<answer>' without '</think>' ends reasoning "
        "(vLLM 0.33's regex needs '\\n</think>\\n<answer>\\n' and returns such an output as content, markers included)",
        f"<think>\n{R}\n<answer>\n{C}\n</answer>",
        reasoning=R,
        content=C,
        tokenizer="hunyuan_a13b",
    )
    b.add(
        "hunyuan_a13b-answer-truncated",
        src + ": cut inside the answer",
        f"<think>\n{R}\n</think>\n<answer>\n{C}",
        reasoning=R,
        content=C,
        tokenizer="hunyuan_a13b",
        truncated=True,
    )


def ernie_extras(b: Book) -> None:
    src = "vLLM 0.33 ernie45_reasoning_parser.py (the Ernie45ReasoningParser docstring)"
    b.add(
        "ernie45-without-response-tags",
        src + ": 'abc\\n</think>\\ndef'",
        f"{R}\n</think>\n{C}",
        reasoning=R,
        content=C,
        tokenizer="ernie45",
    )
    b.add(
        "ernie45-with-think-start",
        src + ": the model wrote '<think>' itself",
        f"<think>\n{R}\n</think>\n\n<response>\n{C}\n</response>",
        reasoning=R,
        content=C,
        tokenizer="ernie45",
    )


def hy_extras(b: Book) -> None:
    src = "vLLM 0.33 hy_v3_reasoning_parser.py"
    b.add(
        "hy_v3-default-no-think",
        src + ": reasoning_effort defaults to 'no_think': all content",
        C,
        content=C,
        tokenizer="hy_v3",
    )
    b.add(
        "hy_v3-effort-in-chat-kwargs",
        src + ": reasoning_effort given in chat_template_kwargs",
        f"{R}</think>{C}",
        reasoning=R,
        content=C,
        tokenizer="hy_v3",
        options={"chat_template_kwargs": {"reasoning_effort": "low"}},
    )


def deepseek_v4_extras(b: Book, fmt: str) -> None:
    b.add(
        f"{fmt}-default-on",
        "vLLM 0.33 parser/deepseek_v4.py: thinking defaults on when no switch is given",
        f"{R}</think>{C}",
        reasoning=R,
        content=C,
        tokenizer="deepseek_v3",
    )
    b.add(
        f"{fmt}-effort-none-off",
        "vLLM 0.33 parser/deepseek_v4.py: reasoning_effort 'none' disables thinking (vLLM reads it from "
        "chat_template_kwargs; trisect also from the request field, as here)",
        C,
        content=C,
        tokenizer="deepseek_v3",
        options={"reasoning_effort": "none"},
    )


def cohere_extras(b: Book, fmt: str) -> None:
    b.add(
        f"{fmt}-response-only",
        "hand-written (markers of vLLM 0.33 parser/cohere_command.py): thinking off, the response wrapped",
        f"<|START_RESPONSE|>{C}<|END_RESPONSE|>",
        content=C,
        tokenizer="cohere",
        options=OFF,
    )
    b.add(
        f"{fmt}-response-ends-reasoning",
        "hand-written: '<|START_RESPONSE|>' without '<|END_THINKING|>' ends reasoning",
        f"<|START_THINKING|>{R}<|START_RESPONSE|>{C}<|END_RESPONSE|>",
        reasoning=R,
        content=C,
        tokenizer="cohere",
    )


def step3_extras(b: Book) -> None:
    b.add(
        "step3-think-text-is-reasoning",
        "vLLM 0.33 step3_reasoning_parser.py: no start marker; a '<think>' is reasoning text",
        f"<think>{R}</think>{C}",
        reasoning=f"<think>{R}",
        content=C,
        tokenizer=None,
    )


def hy_v4_extras(b: Book) -> None:
    src = "vLLM 0.33 hy_v4_reasoning_parser.py"
    b.add(
        "hy_v4-default-high",
        src + ": reasoning_effort defaults to 'high': the output starts in reasoning",
        f"{R}</think>{C}",
        reasoning=R,
        content=C,
        tokenizer="hy",
    )
    b.add(
        "hy_v4-effort-in-chat-kwargs-no-think",
        src + ": chat_template_kwargs reasoning_effort 'no_think' wins over the request field",
        C,
        content=C,
        tokenizer="hy",
        options={"chat_template_kwargs": {"reasoning_effort": "no_think"}, "reasoning_effort": "high"},
    )


def k2_horizon_extras(b: Book) -> None:
    src = "vLLM 0.33 k2_horizon_reasoning_parser.py (_EFFORT_TOKENS)"
    for effort, (start, end) in (
        ("medium", ("<ifm|think_fast>", "</ifm|think_fast>")),
        ("low", ("<ifm|think_faster>", "</ifm|think_faster>")),
    ):
        b.add(
            f"k2_horizon-effort-{effort}",
            src + f": reasoning_effort {effort!r} writes {start} … {end}",
            f"{start}{R}{end}{C}",
            reasoning=R,
            content=C,
            tokenizer="k2_horizon",
            options={"chat_template_kwargs": {"reasoning_effort": effort}},
        )
    b.add(
        "k2_horizon-no-start-marker",
        src + ": the start marker may be in the prompt; the output starts in reasoning",
        f"{R}</ifm|think>{C}",
        reasoning=R,
        content=C,
        tokenizer="k2_horizon",
    )
    b.add(
        "k2_horizon-unended-is-content",
        src + " _split_model_output: no end marker and no tool block: all content",
        C,
        content=C,
        tokenizer="k2_horizon",
    )


def minimax_m3_extras(b: Book) -> None:
    src = "vLLM 0.33 minimax_m3_reasoning_parser.py"
    b.add(
        "minimax_m3-block-after-content",
        src + ": without thinking_mode the output starts in content; a "
        "<mm:think> block later in the output is reasoning, the text around it content",
        f"Hello.<mm:think>{R}</mm:think>{C}",
        reasoning=R,
        content=f"Hello.{C}",
        tokenizer="minimax_m3",
    )
    b.add(
        "minimax_m3-unclosed-block-after-content",
        src + ": a block opened in content and never closed is reasoning; the text before it is content",
        f"Hello.<mm:think>{R}",
        reasoning=R,
        content="Hello.",
        tokenizer="minimax_m3",
        truncated=True,
    )
    b.add(
        "minimax_m3-prefilled-start",
        src + ": thinking_mode 'enabled' and no start marker in the output",
        f"{R}</mm:think>{C}",
        reasoning=R,
        content=C,
        tokenizer="minimax_m3",
        options={"chat_template_kwargs": {"thinking_mode": "enabled"}},
    )


def plamo3_extras(b: Book) -> None:
    src = "vLLM 0.33 parser/plamo3.py"
    b.add(
        "plamo3-eot-dropped",
        src + ": <|plamo:tag|> (end of turn) is dropped in content",
        f"<|plamo:begin_think:plamo|>{R}<|plamo:end_think:plamo|>{C}<|plamo:tag|>",
        reasoning=R,
        content=C,
        tokenizer="plamo3",
    )
    b.add(
        "plamo3-eot-ends-reasoning",
        src + ": (REASONING, EOT) -> CONTENT with the reasoning end",
        f"{R}<|plamo:tag|>",
        reasoning=R,
        tokenizer="plamo3",
    )
    b.add(
        "plamo3-start-in-content-opens",
        src + ": thinking off, a start marker in content opens reasoning",
        f"{C}<|plamo:begin_think:plamo|>{R}<|plamo:end_think:plamo|>",
        reasoning=R,
        content=C,
        tokenizer="plamo3",
        options=OFF,
    )


def minicpmv_extras(b: Book) -> None:
    src = "vLLM 0.33 parser/minicpmv.py (IM_END and RESERVED_* passthrough terminals)"
    b.add(
        "minicpmv-im-end-dropped",
        src + ": <|im_end|> never reaches content",
        f"<think>\n{R}\n</think>\n\n{C}<|im_end|>",
        reasoning=R,
        content=C,
        tokenizer="minicpmv",
    )
    b.add(
        "minicpmv-reserved-dropped",
        src + ": reserved markers (token and text spellings) are dropped",
        f"<|reserved_12|>{R}<reserved_13></think>{C}<|reserved_15|>",
        reasoning=R,
        content=C,
        tokenizer="minicpmv",
    )
    b.add(
        "minicpmv-thinking-off-block-is-reasoning",
        src + ": thinking off, (CONTENT, THINK_START) -> REASONING: "
        "the block the model writes anyway is not content (vLLM drops it; here it is reasoning)",
        f"<think>\n{R}\n</think>\n\n{C}",
        reasoning=R,
        content=C,
        tokenizer="minicpmv",
        options=OFF,
    )


def kimi_k3_extras(b: Book) -> None:
    src = "vLLM 0.33 kimi_k3_reasoning_parser.py"
    resp = f"<|open|>response<|sep|>{C}<|close|>response<|sep|>"
    b.add(
        "kimi_k3-response-without-think",
        src + " extract_reasoning: a response opener and no think markers: no reasoning, the response body is content",
        resp,
        content=C,
        tokenizer="kimi_k3",
    )
    b.add(
        "kimi_k3-prompt-opened-response",
        src + ": the generation prefix opened the response channel (prompt "
        "ends '<|open|>response<|sep|>'): the output starts in content and its closer is dropped",
        f"{C}<|close|>response<|sep|>",
        content=C,
        tokenizer="kimi_k3",
        options={"prompt_text": "<|close|>message<|sep|><|open|>response<|sep|>"},
    )
    b.add(
        "kimi_k3-answer-then-close-never-kept",
        src + ": 'answer<|close|>response<|sep|>' with the think channel closed first: content is the answer alone",
        f"{R}<|close|>think<|sep|>answer<|close|>response<|sep|><|close|>message<|sep|>",
        reasoning=R,
        content="answer",
        tokenizer="kimi_k3",
    )
    b.add(
        "kimi_k3-thinking-key-wins",
        src + ": 'thinking' is read before 'enable_thinking'",
        f"{R}<|close|>think<|sep|>{resp}",
        reasoning=R,
        content=C,
        tokenizer="kimi_k3",
        options={"chat_template_kwargs": {"thinking": True, "enable_thinking": False}},
    )
    b.add(
        "kimi_k3-instruct-mode-keeps-markers-of-think",
        src + ": thinking off (instruct mode): no think channel; the response wrapper is still unwrapped",
        resp,
        content=C,
        tokenizer="kimi_k3",
        options={"chat_template_kwargs": {"enable_thinking": False}},
    )


def granite_thinking_extras(b: Book) -> None:
    src = "vLLM 0.33 parser/granite_thinking.py (the Nemotron V3 swap, only when content is absent)"
    b.add(
        "granite_thinking_parser-swap-unended",
        src + ": enable_thinking false and the output never leaves the "
        "reasoning it started in: that text is the content",
        f"{R}",
        content=R,
        tokenizer="granite4",
        options={"chat_template_kwargs": {"enable_thinking": False}, "prompt_text": "<think>\n"},
    )
    b.add(
        "granite_thinking_parser-no-swap-with-content",
        src + ": force_nonempty_content and content present: no swap",
        f"<think>\n{R}\n</think>\n\n{C}",
        reasoning=R,
        content=C,
        tokenizer="granite4",
        options={"chat_template_kwargs": {"force_nonempty_content": True}},
    )


def poolside_extras(b: Book) -> None:
    src = "vLLM 0.33 poolside_v1_reasoning_parser.py (is_reasoning_end stops at <assistant>)"
    b.add(
        "poolside_v1-earlier-turn-end-does-not-decide",
        src + ": a '</think>' before the current <assistant> does not close the current turn's reasoning",
        f"{R}</think>{C}",
        reasoning=R,
        content=C,
        tokenizer="poolside",
        options={**DS_ON, "prompt_text": "<assistant>old</think>Sunny.<assistant><think>"},
    )


EXTRAS: dict[str, Callable[[Book], None]] = {
    "deepseek_v3": deepseek_templates,
    "deepseek_v4": lambda b: deepseek_v4_extras(b, "deepseek_v4"),
    "deepseek_v41": lambda b: deepseek_v4_extras(b, "deepseek_v41"),
    "glm45": lambda b: glm_templates(b, "glm45"),
    "glm47": lambda b: glm_templates(b, "glm47"),
    "kimi_k2": kimi_template,
    "minimax_m2": minimax_template,
    "mistral": mistral_template,
    "granite": granite_template,
    "nemotron_v3": nemotron_extras,
    "gemma4": gemma_extras,
    "hunyuan_a13b": hunyuan_extras,
    "ernie45": ernie_extras,
    "hy_v3": hy_extras,
    "cohere_command3": lambda b: cohere_extras(b, "cohere_command3"),
    "cohere_command4": lambda b: cohere_extras(b, "cohere_command4"),
    "step3": step3_extras,
    "hy_v4": hy_v4_extras,
    "k2_horizon": k2_horizon_extras,
    "minimax_m3": minimax_m3_extras,
    "plamo3": plamo3_extras,
    "minicpmv": minicpmv_extras,
    "kimi_k3": kimi_k3_extras,
    "granite_thinking_parser": granite_thinking_extras,
    "poolside_v1": poolside_extras,
}


def family_book(f: Family) -> Book:
    b = Book(f"{f.fmt}/reasoning.jsonl", f.fmt, None)
    core(b, f)
    extra = EXTRAS.get(f.fmt)
    if extra is not None:
        extra(b)
    return b


def identity_cases() -> Book:
    b = Book("identity/reasoning.jsonl", "identity", None)
    src = "vLLM IdentityReasoningParser: everything is content"
    out = f"<think>\n{R}\n</think>\n\n{C}"
    b.add("identity-think-tags-are-content", src, out, content=out, tokenizer="qwen3")
    b.add("identity-plain", src, C, content=C, tokenizer="qwen3", options=ON)
    b.add("identity-multibyte", src, C_MB, content=C_MB, tokenizer="qwen3")
    b.add("identity-truncated", src, R, content=R, tokenizer="qwen3", truncated=True)
    b.add("identity-thinking-off", src + "; switches change nothing", C, content=C, tokenizer="qwen3", options=OFF)
    out = f"{R}</think></think>{C}"
    b.add(
        "identity-end-markers-are-content",
        src + "; no start marker, two end markers: all text",
        out,
        content=out,
        tokenizer="qwen3",
    )
    out = f'{R}</think><tool_call>{{"name": "get_weather", "arguments": {{}}}}</tool_call>'
    b.add("identity-tool-marker-is-content", src + "; no tool format either", out, content=out, tokenizer="qwen3")
    return b


def combined_book(fmt: str, tools_format: str, tokenizer: str) -> Book:
    """Reasoning with the family's tool format: calls rendered by the family's template after
    reasoning, and the same call opened while still thinking (the tool marker ends reasoning)."""
    b = Book(f"{fmt}/reasoning-{tools_format}.jsonl", fmt, tools_format)
    call = [{"name": "get_weather", "arguments": {"location": "Paris"}}]
    tc = [{"type": "function", "function": {"name": "get_weather", "arguments": {"location": "Paris"}}}]
    p = f"{fmt}+{tools_format}"
    if fmt in ("glm45", "glm47"):
        template = "GLM-4.6.jinja" if fmt == "glm45" else "GLM-4.7-Flash.jinja"
        msg = {"role": "assistant", "content": "", "reasoning_content": R, "tool_calls": tc}
        gen, _ = round_trip(template, [USER], msg, eot="", tools=[GET_WEATHER])
        block = gen[gen.index("<tool_call>") :]
        head = "\n<think>" if fmt == "glm45" else ""
        unterminated = f"{head}{R}\n{block}"
    elif fmt == "kimi_k2":
        template = "Kimi-K2-Thinking.jinja"
        msg = {"role": "assistant", "content": "", "reasoning_content": R, "tool_calls": tc}
        gen, _ = round_trip(template, [USER], msg, eot="<|im_end|>", tools=[GET_WEATHER])
        block = gen[gen.index("<|tool_calls_section_begin|>") :]
        unterminated = f"<think>{R}{block}"
    elif fmt == "mistral":
        template = "mistralai-Ministral-3-14B-Reasoning-2512.jinja"
        msg = {"role": "assistant", "content": [{"type": "thinking", "thinking": R}], "tool_calls": tc}
        gen, _ = round_trip(template, [USER], msg, eot="</s>", bos_token="<s>", eos_token="</s>")
        block = gen[gen.index("[TOOL_CALLS]") :]
        unterminated = f"[THINK]{R}{block}"
    elif fmt == "minimax_m2":
        template = "MiniMax-M2.jinja"
        msg = {"role": "assistant", "content": "", "reasoning_content": R, "tool_calls": tc}
        gen, _ = round_trip(template, [USER], msg, eot="[e~[\n", tools=[GET_WEATHER])
        block = gen[gen.index("<minimax:tool_call>") :]
        unterminated = None  # minimax_m2 reasoning ends only at '</think>'
    else:  # deepseek_v3 + deepseek_v32: the V3.2 template, thinking on
        template = "deepseek-ai-DeepSeek-V3.2.jinja"
        msg = {"role": "assistant", "content": "", "reasoning_content": R, "tool_calls": tc}
        gen, _ = round_trip(
            template,
            [USER],
            msg,
            eot="<｜end▁of▁sentence｜>",
            tools=[GET_WEATHER],
            thinking=True,
            bos_token="<｜begin▁of▁sentence｜>",
            eos_token="<｜end▁of▁sentence｜>",
        )
        block = gen[gen.index("<｜DSML｜function_calls>") :]
        unterminated = None
    opts = {"chat_template_kwargs": {"thinking": True}} if fmt == "deepseek_v3" else {}
    b.add(
        f"{p}-rt-reasoning-then-call",
        f"{template} round trip: reasoning, then a call",
        gen,
        reasoning=R,
        tool_calls=call,
        tools=[GET_WEATHER],
        tokenizer=tokenizer,
        options=opts,
    )
    b.add(
        f"{p}-rt-multibyte-reasoning-then-call",
        f"{template} spelling with multi-byte reasoning",
        gen.replace(R, R_MB),
        reasoning=R_MB,
        tool_calls=call,
        tools=[GET_WEATHER],
        tokenizer=tokenizer,
        options=opts,
    )
    if unterminated is not None:
        b.add(
            f"{p}-call-while-thinking",
            f"from the {template} spelling: the call starts before the end marker; "
            "the tool marker ends reasoning and opens the call",
            unterminated,
            reasoning=R,
            tool_calls=call,
            tools=[GET_WEATHER],
            tokenizer=tokenizer,
            ids_only=fmt == "mistral",  # [TOOL_CALLS] ends an explicit [THINK] block only by id
            token_ids=tk.encode(tokenizer, unterminated) if fmt == "mistral" else None,
        )
    if fmt in ("kimi_k2", "minimax_m2"):  # a section wrapper before the call: the tool format's own cases
        return b
    cut = block[: len(block) // 2]
    b.add(
        f"{p}-truncated-in-call",
        f"from the {template} spelling: cut inside the call: not a call, and not content either "
        "(the message's unfinished_call)",
        gen[: gen.index(block) + len(block) // 2],
        reasoning=R,
        unfinished_call=cut,
        tools=[GET_WEATHER],
        tokenizer=tokenizer,
        options=opts,
        truncated=True,
    )
    return b


COMBINED = [
    ("glm45", "glm45", "glm"),
    ("glm47", "glm47", "glm"),
    ("kimi_k2", "kimi_k2", "kimi_k2"),
    ("mistral", "mistral", "magistral"),
    ("minimax_m2", "minimax_m2", "minimax"),
    ("deepseek_v3", "deepseek_v32", "deepseek_v3"),
]

BOOKS: list[Callable[[], Book]] = [
    *(lambda c=c: combined_book(*c) for c in COMBINED),
    *(lambda f=f: family_book(f) for f in FAMILIES),
    identity_cases,
    append_think_cases,
]


def build() -> dict[Path, str]:
    return casefile.build(BOOKS, natural_ids_when_ids_only=True)


def main(argv: list[str] | None = None) -> int:
    return casefile.main(build, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
