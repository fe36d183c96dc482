"""Outputs past Python's own limits degrade by the rules, never with an untyped error.

* a JSON name or id value of 4,301 digits, or nested 1,200 deep (every JSON-envelope format):
  not a string, so not a name: the call is malformed (content; ``strict=True``:
  ``MalformedOutputError``), with no ``ValueError`` from Python's integer-conversion limit and no
  ``RecursionError``;
* an integer-typed XML parameter of 4,301 digits is no integer ``json.loads`` reads: its value is
  its text, a string (up to Python's limit it is the integer as JSON text: leading zeros, ``+`` and
  underscores dropped, as ``int()`` would); a pythonic integer past the limit is a Python literal
  Python itself cannot read: the call is malformed, its text is content;
* a JSON number split across deltas is read by its grammar's state, never re-checked whole (its
  cost per digit is flat: ``bench/bench_layers.py``), with the grammar's verdict wherever it is cut.

Each runs whole (``parse``) and streamed (one delta, and a delta per 97 characters).
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trisect import MalformedOutputError, Message, Parser
from trisect.engine.jsonscan import JsonScanner
from trisect.message import MessageBuilder

DIGITS = "1" * 4301


DEEP = "[" * 1200 + "]" * 1200
INT_TOOL = {
    "type": "function",
    "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}},
}


def _streamed(parser: Parser, text: str, step: int, **options: object) -> Message:
    stream = parser.stream(**options)
    builder = MessageBuilder()
    for i in range(0, len(text), step):
        delta = stream.feed(text[i : i + step])
        if delta is not None:
            builder.add(delta)
    last = stream.finish()
    if last is not None:
        builder.add(last)
    return builder.message()


def _all_views(parser: Parser, text: str, **options: object) -> Message:
    whole = parser.parse(text, **options)
    for step in (len(text), 97):
        got = _streamed(parser, text, step, **options)
        assert (got.reasoning, got.content, [(c.name, c.arguments) for c in got.tool_calls]) == (
            whole.reasoning,
            whole.content,
            [(c.name, c.arguments) for c in whole.tool_calls],
        )
    return whole


@pytest.mark.parametrize("value", [DIGITS, "-" + DIGITS, DEEP, "{" + '"a": ' * 0 + "}"])
@pytest.mark.parametrize("key", ["name", "id"])
def test_a_name_or_id_that_is_not_a_string(key: str, value: str) -> None:
    parser = Parser(None, "hermes")
    fields = {"name": '"f"', "id": '"call_1"'}
    fields[key] = value
    body = "{" + ", ".join(f'"{k}": {v}' for k, v in fields.items()) + ', "arguments": {}}'
    text = f"Sure.<tool_call>\n{body}\n</tool_call>"
    msg = _all_views(parser, text)
    if key == "name":  # not a name: the call is malformed, its text is content
        assert msg.tool_calls == () and msg.content == text
        with pytest.raises(MalformedOutputError):
            parser.parse(text, strict=True)
    else:  # an id that is not a string is no id: the call stands
        assert [c.name for c in msg.tool_calls] == ["f"] and msg.tool_calls[0].id != "call_1"


@pytest.mark.parametrize("fmt", ["llama3_json", "mistral", "hermes"])
def test_every_json_envelope_family_survives_a_huge_name(fmt: str) -> None:
    parser = Parser(None, fmt)
    opener = {"llama3_json": "", "mistral": "[TOOL_CALLS]", "hermes": "<tool_call>"}[fmt]
    for value in (DIGITS, DEEP):
        body = '{"name": ' + value + ', "arguments": {}}'
        text = opener + (f"[{body}]" if fmt == "mistral" else body)
        msg = _all_views(parser, text)
        assert msg.tool_calls == ()


LIMIT = "1" * 4300  # the most digits Python converts by default (sys.get_int_max_str_digits())


@pytest.mark.parametrize(
    ("raw", "want"),
    [("0" + LIMIT, LIMIT), ("+" + LIMIT, LIMIT), ("-000" + LIMIT, "-" + LIMIT), ("+0", "0"), ("-00", "0")],
)
def test_an_integer_parameter_up_to_pythons_limit(raw: str, want: str) -> None:
    parser = Parser(None, "qwen3_coder")
    text = f"<tool_call>\n<function=f>\n<parameter=n>\n{raw}\n</parameter>\n</function>\n</tool_call>"
    msg = _all_views(parser, text, tools=[INT_TOOL])
    assert [c.name for c in msg.tool_calls] == ["f"]
    assert msg.tool_calls[0].arguments == '{"n": ' + want + "}"
    assert json.loads(msg.tool_calls[0].arguments)["n"] == int(want)


@pytest.mark.parametrize("raw", ["0" + DIGITS, "+" + DIGITS, "-" + DIGITS])
def test_an_integer_parameter_past_pythons_limit_is_its_text(raw: str) -> None:
    """The value is no integer the standard library reads: the raw text stays a string."""
    parser = Parser(None, "qwen3_coder")
    text = f"<tool_call>\n<function=f>\n<parameter=n>\n{raw}\n</parameter>\n</function>\n</tool_call>"
    msg = _all_views(parser, text, tools=[INT_TOOL])
    assert [json.loads(c.arguments) for c in msg.tool_calls] == [{"n": raw}]


@pytest.mark.parametrize(("raw", "want"), [("1_" + LIMIT[1:], LIMIT), ("-" + LIMIT, "-" + LIMIT), ("-0", "0")])
def test_a_pythonic_integer_up_to_pythons_limit(raw: str, want: str) -> None:
    parser = Parser(None, "pythonic")
    msg = _all_views(parser, f"[f(n={raw})]")
    assert [json.loads(c.arguments) for c in msg.tool_calls] == [{"n": int(want)}]


@pytest.mark.parametrize("raw", ["1_" + DIGITS, "-" + DIGITS])
def test_a_pythonic_integer_past_pythons_limit_is_no_literal(raw: str) -> None:
    """ast.literal_eval refuses it as json.loads would: the call is malformed, its text content."""
    parser = Parser(None, "pythonic")
    text = f"Sure. [f(n={raw})]"
    msg = _all_views(parser, text)
    assert msg.tool_calls == () and msg.content == text


_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet="0123456789eE.+-", max_size=12), cut=st.integers(0, 12))
def test_a_number_split_anywhere_is_read_as_the_json_grammar_says(text: str, cut: int) -> None:
    """The scanner keeps a number's grammar state across feeds (O(delta) per feed, see
    bench/bench_layers.py); its verdict is the JSON grammar's, wherever the number is cut."""
    doc = "[" + text + "]"
    whole, split = JsonScanner(), JsonScanner()
    whole.feed(doc, 0, len(doc))
    k = min(cut, len(doc))
    split.feed(doc[:k], 0, k)
    if not split.failed:
        split.feed(doc[k:], 0, len(doc) - k)
    valid = text == "" or _JSON_NUMBER.fullmatch(text) is not None  # "[]" is an empty list
    assert whole.done == split.done == valid
