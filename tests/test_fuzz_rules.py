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
from trisect.engine.vocab import EACH_BYTE
from trisect.testing import (
    Case,
    check_chunks,
    check_ids_agree,
    check_nothing_lost,
    check_output,
    engine_deltas,
    text_ahead,
)

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
    # the header after its opener (`<|open|>call`): attributes and whitespace only
    assert attributes(' tool="py&quot;x" index="1" key=\'no\'') == {"tool": 'py"x', "index": "1"}
    # text that is no attribute (fuzzed `tool="g"s`, `name=d\nb`) reads nothing: the call is malformed
    assert attributes('tool="g"s') == {}
    assert parse_attributes("name=d\nb") == ("", None)
    assert parse_attributes('"city"')[0] == "city"  # no attribute at all: a quoted key


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


# ---------------------------------------------------------------------- where a chunk ends decides nothing


WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
        },
    }
]


@pytest.mark.parametrize(
    ("fmt", "text", "value"),
    [
        ("functiongemma", "<start_function_call>call:get_weather{location:<Paris}<end_function_call>", "<Paris"),
        ("gemma4", "<|tool_call>call:get_weather{location:<Paris>}<tool_call|>", "<Paris>"),
        ("gemma4", '<|tool_call>call:get_weather{<b:<|"|>Paris<|"|>}<tool_call|>', None),
    ],
)
def test_a_bare_value_that_starts_like_a_delimiter_reads_alike_at_every_cut(
    fmt: str, text: str, value: str | None
) -> None:
    """A "<" where a Gemma string may begin is held until it is known; when it does not begin
    the delimiter, it begins a bare literal (or key), as in the whole text: a stream cut right
    after the "<" gives the same call, not content."""
    parser = Parser(None, fmt)
    msg = parser.parse(text, tools=WEATHER)
    if value is not None:
        assert json.loads(msg.tool_calls[0].arguments) == {"location": value}
    check_output(parser, text, tools=WEATHER, cuts=4)


@pytest.mark.parametrize(
    ("fmt", "text", "content"),
    [
        # arguments written as a JSON string that is no object: the call stops at its "e"
        (
            "llama3_json",
            '{"name":"search","parameters":"e<|python_tag|>{"name":"search","parameters":{}}',
            '{"name":"search","parameters":"e',
        ),
        (
            "xlam",
            '[{"name":"search","arguments":"x [{"name":"search","arguments":{}}]',
            '[{"name":"search","arguments":"x',
        ),
        # a raw newline in a key's string: the call stops before it, in a streamed call too
        # (hermes: a call cut off before its closer, whose text is the unfinished call)
        ("hermes", '<tool_call>{"name":"search","\n', None),
        ("gigachat3", 'function call<|role_sep|>{"name":"search","\n', 'function call<|role_sep|>{"name":"search","'),
        (
            "granite-20b-fc",
            '<function_call>{"name":"search","arguments":", ',
            '<function_call>{"name":"search","arguments":",',
        ),
    ],
)
def test_a_call_that_breaks_stops_at_the_same_character_at_every_cut(fmt: str, text: str, content: str | None) -> None:
    """A JSON call that does not read stops at the character that broke it, however the
    output was cut (per character, in a streamed call's string fast path, whole); the rest is
    read again outside the call, so a call after it is the same call at every cut."""
    parser = Parser(None, fmt)
    msg = parser.parse(text, tools=SEARCH)
    assert msg.content == content
    assert [c.name for c in msg.tool_calls] == (["search"] if text.count("search") == 2 else [])
    check_output(parser, text, tools=SEARCH, cuts=6)


