"""Pythonic calls: argument names and a list the output ends inside.

* **Argument names that are Python keywords** (``f(from="a", class=1)``) are legal parameter
  names. A JSON schema may name a parameter ``from`` or ``class``, and a model asked to write
  a pythonic call writes the name as the schema spells it. vLLM 0.33's ``pythonic`` /
  ``llama4_pythonic`` parsers read the list with Python's ``ast.parse``, which rejects a keyword
  as an argument name (a ``SyntaxError``: the text stays content); trisect accepts it, as the
  issue asks: the calls are data, not Python. Names stay identifiers (``f(a-b=1)`` is no call),
  each once (``f(from=1, from=2)`` is no call), and a keyword is still no *function* name.

Every case runs through the replay harness under every chunking (text mode: no tokenizer of
these families is staged; the bare ``pythonic`` format also with the Qwen tokenizer as a
byte-level BPE, to cut the text at real token boundaries).
"""

from __future__ import annotations

import pytest

from support import tokenizers as tk
from trisect import Parser
from trisect.testing import Case, check_case

WRAP = {
    "pythonic": ("", ""),
    "llama4_pythonic": ("<|python_start|>", "<|python_end|>"),
    "lfm2": ("<|tool_call_start|>", "<|tool_call_end|>"),
}


def _check(
    cid: str, fmt: str, output: str, *, tokenizer: str | None = None, malformed: bool = False, **expected: object
) -> None:
    expected.setdefault("tool_calls", [])
    case = Case(
        id=cid,
        output=output,
        tools_format=fmt,
        tokenizer=tk.load(tokenizer) if tokenizer else None,
        expected=expected,
        truncated=malformed,  # a malformed call an incremental stream announced is reported aborted
    )
    assert check_case(case) > 0


@pytest.mark.parametrize("fmt", sorted(WRAP))
@pytest.mark.parametrize(
    ("args", "want"),
    [
        ('from="a", class=1', {"from": "a", "class": 1}),
        ("True=1, None=[False], lambda={'if': None}", {"True": 1, "None": [False], "lambda": {"if": None}}),
        ("import_='x', def_=2", {"import_": "x", "def_": 2}),
    ],
)
def test_keyword_argument_names_are_parameter_names(fmt: str, args: str, want: dict[str, object]) -> None:
    start, end = WRAP[fmt]
    output = f"{start}[send(to='b', {args}), g()]{end}"
    calls = [{"name": "send", "arguments": {"to": "b", **want}}, {"name": "g", "arguments": {}}]
    _check("kw-names", fmt, output, content=None, tool_calls=calls)


def test_keyword_argument_names_with_token_ids() -> None:
    _check(
        "kw-ids",
        "pythonic",
        'Sure. [copy(from="a.txt", to="b.txt", class=None)]',
        tokenizer="qwen3",
        content="Sure.",
        tool_calls=[{"name": "copy", "arguments": {"from": "a.txt", "to": "b.txt", "class": None}}],
    )


@pytest.mark.parametrize("text", ["[f(from=1, from=2)]", "[class(a=1)]", "[f(a-b=1)]", "[f(from)]"])
def test_what_stays_no_call(text: str) -> None:
    _check("kw-not-calls", "pythonic", text, malformed=True, content=text)


# ---------------------------------------------------------------- a list the output ends inside


@pytest.mark.parametrize("fmt", ["pythonic", "llama4_pythonic"])
@pytest.mark.parametrize(
    "cut",
    ['[f(a=1), g(b="Ro', "[f(a=1)", "[f(a=1), ", "[f(a=1), g(b=2)", "[f(a=1),\n g(b=[1, 2"],
)
def test_an_unclosed_list_is_no_list_of_calls(fmt: str, cut: str) -> None:
    """``[f(a=1), g(b="Ro`` at the end of the output is not a call list: no call stands, and its
    whole text is the message's ``unfinished_call`` (the cut-off-call rule); an incremental
    stream reports the calls it already streamed from the list aborted on its final delta."""
    start = {"pythonic": "", "llama4_pythonic": "<|python_start|>"}[fmt]
    case = Case(id="cut-list", output=f"Let me check. {start}{cut}", tools_format=fmt, truncated=True, expected={})
    case.expected = {"content": "Let me check.", "tool_calls": [], "unfinished_call": cut}
    assert check_case(case) > 0


def test_a_closed_list_still_stands_and_one_cut_is_aborted_when_streamed() -> None:
    parser = Parser(None, "pythonic")
    whole = parser.parse('[f(a=1), g(b="Ro')
    assert whole.tool_calls == () and whole.unfinished_call is not None
    assert whole.unfinished_call.text == '[f(a=1), g(b="Ro'
    stream = parser.stream()
    deltas = [stream.feed(ch) for ch in '[f(a=1), g(b="Ro']
    final = stream.finish()
    streamed = {c.index for d in deltas if d is not None for c in d.tool_calls}
    assert streamed == {0, 1} and final is not None and set(final.aborted) == {0, 1}
    closed = parser.parse('[f(a=1), g(b="Rome")] done')
    assert [c.name for c in closed.tool_calls] == ["f", "g"] and closed.content == "done"
