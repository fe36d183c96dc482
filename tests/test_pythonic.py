"""Pythonic tool calls: literals only, never evaluated, never raising, on hostile input too."""

from __future__ import annotations

import ast
import builtins
import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trisect import Parser
from trisect.codecs.pythonic import MAX_DEPTH, PythonicCallCodec
from trisect.message import MessageBuilder

FORMATS = {
    "pythonic": ("", ""),
    "llama4_pythonic": ("<|python_start|>", "<|python_end|>"),
    "lfm2": ("<|tool_call_start|>", "<|tool_call_end|>"),
}

DEEP = 100_000
HOSTILE = [
    "[__import__('os').system('touch /tmp/trisect-pwned')]",
    "[f(a=__import__('os').system('touch /tmp/trisect-pwned'))]",
    "[os.system(command='touch /tmp/trisect-pwned')]",
    "[f(a=os.system('x'))]",
    "[f(a=open('/etc/passwd').read())]",
    "[f(a=eval('1'))]",
    "[f(a=exec('import os'))]",
    "[f(a=(lambda: 1)())]",
    "[f(a=[x for x in range(10)])]",
    "[f(a={x: 1 for x in 'ab'})]",
    "[f(a=(x for x in 'ab'))]",
    "[f(a=1+1)]",
    "[f(a='x' * 10**9)]",
    "[f(a=f'{__import__(\"os\")}')]",
    "[f(**{'a': 1})]",
    "[f(*[1])]",
    "[f(a=1)(b=2)]",
    "[f.__class__(a=1)]",
    "[f(a=().__class__.__bases__[0].__subclasses__())]",
    "[f(a=b'bytes')]",
    "[f(a={1, 2})]",
    "[f(a=1j)]",
    "[f(a=0x10)]",
    "[f(a=...)]",
    "[f(a=None if True else 1)]",
    "[f(a=\\\n1)]",
    "[f(a='\\N{BULLET}')]",
    "[f(a=1) # comment\n]",
    "[" * DEEP,
    "[f(a=" + "[" * DEEP + "]" * DEEP + ")]",
    "[f(a=" + "(" * DEEP + ")" * DEEP + ")]",
    "[f(a=" + "{'k': " * DEEP + "1" + "}" * DEEP + ")]",
    "[f(a=" + "[" * DEEP,
    "[f(a='" + "\\" * (DEEP + 1) + "')]",  # the quote is escaped: the string never ends
    "[" + "f(a=1), " * 2000 + "__import__('os').system('x')]",
]


class Executed(AssertionError):
    pass


@contextlib.contextmanager
def no_execution() -> Iterator[None]:
    """While parsing, anything that would run or import model text fails the test."""

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise Executed("model output was executed")

    saved = [(builtins, n, getattr(builtins, n)) for n in ("eval", "exec", "compile", "__import__", "open")]
    saved += [(os, "system", os.system), (os, "popen", os.popen), (subprocess, "Popen", subprocess.Popen)]
    saved += [(ast, "literal_eval", ast.literal_eval), (ast, "parse", ast.parse)]
    for owner, name, _ in saved:
        setattr(owner, name, refuse)
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


def _streamed(parser: Parser, text: str, size: int) -> Any:
    stream = parser.stream()
    builder = MessageBuilder()
    for i in range(0, len(text), size):
        builder.add(stream.feed(text[i : i + size]))
    builder.add(stream.finish())
    return builder.message()


CASES = [(fmt, text) for fmt in sorted(FORMATS) for text in HOSTILE if len(text) < DEEP or fmt == "pythonic"]


