"""A tool schema's ``type`` must be one the parser can read a value by (a property's type, or
its anyOf / oneOf branches'): a typo is a ``ToolSchemaError`` naming where it is, before any
parsing (``request/choice.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from trisect import Parser, ToolSchemaError, grammar


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
def test_an_unknown_type_is_a_tool_schema_error(prop: dict[str, Any], where: str, hint: str) -> None:
    parser = Parser(tools="qwen3_coder")
    with pytest.raises(ToolSchemaError) as info:
        parser.parse("hi", tools=_tools(prop))
    assert where in str(info.value) and hint in str(info.value)
    with pytest.raises(ToolSchemaError):
        parser.stream(tools=_tools(prop))
    with pytest.raises(ToolSchemaError):
        grammar.json_schema(_tools(prop), "required")


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
