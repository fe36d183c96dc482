"""Every case with a real tokenizer that two phases can carry, through SGLang 0.5.23's parser
classes as its serving code calls them (``sglang_serving``) with the plugin's names: streamed at
1 and 4 tokens per chunk and not streamed, the client gets trisect's two phases (its reasoning,
then its tool format on the text after reasoning; ``two_phase``), with SGLang's own rules on
top: content as the model wrote it when no call was found, and ``finish_reason``.

SGLang's detectors see text only, and its template (not the request's switches) decides whether
the output starts inside reasoning (``force_reasoning``); here that is what trisect says for
the case's options, as a template that matches the format would. The reference gets what SGLang
hands a detector (``sglang_options``): a format rule keyed on another chat-template switch is not
visible there.
"""

from __future__ import annotations

from typing import Any

import hf_tokenizers
import pytest
import sglang_serving as sg
import two_phase
from sglang.srt.plugins import load_plugins

import trisect
from support.cases import load_cases, token_ids

load_plugins()  # the entry point, as SGLang's launcher runs it

CASES = [
    c
    for c in load_cases()
    if c["tokenizer"] and c["tokenizer"] not in hf_tokenizers.UNSUPPORTED and two_phase.applies(c)
]


def _id(case: dict[str, Any]) -> str:
    return f"{case['file']}:{case['id']}"


def options(case: dict[str, Any]) -> dict[str, Any]:
    tools = case["tools"] or None
    out = {k: v for k, v in case["options"].items() if k in two_phase.PHASE_ONE_OPTIONS}
    out.update(tools=tools, tool_choice="auto" if tools else "none")
    return out


def force_reasoning(case: dict[str, Any]) -> bool | None:
    if not case["reasoning"]:
        return None
    phase_one = {k: v for k, v in options(case).items() if k in two_phase.PHASE_ONE_OPTIONS}
    return not trisect.Parser(case["reasoning"]).reasoning_ended_at_start(**phase_one)


def sglang_options(case: dict[str, Any]) -> dict[str, Any]:
    """What SGLang hands a detector of the case's options: ``force_reasoning`` (read by the
    plugin as a prompt that opened or closed the block) and ``force_nonempty_content``, no other
    chat-template switch."""
    out = {k: v for k, v in options(case).items() if k in ("tools", "tool_choice")}
    force = force_reasoning(case)
    spec = trisect.Parser(case["reasoning"]).reasoning_spec if case["reasoning"] else None
    start = spec.terminals.get("THINK_START", ("",))[0] if spec is not None else ""
    end = spec.terminals.get("THINK_END", ("",))[0] if spec is not None else ""
    if force is True and start:
        out["prompt_text"] = start
    elif force is False and end:
        out["prompt_text"] = start + end
    if (case["options"].get("chat_template_kwargs") or {}).get("force_nonempty_content") is True:
        out["chat_template_kwargs"] = {"force_nonempty_content": True}
    return out


def test_the_cases_were_found() -> None:
    assert len(CASES) > 700


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_sglang(case: dict[str, Any]) -> None:
    ids = token_ids(case)
    assert ids is not None
    r = f"trisect_{case['reasoning']}" if case["reasoning"] else None
    t = f"trisect_{case['tools_format']}" if case["tools_format"] else None
    finish = "length" if case.get("truncated") else "stop"
    message = two_phase.two_phase(case, sglang_options(case), with_tokenizer=False)
    want = {
        "reasoning": message.reasoning or None,
        "content": message.content or None,
        "tool_calls": [(c.name, c.arguments) for c in message.tool_calls],
        "finish_reason": "tool_calls" if message.tool_calls and finish == "stop" else finish,
    }
    kwargs: dict[str, Any] = {
        "tools": case["tools"] or None,
        "force_reasoning": force_reasoning(case),
        "finish": finish,
    }
    if case["options"].get("chat_template_kwargs"):
        kwargs["chat_template_kwargs"] = case["options"]["chat_template_kwargs"]
    replies = {"whole": sg.whole(r, t, case["output"], **kwargs)}
    for per in (1, 4):
        pieces = sg.chunks(case["tokenizer"], ids, per)
        assert "".join(pieces) == case["output"]
        replies[f"stream {per}"] = sg.stream(r, t, pieces, **kwargs)
    for how, reply in replies.items():
        got = reply.view()
        if not got["tool_calls"] and t is not None and case["tools"]:
            # no call: SGLang's non-streaming path keeps the text as written, its streaming path
            # shows the tool parser's (leading and trailing whitespace apart, the same text)
            got["content"] = (got["content"] or "").strip() or None
            want = {**want, "content": (want["content"] or "").strip() or None}
        assert got == want, how
        assert reply.backfill == [], how