@pytest.mark.parametrize(("fmt", "text"), CASES, ids=[f"{f}-{HOSTILE.index(t)}" for f, t in CASES])
def test_hostile_input_is_never_executed_nor_raises(fmt: str, text: str) -> None:
    start, end = FORMATS[fmt]
    output = start + text + end
    parser = Parser(None, fmt)
    allowed = {"f"}  # the complete, literal f(a=1) calls before the hostile one
    with no_execution():
        messages = [parser.parse(output), _streamed(parser, output, 997), _streamed(parser, output[:1000], 1)]
    # a raw-string format (OLMo 3, LFM2: the template writes `a='` + value + `'`) reads an escape
    # sequence as the characters written: `f(a='\\N{BULLET}')` is that text, a string, no code
    raw = getattr(parser.spec.codec, "raw_strings", False)
    for msg in messages:
        for c in msg.tool_calls:
            assert c.name in allowed, c.name
            args = json.loads(c.arguments)
            assert args == {"a": 1} or (raw and list(args) == ["a"] and isinstance(args["a"], str)), args
    whole = messages[0]
    if not whole.tool_calls:  # nothing lost: the text stays content, or the cut-off call's kept text
        kept = (whole.content or "") + (whole.unfinished_call.text if whole.unfinished_call else "")
        assert kept and text.strip() in (start + kept + end)


def test_depth_limit_is_a_clean_failure() -> None:
    ok = "[f(a=" + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + ")]"
    msg = Parser(None, "pythonic").parse(ok)
    assert len(msg.tool_calls) == 1 and json.loads(msg.tool_calls[0].arguments)
    too_deep = "[f(a=" + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + ")]"
    msg = Parser(None, "pythonic").parse(too_deep)
    assert not msg.tool_calls and msg.content == too_deep


# ---------------------------------------------------------------------- the literal reader

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


def _as_json(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    return value


def _read(text: str, cuts: list[int]) -> tuple[PythonicCallCodec, str]:
    codec = PythonicCallCodec()
    out = []
    i = 0
    for cut in [*sorted(set(cuts)), len(text)]:
        cut = max(cut, i)
        while i < cut and not (codec.done or codec.failed):
            i = codec.feed(text, i, cut)
            out.append(codec.take())
            if i < cut and not (codec.done or codec.failed):
                break
    return codec, "".join(out)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True), _values, max_size=4), st.data())
def test_python_reprs_read_as_json(kwargs: dict[str, Any], data: st.DataObject) -> None:
    text = "call(" + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")"
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(text)), max_size=6))
    codec, streamed = _read(text, cuts)
    assert codec.done and not codec.failed, text
    assert codec.name == "call"
    assert json.loads(streamed) == _as_json(kwargs)


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ("'it\\'s'", "it's"),
        ('"tab\\there"', "tab\there"),
        ("'\\x41\\u00e9\\U0001F600\\101\\0'", "Aé😀A\x00"),
        ("'keep \\d unknown'", "keep \\d unknown"),
        ("'''multi\nline ''quotes'' '''", "multi\nline ''quotes'' "),
        ('""""""', ""),
        ("''", ""),
        ("'a\\\nb'", "ab"),
        ("1_000", 1000),
        ("1.", 1.0),
        (".5", 0.5),
        ("-2.5e-3", -0.0025),
        ("(1)", 1),
        ("(1,)", [1]),
        ("()", []),
        ("[1, 2,]", [1, 2]),
        ("{'a': (1, 2), \"b\": {}}", {"a": [1, 2], "b": {}}),
        ("True", True),
        ("null", None),
    ],
)
def test_literals(literal: str, value: Any) -> None:
    text = f"f(x={literal})"
    whole, out = _read(text, [])
    assert whole.done and json.loads(out) == {"x": value}
    per_char, out2 = _read(text, list(range(len(text))))
    assert per_char.done and out2 == out


@pytest.mark.parametrize(
    "text",
    [
        "f(1)",
        "f(x=007)",
        "f(x=1e999)",
        "f(x={1: 2})",
        "f(x='a' 'b')",
        "f(x=u'a')",
        "f(x='a\nb')",
        "if(x=1)",
    ],
)
def test_not_literal_calls(text: str) -> None:
    codec, _ = _read(text, [])
    assert codec.failed and not codec.done
