"""Whole outputs (``trisect.engine.whole``): the machine over the complete text in one pass.

``Parser.parse(text)`` runs the stream's own machine over the whole text (``whole_events``); the
replay harness (tests/test_cases.py) proves every stream equal to ``parse()`` on every case. These
tests check that every text goes that way, compare it with a stream fed the text at once on
mutated outputs (seeded and Hypothesis-chosen), pin where the C decoder reads a JSON call and
where the codec's own scanner does (arguments as written, NaN, nesting, duplicate keys,
string-encoded arguments, markers inside strings), check the marker finder against the compiled
patterns, and bound the memory a whole parse takes (``tracemalloc``: no timing).
"""

from __future__ import annotations

import json
import random
import sys
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trisect
import trisect.codecs.json_call as json_call
import trisect.parser as parser_module
from support.cases import load_cases
from trisect import MessageBuilder, Parser
from trisect.codecs.base import ESCAPE_CHUNK
from trisect.engine.whole import WholeFinder

CASES = [(c["key"], c) for c in load_cases() if not c.get("ids_only")]


def _fixed_id(index: int) -> str:
    return f"call_{index}"


def _options(data: dict[str, Any]) -> dict[str, Any]:
    options = dict(data.get("options") or {})
    if data.get("tools") is not None:
        options["tools"] = data["tools"]
    options["id_factory"] = _fixed_id
    return options


def engine_parse(parser: Parser, text: str, **options: Any) -> trisect.Message:
    """A stream's whole result: an atomic stream fed the text at once, then finished."""
    stream = parser.stream(atomic_tool_calls=True, **options)
    builder = MessageBuilder()
    builder.add(stream.feed(text))
    builder.add(stream.finish())
    return builder.message()


