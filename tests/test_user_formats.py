"""Formats a user brings at run time: a ``FormatSpec`` passed to ``Parser``, ``register_format``,
and the errors for names that are not registered."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

import trisect
from trisect import Act, FormatError, FormatSpec, Parser, Region, rules
from trisect.codecs import JsonArgsCodec
from trisect.engine.spec import CONTENT as CONTENT_STATE
from trisect.formats import _catalogue

# a small format of our own: <<call get_weather>>{"city": "Paris"}<</call>>
CALLS = FormatSpec(
    name="angle_calls",
    kind="tools",
    terminals={"OPEN": ("<<call ",), "NAME_END": (">>",), "CLOSE": ("<</call>>",)},
    regions={CONTENT_STATE: Region.CONTENT, "NAME": Region.NAME, "ARGS": Region.ARGS},
    table=rules(
        (CONTENT_STATE, "OPEN", "NAME", (Act.CALL_START,)),
        ("NAME", "NAME_END", "ARGS", (Act.NAME_END,)),
        ("ARGS", "CLOSE", CONTENT_STATE, (Act.CALL_END,)),
    ),
    codec=JsonArgsCodec,
    aliases=("angle",),
    models=("a test model",),
)
OUTPUT = 'Let me check. <<call get_weather>>{"city": "Paris"}<</call>> Done.'


@pytest.fixture
def registry() -> Iterator[None]:
    """Registration is process-wide: give each test the catalogue back as it found it."""
    saved = {kind: dict(formats) for kind, formats in _catalogue().items()}
    yield
    for kind, formats in _catalogue().items():
        formats.clear()
        formats.update(saved[kind])


def _calls(msg: trisect.Message) -> list[tuple[str, object]]:
    return [(c.name, json.loads(c.arguments)) for c in msg.tool_calls]


def test_a_spec_is_a_format() -> None:
    parser = Parser(tools=CALLS)
    assert parser.tools == "angle_calls" and parser.tools_spec is CALLS
    msg = parser.parse(OUTPUT, id_factory=str)
    assert msg.content == "Let me check.  Done." and _calls(msg) == [("get_weather", {"city": "Paris"})]
    stream = parser.stream(id_factory=str)
    builder = trisect.MessageBuilder()
    for ch in OUTPUT:
        builder.add(stream.feed(ch))
    builder.add(stream.finish())
    assert builder.message() == msg
    both = Parser(reasoning="qwen3", tools=CALLS).parse("<think>hm</think>" + OUTPUT)
    assert both.reasoning == "hm" and _calls(both) == [("get_weather", {"city": "Paris"})]


def test_a_spec_of_the_wrong_kind_or_type_is_a_short_error() -> None:
    with pytest.raises(FormatError) as info:
        Parser(reasoning=CALLS)
    message = str(info.value)
    assert "'angle_calls' is a tools format" in message
    assert "terminals" not in message and len(message) < 150  # never the whole spec
    with pytest.raises(FormatError, match="a name or a FormatSpec, not int"):
        Parser(tools=42)  # type: ignore[arg-type]


def test_registered_formats_are_found_by_name_and_alias(registry: None) -> None:
    assert trisect.register_format(CALLS) is CALLS
    assert Parser(tools="angle_calls").tools_spec is CALLS
    assert _calls(Parser(tools="angle").parse(OUTPUT)) == [("get_weather", {"city": "Paris"})]
    assert CALLS in trisect.formats()
    with pytest.raises(FormatError, match="'angle_calls' is already registered"):
        trisect.register_format(CALLS)


def test_a_clash_adds_nothing(registry: None) -> None:
    clash = FormatSpec(
        name="brand_new",
        kind="tools",
        terminals=CALLS.terminals,
        regions=CALLS.regions,
        table=CALLS.table,
        codec=JsonArgsCodec,
        aliases=("hermes",),
    )
    with pytest.raises(FormatError, match="'hermes' is already registered"):
        trisect.register_format(clash)
    with pytest.raises(FormatError, match="unknown tool-call format 'brand_new'"):
        Parser(tools="brand_new")
    assert Parser(tools="hermes").tools_spec is not clash


def test_register_checks_the_format(registry: None) -> None:
    with pytest.raises(FormatError):
        trisect.register_format("hermes")  # type: ignore[arg-type]
    broken = FormatSpec(
        name="broken",
        kind="tools",
        terminals={"OPEN": ("<<",), "ALSO": ("<<",)},  # one string, two terminals
        regions={CONTENT_STATE: Region.CONTENT},
        table=rules((CONTENT_STATE, "OPEN", CONTENT_STATE, ()), (CONTENT_STATE, "ALSO", CONTENT_STATE, ())),
    )
    with pytest.raises(FormatError):
        trisect.register_format(broken)
    with pytest.raises(FormatError, match="unknown tool-call format 'broken'"):
        Parser(tools="broken")


@pytest.mark.parametrize(
    ("kind", "name", "suggestion"),
    [
        ("reasoning", "deepseek-r1", "did you mean deepseek_r1?"),
        ("tools", "qwen3-coder", "did you mean qwen3_coder?"),
        ("tools", "Hermes", "did you mean hermes?"),
        ("tools", "granite_20b_fc", "did you mean granite-20b-fc?"),
        ("tools", "hermez", "did you mean hermes?"),
        ("reasoning", "hermes", "'hermes' is a tool-call format"),
    ],
)
def test_unknown_names_suggest_the_closest(kind: str, name: str, suggestion: str) -> None:
    # vLLM's lookup is exact (no case or -/_ folding), so these are errors with a hint, not aliases
    with pytest.raises(FormatError) as info:
        Parser(**{kind: name})
    assert suggestion in str(info.value)


def test_an_unknown_name_without_a_near_one_lists_the_names() -> None:
    with pytest.raises(FormatError) as info:
        Parser(tools="zzzzzz")
    assert "did you mean" not in str(info.value) and "known: apertus" in str(info.value)
