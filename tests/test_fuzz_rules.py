"""The rules for output that does not read, as the fuzzer found their classes (docs/rules.md).

Each test states one rule and holds every format it applies to: a call whose body does not read
is not a call (never a call with fewer arguments); what a returned call carries loads with the
standard library's ``json.loads``; attribute scanning is linear; ids that are not token ids and
text that no token spells are a ``StreamError`` everywhere ids are taken.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from support import tokenizers as tk
from support.cases import load_cases
from trisect import MalformedOutputError, Parser, StreamError
from trisect.codecs import JsonEnvelope, JsonEnvelopeCodec, XmlParams
from trisect.testing import Case, check_nothing_lost, check_output

SEARCH = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "path": {"type": "string"},
                    "n": {"type": "integer"},
                    "items": {"type": "array"},
                },
            },
        },
    }
]


def _no_call(parser: Parser, text: str, **options: Any) -> None:
    """``text`` holds no call: all of it is content, ``strict=True`` raises, and the contract holds."""
    msg = parser.parse(text, tools=SEARCH, **options)
    assert msg.tool_calls == () and msg.content == text.strip()
    with pytest.raises(MalformedOutputError):
        parser.parse(text, tools=SEARCH, strict=True, **options)
    check_output(parser, text, tools=SEARCH, cuts=2, **options)


# ---------------------------------------------------------------------- JSON envelopes


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("hermes", '<tool_call>\n{"name": "search", "argumentz": {"query": "cats"}}\n</tool_call>'),
        ("mistral", '[TOOL_CALLS][{"name": "search", "argumentz": {"query": "cats"}}]'),
        ("xlam", '[{"name": "search", "argumentz": {"query": "cats"}}]'),
        ("nemotron_json", '<TOOLCALL>[{"name": "search", "argumentz": {"query": "cats"}}]</TOOLCALL>'),
        ("hermes", '<tool_call>\n{"name": "search", "arguments": {"query": "cats"}, "name": "x"}\n</tool_call>'),
        ("hermes", '<tool_call>\n{"name": "search", "arguments": {}, "parameters": {"query": "cats"}}\n</tool_call>'),
    ],
)
def test_a_json_call_with_a_key_its_family_does_not_write_is_no_call(fmt: str, text: str) -> None:
    """A misspelt, second or unknown key: the body does not read (its text would be lost)."""
    _no_call(Parser(None, fmt), text)


def test_an_openai_shaped_call_keeps_its_id_and_type_keys() -> None:
    """``id`` and ``type`` are the keys OpenAI-shaped calls carry: markup, not a broken body."""
    text = (
        '<tool_call>\n{"id": "c1", "type": "function", "name": "search", "arguments": {"query": "cats"}}\n</tool_call>'
    )
    msg = Parser(None, "hermes").parse(text, tools=SEARCH)
    assert [(c.name, json.loads(c.arguments)) for c in msg.tool_calls] == [("search", {"query": "cats"})]


def _envelope_formats() -> list[str]:
    from trisect.formats import all_formats

    return sorted(
        {
            s.name
            for s in all_formats()
            if s.kind == "tools" and (s.codec is JsonEnvelopeCodec or isinstance(s.codec, JsonEnvelope))
        }
    )


def _complete_cases(names: set[str]) -> list[dict[str, Any]]:
    """One complete case with calls per format (text mode), from tests/cases/."""
    picked: dict[str, dict[str, Any]] = {}
    for d in load_cases():
        fmt = d.get("tools_format")
        if fmt in names and fmt not in picked and d["expected"].get("tool_calls") and not d.get("truncated"):
            if not d.get("malformed") and not d.get("ids_only"):
                picked[fmt] = d
    return [picked[k] for k in sorted(picked)]


def _never_fewer_arguments(d: dict[str, Any], text: str) -> None:
    """``text`` (a case's output, broken) parses to calls that are each one of the case's calls
    whole, never one with fewer arguments; nothing of it is lost."""
    parser = Parser(d.get("reasoning"), d["tools_format"])
    options = dict(d.get("options") or {})
    msg = parser.parse(text, tools=d.get("tools"), **options)
    want = [(c["name"], c.get("arguments", {})) for c in d["expected"]["tool_calls"]]
    for call in msg.tool_calls:
        args = json.loads(call.arguments)
        same = [w for n, w in want if n == call.name]
        assert any(set(args) >= set(w) for w in same), f"{call.name}({args}) lost arguments of {same}"
    case = Case(id=d["id"], output=text, expected=None, reasoning=d.get("reasoning"), tools_format=d["tools_format"])
    case.tools, case.options = d.get("tools"), options
    check_nothing_lost(case)


@pytest.mark.parametrize("d", _complete_cases(set(_envelope_formats())), ids=lambda d: d["tools_format"])
def test_every_json_envelope_family_loses_no_argument_to_a_misspelt_key(d: dict[str, Any]) -> None:
    for key in ('"arguments"', '"parameters"'):
        if key in d["output"]:
            _never_fewer_arguments(d, d["output"].replace(key, key[:-1] + 'z"', 1))


# ---------------------------------------------------------------------- XML parameters


@pytest.mark.parametrize(
    ("reasoning", "fmt", "text"),
    [
        (
            "qwen3",
            "qwen3_coder",
            "<tool_call>\n<function=search>\n<parameteX=path>\nx\n</parameter>\n"
            "<parameter=query>\ncats\n</parameter>\n</function>\n</tool_call>",
        ),
        (None, "glm45", "<tool_call>search\n<arg_key>query</arg_key>\n<Xarg_value>cats</arg_value>\n</tool_call>"),
        (None, "glm47", "<tool_call>search<arg_key>query</arg_key><Xarg_value>cats</arg_value></tool_call>"),
        (
            None,
            "hy_v4",
            "<tool_calls><tool_call>search<arg_key>path</�arg_value>x</arg_value>"
            "<arg_key>query</arg_key><arg_value>cats</arg_value></tool_call></tool_calls>",
        ),
    ],
)
def test_a_broken_parameter_marker_makes_no_call(reasoning: str | None, fmt: str, text: str) -> None:
    """Text between parameters that is not whitespace, a key never ended: the body does not read."""
    _no_call(Parser(reasoning, fmt), text)


def _xml_formats() -> list[str]:
    from trisect.formats import all_formats

    return sorted({s.name for s in all_formats() if s.kind == "tools" and isinstance(s.codec, XmlParams)})


def _inner_markers(fmt: str) -> list[str]:
    from trisect.formats import tool_format

    spec = tool_format(fmt)
    codec = spec.codec
    assert isinstance(codec, XmlParams)
    names = [codec.param_start, codec.param_end, codec.key_marker, codec.value_start]
    return [spec.terminals[t][0] for t in names if t is not None]


@pytest.mark.parametrize("d", _complete_cases(set(_xml_formats())), ids=lambda d: d["tools_format"])
def test_every_xml_parameter_family_loses_no_argument_to_a_broken_marker(d: dict[str, Any]) -> None:
    """Every parameter marker of the family, broken once (a character replaced, one dropped)
    where it first occurs: no call comes back with fewer arguments, nothing is lost."""
    text = d["output"]
    for marker in _inner_markers(d["tools_format"]):
        at = text.find(marker)
        if at < 0 or len(marker) < 3:
            continue
        mid = at + len(marker) // 2
        for broken in (text[:mid] + "X" + text[mid + 1 :], text[:mid] + text[mid + 1 :]):
            _never_fewer_arguments(d, broken)


# ---------------------------------------------------------------------- a call's own markup


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        (  # text between two block openers
            "deepseek_v4",
            '<｜DSML｜tool_calls>junk<｜DSML｜tool_calls>\n<｜DSML｜invoke name="search">\n'
            '<｜DSML｜parameter name="query" string="true">cats</｜DSML｜parameter>\n'
            "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        ),
        (  # an invoke whose name never came
            "deepseek_v4",
            '<｜DSML｜tool_calls>\n<｜DSML｜invoke<｜DSML｜parameter name="path" string="true">x</｜DSML｜parameter>\n'
            '</｜DSML｜invoke>\n<｜DSML｜invoke name="search">\n'
            '<｜DSML｜parameter name="query" string="true">cats</｜DSML｜parameter>\n'
            "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        ),
        (  # a broken separator after the call type
            "step3",
            '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜t/ol_sep｜><steptml:invoke name="search">'
            '<steptml:parameter name="query">cats</steptml:parameter></steptml:invoke>'
            "<｜tool_call_end｜><｜tool_calls_end｜>",
        ),
        (  # a call type that is not "function"
            "deepseek_v3",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>funxion<｜tool▁sep｜>search\n```json\n"
            '{"query": "cats"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        ),
    ],
)
def test_text_inside_a_calls_markup_makes_no_call(fmt: str, text: str) -> None:
    """Text that no name or argument carries, read in a call's markup, is not dropped: the
    call does not read, so its text (the block's, markers included) is content."""
    _no_call(Parser(None, fmt), text)


# ---------------------------------------------------------------------- json.loads


BIG = "9" * 4301  # one digit past Python's default integer-string limit
DEEP = "[" * 600 + "]" * 600  # past trisect.engine.jsonscan.MAX_DEPTH


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("hermes", '<tool_call>\n{"name": "search", "arguments": {"n": ' + BIG + "}}\n</tool_call>"),
        ("hermes", '<tool_call>\n{"name": "search", "arguments": {"items": ' + DEEP + "}}\n</tool_call>"),
        ("hermes", '<tool_call>\n{"name": "search", "arguments": "{\\"n\\": ' + BIG + '}"}\n</tool_call>'),
        (
            "kimi_k2",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>"
            '{"n": ' + BIG + "}<|tool_call_end|><|tool_calls_section_end|>",
        ),
        ("pythonic", "[search(n=" + BIG + ")]"),
        ("pythonic", "[search(items=" + DEEP + ")]"),
    ],
)
def test_a_literal_json_loads_refuses_makes_the_call_malformed(fmt: str, text: str) -> None:
    """The model wrote JSON (or a Python literal) the standard library does not load: the call
    does not read; its text is content (streamed arguments cannot be retyped, only appended)."""
    _no_call(Parser(None, fmt), text)


