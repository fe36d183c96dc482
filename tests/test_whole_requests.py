"""Per-request set-up cost: validated requests and tool sets cached by content.

A new list with the same tools is a cache hit (one ``marshal`` and a hash); the cached request
is built from a private copy, so a caller changing its objects afterwards changes nothing cached;
invalid options raise the same typed errors every time; types are exact (``True`` is not ``1``,
``bytes`` is not ``bytearray``).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from trisect import Parser, RequestError, ToolSchemaError
from trisect.request.options import make_request, tool_set


def _tools(n: int = 3) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": f"tool_{i}",
                "description": "does things",
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "n": {"type": "integer"}},
                    "required": ["path"],
                },
            },
        }
        for i in range(n)
    ]


def test_a_new_list_with_the_same_tools_is_a_cache_hit() -> None:
    first = make_request({"tools": _tools(), "tool_choice": "auto"})
    again = make_request({"tools": _tools(), "tool_choice": "auto"})
    assert again is first
    assert set(first.tool_index) == {"tool_0", "tool_1", "tool_2"}


def test_the_cached_request_is_a_private_copy() -> None:
    tools = _tools(2)
    request = make_request({"tools": tools})
    assert make_request({"tools": tools}) is request
    tools[0]["function"]["name"] = "renamed"
    tools[0]["function"]["parameters"]["properties"]["path"]["type"] = "integer"
    assert set(request.tool_index) == {"tool_0", "tool_1"}
    assert request.tool_index["tool_0"]["properties"]["path"]["type"] == "string"
    assert request.tools is not None and request.tools[0] is not tools[0]
    changed = make_request({"tools": tools})  # new content: a new request
    assert changed is not request and set(changed.tool_index) == {"renamed", "tool_1"}
    assert make_request({"tools": tools}) is changed


@pytest.mark.parametrize(
    ("tools", "error"),
    [
        ([{"type": "function", "function": {"name": ""}}], "tools[0].function.name must be a non-empty string"),
        ([{"type": "function", "function": {"name": "f", "parameters": {"type": "array"}}}], "must be 'object'"),
        (_tools(1) + _tools(1), "defined twice"),
        ([{"type": "function", "function": {"name": "f", "strict": 1, "parameters": {}}}], "strict must be true"),
        ("not a list", "tools must be a list"),
    ],
)
def test_invalid_tools_raise_the_same_error_every_time(tools: Any, error: str) -> None:
    for _ in range(3):
        with pytest.raises(ToolSchemaError, match=re.escape(error)):
            make_request({"tools": copy.deepcopy(tools)})
        with pytest.raises(ToolSchemaError, match=re.escape(error)):
            Parser("qwen3", "hermes").parse("x", tools=copy.deepcopy(tools))


def test_types_are_exact() -> None:
    valid = [{"type": "function", "function": {"name": "f", "strict": True, "parameters": {}}}]
    make_request({"tools": valid})
    with pytest.raises(ToolSchemaError):  # 1 == True, but 1 is not a boolean
        make_request({"tools": [{"type": "function", "function": {"name": "f", "strict": 1, "parameters": {}}}]})
    # marshal writes any buffer as bytes: such options are not cached, and keep their own rules
    assert make_request({"prompt_token_ids": bytearray(b"\x01\x02")}).prompt_token_ids == (1, 2)
    with pytest.raises(RequestError):
        make_request({"prompt_token_ids": b"\x01\x02"})
    assert make_request({"prompt_token_ids": bytearray(b"\x01\x02")}).prompt_token_ids == (1, 2)


def test_an_id_factory_is_cached_by_identity_and_shares_the_tool_set() -> None:
    def ids(index: int) -> str:
        return f"id{index}"

    def other(index: int) -> str:
        return f"id{index}"

    a = make_request({"tools": _tools(), "id_factory": ids})
    b = make_request({"tools": _tools(), "id_factory": ids})
    c = make_request({"tools": _tools(), "id_factory": other})
    assert a is b  # the same function, the same content: one request (a stream state's resume asks often)
    assert c is not a and c.id_factory is other  # another function is another request ...
    assert a.tool_index is c.tool_index  # ... with the same tools
    assert tool_set(_tools())[1] is a.tool_index
    assert a.id_factory is ids


def test_parse_and_stream_results_do_not_depend_on_the_cache() -> None:
    parser = Parser("qwen3", "hermes")
    text = '<think>x</think>y<tool_call>{"name": "tool_1", "arguments": {"path": "p"}}</tool_call>'
    first = parser.parse(text, tools=_tools(), id_factory=lambda i: "c")
    for _ in range(3):
        assert parser.parse(text, tools=_tools(), id_factory=lambda i: "c") == first
        cached = parser.parse(text, tools=_tools())
        assert (cached.reasoning, cached.content, cached.tool_calls[0].arguments) == ("x", "y", '{"path": "p"}')
