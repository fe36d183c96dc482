"""trisect's two phases on a whole output, the reference for an engine that runs a reasoning
parser and then a tool parser on what it leaves (vLLM's ``DelegatingParser``, SGLang)."""

from __future__ import annotations

from typing import Any

import trisect
from support import tokenizers
from trisect.integrations._common import ReasoningPhase

PHASE_ONE_OPTIONS = ("chat_template_kwargs", "prompt_token_ids", "prompt_text", "reasoning_effort")


def applies(case: dict[str, Any]) -> bool:
    """The engines hand the split parsers the text only (no token ids), so a case that holds
    only when ids are fed (a marker spelled with ordinary tokens) cannot hold there; and a
    channel format (Harmony: message headers decide what is reasoning) has no two phases."""
    return not case.get("ids_only") and trisect.Parser(case["reasoning"], case["tools_format"]).spec.header is None


def two_phase(case: dict[str, Any], options: dict[str, Any], *, with_tokenizer: bool = True) -> trisect.Message:
    """trisect's reasoning, then the tool format on the text after reasoning (as written)."""
    tok = tokenizers.load(case["tokenizer"]) if with_tokenizer and case["tokenizer"] else None
    reasoning, rest = None, case["output"]
    if case["reasoning"]:
        first = trisect.Parser(case["reasoning"], tokenizer=tok)
        phase_options = {k: options[k] for k in PHASE_ONE_OPTIONS if k in options}
        reasoning, rest = ReasoningPhase(first.stream(**phase_options), first.spec).whole(case["output"])
    if not case["tools_format"]:
        return trisect.Message(reasoning=reasoning or None, content=rest or None)
    message = trisect.Parser(None, case["tools_format"], tokenizer=tok).parse(rest, **options)
    return trisect.Message(reasoning=reasoning or None, content=message.content, tool_calls=message.tool_calls)
