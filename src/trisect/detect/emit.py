"""A synthesised format written as a format file (``trisect detect --emit-toml``).

The file is in the schema ``trisect.load_format`` reads (``docs/CONTRIBUTING-FORMATS.md``,
"Formats as TOML files"), so a user can keep it, edit it and load it back: what the spec says
as data (terminals, special tokens, regions, the transition table, turn markers) is written from
the spec itself; what a Python spec holds as functions (the initial-state rule, the key and name
readers) is written from the recipe ``synth`` recorded when it built them. Only synthesised
formats have a recipe: a registered format is named, not emitted.

Cost: linear in the size of the table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..codecs import JsonArgsCodec, JsonEnvelope, XmlParams
from ..engine.spec import FormatSpec, Rule
from ..errors import FormatError
from .synth import RECIPES


def _string(value: str) -> str:
    # a JSON string is a TOML basic string: the same escapes, UTF-8 kept as it is
    return json.dumps(value, ensure_ascii=False)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise FormatError(f"cannot write {value!r} as TOML")


def _guard(rule: Rule) -> dict[str, Any]:
    """A rule's guards (``Rule.follow`` and the rest) that differ from the defaults."""
    guard: dict[str, Any] = {}
    if rule.follow:
        guard["follow"] = list(rule.follow)
    if rule.follow_end:
        guard["follow_end"] = True
    if rule.key_end:
        guard["key_end"] = rule.key_end
    if rule.value_text:
        guard["value_text"] = True
    if rule.by_id:
        guard["by_id"] = True
    if rule.after_interrupt:
        guard["after_interrupt"] = True
    return guard


def _table(name: str, items: Mapping[str, Any]) -> list[str]:
    return [f"[{name}]", *(f"{_key(k)} = {_value(v)}" for k, v in items.items()), ""]


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() and key.isascii() else _string(key)


def _codec(spec: FormatSpec, recipe: Mapping[str, Any]) -> dict[str, Any]:
    codec = spec.codec
    if codec is JsonArgsCodec:
        return {"type": "json_args"}
    if isinstance(codec, JsonEnvelope):
        table: dict[str, Any] = {
            "type": "json_envelope",
            "name_keys": list(codec.name_keys),
            "args_keys": list(codec.args_keys),
        }
        if codec.id_keys:
            table["id_keys"] = list(codec.id_keys)
        if codec.list_opener:
            table["list_opener"] = True
        if codec.requires_args:
            table["requires_args"] = True
        return table
    if isinstance(codec, XmlParams):
        table = {
            "type": "xml_params",
            "param_start": codec.param_start,
            "param_end": codec.param_end,
            "key_end": codec.key_end,
            "trim": codec.trim,
            "key": recipe.get("key", "as_is"),
        }
        if codec.unwrap:
            table["unwrap"] = list(codec.unwrap)
        if codec.style:
            table["style"] = codec.style
        return table
    raise FormatError(f"{spec.name}: its codec has no TOML form")


def format_toml(spec: FormatSpec, *, comment: Iterable[str] = ()) -> str:
    """``spec`` (a format ``trisect.detect`` synthesised) as a format file's text."""
    recipe = RECIPES.get(spec)
    if recipe is None:
        raise FormatError(f"{spec.name} was not synthesised by trisect.detect: name it instead of emitting it")
    lines = [f"# {line}".rstrip() for line in comment]
    lines += ["", "version = 1", f"name = {_string(spec.name)}", f"kind = {_string(spec.kind)}"]
    lines += [f"models = {_value(list(spec.models))}", f"reference = {_string(spec.reference)}"]
    lines.append(f"special = {_value(sorted(spec.special))}")
    if spec.kind == "reasoning":
        lines.append(f"tool_start_ends_reasoning = {_value(spec.tool_start_ends_reasoning)}")
        if spec.plain_when_off:
            lines.append("plain_when_off = true")
        if spec.model_opens:
            lines.append("model_opens = true")
        lines.append(f"turn_markers = {_value(list(spec.turn_markers))}")
        rule = recipe["initial"]
        if isinstance(rule, str):
            lines.append(f"initial = {_string(rule)}")
    else:
        if spec.validate_names:
            lines.append("validate_names = true")
    lines.append("")
    if spec.kind == "reasoning" and not isinstance(recipe["initial"], str):
        lines += _table("initial", recipe["initial"])
    lines += _table("terminals", {n: m[0] if len(m) == 1 else list(m) for n, m in spec.terminals.items()})
    lines += _table("regions", {state: region.value for state, region in spec.regions.items()})
    lines += ["[transitions]", "rows = ["]
    for (state, terminal), rule in spec.table.items():
        row: list[Any] = [state, terminal, rule.next, [a.value for a in rule.acts]]
        guard = _guard(rule)
        if guard:
            row.append(list(rule.follow) if list(guard) == ["follow"] else guard)
        lines.append(f"  {_value(row)},")
    lines += ["]", ""]
    if spec.kind == "tools":
        lines += _table("codec", _codec(spec, recipe))
        if recipe.get("call_name", "as_is") != "as_is":
            lines += _table("call_name", {"read": recipe["call_name"]})
    return "\n".join(lines).rstrip() + "\n"
