"""Tencent HY v3 / v4: ``<think>`` reasoning chosen by ``reasoning_effort``, and key / value tool
calls in a ``<tool_calls>`` block.

Wire format (HY v4)::

    <think>REASONING</think>CONTENT<tool_calls><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call></tool_calls>

HY v3 ends the name with ``<tool_sep>``: ``<tool_call>get_weather<tool_sep><arg_key>…``.

Reasoning: ``reasoning_effort`` from ``chat_template_kwargs`` first, then the request field;
``"no_think"`` means no reasoning block (all content). The default differs: v3 ``"no_think"``,
v4 ``"high"`` (the v4 template's own default, so an output that starts inside the pre-filled
``<think>`` is reasoning). Any other effort starts in reasoning, with or without a ``<think>``
in the output.

Tool calls: the name is the text up to the first ``<arg_key>`` (v3: ``<tool_sep>``), stripped;
values are written raw and typed by the tool schema (strings verbatim). Text before the block
is content; a missing ``</tool_call>`` before the next call or before ``</tool_calls>`` is
recovered; a value closer inside a value counts only where the structure goes on after it.

Checkpoint suffixes: HY checkpoints may spell every structural token with a per-checkpoint
suffix (``<think:6124c78e>``, ``</tool_calls:6124c78e>`` …). With a tokenizer, the suffix is
read from its added tokens (``FormatSpec.vocab_suffix``) and every marker is spelled with it;
without one the markers stand unsuffixed.

Reference: vLLM 0.33 ``vllm/reasoning/hy_v3_reasoning_parser.py`` (``<think{suffix}>``,
``token_suffix`` from the tokenizer config, effort default ``no_think``),
``vllm/reasoning/hy_v4_reasoning_parser.py`` (default ``high``, ``detect_token_suffix`` over
the vocabulary), ``vllm/tool_parsers/hy_v3_tool_parser.py`` (``<tool_calls>`` /
``<tool_call>NAME<tool_sep>…</tool_call>`` / ``<arg_key>`` / ``<arg_value>``) and
``hy_v4_tool_parser.py`` (the same without ``<tool_sep>``). No HY template or tokenizer is
staged here; the tests use a synthetic tokenizer with the markers as added tokens.
"""

from __future__ import annotations

from ..engine.spec import FormatSpec, VocabSuffix
from ._key_value import key_value_format
from ._think import effort_switch, think_format

# an added token of the checkpoint spelled with its suffix; group 1 is the suffix
_SUFFIX = r"</?(?:think|tool_calls|tool_call|tool_sep|arg_key|arg_value)(:[^\s>]+)>"
_THINK_SUFFIX = VocabSuffix(_SUFFIX, frozenset({"THINK_START", "THINK_END"}))
_TOOL_TERMINALS = ("BLOCK_START", "BLOCK_END", "TOOL_START", "TOOL_END", "KEY_START", "KEY_END")
_TOOLS_SUFFIX = VocabSuffix(_SUFFIX, frozenset({*_TOOL_TERMINALS, "VALUE_START", "VALUE_END", "TOOL_SEP"}))
_V4_TOOLS_SUFFIX = VocabSuffix(_SUFFIX, _TOOLS_SUFFIX.terminals - {"TOOL_SEP"})


def _tools(name: str, *, name_sep: str | None, suffix: VocabSuffix, reference: str) -> FormatSpec:
    return key_value_format(
        name,
        call=("<tool_call>", "</tool_call>"),
        key=("<arg_key>", "</arg_key>"),
        value=("<arg_value>", "</arg_value>"),
        block=("<tool_calls>", "</tool_calls>"),
        name_sep=name_sep,
        validate_names=False,
        vocab_suffix=suffix,
        models=(f"Tencent HY {name[-2:]}",),
        reference=reference,
    )


FORMATS = [
    think_format(
        "hy_v3",
        initial=effort_switch(off=("no_think",), default="no_think"),
        plain_when_off=True,
        vocab_suffix=_THINK_SUFFIX,
        models=("Tencent HY v3",),
        reference="vLLM 0.33 hy_v3_reasoning_parser.py",
    ),
    think_format(
        "hy_v4",
        initial=effort_switch(off=("no_think",), default="high"),
        plain_when_off=True,
        vocab_suffix=_THINK_SUFFIX,
        models=("Tencent HY v4",),
        reference="vLLM 0.33 hy_v4_reasoning_parser.py",
    ),
    _tools("hy_v3", name_sep="<tool_sep>", suffix=_TOOLS_SUFFIX, reference="vLLM 0.33 hy_v3_tool_parser.py"),
    _tools("hy_v4", name_sep=None, suffix=_V4_TOOLS_SUFFIX, reference="vLLM 0.33 hy_v4_tool_parser.py"),
]
