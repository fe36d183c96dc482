"""JSON schema -> grammar rules (``ebnf``), for engines whose grammars have no JSON of their
own (llama.cpp GBNF).

``json_rules(schema, rules)`` returns the expression of one JSON value the schema allows and
adds the rules it needs to ``rules``. What it expresses:

* ``type`` (one or a list): ``string``, ``number``, ``integer``, ``boolean``, ``null``,
  ``object``, ``array``; without ``type``, the kind the keywords imply (``properties`` ->
  object, ``items`` -> array), else any JSON value; ``nullable: true`` (OpenAPI) adds ``null``;
* ``enum`` / ``const``: exactly those values, spelled as ``json.dumps`` spells them;
* ``anyOf`` / ``oneOf``: one of the branches (``oneOf`` read as ``anyOf``); ``allOf``: the
  branches merged (properties and ``required`` united);
* ``$ref`` to ``#``, ``#/$defs/…`` or ``#/definitions/…`` (recursive schemas included);
* objects: ``properties`` in their declared order, each ``required`` one present, each other one
  optional; ``additionalProperties`` ``false`` (and, as llama.cpp's and xgrammar's converters
  read it, absent when ``properties`` are declared) allows no other key, ``true`` or a schema
  allows further keys (of that schema) after the declared ones; an object schema without
  ``properties`` takes any keys;
* arrays: ``items``, ``prefixItems`` (and draft-4 list ``items``), ``minItems`` / ``maxItems``;
* strings: ``minLength`` / ``maxLength`` (up to 256); numbers and integers: no minus sign when
  ``minimum`` / ``exclusiveMinimum`` is not negative.

Anything else that constrains a value (``pattern``, ``format``, other numeric bounds,
``uniqueItems``, ``patternProperties``, ``not``, ``if`` …) is not expressed: the value falls
back to what the rest of its schema allows (any JSON value when nothing is left), and each such
fallback is recorded in ``rules.notes`` ("where: what"). Whitespace between tokens is bounded
(at most 20 characters at a time) and numbers have at most 24 digits in each part, so a small
model cannot loop forever inside a value. Cost: linear in the size of the schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .ebnf import EMPTY, Chars, Expr, Lit, Ref, Rep, Rules, alt, opt, seq

MAX_LENGTH = 256  # longest minLength / maxLength / maxItems written out (llama.cpp expands {m,n} into rules)
_TYPES = ("string", "number", "integer", "boolean", "null", "object", "array")
_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$id",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$defs",
        "definitions",
        "strict",
        "nullable",
        "x-guidance",
    }
)
_HANDLED = frozenset(
    {
        "type",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minimum",
        "exclusiveMinimum",
    }
)
_KIND_KEYWORDS = {
    "object": ("properties", "required", "additionalProperties", "patternProperties", "minProperties"),
    "array": ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"),
    "string": ("minLength", "maxLength", "pattern", "format"),
}


def json_rules(schema: Any, rules: Rules) -> Expr:
    """One JSON value ``schema`` allows (see the module docstring); notes go to ``rules.notes``."""
    return _Converter(schema, rules).value(schema, "#")


def _rng(*chars: str) -> Chars:
    return Chars(tuple((ord(c), ord(c)) for c in chars))


_DIGIT = Chars(((ord("0"), ord("9")),))
_NONZERO = Chars(((ord("1"), ord("9")),))
_HEX = Chars(((ord("0"), ord("9")), (ord("A"), ord("F")), (ord("a"), ord("f"))))


class _Converter:
    def __init__(self, root: Any, rules: Rules) -> None:
        self.root = root
        self.rules = rules
        self.refs: dict[str, Ref] = {}
        self.basic: dict[str, Ref] = {}

    # -- the rules every schema shares

    def base(self, name: str) -> Ref:
        known = self.basic.get(name)
        if known is not None:
            return known
        if name == "value":  # recursive: reserve the name first
            ref = self.basic[name] = Ref(self.rules.fresh("value"))
            kv = seq(self.base("string"), self.ws, Lit(":"), self.ws, ref, self.ws)
            obj = seq(Lit("{"), self.ws, opt(seq(kv, Rep(seq(Lit(","), self.ws, kv)))), Lit("}"))
            item = seq(ref, self.ws)
            arr = seq(Lit("["), self.ws, opt(seq(item, Rep(seq(Lit(","), self.ws, item)))), Lit("]"))
            self.rules.rules[ref.name] = alt(
                self.rules.define("object", obj),
                self.rules.define("array", arr),
                self.base("string"),
                self.base("number"),
                self.base("boolean"),
                Lit("null"),
            )
            return ref
        body: Expr
        if name == "ws":
            body = Rep(_rng(" ", "\t", "\r", "\n"), 0, 20)
        elif name == "char":
            plain = Chars(((0, 0x1F), (ord('"'), ord('"')), (ord("\\"), ord("\\"))), negated=True)
            escape = seq(Lit("\\"), alt(_rng('"', "\\", "/", "b", "f", "n", "r", "t"), seq(Lit("u"), Rep(_HEX, 4, 4))))
            body = alt(plain, escape)
        elif name == "string":
            body = seq(Lit('"'), Rep(self.base("char")), Lit('"'))
        elif name == "natural":
            body = alt(Lit("0"), seq(_NONZERO, Rep(_DIGIT, 0, 23)))
        elif name == "integer":
            body = seq(opt(Lit("-")), self.base("natural"))
        elif name == "fraction":
            exponent = seq(_rng("e", "E"), opt(_rng("+", "-")), Rep(_DIGIT, 1, 4))
            body = seq(opt(seq(Lit("."), Rep(_DIGIT, 1, 24))), opt(exponent))
        elif name == "number":
            body = seq(self.base("integer"), self.base("fraction"))
        elif name == "unsigned-number":
            body = seq(self.base("natural"), self.base("fraction"))
        elif name == "boolean":
            body = alt(Lit("true"), Lit("false"))
        else:  # pragma: no cover - a typo here is a bug
            raise KeyError(name)
        ref = self.basic[name] = self.rules.define(name, body)
        return ref

    @property
    def ws(self) -> Ref:
        return self.base("ws")

    def note(self, where: str, what: str) -> None:
        self.rules.note(f"{where}: {what}")

    # -- schemas

    def value(self, schema: Any, where: str) -> Expr:
        if schema is True or schema == {}:
            return self.base("value")
        if schema is False:
            self.note(where, "the schema false allows nothing; read as any JSON value")
            return self.base("value")
        if not isinstance(schema, Mapping):
            self.note(where, f"not a schema ({type(schema).__name__}); any JSON value")
            return self.base("value")
        if "$ref" in schema:
            return self.ref(schema, where)
        if "const" in schema:
            return self.literal(schema["const"])
        if "enum" in schema:
            values = schema["enum"]
            if isinstance(values, list) and values:
                return alt(*(self.literal(v) for v in values))
            self.note(where, "enum is not a non-empty list; ignored")
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.branches(schema, key, where)
        if "allOf" in schema:
            return self.value(self.merged(schema, where), where)
        kinds = self.kinds(schema)
        if schema.get("nullable") is True and "null" not in kinds:
            kinds = [*kinds, "null"]
        self.unsupported(schema, where, kinds)
        if not kinds:
            return self.base("value")
        return alt(*(self.kind(k, schema, where) for k in kinds))

    def literal(self, value: Any) -> Expr:
        return Lit(json.dumps(value, ensure_ascii=False))

    def ref(self, schema: Mapping[str, Any], where: str) -> Expr:
        target = schema["$ref"]
        known = self.refs.get(target)
        if known is not None:
            return known
        resolved = self.resolve(target)
        if resolved is None:
            self.note(where, f"$ref {target!r} is not #, #/$defs/… or #/definitions/…; any JSON value")
            return self.base("value")
        ref = self.refs[target] = Ref(self.rules.fresh(target.rsplit("/", 1)[-1] or "root"))
        self.rules.rules[ref.name] = self.value(resolved, target)
        return ref

    def resolve(self, target: Any) -> Any:
        if target == "#":
            return self.root
        if not isinstance(target, str) or not target.startswith("#/"):
            return None
        node: Any = self.root
        for part in target[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node

    def branches(self, schema: Mapping[str, Any], key: str, where: str) -> Expr:
        options = schema[key]
        if not isinstance(options, list) or not options:
            self.note(where, f"{key} is not a non-empty list; any JSON value")
            return self.base("value")
        if key == "oneOf":
            self.note(where, "oneOf read as anyOf (a value matching several branches is not rejected)")
        rest = {k: v for k, v in schema.items() if k not in (key, *_ANNOTATIONS)}
        exprs = []
        for n, option in enumerate(options):
            branch = self.merge(rest, option, f"{where}/{key}/{n}") if rest else option
            exprs.append(self.value(branch, f"{where}/{key}/{n}"))
        return alt(*exprs)

    def merged(self, schema: Mapping[str, Any], where: str) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        parts = schema["allOf"] if isinstance(schema["allOf"], list) else []
        for n, part in enumerate(parts):
            out = self.merge(out, part, f"{where}/allOf/{n}")
        return out

    def merge(self, a: Mapping[str, Any], b: Any, where: str) -> dict[str, Any]:
        """Two schemas as one: properties and ``required`` united, other keywords from ``a``
        first (a conflict is noted)."""
        if isinstance(b, Mapping) and "$ref" in b:
            b = self.resolve(b["$ref"]) or {}
        if not isinstance(b, Mapping):
            return dict(a)
        out = dict(a)
        for key, value in b.items():
            if key == "properties" and isinstance(out.get(key), Mapping) and isinstance(value, Mapping):
                out[key] = {**out[key], **value}
            elif key == "required" and isinstance(out.get(key), list) and isinstance(value, list):
                out[key] = list(dict.fromkeys([*out[key], *value]))
            elif key in out and out[key] != value and key not in _ANNOTATIONS:
                self.note(where, f"{key} differs between merged schemas; the first one is kept")
            else:
                out.setdefault(key, value)
        return out

    def kinds(self, schema: Mapping[str, Any]) -> list[str]:
        declared = schema.get("type")
        if isinstance(declared, str):
            return [declared] if declared in _TYPES else []
        if isinstance(declared, list):
            return [t for t in declared if t in _TYPES]
        for kind, keywords in _KIND_KEYWORDS.items():
            if any(k in schema for k in keywords):
                return [kind]
        return []

    def unsupported(self, schema: Mapping[str, Any], where: str, kinds: list[str]) -> None:
        declared = schema.get("type")
        if declared is not None and not kinds:
            self.note(where, f"type {declared!r} is not a JSON type; any JSON value")
        for key in schema:
            if key in _HANDLED or key in _ANNOTATIONS:
                continue
            self.note(where, f"{key} is not expressed; the value only follows the rest of its schema")
        for key in ("minimum", "exclusiveMinimum"):
            if key in schema and not (key == "minimum" and schema[key] == 0):
                self.note(where, f"{key} {schema[key]!r} is only expressed as 'no minus sign' when it is >= 0")

    def kind(self, kind: str, schema: Mapping[str, Any], where: str) -> Expr:
        if kind == "string":
            return self.string(schema, where)
        if kind in ("number", "integer"):
            low = schema.get("minimum", schema.get("exclusiveMinimum"))
            unsigned = isinstance(low, (int, float)) and not isinstance(low, bool) and low >= 0
            if kind == "integer":
                return self.base("natural") if unsigned else self.base("integer")
            return self.base("unsigned-number") if unsigned else self.base("number")
        if kind == "boolean":
            return self.base("boolean")
        if kind == "null":
            return Lit("null")
        if kind == "array":
            return self.array(schema, where)
        return self.object(schema, where)

    def bounds(self, schema: Mapping[str, Any], low_key: str, high_key: str, where: str) -> tuple[int, int | None]:
        low, high = schema.get(low_key, 0), schema.get(high_key)
        low = low if isinstance(low, int) and not isinstance(low, bool) and low >= 0 else 0
        if high is not None and not (isinstance(high, int) and not isinstance(high, bool) and high >= low):
            high = None
        if low > MAX_LENGTH:
            self.note(where, f"{low_key} over {MAX_LENGTH} is not expressed")
            low = 0
        if high is not None and high > MAX_LENGTH:
            self.note(where, f"{high_key} over {MAX_LENGTH} is not expressed")
            high = None
        return low, high

    def string(self, schema: Mapping[str, Any], where: str) -> Expr:
        if "minLength" not in schema and "maxLength" not in schema:
            return self.base("string")
        low, high = self.bounds(schema, "minLength", "maxLength", where)
        if (low, high) == (0, None):
            return self.base("string")
        return seq(Lit('"'), Rep(self.base("char"), low, high), Lit('"'))

    def array(self, schema: Mapping[str, Any], where: str) -> Expr:
        prefix = schema.get("prefixItems")
        items = schema.get("items", True)
        if isinstance(items, list):  # draft 4 tuples
            prefix, items = items, schema.get("additionalItems", True)
        prefix = prefix if isinstance(prefix, list) else []
        low, high = self.bounds(schema, "minItems", "maxItems", where)
        rest = None if items is False else seq(self.value(items, f"{where}/items"), self.ws)
        fixed = [seq(self.value(s, f"{where}/prefixItems/{n}"), self.ws) for n, s in enumerate(prefix)]
        comma = seq(Lit(","), self.ws)

        def element(i: int) -> Expr | None:
            return fixed[i] if i < len(fixed) else rest

        def tail(i: int) -> Expr:
            """What follows once ``i`` elements were written."""
            if high is not None and i >= high:
                return EMPTY
            if i >= len(fixed):
                if rest is None:
                    return EMPTY
                more = Rep(seq(comma, rest), max(0, low - i), None if high is None else high - i)
                return self.rules.define("items", more)
            step = seq(comma, fixed[i], tail(i + 1))
            return step if i < low else opt(step)

        first = element(0)
        if first is None or high == 0:
            return seq(Lit("["), self.ws, Lit("]"))
        body = seq(first, tail(1))
        return seq(Lit("["), self.ws, body if low >= 1 else opt(body), Lit("]"))

    def object(self, schema: Mapping[str, Any], where: str) -> Expr:
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        required = [r for r in schema.get("required", []) or [] if isinstance(r, str)]
        additional = schema.get("additionalProperties", None if props else True)
        fields: list[tuple[str, Expr, bool]] = []
        for key, sub in props.items():
            if sub is False:
                continue
            fields.append((key, self.value(sub, f"{where}/properties/{key}"), key in required))
        for key in required:
            if key not in props:
                fields.append((key, self.base("value"), True))
        extra: Expr | None = None
        if additional not in (None, False):
            extra_value = self.value(additional, f"{where}/additionalProperties")
            extra = seq(self.base("string"), self.ws, Lit(":"), self.ws, extra_value, self.ws)
        comma = seq(Lit(","), self.ws)

        def kv(key: str, value: Expr) -> Expr:
            return seq(self.literal(key), self.ws, Lit(":"), self.ws, value, self.ws)

        # tail: what may follow once a field was written; head: what comes first
        tail: Expr = self.rules.define("more", Rep(seq(comma, extra))) if extra is not None else EMPTY
        head: Expr = opt(seq(extra, tail)) if extra is not None else EMPTY
        for key, value, needed in reversed(fields):
            hint = key if len(key) < 40 else "field"
            after = seq(comma, kv(key, value), tail)
            new_tail = after if needed else alt(after, tail)
            first = seq(kv(key, value), tail)
            new_head = first if needed else alt(first, head)
            tail = self.rules.define(f"{hint}-tail", new_tail) if new_tail != EMPTY else EMPTY
            head = self.rules.define(f"{hint}-head", new_head) if new_head != EMPTY else EMPTY
        return seq(Lit("{"), self.ws, head, Lit("}"))