@pytest.mark.parametrize(
    ("fmt", "text", "content", "calls"),
    [
        ("pythonic", "[search(query='a') x]", "[search(query='a') x]", []),
        ("pythonic", "[search(query='a')'", "[search(query='a')'", []),
        ("pythonic", "[search(query='a') x [search(query='b')]", "[search(query='a') x", ["b"]),
        ("pythonic", "[search(query='a'), 'b'] [search(query='c')]", "[search(query='a'), 'b']", ["c"]),
        ("pythonic", "[search(query='a') ,\nsearch(query='b')\n] ok", "ok", ["a", "b"]),
        ("pythonic", "[search(query=='a')] ok", "[search(query=='a')] ok", []),
        ("llama4_pythonic", "<|python_start|>[search(query='a') x]<|python_end|>", "[search(query='a') x]", []),
    ],
)
def test_text_between_the_calls_of_a_list_breaks_the_list(fmt: str, text: str, content: str, calls: list[str]) -> None:
    """Only a "," or the "]" may follow a call of a pythonic list (whitespace aside): other text
    means it was no list, so its whole text, spaces included, is content (``STRAY_TEXT``), never
    its calls with the word as content; a list after it is read again, its calls numbered from 0
    (the broken list's calls were never sent)."""
    parser = Parser(None, fmt)
    msg = parser.parse(text, tools=SEARCH, id_factory=str)
    assert msg.content == content
    assert [json.loads(c.arguments)["query"] for c in msg.tool_calls] == calls
    assert [c.id for c in msg.tool_calls] == [str(k) for k in range(len(calls))]
    check_output(parser, text, tools=SEARCH, cuts=6)


@pytest.mark.parametrize(
    "invoke",
    [
        '<｜DSML｜invoke name="\n<｜DSML｜parameter name="location" string="true">Paris'
        "</｜DSML｜parameter>\n</｜DSML｜invoke>",
        '<｜DSML｜invoke name="get_weather>\n</｜DSML｜invoke>',
    ],
)
def test_an_invoke_whose_name_leaves_its_quote_open_is_no_call(invoke: str) -> None:
    """DeepSeek V3.2's DSML: a name that opens a quote and never closes it does not read; the
    call is malformed and its text, and the text after it, is content (never a call named '"')."""
    text = "<｜DSML｜function_calls>\n" + invoke + "\n</｜DSML｜function_calls>after"
    parser = Parser("deepseek_v3", "deepseek_v32")
    msg = parser.parse("ok</think>" + text, tools=WEATHER)
    # thinking is off by default: the closer where no block is open is content text as written
    assert (msg.tool_calls, msg.content) == ((), "ok</think>" + text)
    check_output(parser, "ok</think>" + text, tools=WEATHER, cuts=2)


_K3_CALL = (
    '<|open|>tools<|sep|><|open|>call tool="get_weather"{}<|sep|><|open|>argument key="location"{}<|sep|>'
    "Paris<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>"
)
_DSML_CALL = (
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather"{}>\n'
    '<｜DSML｜parameter name="location"{} string="true">'
    "Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"
)


@pytest.mark.parametrize(
    ("reasoning", "fmt", "text"),
    [
        (None, "minicpm5", '<function name="get_weather">\n<param name="="2</param>\n</function>'),
        (None, "minicpm5", '<function name="get_weather">\n<param name="city" 2>Paris</param>\n</function>'),
        (None, "minicpm5", "<function name='get_weather'>\n<param name='city'x>Paris</param>\n</function>"),
        (None, "minicpm5", '<function name="get_weather" g="te">\n<param name="city">Paris</param>\n</function>'),
        (None, "deepseek_v32", _DSML_CALL.format('g="te"', "")),
        (None, "deepseek_v32", _DSML_CALL.format("", 'g="te"')),
        ("kimi_k3", "kimi_k3", _K3_CALL.format(' x="y"', "")),
        ("kimi_k3", "kimi_k3", _K3_CALL.format("", ' x="y"')),
    ],
)
def test_a_header_with_text_no_field_carries_does_not_read(reasoning: str | None, fmt: str, text: str) -> None:
    """A name or key quoted first (MiniCPM5, DSML) or an element's attributes (DSML, Kimi K3):
    text after the quoted name or key that is no attribute (``"="2``), or an attribute the
    format never reads and no call's identity is (``g="te"``), is text neither the name, the key
    nor the value holds, so the header does not read and the call is malformed: its whole text is
    content (the ``2`` or ``te`` was in no field, call or marker)."""
    parser = Parser(reasoning, fmt)
    msg = parser.parse(text, tools=WEATHER)
    assert msg.tool_calls == ()
    assert text in (msg.content or "")
    check_output(parser, text, tools=WEATHER, cuts=4)


