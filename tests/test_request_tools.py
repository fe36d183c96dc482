"""``trisect.request.tools``: the tool and history shaping that the server and the engine
plugins share (one definition, read by both)."""

from __future__ import annotations

from typing import Any

import pytest

from trisect.errors import ToolSchemaError
from trisect.request.tools import history_tool_calls, openai_tools

CHAT = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


class Model:  # the shape of a pydantic model as engines hand tools over
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def model_dump(self, exclude_none: bool = False) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if v is not None or not exclude_none}


def test_chat_responses_and_model_shapes_become_chat_tools() -> None:
    flat = {"type": "function", "name": "f", "parameters": {"type": "object"}, "description": None}
    assert openai_tools([CHAT]) == [CHAT]
    assert openai_tools([flat]) == [CHAT]
    assert openai_tools([Model(flat)]) == [CHAT]
    assert openai_tools([{"function": CHAT["function"]}]) == [{"function": CHAT["function"]}]  # type defaults
    assert openai_tools(None) is None and openai_tools([]) is None


def test_other_tool_types_are_left_out_or_refused_when_strict() -> None:
    assert openai_tools([{"type": "web_search"}, CHAT]) == [CHAT]
    with pytest.raises(ToolSchemaError, match="'web_search'"):
        openai_tools([{"type": "web_search"}], strict=True)
    with pytest.raises(ToolSchemaError, match="function.name"):
        openai_tools([{"type": "function", "function": {"parameters": {}}}], strict=True)


def test_history_tool_calls_counts_assistant_calls_only() -> None:
    call = {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "x", "tool_calls": [call]},
        {"role": "assistant", "tool_calls": [call, call]},
        {"role": "tool", "content": "r"},
        {"role": "assistant", "tool_calls": None},
        "not a message",
    ]
    assert history_tool_calls(messages) == 2
    assert history_tool_calls(None) == 0


def test_the_plugins_use_the_same_definition() -> None:
    from trisect.integrations import _common

    assert _common.openai_tools is openai_tools