class Counts:
    """How many outputs went the whole way, and how many JSON calls the C decoder read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.whole = 0
        self.c_reads = 0
        self.c_refused = 0
        real_whole, real_envelope, real_object = (
            parser_module.whole_events,
            json_call.read_envelope,
            json_call.read_object,
        )

        def whole(*args: Any, **kwargs: Any) -> Any:
            self.whole += 1
            return real_whole(*args, **kwargs)

        def counted(real: Any) -> Any:
            def read(*args: Any) -> Any:
                out = real(*args)
                self.c_reads += out is not None
                self.c_refused += out is None
                return out

            return read

        monkeypatch.setattr(parser_module, "whole_events", whole)
        monkeypatch.setattr(json_call, "read_envelope", counted(real_envelope))
        monkeypatch.setattr(json_call, "read_object", counted(real_object))


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    return Counts(monkeypatch)


def _parse_both(data: dict[str, Any], text: str) -> tuple[trisect.Message | None, trisect.Message | None]:
    parser = Parser(data.get("reasoning"), data.get("tools_format"))
    options = _options(data)
    try:
        whole = parser.parse(text, **options)
    except trisect.TrisectError as exc:
        with pytest.raises(type(exc)):
            engine_parse(parser, text, **options)
        return None, None
    return whole, engine_parse(parser, text, **options)


def test_every_text_case_is_read_whole(counts: Counts) -> None:
    """Every text case through ``parse()``: the whole pass, equal to a stream fed it at once, and
    the C decoder reads most JSON calls (counted, so the fast path is not silently off)."""
    for case_id, data in CASES:
        whole, engine = _parse_both(data, data["output"])
        assert whole == engine, case_id
    assert counts.whole == len(CASES)
    assert counts.c_reads >= 2 * counts.c_refused, (counts.c_reads, counts.c_refused)


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


def test_mutated_outputs_agree_with_a_stream() -> None:
    """Seeded mutations of every case with calls (cut, marker inserted, JSON punctuation, a
    repeated slice): the whole pass equals a stream fed the same text."""
    rnd = random.Random(13)
    for case_id, data in WITH_CALLS:
        markers = _markers(data)
        for _ in range(6):
            text = _mutate(rnd, data["output"], markers)
            whole, engine = _parse_both(data, text)
            assert whole == engine, f"{case_id}: {text!r}"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=st.sampled_from(WITH_CALLS),
    edits=st.lists(
        st.tuples(st.integers(0, 5), st.floats(0, 1), st.integers(0, 40), st.sampled_from(_SNIPPETS)), max_size=3
    ),
    marker=st.integers(0, 1000),
)
def test_hypothesis_mutations_agree_with_a_stream(
    case: tuple[str, dict[str, Any]], edits: list[tuple[int, float, int, str]], marker: int
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
    whole, engine = _parse_both(data, text)
    assert whole == engine, f"{case_id}: {text!r}"


# ---------------------------------------------------------------------------- the C decoder

TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}


def _hermes(body: str, **options: Any) -> tuple[trisect.Message, trisect.Message]:
    parser = Parser("qwen3", "hermes")
    text = f"<think>\nhm\n</think>\n\nOK<tool_call>\n{body}\n</tool_call>"
    options.setdefault("id_factory", _fixed_id)
    return parser.parse(text, **options), engine_parse(parser, text, **options)


def test_arguments_are_kept_exactly_as_written(counts: Counts) -> None:
    args = '{"b" : 1.50, "a": "\\u00e9 \\"q\\" </tool_call> <tool_call>", "c":[ 1,2e+3 ,null],"d":{} }'
    whole, engine = _hermes('{"name": "f", "arguments": ' + args + "}")
    assert (counts.c_reads, counts.c_refused) == (1, 0)
    assert whole == engine
    assert whole.tool_calls[0].arguments == args
    assert whole.content == "OK"


@pytest.mark.parametrize(
    ("body", "c_reads"),
    [
        ('{"name": "f", "arguments": null}', True),  # null: {}
        ('{"id": "x", "name": "f", "arguments": {}}', False),  # hermes has no id key
        ('{"arguments": {"x": 1}, "name": "f"}', True),
        ('{"name": "f", "arguments": {"x": NaN}}', False),  # not JSON (Python's extension): a malformed call
        ('{"name": "f", "arguments": {"x": -Infinity}}', False),
        ('{"name": "f", "arguments": "{\\"x\\": 1}"}', False),  # string-encoded: the codec decodes it
        ('{"name": "f", "arguments": {"x": 1}, "arguments": {"y": 2}}', False),  # a key twice: the codec's rule
        ('{"name": "f", "name": "g", "arguments": {}}', False),
        ('{"name": "f"}', False),  # no arguments: the codec's rule
        ('{"name": "f", "arguments": {}, "extra": 1}', False),  # another key: the codec's rule
        ('{"name": "", "arguments": {}}', False),  # no name: not a call
        ('{"name": 3, "arguments": {}}', False),
        ('{"name": "f", "arguments": [1]}', False),
        ('{"name": "f", "arguments": {"x": 1}} trailing', True),  # text after the arguments: the machine's rule
        ('{"name": "f", "arguments": {"x": 1},}', False),
        ('{"name": "f", "arguments": {"x": "\x01"}}', False),  # a raw control character
        ('{"name": "f", "arguments": {"x": ' + "[" * 3000 + "]" * 3000 + "}}", False),  # past the C depth
        ('{"name": "f", "arguments": {"x": 01}}', False),  # the C decoder and the scanner stop at other places
        ('{"name": "f", "arguments": {"x": ' + "9" * 5000 + "}}", False),  # past Python's digit limit
        ('{"name": "f", "arguments": {"x": 1', False),  # broken by the end marker
        ('{"name": "f", "arguments": {"x": "</tool_call>"', False),
    ],
)
def test_the_c_decoder_reads_plain_calls_and_the_codec_the_rest(counts: Counts, body: str, c_reads: bool) -> None:
    """Where the C decoder does not read the JSON, the format's codec reads that call (its
    exact stop and rules): the result equals a stream's either way."""
    whole, engine = _hermes(body)
    assert whole == engine
    assert (counts.c_reads, counts.c_refused) == ((1, 0) if c_reads else (0, 1))


def test_outputs_cut_off_inside_a_call_are_unfinished_calls() -> None:
    parser = Parser("qwen3", "hermes")
    cut = ('<think>a</think>b<tool_call>{"name": "f", "arg', '<tool_call>{"name": "f", "arguments": {"x": "</t')
    for text in cut:
        whole = parser.parse(text, id_factory=_fixed_id)
        assert whole.unfinished_call is not None and not whole.tool_calls
        assert whole == engine_parse(parser, text, id_factory=_fixed_id)
    complete = '<think>a</think>b<tool_call>{"name": "f"}'  # complete JSON, no end marker: a call
    assert len(parser.parse(complete).tool_calls) == 1


