"""JSON schemas for constrained decoding under ``tool_choice`` required / named.

* ``json_schema(tools, tool_choice)``: for ``tool_choice="required"`` a JSON array of
  ``{"name", "parameters"}`` objects (one ``anyOf`` branch per tool), for a named choice the
  function's arguments object. Tools' ``$defs`` / ``definitions`` are merged at the root (the
  same name with two different definitions is a ``ToolSchemaError``); the caller's tool objects
  are never mutated. This is exactly what ``Parser.parse(..., tool_choice=...)`` reads back.
* ``args_schema(function, strict_level)``: one tool's argument schema inside a structural tag
  (``strict_level``, not to be confused with the parser's ``strict``): ``"auto"`` uses a tool's
  schema when the tool says ``"strict": true`` and any JSON object otherwise; ``"function"``
  uses every tool's schema; ``"parameter"`` also closes every object
  (``additionalProperties: false``).

Cost: one deep copy of each tool's parameters per call.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ..codecs.schema import tool_index
from ..errors import ToolSchemaError
from ..request.choice import normalize_tool_choice

STRICT_LEVELS = ("auto", "function", "parameter")


def functions(tools: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The validated tools' function objects."""
    tool_index(tools)  # validates
    return [t["function"] for t in tools]


def _params(function: Mapping[str, Any]) -> dict[str, Any]:
    params = function.get("parameters")
    return copy.deepcopy(dict(params)) if params else {"type": "object", "properties": {}}


def _merge_defs(target: dict[str, dict[str, Any]], params: dict[str, Any], name: str) -> None:
    for key in ("$defs", "definitions"):
        defs = params.pop(key, None)
        if not defs:
            continue
        bucket = target.setdefault(key, {})
        for def_name, definition in defs.items():
            if def_name in bucket and bucket[def_name] != definition:
                raise ToolSchemaError(f"{key}/{def_name} of tool {name!r} conflicts with another tool's definition")
            bucket[def_name] = definition


def json_schema(
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: Any = "required",
    *,
    parallel_tool_calls: bool = True,
) -> dict[str, Any] | None:
    """The JSON schema a constrained decoder should follow for ``tool_choice`` (``None`` for
    ``"auto"`` / ``"none"``: use ``structural_tag`` or no constraint)."""
    index = tool_index(tools)
    choice, forced = normalize_tool_choice(tool_choice, tools, index)
    if choice in ("auto", "none"):
        return None
    assert tools is not None
    listed = functions(tools)
    if choice == "named":
        function = next(f for f in listed if f["name"] == forced)
        return _params(function)
    defs: dict[str, dict[str, Any]] = {}
    branches = []
    for function in listed:
        params = _params(function)
        _merge_defs(defs, params, function["name"])
        branches.append(
            {
                "type": "object",
                "properties": {"name": {"type": "string", "enum": [function["name"]]}, "parameters": params},
                "required": ["name", "parameters"],
            }
        )
    schema: dict[str, Any] = {"type": "array", "minItems": 1, "items": {"anyOf": branches}}
    if not parallel_tool_calls:
        schema["maxItems"] = 1
    schema.update(defs)
    return schema


def _strict_schema(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {k: _strict_schema(v) for k, v in schema.items()}
        if out.get("type") == "object" or "properties" in out:
            out.setdefault("additionalProperties", False)
        return out
    if isinstance(schema, list):
        return [_strict_schema(v) for v in schema]
    return schema


def args_schema(function: Mapping[str, Any], strict: str) -> dict[str, Any]:
    """One tool's argument schema at ``strict`` (a ``STRICT_LEVELS`` value)."""
    if strict == "auto" and not function.get("strict"):
        return {"type": "object"}
    params = _params(function)
    return _strict_schema(params) if strict == "parameter" else params
