"""Marker text inside a raw value is value text, in every family whose arguments
are raw-text parameters: the XML invoke builder (Qwen3-Coder, Seed-OSS, Step, MiniMax, MiniCPM5,
DSML, dots, MiMo) and the key / value builder (GLM, Ling 3, poolside, HY, K2 Horizon).

A value may hold any marker of its family, followed by ordinary text: a closer (the structure
does not go on after it, ``Rule.follow``), a call's opener (``Rule.value_text``), and a
parameter's opener with the key of a parameter the call already has or a key the tool does not
declare (``Rule.key_end``: only a new key of the tool opens the next parameter where a value's
closer is missing). The values come back exactly, through the replay harness under every
chunking, with and without token ids where the family has a tokenizer, and no call ever holds
a key twice.

Not covered, because the text is ambiguous: a value that holds a closer followed by the
structure that may follow it (``x</parameter><parameter=other>``), or the opener of a new
declared key (recovered as a missing closer); and MiniMax-M3, whose namespace markers cannot be
value text (``follow=False``: its own cases).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import tokenizers as tk
from support.cuts import marker_strings, text_cuts
from trisect import Parser
from trisect.codecs import XmlParams
from trisect.engine.spec import FormatSpec
from trisect.formats import tool_format
from trisect.message.types import MessageBuilder
from trisect.testing import Case, check_case

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            },
        },
    }
]
# format -> the tokenizer its cases use (None: none staged)
FAMILIES = {
    "qwen3_coder": "qwen3",
    "mimo": "qwen3",
    "seed_oss": "seed_oss",
    "step3p5": None,
    "step5": "step5",
    "step3": "step3",
    "minimax_m2": "minimax",
    "minicpm5": None,
    "dots": None,
    "deepseek_v32": "deepseek_v3",
    "deepseek_v4": "deepseek_v3",
    "deepseek_v41": "deepseek_v3",
    "glm47": "glm",
    "ling3": "glm",
    "poolside_v1": "glm",
    "hy_v3": "hy",
    "hy_v4": "hy",
    "k2_horizon": "k2_horizon",
}
WORDS = ["see", "here", "a b", "x.txt", "ok then"]


def _m(spec: FormatSpec) -> dict[str, str]:
    return {t: strings[0] for t, strings in spec.terminals.items()}


def param_open(spec: FormatSpec, key: str) -> str:
    """The opener of parameter ``key``, as the family writes it (up to the value)."""
    m = _m(spec)
    if "KEY_START" in m:
        return f"{m['KEY_START']}{key}{m['KEY_END']}"
    start = m["PARAM_START"]
    if start.endswith("parameter"):  # DSML: attributes
        return f'{start} name="{key}" string="true">'
    assert isinstance(spec.codec, XmlParams)
    return f"{start}{key if spec.codec.parse_key is None else json.dumps(key)}>"


def write_call(spec: FormatSpec, args: dict[str, str]) -> str:
    """One ``write_file`` call with string values, in the family's spelling."""
    m = _m(spec)
    assert isinstance(spec.codec, XmlParams)
    newline = spec.codec.trim == "newline"
    params = []
    for key, value in args.items():
        v = f"\n{value}\n" if newline else value
        if "KEY_START" in m:
            params.append(f"{param_open(spec, key)}{m['VALUE_START']}{v}{m['VALUE_END']}")
        else:
            closer = m["PARAM_END"] + (f"{key}>" if m["PARAM_END"].endswith("</") else "")
            params.append(f"{param_open(spec, key)}{v}{closer}\n")
    name = "write_file"
    if "KEY_START" in m:
        sep = m.get("TOOL_SEP", "")
        text = f"{m['TOOL_START']}{name}{sep}{''.join(params)}{m['TOOL_END']}"
    else:
        spelled = name if spec.parse_name is None else f'"{name}"'
        text = f"{m['INVOKE']}{spelled}>\n{''.join(params)}{m['INVOKE_END']}\n"
        if "TOOL_START" in m:
            sep = "function" + m["TOOL_SEP"] if "TOOL_SEP" in m else ""
            text = f"{m['TOOL_START']}{sep}{text}{m['TOOL_END']}"
    if "BLOCK_START" in m:
        text = f"{m['BLOCK_START']}\n{text}\n{m['BLOCK_END']}"
    return "Let me write it.\n" + text


