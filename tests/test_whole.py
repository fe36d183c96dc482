"""The whole-output path (``trisect.message.whole``) against the engine.

``Parser.parse(text)`` takes the whole-output path where it decides and the engine elsewhere; the
replay harness (tests/test_cases.py) proves every stream equal to ``parse()`` on every case.
These tests make sure that proof is not vacuous (the path decides most cases, by count), compare
it with the engine on mutated outputs (seeded and Hypothesis-chosen mutations), and pin the rules
where a C decoder and the engine's scanner could differ (arguments as written, NaN, nesting,
duplicate keys, string-encoded arguments, markers inside strings).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trisect
import trisect.parser as parser_module
from support import cases
from trisect import MessageBuilder, Parser

CASES = [(d["key"], d) for d in cases.load_cases() if not d.get("ids_only")]


def _fixed_id(index: int) -> str:
    return f"call_{index}"


def _options(data: dict[str, Any]) -> dict[str, Any]:
    options = dict(data.get("options") or {})
    if data.get("tools") is not None:
        options["tools"] = data["tools"]
    options["id_factory"] = _fixed_id
    return options


def engine_parse(parser: Parser, text: str, **options: Any) -> trisect.Message:
    """The engine's whole result: an atomic stream fed the text at once (what parse() was before)."""
    stream = parser.stream(atomic_tool_calls=True, **options)
    builder = MessageBuilder()
    builder.add(stream.feed(text))
    builder.add(stream.finish())
    return builder.message()


class Decisions:
    """Counts the outputs the whole-output path decided (it returns a message, not ``None``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.decided = 0
        self.calls = 0
        self.last = False
        real = parser_module.parse_whole

        def counting(*args: Any, **kwargs: Any) -> trisect.Message | None:
            msg = real(*args, **kwargs)
            self.calls += 1
            self.last = msg is not None
            self.decided += self.last
            return msg

        monkeypatch.setattr(parser_module, "parse_whole", counting)


@pytest.fixture
def decisions(monkeypatch: pytest.MonkeyPatch) -> Decisions:
    return Decisions(monkeypatch)


def _parse_both(data: dict[str, Any], text: str, decisions: Decisions) -> tuple[trisect.Message, trisect.Message, bool]:
    parser = Parser(data.get("reasoning"), data.get("tools_format"))
    options = _options(data)
    try:
        whole = parser.parse(text, **options)
    except trisect.TrisectError as exc:
        with pytest.raises(type(exc)):
            engine_parse(parser, text, **options)
        return None, None, decisions.last  # type: ignore[return-value]
    return whole, engine_parse(parser, text, **options), decisions.last


def test_the_whole_path_decides_most_cases(decisions: Decisions) -> None:
    """Counted, so that it cannot silently fall back everywhere: every text case through
    ``parse()``, equal to the engine's result, and the share the whole path decided."""
    per_family: Counter[str] = Counter()
    decided_family: Counter[str] = Counter()
    for case_id, data in CASES:
        whole, engine, decided = _parse_both(data, data["output"], decisions)
        assert whole == engine, case_id
        family = case_id.split("/")[0]
        per_family[family] += 1
        decided_family[family] += decided
    assert decisions.calls == len(CASES)
    assert decisions.decided >= 0.85 * len(CASES), f"{decisions.decided} of {len(CASES)} cases decided"
    # Harmony's message headers are the engine's alone (documented in message/whole.py), and so
    # are outputs that end in an envelope region (inkling's cases all do) ...
    assert decided_family["openai"] == 0
    # ... every other family has cases the whole path decides, but the engine's alone: Muse's
    # message headers too, and K2 Horizon, whose unended reasoning is held for the fallback rule
    engine_only = {"openai", "muse", "muse_glimmer", "k2_horizon", "inkling"}
    assert [f for f in per_family if f not in engine_only and not decided_family[f]] == []


# ---------------------------------------------------------------------------- mutated outputs

_SNIPPETS = ['"', "{", "}", "[", "]", ",", ":", "\\", "\n", " ", "<", ">", "null", "NaN", "1e5", '"\\u00e9"', ";"]