def test_strict_malformed_output_raises() -> None:
    parser = Parser("qwen3", "hermes")
    with pytest.raises(trisect.MalformedOutputError):
        parser.parse('<tool_call>{"name": "f", "arguments": {"x": }}</tool_call>', strict=True)


def test_unknown_tool_names_are_content() -> None:
    parser = Parser(None, "llama3_json")
    text = '{"name": "nope", "parameters": {}}'
    whole = parser.parse(text, tools=[TOOL], id_factory=_fixed_id)
    assert whole == engine_parse(parser, text, tools=[TOOL], id_factory=_fixed_id)
    assert whole.content == text  # the family validates names: not a call


def test_request_filters_apply_to_a_whole_output() -> None:
    body = '{"name": "f", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}'
    for options in ({"include_reasoning": False}, {"parallel_tool_calls": False}):
        whole, engine = _hermes(body, **options)
        assert whole == engine
    assert whole.reasoning == "hm" and len(whole.tool_calls) == 1


def test_constrained_outputs_are_read_whole(counts: Counts) -> None:
    parser = Parser("qwen3", "hermes")
    required = '[{"name": "f", "parameters": {"x": 1}}, {"name": "f", "arguments": {}}]'
    named = '{"x": [1, 2]}'
    for text, choice in ((required, "required"), (named, {"type": "function", "function": {"name": "f"}})):
        options = {"tools": [TOOL], "tool_choice": choice, "id_factory": _fixed_id}
        options["chat_template_kwargs"] = {"enable_thinking": False}
        whole = parser.parse(text, **options)
        assert whole == engine_parse(parser, text, **options)
    assert whole.tool_calls[0].arguments == named
    assert counts.c_reads == 3


def test_random_ids_follow_the_engines_rule() -> None:
    whole, _engine = _hermes('{"name": "f", "arguments": {}}', id_factory=None)
    call_id = whole.tool_calls[0].id
    assert call_id.startswith("call_") and len(call_id) == 29


def test_token_ids_are_fed_as_a_stream(counts: Counts) -> None:
    parser = Parser("qwen3", "hermes")
    parser.parse("<think>a</think>b", token_ids=[1, 2, 3])
    assert counts.whole == 0


# ---------------------------------------------------------------------------- the marker finder