@pytest.mark.parametrize(
    ("reasoning", "fmt", "text"),
    [
        (
            None,
            "minicpm5",
            '<function name="get_weather" id="1">\n<param name="location" type="string">Paris</param>\n</function>',
        ),
        (None, "deepseek_v32", _DSML_CALL.format(' index="0"', "")),
        ("kimi_k3", "kimi_k3", _K3_CALL.format(' index="1"', ' type="string"')),
    ],
)
def test_a_header_keeps_reading_a_calls_identity_attributes(reasoning: str | None, fmt: str, text: str) -> None:
    """The rule above does not reject a call's identity: ``id``, ``index`` and ``type``
    attributes name the call (Kimi K3's template writes ``index``) and no field carries them."""
    msg = Parser(reasoning, fmt).parse(text, tools=WEATHER)
    assert [(c.name, json.loads(c.arguments)) for c in msg.tool_calls] == [("get_weather", {"location": "Paris"})]


# ---------------------------------------------------------------------- ids and text tell one story


def _ordinary(tok: str, text: str) -> list[int]:
    """``text``'s ids with marker strings spelled as ordinary tokens (a model quoting a marker)."""
    if tok in ("qwen3", "deepseek_v3"):
        return tk.encode_ordinary(tok, text)
    module = __import__(f"support.tok_{tok}", fromlist=["load_ordinary"])
    return list(module.load_ordinary().encode(text, add_special_tokens=False).ids)


def _byte_token(parser: Parser, byte: int) -> int:
    """The id of the ordinary token that is the single byte ``byte`` (byte-level BPE)."""
    vocab = parser.vocab
    assert vocab is not None
    return next(i for i in range(4096) if vocab.added_text(i) is None and vocab.token_bytes(i) == bytes([byte]))


THINKING = [
    ("deepseek_v3", "deepseek_r1", "<think>", "</think>"),
    ("magistral", "mistral", "[THINK]", "[/THINK]"),
    ("glm", "glm45", "<think>", "</think>"),
]


@pytest.mark.parametrize(("tok", "reasoning", "start", "end"), THINKING)
def test_bytes_that_are_no_character_do_not_shift_a_marker(tok: str, reasoning: str, start: str, end: str) -> None:
    """Four byte tokens that make no character decode to four U+FFFD (3 bytes of text each for 1
    byte of token): the ids align with the text by what the tokenizer's decode gives them, so the
    quoted end marker stays reasoning and the real one ends it, with ids alone and with text."""
    parser = Parser(reasoning, None, tokenizer=tk.load(tok))
    f0 = _byte_token(parser, 0xF0)
    ids = tk.encode(tok, start) + [f0] * 4 + _ordinary(tok, end) + tk.encode(tok, end + "answer")
    text = tk.decode(tok, ids)
    assert text == start + "\ufffd" * 4 + end + end + "answer"  # the tokenizer's own decode
    for msg in (parser.parse(text, token_ids=ids), parser.parse(None, token_ids=ids)):
        assert (msg.reasoning, msg.content) == ("\ufffd" * 4 + end, "answer")
    check_output(parser, text, ids, cuts=2)


@pytest.mark.parametrize(("tok", "reasoning", "start", "end"), THINKING)
def test_a_character_cut_by_a_special_token_is_replaced_not_an_error(
    tok: str, reasoning: str, start: str, end: str
) -> None:
    """Ids alone: the first byte of a character, then the end marker's special token. The
    tokenizer decodes the byte as U+FFFD where the marker interrupts it; so does trisect."""
    parser = Parser(reasoning, None, tokenizer=tk.load(tok))
    ids = tk.encode(tok, start + "a") + [_byte_token(parser, 0xE6)] + tk.encode(tok, end + "b")
    msg = parser.parse(None, token_ids=ids)
    assert (msg.reasoning, msg.content) == ("a\ufffd", "b")
    check_ids_agree(parser, None, ids)


