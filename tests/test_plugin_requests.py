"""The plugins' request fields without an engine: ``_common.tool_choice`` hands a named choice on
as the engine's request holds it (chat-style ``{"function": {"name"}}`` or Responses-style flat
``{"name"}``, a pydantic model or a dict), and trisect's own ``tool_choice`` reading forces that
function either way."""

from __future__ import annotations

from typing import Any

import pytest

import trisect
from trisect.integrations._common import tool_choice

TOOLS = [
    {
        "type": "function",
        "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}},
    },
    {"type": "function", "function": {"name": "g", "parameters": {"type": "object"}}},
]


class Model:
    """A pydantic-like named choice (what vLLM's request objects hold)."""

    def __init__(self, **data: Any) -> None:
        self.data = data

    def model_dump(self, exclude_none: bool = False) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if not (exclude_none and v is None)}


@pytest.mark.parametrize(
    "choice",
    [
        {"type": "function", "function": {"name": "f"}},
        {"type": "function", "name": "f"},
        Model(type="function", name="f", strict=None),
        Model(type="function", function={"name": "f"}),
    ],
)
def test_named_choice_forces_that_function(choice: Any) -> None:
    parser = trisect.Parser(tools="hermes")
    message = parser.parse('{"a": 1}', tools=TOOLS, tool_choice=tool_choice(choice, True))
    assert [(c.name, c.arguments) for c in message.tool_calls] == [("f", '{"a": 1}')]
    assert message.content is None


def test_unset_choice_is_auto_with_tools_and_none_without() -> None:
    assert tool_choice(None, True) == "auto"
    assert tool_choice(None, False) == "none"
    assert tool_choice("required", True) == "required"
