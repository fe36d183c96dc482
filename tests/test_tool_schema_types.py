"""A tool schema's ``type`` outside JSON Schema (``"str"``, a typo) leaves the property untyped:
``parse()`` and ``stream()`` read its value as they read a property with no type, since vLLM,
TensorRT-LLM and mlx-lm accept such schemas and a sloppy schema must not cost the user the answer.
Only ``strict=True``, and a grammar (a decoder compiles the schema), reject it with a
``ToolSchemaError`` naming where it is, before any parsing (``request/choice.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from trisect import MessageBuilder, Parser, ToolSchemaError, grammar


def _tools(prop: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": prop}}}}
    ]


@pytest.mark.parametrize(
    ("prop", "where", "hint"),
    [
        ({"type": "integr"}, "properties.n.type 'integr'", "did you mean 'integer'?"),
        ({"type": ["string", "nul"]}, "properties.n.type 'nul'", "did you mean 'null'?"),
        ({"anyOf": [{"type": "intger"}, {"type": "null"}]}, "properties.n.anyOf[0].type 'intger'", "'integer'"),
        ({"type": 3}, "properties.n.type 3", ""),
    ],
)
def test_an_unknown_type_is_a_tool_schema_error_only_under_strict(prop: dict[str, Any], where: str, hint: str) -> None:
    parser = Parser(tools="qwen3_coder")
    with pytest.raises(ToolSchemaError) as info:
        parser.parse("hi", tools=_tools(prop), strict=True)
    assert where in str(info.value) and hint in str(info.value)
    with pytest.raises(ToolSchemaError):
        parser.stream(tools=_tools(prop), strict=True)
    with pytest.raises(ToolSchemaError):
        grammar.json_schema(_tools(prop), "required")


# Values as the Qwen3-Coder template writes them ('<parameter=' + name + '>\n' + value + '\n</parameter>'):
# an unknown type name says nothing about the value, so it reads as under a schema with no type.
_VALUES = ["1", "x y", "[1, 2]"]


@pytest.mark.parametrize("prop", [{"type": "str"}, {"type": "integr"}, {"type": 3}, {"anyOf": [{"type": "intger"}]}])
@pytest.mark.parametrize("value", _VALUES)
def test_an_unknown_type_is_read_as_untyped(prop: dict[str, Any], value: str) -> None:
    call = f"<tool_call>\n<function=f>\n<parameter=n>\n{value}\n</parameter>\n</function>\n</tool_call>"
    parser = Parser(tools="qwen3_coder")
    untyped = [(c.name, c.arguments) for c in parser.parse(call, tools=_tools({})).tool_calls]
    assert untyped and untyped[0][0] == "f"
    assert [(c.name, c.arguments) for c in parser.parse(call, tools=_tools(prop)).tool_calls] == untyped
    stream = parser.stream(tools=_tools(prop))
    built = MessageBuilder()
    built.add(stream.feed(call))
    built.add(stream.finish())
    assert [(c.name, c.arguments) for c in built.message().tool_calls] == untyped


def test_a_property_type_not_in_json_schema_costs_no_answer_in_hermes() -> None:
    """The issue's probe: a hermes call to a tool whose schema writes ``"str"``."""
    parameters = {"type": "object", "properties": {"a": {"type": "str"}}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": parameters}}]
    text = '<tool_call>\n{"name": "f", "arguments": {"a": "x"}}\n</tool_call>'
    message = Parser("qwen3", "hermes").parse(text, tools=tools)
    assert [(c.name, c.arguments) for c in message.tool_calls] == [("f", '{"a": "x"}')]
    with pytest.raises(ToolSchemaError, match="did you mean 'string'"):
        Parser("qwen3", "hermes").parse(text, tools=tools, strict=True)


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "integer"},
        {"type": ["string", "null"]},
        {"type": "float"},  # tool definitions write it for "number"
        {"enum": ["a", "b"]},
        {},
        {"type": "object", "properties": {"k": {"type": "array", "items": {"type": "number"}}}},
    ],
)
def test_known_types_pass(prop: dict[str, Any]) -> None:
    call = "<tool_call>\n<function=f>\n<parameter=n>\n1\n</parameter>\n</function>\n</tool_call>"
    assert Parser(tools="qwen3_coder").parse(call, tools=_tools(prop)).tool_calls