def _mutate(rnd: random.Random, text: str, markers: list[str]) -> str:
    n = len(text)
    i = rnd.randint(0, n)
    kind = rnd.randrange(6)
    if kind == 0 and n:
        return text[:i] + text[i + rnd.randint(1, 6) :]
    if kind == 1 and markers:
        return text[:i] + rnd.choice(markers) + text[i:]
    if kind == 2:
        return text[:i] + rnd.choice(_SNIPPETS) + text[i:]
    if kind == 3 and n:
        j = rnd.randint(i, min(n, i + 40))
        return text[:j] + text[i:j] + text[j:]
    if kind == 4:
        return text[:i]
    return text[:i] + rnd.choice(_SNIPPETS) + text[i + 1 :]


def _markers(data: dict[str, Any]) -> list[str]:
    spec = Parser(data.get("reasoning"), data.get("tools_format")).spec
    return sorted({s for strings in spec.terminals.values() for s in strings})


WITH_CALLS = [(i, d) for i, d in CASES if d["expected"].get("tool_calls")]


def test_mutated_outputs_agree_with_the_engine(decisions: Decisions) -> None:
    """Seeded mutations of every case with calls (cut, marker inserted, JSON punctuation, a
    repeated slice): whatever the whole path decides equals the engine, and it still decides a
    good share of them (mutations that keep the output clean)."""
    rnd = random.Random(13)
    total = 0
    for case_id, data in WITH_CALLS:
        markers = _markers(data)
        for _ in range(6):
            text = _mutate(rnd, data["output"], markers)
            whole, engine, _decided = _parse_both(data, text, decisions)
            assert whole == engine, f"{case_id}: {text!r}"
            total += 1
    assert decisions.decided >= 0.5 * total, f"{decisions.decided} of {total} mutated outputs decided"
    assert decisions.decided <= 0.97 * total  # cuts reach the engine's rule for unfinished calls


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=st.sampled_from(WITH_CALLS),
    edits=st.lists(
        st.tuples(st.integers(0, 5), st.floats(0, 1), st.integers(0, 40), st.sampled_from(_SNIPPETS)), max_size=3
    ),
    marker=st.integers(0, 1000),
)
def test_hypothesis_mutations_agree_with_the_engine(
    decisions: Decisions, case: tuple[str, dict[str, Any]], edits: list[tuple[int, float, int, str]], marker: int
) -> None:
    case_id, data = case
    text = data["output"]
    markers = _markers(data)
    for kind, where, size, snippet in edits:
        i = int(where * len(text))
        if kind == 0:
            text = text[:i] + text[i + size :]
        elif kind == 1:
            text = text[:i] + markers[marker % len(markers)] + text[i:]
        elif kind == 2:
            text = text[:i] + snippet + text[i:]
        elif kind == 3:
            text = text[: i + size] + text[i : i + size] + text[i + size :]
        elif kind == 4:
            text = text[:i]
        else:
            text = text[:i] + snippet + text[i + 1 :]
    whole, engine, _decided = _parse_both(data, text, decisions)
    assert whole == engine, f"{case_id}: {text!r}"


# ---------------------------------------------------------------------------- rules pinned

TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}


def _hermes(body: str, **options: Any) -> tuple[trisect.Message, trisect.Message]:
    parser = Parser("qwen3", "hermes")
    text = f"<think>\nhm\n</think>\n\nOK<tool_call>\n{body}\n</tool_call>"
    options.setdefault("id_factory", _fixed_id)
    return parser.parse(text, **options), engine_parse(parser, text, **options)


def test_arguments_are_kept_exactly_as_written(decisions: Decisions) -> None:
    args = '{"b" : 1.50, "a": "\\u00e9 \\"q\\" </tool_call> <tool_call>", "c":[ 1,2e+3 ,null],"d":{} }'
    whole, engine = _hermes('{"name": "f", "arguments": ' + args + "}")
    assert decisions.last
    assert whole == engine
    assert whole.tool_calls[0].arguments == args
    assert whole.content == "OK"


