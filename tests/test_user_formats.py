"""Formats a user brings at run time: a ``FormatSpec`` passed to ``Parser``, ``register_format``,
and the errors for names that are not registered."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import trisect
from support import cases
from support.known_losses import KNOWN_LOSSES
from trisect import Act, FormatError, FormatSpec, Parser, Region, grammar, rules
from trisect.cli import main as cli_main
from trisect.codecs import JsonArgsCodec
from trisect.engine.spec import CONTENT as CONTENT_STATE
from trisect.formats import _catalogue, reasoning_format, tool_format
from trisect.testing import check_case

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


# ---------------------------------------------------------------------------- formats as TOML files

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
# example file -> (the built-in format it writes out, the names its cases use)
TOML_TWINS = {
    "qwen3.toml": ("reasoning", "qwen3", {"qwen3"}),
    "qwen3_coder.toml": ("tools", "qwen3_coder", {"qwen3_coder", "qwen3_xml"}),
    "kimi_k2.toml": ("tools", "kimi_k2", {"kimi_k2"}),
}


def _builtin(kind: str, name: str) -> FormatSpec:
    return reasoning_format(name) if kind == "reasoning" else tool_format(name)


@pytest.mark.parametrize("file", sorted(TOML_TWINS))
def test_an_example_file_is_its_built_in_format(file: str) -> None:
    kind, name, _names = TOML_TWINS[file]
    spec, builtin = trisect.load_format(EXAMPLES / file), _builtin(kind, name)
    assert spec.kind == kind and spec.name == f"{name}_toml"
    for field in ("terminals", "regions", "table"):
        assert dict(getattr(spec, field)) == dict(getattr(builtin, field)), field
    for field in (
        "special",
        "codec",
        "strip",
        "turn_markers",
        "tool_start_ends_reasoning",
        "plain_when_off",
        "model_opens",
        "grammar",
        "validate_names",
    ):
        assert getattr(spec, field) == getattr(builtin, field), field
    for options in ({}, {"enable_thinking": False}, {"thinking": False}, {"enable_thinking": True}):
        request = Parser().request(chat_template_kwargs=options)
        assert spec.initial(request) == builtin.initial(request)


def _toml_cases() -> list[tuple[str, dict[str, Any]]]:
    rename = {}
    for file, (kind, _name, names) in TOML_TWINS.items():
        for n in names:
            rename[(kind, n)] = file
    out = []
    for data in cases.load_cases():
        files = {rename.get(("reasoning", data.get("reasoning"))), rename.get(("tools", data.get("tools_format")))}
        if files - {None}:
            out.append((data["key"], data))
    return out


TOML_CASES = _toml_cases()


@pytest.fixture(scope="module")
def toml_formats() -> Iterator[dict[tuple[str, str], str]]:
    """The example formats registered under their own names, for the replay harness."""
    saved = {kind: dict(formats) for kind, formats in _catalogue().items()}
    names = {}
    for file, (kind, _name, aliases) in TOML_TWINS.items():
        spec = trisect.register_format(trisect.load_format(EXAMPLES / file))
        names.update({(kind, alias): spec.name for alias in aliases})
    yield names
    for kind, formats in _catalogue().items():
        formats.clear()
        formats.update(saved[kind])


@pytest.mark.parametrize("data", [d for _, d in TOML_CASES], ids=[i for i, _ in TOML_CASES])
def test_the_family_cases_replay_through_the_toml_formats(data: dict[str, Any], toml_formats: dict) -> None:
    case = dict(data)
    case["reasoning"] = toml_formats.get(("reasoning", data.get("reasoning")), data.get("reasoning"))
    case["tools_format"] = toml_formats.get(("tools", data.get("tools_format")), data.get("tools_format"))
    assert (case["reasoning"], case["tools_format"]) != (data.get("reasoning"), data.get("tools_format"))
    checked = case["id"] not in KNOWN_LOSSES  # the format's own known losses (tests/test_cases.py)
    assert check_case(cases.as_case(case), seeds=(0,), splits=False, nothing_lost=checked) > 0


def test_there_are_cases_for_the_toml_formats() -> None:
    assert len(TOML_CASES) >= 100


def test_a_toml_format_by_command_line(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text(
        "<think>plan</think>ok<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n</function>\n</tool_call>"
    )
    args = [
        "parse",
        str(out),
        "--format-file",
        str(EXAMPLES / "qwen3.toml"),
        "--format-file",
        str(EXAMPLES / "qwen3_coder.toml"),
    ]
    buffer = io.StringIO()
    assert cli_main(args, out=buffer) == 0
    msg = json.loads(buffer.getvalue())
    assert (msg["reasoning"], msg["content"]) == ("plan", "ok")
    assert msg["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a": "x"}'}
    assert cli_main(["parse", str(out), "--tools", "hermes", "--format-file", str(EXAMPLES / "kimi_k2.toml")]) == 2


MINIMAL = """\
name = "tiny"
kind = "tools"
special = ["OPEN"]