@pytest.mark.parametrize(
    ("tok", "reasoning", "tools", "output"),
    [
        (
            "qwen3",
            "qwen3",
            "hermes",
            '<think>plan</think>ok<tool_call>\n{"name": "search", "arguments": {}}\n</tool_call>',
        ),
        ("deepseek_v3", "deepseek_r1", None, "<think>a long plan</think>the answer"),
        (
            "glm",
            "glm45",
            "glm45",
            "<think>p</think><tool_call>search<arg_key>query</arg_key><arg_value>cats</arg_value></tool_call>",
        ),
    ],
)
def test_text_that_runs_ahead_of_its_ids_waits_for_them(
    tok: str, reasoning: str, tools: str | None, output: str
) -> None:
    """An engine may send a token's text one delta before its id: a special marker in text whose
    id has not come yet is held until the ids pass it, so the stream reads what parse() reads."""
    parser = Parser(reasoning, tools, tokenizer=tk.load(tok))
    ids = tk.encode(tok, output)
    want = parser.parse(output, token_ids=ids, tools=SEARCH, id_factory=lambda k: f"call_{k}")
    case = Case(id="ahead", output=output, expected=None, tools=SEARCH)
    for sizes in ([1] * len(ids), [2, 3] * len(ids)):
        ahead = text_ahead(engine_deltas(tk.load(tok), ids, sizes, parser=parser))
        for atomic in (True, False):
            check_chunks(case, parser, ahead, f"ahead{sizes[:2]}", reference=want, atomic=atomic)
    check_output(parser, output, ids, tools=SEARCH, cuts=2)


def test_a_control_token_that_is_no_marker_is_text_both_ways() -> None:
    """Qwen's <|box_start|> is a control token that no format reads: with text it is what the
    engine sent, and ids alone keep it too (the tokenizer's decode), unless the output ends with
    it (a stop token, whose text an engine does not send)."""
    parser = Parser("qwen3", "hermes", tokenizer=tk.load("qwen3"))
    ids = tk.encode("qwen3", "look <|box_start|>here<|box_end|> ok")
    msg = check_ids_agree(parser, None, ids)
    assert msg.reasoning == "look <|box_start|>here<|box_end|> ok"
    stop = tk.encode("qwen3", "done<|im_end|>")
    assert parser.parse(None, token_ids=stop).reasoning == "done"


def test_a_marker_quoted_in_an_argument_keeps_its_spacing_from_ids_alone() -> None:
    """Mistral's tokenizer decodes the first token after an added token without its leading
    space (SentencePiece's prefix space): ids alone read what that decode gives, no double space."""
    parser = Parser(None, "mistral", tokenizer=tk.load("mistral"))
    text = '[TOOL_CALLS]search[ARGS]{"query": "a [TOOL_CALLS] b"}'
    ids = tk.encode("mistral", text)
    msg = check_ids_agree(parser, text, ids, tools=SEARCH)
    assert json.loads(msg.tool_calls[0].arguments) == {"query": "a [TOOL_CALLS] b"}


@pytest.mark.parametrize("value", ['"</think></tool_call>', '"</think>x"}}\n</tool_call>', '"b</think></tool_call>'])
def test_arguments_that_break_on_an_added_token_keep_text_and_ids_aligned(value: str) -> None:
    """ERNIE's arguments written as a JSON string that break on their first character, an added
    token (``</think>``, no marker of the tools-only format): the delta's bytes were counted
    once by the codec's fast path and again by the scanner that read the rest, so the call's
    closer ``</tool_call>`` was 8 bytes from its id and the stream raised "never met its text"
    (a fuzz finding). Text with ids, one token per delta, reads what the whole output reads."""
    tok = "ernie45"
    parser = Parser(None, "ernie45", tokenizer=tk.load(tok))
    text = '<tool_call>{"name": "search", "arguments": ' + value
    msg = check_ids_agree(parser, text, tk.encode(tok, text), tools=SEARCH)
    assert (msg.tool_calls, msg.content) == ((), text)


@pytest.mark.parametrize("ids", [[996, 910], [996, 910, 1032], [1113, 996, 910, 996]])
def test_bytes_that_make_no_character_are_replaced_as_the_tokenizer_decodes_them(ids: list[int]) -> None:
    """SentencePiece decodes each byte piece that makes no character to its own U+FFFD (Mistral's
    ``<0xE1><0x8B>``, an unfinished three-byte character, is two), where Python's and HF's byte-level
    decoders make one per maximal subpart: ids alone read what the tokenizer's decode gives,
    whole and at every cut (the ids' own text is the referee here, the tokenizer's decode)."""
    tok = tk.load("mistral")
    parser = Parser(None, "mistral", tokenizer=tok)
    assert parser.vocab is not None and parser.vocab.utf8_errors == EACH_BYTE
    text = tok.decode(ids, skip_special_tokens=False)
    assert text.count("\ufffd") >= 2
    assert parser.parse(None, token_ids=ids).content == text
    check_ids_agree(parser, text, ids, tools=SEARCH)


