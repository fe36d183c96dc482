"""Tool definitions and schema-typed values.

Formats that carry arguments as raw text (XML-style parameters, DSML, …) turn each value into
JSON by the type its tool's JSON schema declares. The rules, one place for every format:

* the declared types of a parameter come from ``type`` (a string or a list), else from the
  branches of ``anyOf`` / ``oneOf``, else from the JSON types of ``enum`` / ``const`` values;
  a parameter the schema does not describe is a string;
* a value becomes the first declared non-string type it is valid for (``integer``: an integer
  literal; ``number``: a JSON number, or a plain decimal such as ``1.`` that Python reads;
  ``boolean``: ``true``/``false`` in any case; ``null``: ``null`` / ``None``; ``object`` /
  ``array``: JSON text of that kind, or a Python literal of that kind, ``{'k': 'v'}``, which
  templates that render arguments with ``| string`` teach the model), written exactly as the
  model wrote it where that is already valid JSON; ``float`` means ``number``;
* otherwise it stays a string — also when the schema allows no string at all: a value is never
  dropped or invented.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from ..engine.jsonscan import JsonScanner, loads_as_integer
from ..errors import ToolSchemaError
from .base import integer_text

_JSON_TYPES = ("string", "integer", "number", "boolean", "null", "object", "array")
# "float", which tool definitions write for "number" (request/choice.py accepts it; vLLM 0.33
# coerces it as a number, tool_parsers/utils.py:1126-1151)
_ALIASES = {"float": "number"}
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")
_loose_int = re.compile(r"[+-]?[0-9]+\Z")


def is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, with the common ``dict`` checked first (ABC checks are slow)."""
    return type(value) is dict or isinstance(value, Mapping)


def tool_index(tools: Sequence[Mapping[str, Any]] | None) -> dict[str, Mapping[str, Any]]:
    """Validate OpenAI tool definitions and map each function name to its parameters schema."""
    if tools is None:
        return {}
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        raise ToolSchemaError("tools must be a list of OpenAI tool definitions")
    index: dict[str, Mapping[str, Any]] = {}
    for n, tool in enumerate(tools):
        if not is_mapping(tool):
            raise ToolSchemaError(f"tools[{n}] is not an object")
        function = tool.get("function") if tool.get("type", "function") == "function" else None
        if not is_mapping(function):
            raise ToolSchemaError(f"tools[{n}] is not a function tool with a 'function' object")
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ToolSchemaError(f"tools[{n}].function.name must be a non-empty string")
        params = function.get("parameters", {})
        if params is None:
            params = {}
        if not is_mapping(params):
            raise ToolSchemaError(f"tools[{n}].function.parameters must be a JSON schema object")
        props = params.get("properties", {})
        if props is not None and not is_mapping(props):
            raise ToolSchemaError(f"tools[{n}].function.parameters.properties must be an object")
        index[name] = params
    return index


def parameter_schema(params: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    if not params:
        return None
    props = params.get("properties") or {}
    schema = props.get(key)
    return schema if is_mapping(schema) else None


def declared_types(schema: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The JSON types a parameter schema allows, in declaration order (empty = unknown)."""
    if not schema:
        return ()
    kind = schema.get("type")
    if isinstance(kind, str):
        canonical = _json_type(kind)
        return (canonical,) if canonical else ()
    if isinstance(kind, list):
        found = [t for t in map(_json_type, kind) if t]
        return tuple(dict.fromkeys(found))
    out: list[str] = []
    for branch_key in ("anyOf", "oneOf"):
        for branch in schema.get(branch_key) or ():
            if is_mapping(branch):
                out.extend(t for t in declared_types(branch) if t not in out)
    if out:
        return tuple(out)
    values = schema.get("enum")
    if values is None and "const" in schema:
        values = [schema["const"]]
    if isinstance(values, list):
        for v in values:
            t = _type_of(v)
            if t not in out:
                out.append(t)
    return tuple(out)


def _json_type(name: Any) -> str | None:
    """The JSON type a schema's type name means (``float`` is ``number``), or None."""
    if not isinstance(name, str):
        return None
    return name if name in _JSON_TYPES else _ALIASES.get(name)


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def streams_as_string(types: tuple[str, ...]) -> bool:
    """A value can be streamed character by character only if it can only be a string."""
    return not types or types == ("string",)


def typed_value(raw: str, types: tuple[str, ...]) -> str:
    """The JSON text for a raw parameter value, typed by the declared types (see module doc)."""
    for kind in types:
        text = _as_type(raw, kind)
        if text is not None:
            return text
    return json.dumps(raw, ensure_ascii=False)


def _as_type(raw: str, kind: str) -> str | None:
    value = raw.strip()
    if kind == "integer":
        text = value if _INTEGER.match(value) else integer_text(value) if _loose_int.match(value) else None
        # an integer json.loads refuses (too many digits) is no integer here: the value stays text
        return text if text is not None and loads_as_integer(text) else None
    if kind == "number":
        if _NUMBER.match(value):
            return value if not _INTEGER.match(value) or loads_as_integer(value) else None
        try:
            number = float(value)
        except ValueError:
            return None
        if math.isfinite(number) and not value.lower().startswith(("inf", "+inf", "-inf", "nan")):
            return json.dumps(number)
        return None
    if kind == "boolean":
        lowered = value.lower()
        return lowered if lowered in ("true", "false") else None
    if kind == "null":
        return "null" if value in ("null", "None", "NULL") else None
    if kind in ("object", "array"):
        opener = "{" if kind == "object" else "["
        if not value.startswith(opener):
            return None
        scanner = JsonScanner()
        if scanner.feed(value) == len(value) and (scanner.done or scanner.close()):
            return value
        return _python_literal(value, dict if kind == "object" else list)
    return None


_LITERAL_LIMIT = 100_000  # characters: a longer Python literal stays a string (ast's cost and depth)


def _python_literal(value: str, kind: type) -> str | None:
    """A Python literal of ``kind`` (``{'k': 'v'}``, ``[1, None]``) as JSON: the Qwen3-Coder
    template renders non-string arguments with ``| string``, a Python repr, so the model writes
    them so. Read with ``ast.literal_eval`` (literals only, never evaluated code); None when it
    is not one, holds a value JSON cannot hold (a set, bytes, NaN), or is too long or deep."""
    if len(value) > _LITERAL_LIMIT:
        return None
    try:
        parsed = ast.literal_eval(value)
        if type(parsed) is not kind:
            return None
        return json.dumps(parsed, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
