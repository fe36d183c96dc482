"""Every case under ``tests/cases`` that holds from text, through SGLang 0.5.23's own chat serving
code (``sglang_serving``: the installed ``serving_chat.py``'s methods) with the plugin's names
(``--reasoning-parser trisect_R --tool-call-parser trisect_T`` as the case gives them): what
reaches the client, streamed at 1 and 4 tokens per chunk and not streamed, is trisect alone, the
combined formats' ``parse()`` of the same output with the request's options
(``chat_template_kwargs``, ``reasoning_effort``, the tools) as SGLang's protocol leaves them.

Each case runs as its request gives it and, with a reasoning format, with thinking switched on
and off (``thinking`` and ``enable_thinking`` both, as SGLang's protocol sets them from
``reasoning_effort``); each time with SGLang's template manager knowing no chat template, each
staged template ``trisect.detect`` reads as the case's reasoning format, and a template by each
of two of SGLang's own rules, one under which SGLang computes ``force_reasoning`` true for every
request and one under which it computes it false: SGLang computes ``force_reasoning`` from these
(``_get_reasoning_from_request``) and hands it to the detector with the request, and the client
gets trisect alone whatever it computed.

Two things SGLang cannot carry are asserted as such, not passed over: a request its protocol
rejects (Tencent HY's ``reasoning_effort: "no_think"``: SGLang takes OpenAI's levels) is not
sent, and its thinking on and off go without that effort; and with a tool parser and no
reasoning parser, SGLang's tool path has no reasoning field, so a tool format that carries
reasoning itself (Harmony's ``openai``, Inkling) gives the client trisect's content and calls
with no reasoning.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import hf_tokenizers
import pytest
import sglang_serving as sg
from pydantic import ValidationError
from sglang.srt.plugins import load_plugins

import trisect
from support.cases import load_cases, token_ids

load_plugins()  # the entry point, as SGLang's launcher runs it

TEMPLATES = Path(__file__).resolve().parent.parent / "data" / "templates"
CASES = [c for c in load_cases() if not c.get("ids_only")]
ON = {"thinking": True, "enable_thinking": True}
OFF = {"thinking": False, "enable_thinking": False}
ALWAYS = sg.Template("a template SGLang reads as always reasoning", True, sg.rule_config("force_reasoning_pattern"))
NEVER = sg.Template("a template with no switch SGLang reads", False, sg.rule_config("hunyuan_reasoning_effort"))


def _id(case: dict[str, Any]) -> str:
    return f"{case['file']}:{case['id']}"


@functools.cache
def staged_templates() -> dict[str, list[sg.Template]]:
    """The staged chat templates by the reasoning format ``trisect.detect`` reads in them, as
    SGLang's template manager knows each."""
    out: dict[str, list[sg.Template]] = {}
    for path in sorted(TEMPLATES.glob("*.jinja")):
        text = path.read_text(encoding="utf-8")
        try:
            reasoning = trisect.detect(text).reasoning
        except trisect.TrisectError:
            continue
        if reasoning:
            out.setdefault(reasoning, []).append(sg.known(path.name, text))
    return out


def templates(case: dict[str, Any]) -> list[sg.Template]:
    if not case["reasoning"]:
        return [sg.UNKNOWN]  # no reasoning parser: nothing reads the template's facts
    return [sg.UNKNOWN, *staged_templates().get(case["reasoning"], []), ALWAYS, NEVER]


def sglang_takes(effort: Any) -> bool:
    try:
        sg.request(reasoning_effort=effort)
    except ValidationError:
        return False
    return True


def bodies(case: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The request fields: the case's own, and thinking on and off (without the case's
    ``reasoning_effort`` when SGLang's protocol rejects it)."""
    given: dict[str, Any] = {}
    kwargs = dict(case["options"].get("chat_template_kwargs") or {})
    if kwargs:
        given["chat_template_kwargs"] = kwargs
    if "reasoning_effort" in case["options"]:
        given["reasoning_effort"] = case["options"]["reasoning_effort"]
    out = {"as given": given}
    if case["reasoning"]:
        base = {k: v for k, v in given.items() if k != "reasoning_effort" or sglang_takes(v)}
        out["thinking on"] = {**base, "chat_template_kwargs": {**kwargs, **ON}}
        out["thinking off"] = {**base, "chat_template_kwargs": {**kwargs, **OFF}}
    return out


def alone(case: dict[str, Any], request: Any) -> trisect.Message:
    """trisect alone, from text, with the request's options as SGLang's protocol left them."""
    tools = case["tools"] or None
    options: dict[str, Any] = {"tools": tools, "tool_choice": "auto" if tools else "none"}
    if request.chat_template_kwargs:
        options["chat_template_kwargs"] = request.chat_template_kwargs
    if isinstance(request.reasoning_effort, str):
        options["reasoning_effort"] = request.reasoning_effort
    return trisect.Parser(case["reasoning"], case["tools_format"]).parse(case["output"], **options)


def pieces(case: dict[str, Any], per: int) -> list[str]:
    """The output as SGLang's detokenizer sends it, ``per`` tokens a chunk (characters for a case
    without a tokenizer SGLang can load)."""
    if case["tokenizer"] and case["tokenizer"] not in hf_tokenizers.UNSUPPORTED:
        chunks = sg.chunks(case["tokenizer"], token_ids(case) or [], per)
        assert "".join(chunks) == case["output"]
        return chunks
    out = case["output"]
    return [out[k : k + per] for k in range(0, len(out), per)] or [""]


_SERVERS: dict[tuple[Any, ...], sg.Server] = {}


def server(case: dict[str, Any], template: sg.Template) -> sg.Server:
    r = f"trisect_{case['reasoning']}" if case["reasoning"] else None
    t = f"trisect_{case['tools_format']}" if case["tools_format"] else None
    key = (r, t, template)
    if key not in _SERVERS:
        _SERVERS[key] = sg.Server(r, t, template)
    return _SERVERS[key]


def test_the_cases_were_found() -> None:
    assert len(CASES) > 1400
    assert {len(staged_templates().get(r, [])) for r in ("qwen3", "deepseek_r1", "mistral", "openai_gptoss")} >= {1}


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_sglang_gives_trisect_alone(case: dict[str, Any]) -> None:
    finish = "length" if case.get("truncated") else "stop"
    tools = case["tools"] or None
    sent = 0
    for body_name, body in bodies(case).items():
        try:
            streamed, whole = sg.request(tools, stream=True, **body), sg.request(tools, **body)
        except ValidationError:
            assert not sglang_takes(body.get("reasoning_effort")), body
            continue
        message = alone(case, whole)
        want = {
            "reasoning": message.reasoning or None,
            "content": message.content or None,
            "tool_calls": [(c.name, c.arguments) for c in message.tool_calls],
            "finish_reason": "tool_calls" if message.tool_calls and finish == "stop" else finish,
        }
        if not case["reasoning"]:
            want["reasoning"] = None  # a tool parser alone: SGLang's tool path has no reasoning field
        for template in templates(case):
            srv = server(case, template)
            replies = {"whole": srv.whole(whole, case["output"], finish)}
            for per in (1, 4):
                replies[f"streamed, {per} per chunk"] = srv.stream(streamed, pieces(case, per), finish)
            for how, reply in replies.items():
                where = f"{body_name}, template {template.name}, {how}"
                assert reply.view() == want, where
                assert reply.backfill == [], where
            sent += 1
    assert sent