@pytest.mark.parametrize("tok", ["qwen3", "llama3", "gpt_oss", "glm"])
def test_a_byte_level_tokenizer_replaces_a_maximal_subpart_once(tok: str) -> None:
    """The probe does not mistake a byte-level tokenizer for SentencePiece: its decode of
    ``E1 8B`` is one U+FFFD, as ``from_utf8_lossy`` makes it."""
    parser = Parser(None, "hermes", tokenizer=tk.load(tok))
    assert parser.vocab is not None and parser.vocab.utf8_errors == "replace"


STEP3_BLOCK = (
    "</think><｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
    '<steptml:invoke name="search"><steptml:parameter name="query">cats</steptml:parameter>'
    "</steptml:invoke><｜tool_call_end｜>"
)


@pytest.mark.parametrize(
    ("reasoning", "fmt", "tok", "text", "cut"),
    [
        ("step3", "step3", "step3", STEP3_BLOCK, "<｜tool_calls_e"),
        (
            None,
            "kimi_k2",
            "kimi_k2",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0"
            '<|tool_call_argument_begin|>{"query": "cats"}<|tool_call_end|>',
            "<|tool_calls_sec",
        ),
        (
            None,
            "functiongemma",
            "functiongemma",
            "<start_function_call>call:search{query:<escape>cats<escape>}",
            "<end_fun",
        ),
    ],
)
def test_a_special_markers_prefix_spelled_with_ordinary_tokens_is_text(
    reasoning: str | None, fmt: str, tok: str, text: str, cut: str
) -> None:
    """The output ends inside a block of calls with the first characters of a marker that is one
    special token. As text alone it may be that marker cut off (the block's unfinished call);
    with ids the marker would be its one id, so ordinary tokens that spell part of it are text,
    content with text and ids as with ids alone (and as a whole marker spelled so already was)."""
    parser = Parser(reasoning, fmt, tokenizer=tk.load(tok))
    ids = tk.encode(tok, text + cut)
    assert all(parser.vocab.added_text(i) is None for i in tk.encode(tok, cut))  # ordinary tokens
    msg = check_ids_agree(parser, text + cut, ids, tools=SEARCH)
    assert [c.name for c in msg.tool_calls] == ["search"]
    assert (msg.content, msg.unfinished_call) == (cut, None)
    alone = Parser(reasoning, fmt).parse(text + cut, tools=SEARCH)
    assert alone.content is None and alone.unfinished_call is not None
    assert alone.unfinished_call.text == cut


# ---------------------------------------------------------------------- headers and reasons


@pytest.mark.parametrize("text", ["<|call|>", "<|end|>"])
def test_an_empty_harmony_message_is_structure(text: str) -> None:
    """Harmony, tools only: an end marker alone ends a message with no header and no body;
    it holds no text to keep, so it is a marker the format consumed (nothing lost)."""
    parser = Parser(None, "openai")
    msg = parser.parse(text)
    assert (msg.reasoning, msg.content, msg.tool_calls, msg.unfinished_call) == (None, None, (), None)
    check_output(parser, text, cuts=2)


@pytest.mark.parametrize("text", ["hi<|call|>", "hi<|end|>"])
def test_a_harmony_header_that_does_not_read_is_content_markers_included(text: str) -> None:
    """Text where a message's header belongs, then its end: the header does not read, so all of
    the message's text, its end marker included, is content (as a call whose body does not
    read), never a header whose words vanish."""
    parser = Parser(None, "openai")
    assert parser.parse(text).content == text
    check_output(parser, text, cuts=2)


def test_an_unfinished_calls_reason_does_not_depend_on_the_cut() -> None:
    """Text inside a call's markup makes it malformed; its reason names the rule, not the text
    read up to the cut, so a stream cut anywhere gives parse()'s unfinished_call."""
    parser = Parser("deepseek_v3", "deepseek_v3")
    text = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>functionXY<｜tool▁sep｜>search\n```json\n{"query": "a"'
    unfinished = parser.parse(text, tools=SEARCH).unfinished_call
    assert unfinished is not None and unfinished.text == text
    check_output(parser, text, tools=SEARCH, cuts=4)