def test_the_finder_finds_what_the_pattern_finds() -> None:
    """Per state whose markers the finder reads (``StateTable.find_strings``), on text made of
    its markers, their pieces and other characters: the same earliest, longest marker as the
    state's compiled pattern, at every scan position."""
    rnd = random.Random(5)
    checked = 0
    for spec in trisect.formats():
        compiled = Parser(*((spec.name, None) if spec.kind == "reasoning" else (None, spec.name))).spec
        for state in trisect.engine.compile_format(compiled).states.values():
            strings = state.find_strings
            if strings is None:
                continue
            alphabet = [*strings, *(s[: len(s) // 2] for s in strings), "a", " ", "\n", "<", "{"]
            text = "".join(rnd.choice(alphabet) for _ in range(200))
            finder = WholeFinder()
            pattern = state.text_lex.pattern
            assert pattern is not None
            for scan in range(len(text) + 1):
                m = pattern.search(text, scan)
                assert finder(strings, text, scan, len(text)) == ((m.start(), m.group()) if m else (-1, "")), state.name
            checked += 1
    assert checked >= 20
    finder = WholeFinder()  # a second text (what a stream held, read at its end) is searched afresh
    assert finder(("\n", "</x>"), "a\nb</x>", 0, 7) == (1, "\n")
    assert finder(("\n", "</x>"), "\n", 0, 1) == (0, "\n")


# ---------------------------------------------------------------------------- memory

_MB = 1 << 20
_LINE = "a line of plain code text, and 42\n"
_CODE = 'print("a \\"quoted\\" line\\tand a tab")\n'


def _peak(parser: Parser, text: str, **options: Any) -> tuple[float, trisect.Message]:
    """Peak memory a parse allocates, over the output's size (``tracemalloc``: bytes, not time)."""
    parser.parse("warm up", **options)
    tracemalloc.start()
    try:
        msg = parser.parse(text, **options)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / len(text.encode("utf-8")), msg


_WRITE = {
    "type": "function",
    "function": {"name": "write", "parameters": {"type": "object", "properties": {"content": {"type": "string"}}}},
}


@pytest.mark.parametrize("body", [_LINE, _CODE], ids=["plain", "escaped"])
@pytest.mark.parametrize("tools", ["hermes", "qwen3_coder"])
def test_a_large_argument_costs_at_most_twice_the_output(tools: str, body: str) -> None:
    """A 4 MB argument: the parse allocates about one copy of it at its peak (the arguments, grown
    in place as raw text is escaped a chunk at a time), not a copy per step."""
    value = body * (4 * _MB // len(body))
    if tools == "hermes":
        call = "<tool_call>\n" + json.dumps({"name": "write", "arguments": {"content": value}}) + "\n</tool_call>"
    else:
        call = f"<tool_call>\n<function=write>\n<parameter=content>\n{value}\n</parameter>\n</function>\n</tool_call>"
    ratio, msg = _peak(Parser("qwen3", tools), "<think>\nok\n</think>\n\n" + call, tools=[_WRITE])
    assert json.loads(msg.tool_calls[0].arguments) == {"content": value}
    assert ratio <= 1.5, f"{ratio:.2f}x the output"


@pytest.mark.parametrize("field", ["reasoning", "content"])
def test_a_large_field_costs_at_most_the_output(field: str) -> None:
    """4 MB of reasoning or content, with the whitespace templates put around it: one copy."""
    text = _LINE * (4 * _MB // len(_LINE))
    output = f"<think>\n\n{text}\n\n</think>\n\nok" if field == "reasoning" else f"<think>\nok\n</think>\n\n{text}\n\n"
    ratio, msg = _peak(Parser("qwen3", "hermes"), output)
    assert getattr(msg, field) == text.strip()
    assert ratio <= 1.1, f"{ratio:.2f}x the output"


def _inflatable() -> list[Any]:
    """Per tools format (and reasoning format), its first case whose first call has a plain
    word as a string argument that the output writes once: that word can become a long value."""
    chosen: dict[tuple[Any, Any], Any] = {}
    for case in load_cases():
        fmt = (case["reasoning"], case["tools_format"])
        calls = (case.get("expected") or {}).get("tool_calls") or []
        if fmt in chosen or not calls or case.get("token_ids") or case.get("truncated") or case.get("malformed"):
            continue
        words = [v for v in calls[0]["arguments"].values() if isinstance(v, str) and v.isalpha() and len(v) >= 4]
        words = [w for w in words if case["output"].count(w) == 1]
        if words:
            chosen[fmt] = pytest.param(case, words[0], id=case["key"])
    return list(chosen.values())


# what a parse allocates whatever the output's size: tables and small objects, and one chunk of a
# value being escaped (its slice and the escaped copy)
_SLACK = (64 << 10) + 2 * ESCAPE_CHUNK


@pytest.mark.parametrize(("case", "word"), _inflatable())
def test_a_whole_parse_costs_at_most_twice_the_output(case: dict[str, Any], word: str) -> None:
    """Every format's whole parse of an output with a 2 MB string argument allocates at most
    twice the output (Python's own size of it) at its peak: the arguments it returns, and at
    most one more copy on the way (a call's raw text kept while its list may still fail, a
    value held whole until its type is known), never a copy per step."""
    value = " ".join(["plain words and 42"] * (2_000_000 // 19))
    text = case["output"].replace(word, value)
    options = {"tools": case["tools"]} if case.get("tools") else {}
    options.update(case.get("options") or {})
    parser = Parser(case["reasoning"], case["tools_format"])
    size = sys.getsizeof(text)
    ratio, msg = _peak(parser, text, **options)
    peak = ratio * len(text.encode("utf-8"))
    assert msg.tool_calls and value in msg.tool_calls[0].arguments
    assert peak <= 2 * size + _SLACK, f"{peak / size:.2f}x the output"


def test_escapes_are_what_json_writes() -> None:
    """A raw string value becomes the inside of the JSON string ``json.dumps`` writes, also
    where it is escaped a chunk at a time, and as it is where nothing needs escaping."""
    parser = Parser("qwen3", "qwen3_coder")
    for value in (('é"\\\x01\t</x>' * (ESCAPE_CHUNK // 5 + 3))[: 3 * ESCAPE_CHUNK + 7], "plain text é"):
        call = f"<tool_call>\n<function=write>\n<parameter=content>\n{value}\n</parameter>\n</function>\n</tool_call>"
        msg = parser.parse(call, tools=[_WRITE])
        assert msg.tool_calls[0].arguments == json.dumps({"content": value}, ensure_ascii=False)
