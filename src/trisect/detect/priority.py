"""How detection chooses among formats that all confirm: a documented policy, as data.

Several registered names can parse one template's renders equally well: vLLM registers one
wire format under several names (``hermes`` / ``granite4`` / ``ernie45`` write
``<tool_call>{json}</tool_call>``; ``glm45`` / ``glm47`` are one class), and every
``<think>`` reasoning format reads a ``<think>`` block. Candidates that confirm are ordered by

1. (reasoning) the fewest settings where the format's own initial state contradicts the
   prompt (``confirm.disagreements``): the format that also works without the prompt;
2. (reasoning) the name of the chosen tool format (``kimi_k2`` with ``kimi_k2``): one family;
3. family sniffing: how many of the family's turn markers the template's prompt contains
   (a reasoning format's ``turn_markers``; for tool formats ``TOOL_FAMILY_MARKERS`` below);
4. the order of ``REASONING_ORDER`` / ``TOOL_ORDER``: the name vLLM's documentation gives the
   family first; names not listed come after, alphabetically.

Marker sniffing only breaks ties between formats that passed every trial; it never makes a
format that failed one eligible.
"""

from __future__ import annotations

from collections.abc import Mapping

# the documented choice when several <think>-style formats confirm equally (vLLM docs:
# reasoning_outputs.md names deepseek_r1 for the DeepSeek R1 series and QwQ, qwen3 for Qwen3,
# deepseek_v3 for DeepSeek-V3.1, glm45 for the GLM-4.5 series)
REASONING_ORDER: tuple[str, ...] = (
    "deepseek_r1",
    "qwen3",
    "deepseek_v3",
    "glm45",
    "glm47",
    "kimi_k2",
    "minimax_m2",
    "mistral",
    "openai_gptoss",
    "seed_oss",
    "ernie45",
    "hunyuan_a13b",
    "granite",
    "holo2",
)

# the same for tool formats (vLLM docs: tool_calling.md lists hermes for Hermes and Qwen,
# granite4 for Granite 4.0, llama3_json for Llama 3.1 / 3.2, glm47 for GLM-4.7 (glm45, its
# alias, for GLM-4.5 / 4.6), qwen3_xml (an alias of qwen3_coder) for Qwen3-Coder)
TOOL_ORDER: tuple[str, ...] = (
    "hermes",
    "llama3_json",
    "glm47",
    "qwen3_coder",
    "minimax",
    "mistral",
    "deepseek_v3",
    "deepseek_v31",
    "kimi_k2",
)

# turn markers that identify the family of a tool format whose wire format another family
# shares (tool formats declare none of their own)
TOOL_FAMILY_MARKERS: Mapping[str, tuple[str, ...]] = {
    "granite4": ("<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>"),  # IBM Granite 4
    "llama4_json": ("<|header_start|>", "<|header_end|>", "<|eot|>"),  # Llama 4
    "llama3_json": ("<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"),  # Llama 3.x
    "minimax": ("<beginning_of_sentence>", "<end_of_sentence>"),  # MiniMax-M1
    "hermes": ("<|im_start|>", "<|im_end|>"),  # Hermes / Qwen ChatML
}


def order(name: str, table: tuple[str, ...]) -> tuple[int, str]:
    return (table.index(name) if name in table else len(table), name)
