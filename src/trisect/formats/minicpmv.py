"""MiniCPM-V reasoning (``minicpmv``): the Qwen3 grammar plus MiniCPM-V's framing tokens.

Wire format::

    <think>
    REASONING
    </think>
    CONTENT<|im_end|>

Thinking on unless ``enable_thinking`` is false; ``<tool_call>`` while thinking ends reasoning
when a tool format is combined (MiniCPM-V writes the Qwen3-Coder XML calls: use
``qwen3_coder``; vLLM registers no MiniCPM-V tool parser). ``<|im_end|>`` and the reserved
markers ``<reserved_12>`` … ``<reserved_15>`` / ``<|reserved_12|>`` … ``<|reserved_15|>`` are
dropped wherever they appear. With thinking off a ``<think>`` block the model writes anyway is
reasoning, never content (vLLM's no-thinking config opens reasoning there and drops it; here it
is returned as reasoning, so no text is lost); a ``<think>`` in content opens a block in either
mode.

Not done here: vLLM also rewrites a literal backslash-``n`` that the MiniCPM-V tokenizer decodes
for a newline back into a newline (outside code and LaTeX); trisect never alters the model's
text.

Reference: vLLM 0.33 ``vllm/parser/minicpmv.py`` (``minicpmv_config``: the Qwen3 config, the
``IM_END`` and ``RESERVED_*`` passthrough terminals, ``enable_thinking`` default true) and
``vllm/reasoning/minicpmv_reasoning_parser.py``. No template or tokenizer is staged.
"""

from __future__ import annotations

from ._think import think_format, thinking_switch

_RESERVED = range(12, 16)
_ABSORB = {
    "IM_END": ("<|im_end|>",),
    **{f"RESERVED_TEXT_{i}": (f"<reserved_{i}>",) for i in _RESERVED},
    **{f"RESERVED_TOKEN_{i}": (f"<|reserved_{i}|>",) for i in _RESERVED},
}

FORMATS = [
    think_format(
        "minicpmv",
        initial=thinking_switch("enable_thinking", default=True),
        tool_start_ends_reasoning=True,
        opens_in_content=True,
        absorb=_ABSORB,
        special=frozenset({"THINK_START", "THINK_END", "IM_END", *(f"RESERVED_TOKEN_{i}" for i in _RESERVED)}),
        # <|im_end|> is dropped in the output; a turn starts at <|im_start|>
        turn_markers=("<|im_start|>",),
        models=("MiniCPM-V 4.5", "MiniCPM-V"),
        reference="vLLM 0.33 parser/minicpmv.py (the Qwen3 grammar with MiniCPM-V's passthrough markers)",
    ),
]