@pytest.mark.parametrize(("key", "value"), [("n", BIG), ("items", DEEP), ("items", "[" + BIG + "]")])
def test_a_typed_raw_value_json_loads_refuses_stays_its_text(key: str, value: str) -> None:
    """A raw parameter value the schema would type, but which json.loads would refuse as typed,
    is kept as what it is: its text, a string."""
    parser = Parser(None, "qwen3_coder")
    text = f"<tool_call>\n<function=search>\n<parameter={key}>\n{value}\n</parameter>\n</function>\n</tool_call>"
    msg = parser.parse(text, tools=SEARCH)
    assert [json.loads(c.arguments) for c in msg.tool_calls] == [{key: value}]
    check_output(parser, text, tools=SEARCH, cuts=2)


# ---------------------------------------------------------------------- attributes


_QUADRATIC_BEFORE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_CPU, (60, 60))
from trisect.formats.deepseek_dsml import parse_attributes
from trisect.formats.kimi_k3 import attributes
from trisect.formats._userformat import attributes as user_attributes
for text in ("a" * 400_000, "a-" * 200_000, 'x="1" ' + "_" * 400_000, "1a" * 200_000):
    parse_attributes(text), attributes(text), user_attributes(text)
print("linear")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_CPU is POSIX")
def test_attribute_scanning_is_linear_in_the_header() -> None:
    """A 400k-character attribute name: linear scanning takes milliseconds; the backtracking
    regex it replaces took ~8.5 s at 40k and grew x13 per x4, hours here, so the child runs out
    of its 60 CPU-seconds (SIGXCPU) instead of printing."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_QUADRATIC_BEFORE)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0 and done.stdout.strip() == "linear", done.stderr[-500:]


def test_attributes_are_read_as_before() -> None:
    from trisect.formats.deepseek_dsml import parse_attributes
    from trisect.formats.kimi_k3 import attributes

    assert parse_attributes(' name="k" string="false"')[0] == "k"
    assert parse_attributes(" name='k' string=true")[1] == ("string",)
    assert attributes('call tool="py&quot;x" index="1" key=\'no\'') == {"tool": 'py"x', "index": "1"}


# ---------------------------------------------------------------------- ids


BAD_IDS = [-1, 10**9, 2**64, 1.5, "12", None, True]


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
@pytest.mark.parametrize("entry", ["is_reasoning_end", "content_token_ids", "count_reasoning_tokens", "tracker"])
@pytest.mark.parametrize("tok", ["qwen3", "deepseek_v3", "glm"])
def test_the_token_view_refuses_ids_that_are_not_token_ids(tok: str, entry: str, bad: object) -> None:
    """As parse() and feed() do: a StreamError naming the id and its position, never a count."""
    reasoning = {"qwen3": "qwen3", "deepseek_v3": "deepseek_r1", "glm": "glm45"}[tok]
    parser = Parser(reasoning, None, tokenizer=tk.load(tok))
    ids = tk.encode(tok, "<think>plan</think>answer") + [bad]
    with pytest.raises(StreamError, match=r"position \d+"):
        if entry == "tracker":
            parser.reasoning_tracker().feed(ids)  # type: ignore[arg-type]
        else:
            getattr(parser, entry)(ids)
    with pytest.raises(StreamError):
        parser.parse(None, token_ids=ids)  # type: ignore[arg-type]


@pytest.mark.parametrize("tok", ["qwen3", "deepseek_v3"])
def test_a_lone_surrogate_in_text_given_with_ids_is_a_stream_error(tok: str) -> None:
    """No token spells a lone surrogate: the text is not what its ids say."""
    parser = Parser("qwen3", "hermes", tokenizer=tk.load(tok))
    ids = tk.encode(tok, "<think>a</think>hello")
    with pytest.raises(StreamError, match="surrogate"):
        parser.parse("<think>a</think>hel\ud800lo", token_ids=ids)
    stream = parser.stream()
    with pytest.raises(StreamError, match="surrogate"):
        stream.feed("\udfff", ids[:1])


def test_text_alone_may_hold_a_lone_surrogate() -> None:
    """Without ids there is nothing it disagrees with: it is text, as written."""
    text = "hel\ud800lo"
    assert Parser(None, "hermes").parse(text).content == text