[terminals]
OPEN = "<<"
CLOSE = ">>"

[regions]
CONTENT = "content"
ARGS = "args"

[transitions]
rows = [
  ["CONTENT", "OPEN", "ARGS", ["call_start"]],
  ["ARGS", "CLOSE", "CONTENT", ["call_end"]],
]

[codec]
type = "json_envelope"
"""


def test_a_minimal_file() -> None:
    spec = trisect.format_from_toml(MINIMAL)
    msg = Parser(tools=spec).parse('a <<{"name": "f", "arguments": {"x": 1}}>> b')
    assert msg.content == "a  b" and _calls(msg) == [("f", {"x": 1})]


def _broken(old: str, new: str) -> str:
    assert old in MINIMAL
    return MINIMAL.replace(old, new, 1)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (MINIMAL + "colour = 1\n", ":21: codec.colour", "unknown key"),
        (_broken('kind = "tools"', "kind = 3"), ":2: kind", "must be a string"),
        (_broken('kind = "tools"', 'kind = "tool"'), ":2: kind", "must be 'reasoning' or 'tools'"),
        (_broken('name = "tiny"\n', ""), "", "the format needs a 'name' key"),
        (
            _broken('["ARGS", "CLOSE", "CONTENT", ["call_end"]]', '["ARGS", "CLOSE", "CONTENT", ["call_ned"]]'),
            ":16: transitions.rows[1]",
            "unknown act ['call_ned']",
        ),
        (
            _broken('["ARGS", "CLOSE", "CONTENT"', '["ARGS", "SHUT", "CONTENT"'),
            ":16: transitions.rows[1]",
            "'SHUT' is not a terminal",
        ),
        (
            _broken('["CONTENT", "OPEN", "ARGS"', '["CONTENT", "OPEN", "BODY"'),
            ":15: transitions.rows[0]",
            "'BODY' is not in regions",
        ),
        (_broken('ARGS = "args"', 'ARGS = "arguments"'), ":11: regions.ARGS", "unknown region 'arguments'"),
        (_broken('special = ["OPEN"]', 'special = ["OPEN", "SHUT"]'), ":3: special[1]", "'SHUT' is not a terminal"),
        (_broken('type = "json_envelope"', 'type = "json_envelop"'), ":20: codec.type", "unknown codec 'json_envelop'"),
        (
            _broken('type = "json_envelope"', 'type = "json_envelope"\nname_keys = 3'),
            ":21: codec.name_keys",
            "must be an array",
        ),
        (_broken('OPEN = "<<"', 'OPEN = ""'), ":6: terminals.OPEN", "non-empty marker"),
        (_broken("[regions]", "version = 2\n[regions]"), ":9: terminals.version", "must be a string"),
        (_broken("rows = [", 'rows = [\n  ["CONTENT", "OPEN"],'), ":15: transitions.rows[0]", "a row is"),
        (
            _broken("[codec]", '[call_name]\nread = "pattern"\npattern = "(?P<nom>.*)"\n\n[codec]'),
            ":21: call_name.pattern",
            "needs a group (?P<name>",
        ),
        ("name = [", "", "not valid TOML"),
    ],
)
def test_a_bad_file_names_the_key_and_the_line(text: str, where: str, message: str) -> None:
    with pytest.raises(FormatError) as info:
        trisect.format_from_toml(text, source="f.toml")
    error = str(info.value)
    assert error.startswith(f"f.toml{where}"), error
    assert message in error, error


def test_a_missing_or_unreadable_file_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="cannot read the format"):
        trisect.load_format(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'name = "\xff"')
    with pytest.raises(FormatError, match="cannot read the format"):
        trisect.load_format(bad)


def test_a_tool_format_cannot_choose_the_start_state() -> None:
    with pytest.raises(FormatError, match="f.toml:3: initial: a tool format starts in CONTENT"):
        trisect.format_from_toml(_broken('kind = "tools"\n', 'kind = "tools"\ninitial = "ARGS"\n'), source="f.toml")


def test_grammars_come_from_a_users_format_too() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    mine = Parser("qwen3", trisect.load_format(EXAMPLES / "qwen3_coder.toml"))
    builtin = Parser("qwen3", "qwen3_coder")
    assert grammar.structural_tag(mine, tools, reasoning=True) == grammar.structural_tag(builtin, tools, reasoning=True)
    assert grammar.lark(mine, tools=tools).text == grammar.lark(builtin, tools=tools).text


def test_the_toml_in_the_format_guide_loads() -> None:
    guide = (Path(__file__).resolve().parents[1] / "docs" / "CONTRIBUTING-FORMATS.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in guide.split("```toml\n")[1:]]
    complete = [b for b in blocks if b.startswith("name = ")]
    assert complete
    for block in complete:
        assert isinstance(trisect.format_from_toml(block, source="guide"), FormatSpec)
