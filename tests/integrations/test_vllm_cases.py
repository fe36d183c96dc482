"""Every case under ``tests/cases`` that has a real tokenizer, through vLLM 0.33's own serving code
with the plugin's names (``vllm_serving``): what reaches the client, streamed at 1 and 4 tokens
per delta and not streamed, is trisect's own ``parse()`` of the same output and ids.

* ``test_unified``: ``--reasoning-parser trisect_R --tool-call-parser trisect_T`` as vLLM 0.33
  composes them with the plugin loaded: one ``TrisectParser``.
* ``test_two_phase``: the same names through vLLM's ``DelegatingParser`` (what vLLM composes when
  the composer patch is off or absent): streamed = non-streamed = trisect's two phases (its
  reasoning, then its tool parser on the text after reasoning), which equals ``parse()`` where
  the format's reasoning ends at its own end marker.

The client view is content, reasoning, tool calls (name, arguments; ids where the family makes
them deterministic) and finish_reason. The text vLLM's detokenizer hands the parser is checked
against the case's output first, so a tokenizer conversion error shows as such.
"""

from __future__ import annotations

from typing import Any

import hf_tokenizers
import pytest
import two_phase
import vllm_serving as vs
from vllm.plugins import load_general_plugins

import trisect
from support import tokenizers
from support.cases import load_cases, token_ids

load_general_plugins()  # the entry point, in this process, as `vllm serve` runs it

ALL = [c for c in load_cases() if c["tokenizer"]]
CASES = [c for c in ALL if c["tokenizer"] not in hf_tokenizers.UNSUPPORTED]
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")  # vLLM's request field accepts these


def _id(case: dict[str, Any]) -> str:
    return f"{case['file']}:{case['id']}"


_SERVERS: dict[tuple[Any, ...], vs.Server] = {}


def server(case: dict[str, Any], unified: bool) -> vs.Server:
    key = (case["tokenizer"], case["reasoning"], case["tools_format"], unified)
    if key not in _SERVERS:
        r, t = case["reasoning"], case["tools_format"]
        _SERVERS[key] = vs.Server(
            vs.tokenizer(case["tokenizer"]),
            f"trisect_{r}" if r else None,
            f"trisect_{t}" if t else None,
            unified=unified,
        )
    return _SERVERS[key]