@pytest.mark.parametrize(
    "body",
    [
        '{"name": "f", "arguments": {"x": NaN}}',  # not JSON (Python's extension): a malformed call
        '{"name": "f", "arguments": {"x": -Infinity}}',
        '{"name": "f", "arguments": "{\\"x\\": 1}"}',  # string-encoded: the codec decodes it
        '{"name": "f", "arguments": {"x": 1}, "arguments": {"y": 2}}',  # the first one counts
        '{"name": "f", "name": "g", "arguments": {}}',  # the first name counts
        '{"name": "f", "arguments": null}',  # null: {}
        '{"name": "f"}',  # no arguments: {}
        '{"arguments": {}, "name": "f", "id": "x"}',
        '{"name": "", "arguments": {}}',  # no name: not a call
        '{"name": 3, "arguments": {}}',
        '{"name": "f", "arguments": [1]}',
        '{"name": "f", "arguments": {"x": 1}} trailing',  # text after the arguments
        '{"name": "f", "arguments": {"x": 1},}',
        '{"name": "f", "arguments": {"x": "\x01"}}',  # a raw control character
        '{"name": "f", "arguments": {"x": ' + "[" * 3000 + "]" * 3000 + "}}",  # past the C decoder's depth
        '{"name": "f", "arguments": {"x": 01}}',  # the C decoder and the scanner stop at other places
        '{"name": "f", "arguments": {"x": 1',  # broken by the end marker
        '{"name": "f", "arguments": {"x": "</tool_call>"',
    ],
)
def test_json_edge_cases_agree_with_the_engine(decisions: Decisions, body: str) -> None:
    """Where the C decoder refuses the JSON, the format's codec reads that call (its exact stop
    and rules); the output is still decided without the engine."""
    whole, engine = _hermes(body)
    assert whole == engine
    assert decisions.last


def test_outputs_cut_off_inside_a_call_go_to_the_engine(decisions: Decisions) -> None:
    parser = Parser("qwen3", "hermes")
    cut = ('<think>a</think>b<tool_call>{"name": "f", "arg', '<tool_call>{"name": "f", "arguments": {"x": "</t')
    for text in cut:
        whole = parser.parse(text, id_factory=_fixed_id)
        assert not decisions.last
        assert whole == engine_parse(parser, text, id_factory=_fixed_id)
    complete = '<think>a</think>b<tool_call>{"name": "f"}'  # complete JSON, no end marker: a call
    assert len(parser.parse(complete).tool_calls) == 1
    assert decisions.last


def test_strict_malformed_output_raises_through_the_engine(decisions: Decisions) -> None:
    parser = Parser("qwen3", "hermes")
    with pytest.raises(trisect.MalformedOutputError):
        parser.parse('<tool_call>{"name": "f", "arguments": {"x": }}</tool_call>', strict=True)
    assert decisions.calls == 1 and not decisions.last


def test_unknown_tool_names_are_content(decisions: Decisions) -> None:
    parser = Parser(None, "llama3_json")
    text = '{"name": "nope", "parameters": {}}'
    whole = parser.parse(text, tools=[TOOL], id_factory=_fixed_id)
    assert decisions.last
    assert whole == engine_parse(parser, text, tools=[TOOL], id_factory=_fixed_id)
    assert whole.content == text  # the family validates names: not a call


def test_request_filters_apply_on_the_whole_path(decisions: Decisions) -> None:
    body = '{"name": "f", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}'
    for options in ({"include_reasoning": False}, {"parallel_tool_calls": False}):
        whole, engine = _hermes(body, **options)
        assert decisions.last
        assert whole == engine
    assert whole.reasoning == "hm" and len(whole.tool_calls) == 1


def test_constrained_outputs_take_the_whole_path(decisions: Decisions) -> None:
    parser = Parser("qwen3", "hermes")
    required = '[{"name": "f", "parameters": {"x": 1}}, {"name": "f", "arguments": {}}]'
    named = '{"x": [1, 2]}'
    for text, choice in ((required, "required"), (named, {"type": "function", "function": {"name": "f"}})):
        options = {"tools": [TOOL], "tool_choice": choice, "id_factory": _fixed_id}
        options["chat_template_kwargs"] = {"enable_thinking": False}
        whole = parser.parse(text, **options)
        assert decisions.last
        assert whole == engine_parse(parser, text, **options)
    assert whole.tool_calls[0].arguments == named


def test_random_ids_follow_the_engines_rule(decisions: Decisions) -> None:
    whole, _engine = _hermes('{"name": "f", "arguments": {}}', id_factory=None)
    assert decisions.last
    call_id = whole.tool_calls[0].id
    assert call_id.startswith("call_") and len(call_id) == 29


def test_token_ids_never_take_the_whole_path(decisions: Decisions) -> None:
    parser = Parser("qwen3", "hermes")
    parser.parse("<think>a</think>b", token_ids=[1, 2, 3])
    assert decisions.calls == 0
