"""Request semantics on top of the engine: ``tool_choice``, ``parallel_tool_calls``,
``include_reasoning``.

* ``tool_choice="none"``: the reasoning format is compiled without the tool format, so call
  markers are text wherever the format puts them (in streaming too).
* ``"required"`` / a named function: the output is what a constrained decoder was told to
  produce (``grammar.json_schema``): a JSON array of ``{"name", "parameters"}`` objects, or the
  named function's arguments object. Both are small formats of their own (``constrained_spec``)
  that reuse the structured JSON codecs, so arguments stream incrementally like any call. A tool
  format whose model keeps its native markers under constraint
  (``FormatSpec.grammar.native_under_constraint``) is parsed as with ``"auto"``.
* ``parallel_tool_calls=False`` and ``include_reasoning=False`` are an event filter
  (``filter.py``).

Every check on the caller's input (``normalize_tool_choice``, ``check_tools``) runs once, before
any parsing, and raises ``RequestError`` / ``ToolSchemaError``. A property's type name outside
JSON Schema (``"str"``, a typo) is not such an error for parsing: the property is untyped, as
``codecs.schema.declared_types`` reads it (vLLM, TensorRT-LLM and mlx-lm accept such schemas, and a
sloppy schema must not cost the user the answer). A ``strict=True`` request, and a grammar (which a
decoder compiles from the schema), reject it by name.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from ..codecs import JsonEnvelope, NamedArgs
from ..codecs.schema import is_mapping
from ..engine.spec import ARGS_DONE, CONTENT, REASONING, Act, FormatSpec, Region, combine, rules
from ..errors import RequestError, ToolSchemaError

CHOICES = ("none", "auto", "required")


def normalize_tool_choice(
    value: Any, tools: Sequence[Mapping[str, Any]] | None, index: Mapping[str, Any]
) -> tuple[str, str | None]:
    """``(kind, forced name)`` for an OpenAI ``tool_choice``; errors for impossible choices
    (``tools``, when given, are checked as a grammar needs them: type names included)."""
    if tools is not None:
        check_tools(tools, types=True)
    if value is None:
        return "auto", None
    if isinstance(value, str):
        if value not in CHOICES:
            raise RequestError(f"tool_choice must be one of {', '.join(CHOICES)} or a named function, not {value!r}")
        if value == "required" and not index:
            raise RequestError('tool_choice="required" needs at least one tool in tools')
        return value, None
    if is_mapping(value) and value.get("type", "function") == "function":
        function = value.get("function")
        name = function.get("name") if is_mapping(function) else value.get("name")
        if not isinstance(name, str) or not name:
            raise RequestError("a named tool_choice needs function.name")
        if name not in index:
            known = ", ".join(sorted(index)) or "no tools were given"
            raise RequestError(f"tool_choice names {name!r}, which is not among the tools ({known})")
        return "named", name
    raise RequestError(f"unsupported tool_choice {value!r}")


def check_tools(tools: Sequence[Mapping[str, Any]], *, types: bool) -> None:
    """Reject tool definitions a grammar or a typed parse cannot use (beyond ``tool_index``);
    with ``types``, also a property type name outside JSON Schema (see the module docstring)."""
    seen: set[str] = set()
    for n, tool in enumerate(tools):
        function = tool.get("function") if is_mapping(tool) else None
        if not is_mapping(function):
            continue  # tool_index reports it
        name = function.get("name")
        if isinstance(name, str):
            if name in seen:
                raise ToolSchemaError(f"tools[{n}]: function {name!r} is defined twice")
            seen.add(name)
        params = function.get("parameters")
        if not is_mapping(params):
            continue
        where = f"tools[{n}].function.parameters"
        kind = params.get("type", "object")
        if kind != "object" and not (isinstance(kind, list) and "object" in kind):
            raise ToolSchemaError(f"{where}.type must be 'object', not {kind!r}")
        props = params.get("properties") or {}
        if is_mapping(props):
            for key, schema in props.items():
                if not isinstance(schema, (Mapping, bool)):
                    raise ToolSchemaError(f"{where}.properties.{key} must be a JSON schema (an object)")
                if not types:
                    continue
                if type(schema) is dict:
                    kind = schema.get("type")  # the common case, inline: one lookup per property
                    if type(kind) is str and kind in _TYPES and "anyOf" not in schema and "oneOf" not in schema:
                        continue
                if is_mapping(schema):
                    _check_types(schema, f"{where}.properties.{key}")
        required = params.get("required")
        if required is not None and (not isinstance(required, list) or not all(isinstance(r, str) for r in required)):
            raise ToolSchemaError(f"{where}.required must be a list of property names")
        for defs_key in ("$defs", "definitions"):
            defs = params.get(defs_key)
            if defs is not None and not is_mapping(defs):
                raise ToolSchemaError(f"{where}.{defs_key} must be an object")
        strict = function.get("strict")
        if strict is not None and not isinstance(strict, bool):
            raise ToolSchemaError(f"tools[{n}].function.strict must be true or false")


# JSON Schema's type names, and "float", which tool definitions write for "number"
TYPE_NAMES = ("string", "integer", "number", "boolean", "null", "object", "array", "float")
_TYPES = frozenset(TYPE_NAMES)


def _check_types(schema: Mapping[str, Any], where: str) -> None:
    """The types a raw value is read by (``codecs.schema.declared_types``: a property's
    ``type``, or those of its ``anyOf`` / ``oneOf`` branches) must be JSON schema types: a typo
    such as ``"integr"`` would silently leave the value a string. Nested schemas (``items``,
    an object's own properties) are the grammar's business, not the parser's."""
    kind = schema.get("type")
    if kind is not None and not (type(kind) is str and kind in _TYPES):
        for name in kind if isinstance(kind, list) else (kind,):
            if not isinstance(name, str) or name not in _TYPES:
                close = difflib.get_close_matches(str(name), TYPE_NAMES, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ToolSchemaError(f"{where}.type {name!r} is not a JSON schema type{hint}")
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            for k, branch in enumerate(branches):
                if is_mapping(branch):
                    _check_types(branch, f"{where}.{key}[{k}]")


# ---------------------------------------------------------------------------- constrained output

_LIST, _ITEM, _AFTER, _DONE = "TC_LIST", "TC_ITEM", "TC_AFTER", "TC_DONE"


def _reopen_reasoning(
    reasoning: FormatSpec | None,
) -> tuple[dict[str, tuple[str, ...]], list[tuple[Any, ...]], dict[str, Region]]:
    """A reasoning block the model writes although the grammar was to apply from the first
    token is still reasoning: ``CONTENT --THINK_START--> REASONING`` (never content), written
    as text too where the family reopens reasoning from content only by id (Qwen3)."""
    if reasoning is None or "THINK_START" not in reasoning.terminals or REASONING not in reasoning.regions:
        return {}, [], {}
    reopen = reasoning.table.get((CONTENT, "THINK_START"))
    if reopen is not None and not reopen.by_id:
        return {}, [], {}
    terminals = {"THINK_START": reasoning.terminals["THINK_START"]}
    return terminals, [(CONTENT, "THINK_START", REASONING, ())], {REASONING: Region.REASONING}


@lru_cache(maxsize=256)
def constrained_spec(reasoning: FormatSpec | None, forced: str | None) -> FormatSpec:
    """The output format of ``tool_choice="required"`` (``forced=None``) or a named choice.

    ``required``: ``[{"name": "f", "parameters": {…}}, …]`` (``arguments`` accepted too); each
    ``{`` opens a call that ends where its JSON ends. Named: the arguments object itself.
    Text before the JSON is content; text after it is content too (a constrained decoder
    produces none).
    """
    think_terminals, think_rows, think_regions = _reopen_reasoning(reasoning)
    start, mark, end = Act.CALL_START, Act.ARG_MARKER, Act.CALL_END
    if forced is None:
        return FormatSpec(
            name="required",
            kind="tools",
            terminals={"TC_OPEN": ("[",), "TC_CALL": ("{",), "TC_SEP": (",",), "TC_CLOSE": ("]",), **think_terminals},
            regions={
                CONTENT: Region.CONTENT,
                _LIST: Region.SKIP,
                _ITEM: Region.ARGS,
                _AFTER: Region.SKIP,
                _DONE: Region.CONTENT,
                **think_regions,
            },
            table=rules(
                (CONTENT, "TC_OPEN", _LIST, ()),
                (_LIST, "TC_CALL", _ITEM, (start, mark)),
                (_LIST, "TC_CLOSE", _DONE, ()),
                (_ITEM, ARGS_DONE, _AFTER, (end,)),
                (_AFTER, "TC_SEP", _LIST, ()),
                (_AFTER, "TC_CLOSE", _DONE, ()),
                *think_rows,
            ),
            codec=JsonEnvelope(name_keys=("name",), args_keys=("parameters", "arguments")),
            validate_names=True,
            reference="tool_choice=required: the JSON array a constrained decoder produces (grammar.json_schema)",
        )
    return FormatSpec(
        name=f"named:{forced}",
        kind="tools",
        terminals={"TC_CALL": ("{",), **think_terminals},
        regions={CONTENT: Region.CONTENT, _ITEM: Region.ARGS, _DONE: Region.CONTENT, **think_regions},
        table=rules(
            (CONTENT, "TC_CALL", _ITEM, (start, mark)),
            (_ITEM, ARGS_DONE, _DONE, (end,)),
            *think_rows,
        ),
        codec=NamedArgs(forced),
        reference="named tool_choice: the arguments object a constrained decoder produces (grammar.json_schema)",
    )


@lru_cache(maxsize=256)
def constrained_format(reasoning: FormatSpec | None, forced: str | None) -> FormatSpec:
    """``reasoning`` combined with ``constrained_spec`` (cached: compiled once per pair). A
    reasoning format that reopens a block from content by id only gives that row up: under a
    constraint a written ``<think>`` reopens it too (``_reopen_reasoning``)."""
    spec = constrained_spec(reasoning, forced)
    reopen = reasoning.table.get((CONTENT, "THINK_START")) if reasoning is not None else None
    if reasoning is not None and reopen is not None and reopen.by_id:
        table = {k: v for k, v in reasoning.table.items() if k != (CONTENT, "THINK_START")}
        reasoning = replace(reasoning, table=table)
    return combine(reasoning, spec)


def keeps_native_markers(tools: FormatSpec | None) -> bool:
    """Does the model of this tool format keep its own markers under a constraint?"""
    return tools is not None and tools.grammar.native_under_constraint