def _atoms(spec: FormatSpec, key: str) -> list[str]:
    """Marker text a value of parameter ``key`` may hold unambiguously."""
    markers = sorted({s for strings in spec.terminals.values() for s in strings})
    return [*markers, param_open(spec, key), param_open(spec, "path"), param_open(spec, "nokey")]


def values(spec: FormatSpec, key: str) -> st.SearchStrategy[str]:
    """Ordinary text with the family's markers in it, each followed by ordinary text."""
    piece = st.tuples(st.sampled_from(_atoms(spec, key)), st.sampled_from(WORDS)).map(lambda t: t[0] + " " + t[1])
    return st.tuples(st.sampled_from(WORDS), st.lists(piece, min_size=1, max_size=4)).map(
        lambda t: t[0] + " " + "".join(t[1])
    )


def _case(name: str, path: str, content: str, *, tokenizer: bool) -> Case:
    spec = tool_format(name)
    args = {"path": path, "content": content}
    tok = FAMILIES[name]
    return Case(
        id=f"{name}-marker-values",
        output=write_call(spec, args),
        tools_format=name,
        tools=TOOLS,
        tokenizer=tk.load(tok) if tokenizer and tok else None,
        expected={
            "reasoning": None,
            "content": "Let me write it.",
            "tool_calls": [{"name": "write_file", "arguments": args}],
        },
    )


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_value_holding_a_key_opener_and_a_call_opener(name: str) -> None:
    """A value holding the opener of a key the call has, and a call's opener: exact values."""
    spec = tool_format(name)
    m = _m(spec)
    opener = m.get("TOOL_START") or m.get("BLOCK_START") or m["INVOKE"]
    case = _case(name, "a.txt", f"see {param_open(spec, 'path')} here, {opener} there", tokenizer=True)
    check_case(case)


def _values_hold_every_marker(name: str, data: st.DataObject, *, everywhere: bool) -> None:
    spec = tool_format(name)
    path = data.draw(values(spec, "path"), label="path")
    content = data.draw(values(spec, "content"), label="content")
    case = _case(name, path, content, tokenizer=True)
    splits = True if everywhere else text_cuts(case.output, marker_strings(None, name))
    check_case(case, seeds=(0,), splits=splits)


@pytest.mark.parametrize("name", sorted(FAMILIES))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(data=st.data())
def test_values_hold_every_marker_of_the_family(name: str, data: st.DataObject) -> None:
    """Split in two at the markers (the values' included) and seeded positions (tests/support/cuts.py)."""
    _values_hold_every_marker(name, data, everywhere=False)


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", sorted(FAMILIES))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(data=st.data())
def test_values_hold_every_marker_of_the_family_split_everywhere(name: str, data: st.DataObject) -> None:
    _values_hold_every_marker(name, data, everywhere=True)


@pytest.mark.parametrize("name", sorted(FAMILIES))
@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.data())
def test_no_call_holds_a_key_twice(name: str, data: st.DataObject) -> None:
    """Whatever the values hold (openers of new keys included), whole or per character."""
    spec = tool_format(name)
    atoms = _atoms(spec, "content") + [param_open(spec, "content")]
    text = st.lists(st.sampled_from(atoms + WORDS), min_size=1, max_size=6).map(" ".join)
    output = write_call(spec, {"path": data.draw(text), "content": data.draw(text)})
    parser = Parser(None, name)
    whole = parser.parse(output, tools=TOOLS)
    stream = parser.stream(tools=TOOLS)
    builder = MessageBuilder()
    for d in [*(stream.feed(ch) for ch in output), stream.finish()]:
        if d is not None:
            builder.add(d)
    for msg in (whole, builder.message()):
        for call in msg.tool_calls:
            pairs: list[tuple[str, Any]] = json.loads(call.arguments, object_pairs_hook=lambda p: p)
            keys = [k for k, _v in pairs]
            assert len(keys) == len(set(keys)), call.arguments


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_key_written_twice_is_not_a_call(name: str) -> None:
    """The model writes the same parameter twice (closed each time): the arguments would not
    be one object, so the call is malformed and its text is content."""
    spec = tool_format(name)
    output = write_call(spec, {"path": "a", "content": "b"})
    twice = output.replace(param_open(spec, "content"), param_open(spec, "path"))
    msg = Parser(None, name).parse(twice, tools=TOOLS)
    assert not msg.tool_calls
    assert msg.content is not None and param_open(spec, "path") in msg.content