def body(case: dict[str, Any]) -> dict[str, Any]:
    """The request fields that carry the case's options."""
    options = case["options"]
    out: dict[str, Any] = {}
    kwargs = dict(options.get("chat_template_kwargs") or {})
    effort = options.get("reasoning_effort")
    if effort in EFFORTS:
        out["reasoning_effort"] = effort
    elif effort is not None:
        kwargs["reasoning_effort"] = effort
    if kwargs:
        out["chat_template_kwargs"] = kwargs
    history = options.get("history_tool_calls", 0)
    if history:
        calls = [
            {"id": f"c{i}", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
            for i in range(history)
        ]
        out["messages"] = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            *({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"} for i in range(history)),
            {"role": "user", "content": "again"},
        ]
    return out


def prompt_ids(case: dict[str, Any]) -> list[int]:
    options = case["options"]
    if options.get("prompt_token_ids") is not None:
        return list(options["prompt_token_ids"])
    if options.get("prompt_text") is not None:
        return tokenizers.encode(case["tokenizer"], options["prompt_text"])
    return []


def reference_options(case: dict[str, Any], request: Any) -> dict[str, Any]:
    """trisect's options for what the request says (the chat template kwargs as vLLM renders)."""
    tools = case["tools"] or None
    options: dict[str, Any] = {
        "tools": tools,
        "tool_choice": "auto" if tools else "none",
        "chat_template_kwargs": request.build_chat_params(None, "auto").chat_template_kwargs,
        "prompt_token_ids": prompt_ids(case),
    }
    effort = case["options"].get("reasoning_effort")
    if effort is not None:
        options["reasoning_effort"] = effort
    if case["options"].get("history_tool_calls"):
        options["history_tool_calls"] = case["options"]["history_tool_calls"]
    return options


def deterministic_ids(parser: trisect.Parser, case: dict[str, Any], ids: list[int], options: dict[str, Any]) -> bool:
    first = parser.parse(case["output"], token_ids=ids, **options)
    second = parser.parse(case["output"], token_ids=ids, **options)
    return [c.id for c in first.tool_calls] == [c.id for c in second.tool_calls]


def view(message: trisect.Message, finish: str, with_ids: bool) -> dict[str, Any]:
    return {
        "reasoning": message.reasoning or None,
        "content": message.content or None,
        "tool_calls": [(c.id if with_ids else None, c.name, c.arguments) for c in message.tool_calls],
        "finish_reason": "tool_calls" if message.tool_calls and finish == "stop" else finish,
    }


def check_served(
    srv: vs.Server,
    case: dict[str, Any],
    ids: list[int],
    want: dict[str, Any],
    with_ids: bool,
    reasoning_tokens: int | None = None,
) -> None:
    finish = "length" if case.get("truncated") else "stop"
    for stream, chunk in ((False, 1), (True, 1), (True, 4)):
        request = srv.request(stream=stream, tools=case["tools"] or None, **body(case))
        reply = srv.serve(request, ids, prompt_ids=prompt_ids(case), finish=finish, chunk=chunk)
        assert reply.text == case["output"], "vLLM's detokenizer gave other text than the case's output"
        expected = want
        if stream and not ids:
            # ChatStreamProcessor.step sends the final chunk of an empty output without calling
            # the parser (stream_processor.py:70-72): nothing a format adds to no text arrives
            expected = {**want, "reasoning": None, "content": None, "tool_calls": []}
        assert reply.view(ids=with_ids) == expected, f"stream={stream} chunk={chunk}"
        if reasoning_tokens is not None:
            assert reply.reasoning_tokens == reasoning_tokens, f"usage.reasoning_tokens, stream={stream}"


def test_the_cases_were_found() -> None:
    assert len(CASES) > 900
    skipped = {c["tokenizer"] for c in ALL} - {c["tokenizer"] for c in CASES}
    assert skipped <= set(hf_tokenizers.UNSUPPORTED), skipped


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_unified(case: dict[str, Any]) -> None:
    srv = server(case, unified=True)
    assert srv.parser_cls.__name__.startswith("TrisectParser"), srv.parser_cls
    ids = token_ids(case)
    assert ids is not None
    parser = trisect.Parser(case["reasoning"], case["tools_format"], tokenizer=tokenizers.load(case["tokenizer"]))
    options = reference_options(case, srv.request(stream=False, tools=case["tools"] or None, **body(case)))
    with_ids = deterministic_ids(parser, case, ids, options)
    want = view(
        parser.parse(case["output"], token_ids=ids, **options), "length" if case.get("truncated") else "stop", with_ids
    )
    counted = None
    if case["reasoning"]:
        counted = parser.count_reasoning_tokens(
            ids, chat_template_kwargs=options["chat_template_kwargs"], prompt_token_ids=options["prompt_token_ids"]
        )
    check_served(srv, case, ids, want, with_ids, counted)


TWO_PHASE = [c for c in CASES if two_phase.applies(c)]


@pytest.mark.parametrize("case", TWO_PHASE, ids=_id)
def test_two_phase(case: dict[str, Any]) -> None:
    srv = server(case, unified=False)
    assert srv.parser_cls.__mro__[1].__name__ == "DelegatingParser", srv.parser_cls.__mro__
    ids = token_ids(case)
    assert ids is not None
    options = reference_options(case, srv.request(stream=False, tools=case["tools"] or None, **body(case)))
    want = view(two_phase.two_phase(case, options), "length" if case.get("truncated") else "stop", False)
    check_served(srv, case, ids, want, False)


# ---------------------------------------------------------------------------------------- engine core


def engine_core_constraint_start(
    reasoner_cls: Any, tok: Any, kwargs: dict[str, Any], prompt: list[int], output: list[int], k: int
) -> int | None:
    """Where vLLM's engine core starts constraining the output (an index into ``output``; 0: from
    the first token; None: never), running ``StructuredOutputManager._get_constraint_bounds`` as
    the scheduler does per step: ``k`` speculative ids proposed (not committed), then accepted
    (committed, ``accept_tokens``). The reasoner is built the engine core's way, by name."""
    from types import MethodType, SimpleNamespace

    from vllm.v1.structured_output import StructuredOutputManager

    manager = SimpleNamespace(enable_in_reasoning=False, reasoner_cls=reasoner_cls, tokenizer=tok)
    manager._get_reasoner = MethodType(StructuredOutputManager._get_reasoner, manager)
    structured = SimpleNamespace(
        reasoner=None, reasoning_parser_kwargs={"chat_template_kwargs": kwargs}, reasoning_ended=None
    )
    request = SimpleNamespace(structured_output_request=structured, prompt_token_ids=prompt, all_token_ids=list(prompt))
    bounds = StructuredOutputManager._get_constraint_bounds
    if tuple(bounds(manager, request, [])) == (0, 0):  # the first step: the prompt alone decides
        return 0
    for i in range(0, len(output), k):
        spec = output[i : i + k]
        proposed = bounds(manager, request, spec)
        if (proposed.grammar_start, proposed.constraint_start) == (0, 0):
            return 0
        request.all_token_ids.extend(spec)
        accepted = bounds(manager, request, spec, spec_tokens_committed=True)
        assert accepted == proposed, (accepted, proposed)
        if proposed.constraint_start <= len(spec):
            return i + proposed.constraint_start
    return None


def trisect_constraint_start(
    parser: trisect.Parser, kwargs: dict[str, Any], prompt: list[int], output: list[int]
) -> int | None:
    """The first output index after reasoning ended, by trisect's token view fed id by id."""
    tracker = parser.reasoning_tracker(chat_template_kwargs=kwargs)
    if tracker.feed(prompt):
        return 0
    for i, token_id in enumerate(output):
        if tracker.feed([token_id]):
            return i + 1
    return None


ENGINE_CORE = [c for c in CASES if c["reasoning"]]


@pytest.mark.parametrize("case", ENGINE_CORE, ids=_id)
def test_engine_core(case: dict[str, Any]) -> None:
    from vllm.reasoning import ReasoningParserManager

    tok = vs.tokenizer(case["tokenizer"])
    reasoner_cls = ReasoningParserManager.get_reasoning_parser(f"trisect_{case['reasoning']}")
    ids = token_ids(case)
    assert ids is not None
    kwargs = server(case, True).request(stream=False, **body(case)).build_chat_params(None, "auto").chat_template_kwargs
    parser = trisect.Parser(case["reasoning"], tokenizer=tokenizers.load(case["tokenizer"]))
    want = trisect_constraint_start(parser, kwargs, prompt_ids(case), ids)
    for k in (1, 4):
        assert engine_core_constraint_start(reasoner_cls, tok, kwargs, prompt_ids(case), ids, k) == want, k
