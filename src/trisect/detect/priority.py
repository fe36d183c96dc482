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

Before these, a format some of whose family markers (below) are in the prompt ranks before one
with none there (``Standing.key``): the wire format fits, and the family is shown. Between
pairing and sniffing, a format whose own first markers cover every marker of the trials ranks
before one that reads some of them only by an alias (``Standing.exact``).

Marker sniffing only breaks ties between formats that passed every trial; it never makes a
format that failed one eligible. ``Standing.decided_by`` says which of these steps separated the
chosen format from the next one; ``confidence`` turns that into the part's confidence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..engine.spec import FormatSpec

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
    "qwen3_coder": ("<|im_start|>", "<|im_end|>"),  # Qwen3-Coder (ChatML)
}


def order(name: str, table: tuple[str, ...]) -> tuple[int, str]:
    return (table.index(name) if name in table else len(table), name)


def family_markers(spec: FormatSpec, catalogue: Iterable[FormatSpec]) -> tuple[str, ...]:
    """The prompt markers of ``spec``'s family: its own ``turn_markers``, else the table above,
    else those of the format of the other kind with the same name (a tool format names its family
    as its reasoning format does: ``poolside_v1``, ``seed_oss``, ``kimi_k2``)."""
    if spec.turn_markers:
        return spec.turn_markers
    if spec.name in TOOL_FAMILY_MARKERS:
        return tuple(TOOL_FAMILY_MARKERS[spec.name])
    names = {spec.name, *spec.aliases}
    for other in catalogue:
        if other.kind != spec.kind and other.turn_markers and names & {other.name, *other.aliases}:
            return other.turn_markers
    return ()


def covers(spec: FormatSpec, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]) -> bool:
    """Does ``spec`` read the trials' markers by their own spelling? A marker span that only an
    alias of a terminal matches (Mistral's text ``<think>`` for ``[THINK]``) says the format reads
    another family's spelling; spans no terminal matches are its codec's (Gemma's ``<|"|>``) or the
    template's own."""
    primary = [m[0] for m in spec.terminals.values() if m and m[0].strip()]
    aliases = [a for m in spec.terminals.values() for a in m[1:] if a.strip()]
    for text, text_spans in zip(texts, spans, strict=True):
        own, other = _occurrences(text, primary), _occurrences(text, aliases)
        for a, b in text_spans:
            hit = any(x < b and a < y for x, y in own)
            if not hit and any(x < b and a < y for x, y in other):
                return False
    return True


def _occurrences(text: str, markers: Sequence[str]) -> list[tuple[int, int]]:
    found = []
    for marker in markers:
        at = text.find(marker)
        while at >= 0:
            found.append((at, at + len(marker)))
            at = text.find(marker, at + 1)
    return found


# what separated the chosen format from the next one, strongest first (``Standing.key``)
UNIQUE = "unique"  # no other registered format passed every trial
FAMILY = "family"  # the next one's family markers are not in the prompt, the chosen one's are
PROMPT_STATE = "prompt state"  # the next one's own initial state contradicts more prompts
PAIRING = "pairing"  # named like the chosen tool format
EXACT = "exact markers"  # the next one reads some marker of the trials only by an alias
SNIFF = "family markers"  # more of this one's family markers are in the prompt
ORDER = "documented order"  # nothing in the template told them apart


@dataclass(frozen=True)
class Standing:
    """How the template ranks one format that passed every trial."""

    spec: FormatSpec
    contradicted: bool  # family markers declared, none in the prompt
    paired: bool
    disagreements: int
    exact: bool
    sniff: int  # how many of its family markers the prompt has
    rank: tuple[int, str]

    def key(self) -> tuple[object, ...]:
        return (not self.sniff, self.disagreements, not self.paired, not self.exact, -self.sniff, self.rank)


_STEPS = (FAMILY, PROMPT_STATE, PAIRING, EXACT, SNIFF, ORDER)


def decided_by(best: Standing, runner: Standing | None) -> str:
    """The first ranking step at which ``best`` beat ``runner`` (the next format)."""
    if runner is None:
        return UNIQUE
    for step, mine, theirs in zip(_STEPS, best.key(), runner.key(), strict=True):
        if mine != theirs:
            return step
    return ORDER


def contested(best: Standing, others: Sequence[Standing]) -> bool:
    """Does a lower-ranked format have what ``best`` lacks: the pairing with the tool format, or
    exact markers? Then the steps that ranked ``best`` first and the template's other signals
    disagree."""
    return any((o.paired and not best.paired) or (o.exact and not best.exact) for o in others)
