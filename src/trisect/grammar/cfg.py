"""Context-free grammars for engines that take GBNF (llama.cpp) or Lark (llguidance), written
from the same derivation as the xgrammar structural tag (``structural``): the call blocks, their
markers, names and argument syntax are the tag's, translated element by element.

``gbnf(parser, tools, tool_choice=…)`` / ``lark(…)`` return a ``Grammar`` (``None`` for
``tool_choice="none"``):

* ``"auto"``. GBNF: a **lazy** grammar (``Grammar.triggers`` = the format's call openers).
  llama.cpp samples freely until a trigger appears in the output, then constrains the rest from
  the trigger on, so the root begins with the trigger: one call block, or with
  ``parallel_tool_calls`` several separated by whitespace. Text after the last call is not
  allowed (the generation ends there). Lark: the whole output, as xgrammar reads the tag's
  ``triggered_tags``: free text that holds no trigger (nor the markers the tag excludes), and a
  call block wherever a trigger appears.
* ``"required"`` / named: from the first token, what ``Parser.parse(..., tool_choice=…)`` reads
  back: the JSON array of ``grammar.json_schema`` (the named function's arguments object), or,
  for a format that keeps its markers under constraint, one or more call blocks.

Where the grammar starts (``reasoning``, as in ``structural_tag``): ``False`` — after reasoning
(the prompt turned thinking off, or the server ran the reasoning unconstrained first and sends
the grammar with the rest); ``True`` — the output begins with the whole reasoning block, start
marker included, then the grammar; ``"open"`` — the prompt opened the block: reasoning text up
to its end marker first. A lazy grammar needs neither: its trigger may come after reasoning (or
inside it, where the reasoning format ends reasoning at a call opener, as ``qwen3`` does).

Arguments follow each tool's JSON schema (``strict_level`` as in ``structural_tag``; ``auto``
uses a tool's schema only when it says ``"strict": true``). GBNF writes JSON with ``jsonschema``
(``Grammar.notes`` lists what it could not express and loosened); Lark writes llguidance's
``%json``. Object schemas that declare ``properties`` and say nothing of
``additionalProperties`` are closed in both (as llama.cpp's and xgrammar's strict converters
read them). Formats without a structural tag (``call_shape`` says why) raise ``RequestError``
under ``auto``. Cost: linear in the tag's size; nothing is cached.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..codecs.schema import tool_index
from ..codecs.xml_params import XmlParams
from ..engine.spec import FormatSpec
from ..errors import RequestError
from ..request.choice import keeps_native_markers, normalize_tool_choice
from .ebnf import EMPTY, Chars, Expr, Json, Lit, Regex, Rep, Rules, Until, alt, seq, write_gbnf, write_lark
from .jsonschema import json_rules
from .schema import json_schema
from .structural import structural_tag

Syntax = Literal["gbnf", "lark"]
_WS = Rep(Chars(((9, 10), (13, 13), (32, 32))), 0, 4)  # between blocks, and after reasoning
# xgrammar's JSON takes every escape JSON allows; llguidance's takes \uXXXX only for control
# characters unless told (models write "M\u00fcnchen", json.dumps's default)
_GUIDANCE = {"json_allow_general_unicode_escapes": True}
# xgrammar's XML argument styles: the text each writes between the format's parameter opener
# and its key closer (the markers themselves are the format's, from ``XmlParams``), as a format
# string over the key, the DSML string flag and the Kimi type name
_XML_KEY_TEXT = {
    "qwen_xml": "{key}",
    "glm_xml": "{key}",
    "minimax_xml": '"{key}"',
    "deepseek_xml": ' name="{key}" string="{flag}"',
    "deepseek_v4_1_xml": ' name="{key}" string="{flag}"',
    "kimi_k3_xml": ' key="{key}" type="{type}"',
}


@dataclass(frozen=True)
class Grammar:
    """A grammar for one request: ``text`` in ``syntax``; ``triggers`` non-empty for a lazy
    grammar (llama.cpp ``grammar_lazy`` + WORD ``grammar_triggers``); ``notes``: what the GBNF
    JSON conversion could not express (the grammar is looser there)."""

    syntax: Syntax
    text: str
    triggers: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def lazy(self) -> bool:
        return bool(self.triggers)


def gbnf(
    parser: Any,
    tools: Sequence[Mapping[str, Any]] | None,
    *,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    strict_level: str = "auto",
    reasoning: bool | str = False,
) -> Grammar | None:
    """The llama.cpp GBNF grammar for one request (see the module docstring)."""
    return _grammar("gbnf", parser, tools, tool_choice, parallel_tool_calls, strict_level, reasoning)


def lark(
    parser: Any,
    tools: Sequence[Mapping[str, Any]] | None,
    *,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    strict_level: str = "auto",
    reasoning: bool | str = False,
) -> Grammar | None:
    """The llguidance Lark grammar for one request (see the module docstring)."""
    return _grammar("lark", parser, tools, tool_choice, parallel_tool_calls, strict_level, reasoning)


def schema_gbnf(schema: Mapping[str, Any] | bool) -> Grammar:
    """A GBNF grammar for one JSON value of ``schema`` (``response_format``, a named tool's
    arguments); ``notes`` says what it could not express."""
    rules = Rules()
    rules.root = Json.of(_closed(schema))
    return Grammar("gbnf", write_gbnf(rules, json_rules), notes=tuple(rules.notes))


def _grammar(
    syntax: Syntax,
    parser: Any,
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: Any,
    parallel: bool,
    strict_level: str,
    reasoning: bool | str,
) -> Grammar | None:
    kind, _forced = normalize_tool_choice(tool_choice, tools, tool_index(tools))
    if kind == "none":
        return None
    rules = Rules()
    triggers: tuple[str, ...] = ()
    if kind in ("required", "named") and not keeps_native_markers(_tool_spec(parser)):
        body: Expr = Json.of(_closed(json_schema(tools, tool_choice, parallel_tool_calls=parallel)))
    else:
        tag = structural_tag(
            parser, tools, tool_choice=tool_choice, parallel_tool_calls=parallel, strict_level=strict_level
        )
        triggered = tag["format"]
        if triggered["type"] != "triggered_tags":
            return None  # no tool to call
        writer = _TagWriter(rules, _tool_spec(parser))
        if syntax == "gbnf" and kind == "auto":
            body, triggers = writer.blocks(triggered), tuple(triggered["triggers"])
        elif kind == "auto":
            body = writer.whole_output(triggered)
        else:
            body = writer.blocks(triggered)
    if not triggers:
        body = seq(_reasoning_prefix(parser, reasoning), body)
    rules.root = body
    text = write_gbnf(rules, json_rules) if syntax == "gbnf" else write_lark(rules)
    return Grammar(syntax, text, triggers, tuple(rules.notes))


def _tool_spec(parser: Any) -> FormatSpec | None:
    if isinstance(parser, FormatSpec):
        return parser
    spec: FormatSpec | None = parser.tools_spec  # a registered format or the user's own
    return spec


def _reasoning_prefix(parser: Any, reasoning: bool | str) -> Expr:
    if not reasoning:
        return EMPTY
    think: FormatSpec | None = getattr(parser, "reasoning_spec", None)
    if think is None or "THINK_END" not in think.terminals:
        return EMPTY
    end = think.terminals["THINK_END"][0]
    start = think.terminals.get("THINK_START", ("",))[0] if reasoning != "open" else ""
    return seq(Lit(start), Until((), end), _WS)


def _closed(schema: Any) -> Any:
    """Objects that declare ``properties`` and say nothing of ``additionalProperties`` closed
    (not the branches of an ``allOf``: each would forbid the others' properties); llguidance's
    ``%json`` options added at the root."""

    def close(node: Any, branch: bool = False) -> Any:
        if isinstance(node, list):
            return [close(n, branch) for n in node]
        if not isinstance(node, Mapping):
            return node
        out = {k: close(v, k == "allOf") for k, v in node.items()}
        if isinstance(out.get("properties"), Mapping) and "additionalProperties" not in out and not branch:
            out["additionalProperties"] = False
        return out

    if not isinstance(schema, Mapping):
        return schema
    return {**close(schema), "x-guidance": _GUIDANCE}


class _TagWriter:
    """Structural-tag elements -> ``ebnf`` expressions."""

    def __init__(self, rules: Rules, spec: FormatSpec | None) -> None:
        self.rules = rules
        self.spec = spec
        self.single = False  # one call only: the further calls of a block (its star) are left out

    def blocks(self, node: Mapping[str, Any]) -> Expr:
        """``triggered_tags`` from the first trigger on: one call block, or several separated
        by whitespace. With one call only (``stop_after_first``), a block that may hold several
        (the tag's ``star``) holds one."""
        self.single = bool(node.get("stop_after_first"))
        block = self.rules.define("call-block", alt(*(self.element(t) for t in node["tags"])))
        return block if self.single else seq(block, Rep(seq(_WS, block)))

    def whole_output(self, node: Mapping[str, Any]) -> Expr:
        """``triggered_tags`` as xgrammar reads it: free text holding no trigger (nor an
        excluded marker); a trigger opens its block."""
        triggers = tuple(node["triggers"])
        excluded = tuple(sorted({*triggers, *node.get("excludes", ())}))
        self.single = bool(node.get("stop_after_first"))
        bare, opened = [], []
        for tag in node["tags"]:
            trigger = next(t for t in triggers if tag["begin"].startswith(t))
            rest = self.tag_rest(tag, skip=len(trigger))
            bare.append(self.element(tag))
            opened.append(seq(Until(excluded, trigger), rest))
        first, later, free = alt(*bare), alt(*opened), Until(excluded, "")
        if node.get("stop_after_first"):
            return first if node.get("at_least_one") else alt(later, free)
        if node.get("at_least_one"):
            return seq(first, Rep(later), free)
        return seq(Rep(later), free)

    def tag_rest(self, node: Mapping[str, Any], *, skip: int = 0) -> Expr:
        """A tag after ``skip`` characters of its begin: the rest of begin, content, end."""
        begin, content, end = node["begin"][skip:], node["content"], node["end"]
        if content["type"] == "any_text":
            return seq(Lit(begin), Until(tuple(content.get("excludes", ())), end))
        return seq(Lit(begin), self.element(content), Lit(end))

    def element(self, node: Mapping[str, Any]) -> Expr:
        kind = node["type"]
        if kind == "const_string":
            return Lit(node["value"])
        if kind == "regex":
            return Regex(node["pattern"])
        if kind == "sequence":
            return seq(*(self.element(e) for e in node["elements"]))
        if kind == "or":
            return alt(*(self.element(e) for e in node["elements"]))
        if kind == "star":  # the block's further calls (structural.py writes nothing else as a star)
            return EMPTY if self.single else Rep(self.element(node["content"]))
        if kind == "tag":
            return self.tag_rest(node)
        if kind == "json_schema":
            style = node.get("style", "json")
            if style == "json":
                return Json.of(_closed(node["json_schema"]))
            return _XmlArgs(style, tuple(node.get("excludes", ())), self.spec).object(node["json_schema"])
        raise RequestError(f"no grammar translation for the structural-tag element {kind!r}")


class _XmlArgs:
    """One parameter per property, in declared order, as the style writes it (required ones
    present, the others optional); a schema without properties, or open to more, takes further
    parameters of any key. A string value is raw text up to the closer holding none of the
    format's markers; any other value is JSON of its schema."""

    def __init__(self, style: str, excludes: tuple[str, ...], spec: FormatSpec | None) -> None:
        options = spec.codec if spec is not None else None
        if style not in _XML_KEY_TEXT or not isinstance(options, XmlParams):
            raise RequestError(f"no grammar translation for the argument style {style!r}")
        assert spec is not None

        def marker(terminal: str | None) -> str:
            return spec.terminals[terminal][0] if terminal is not None and terminal in spec.terminals else ""

        self.style = style
        self.excludes = excludes
        self.start, self.close = marker(options.param_start), marker(options.param_end)
        self.key_close = marker(options.key_marker) or options.key_end
        self.value_start = marker(options.value_start)
        # the whitespace around a value the parser trims away (the codec's rule)
        self.pad: Expr = {"newline": Rep(Lit("\n"), 0, 1), "strip": _WS}.get(options.trim, EMPTY)

    def object(self, schema: Any) -> Expr:
        schema = schema if isinstance(schema, Mapping) else {}
        props: Mapping[str, Any] = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        parts: list[Expr] = []
        for key, sub in props.items():
            param = seq(_WS, self.param(key, sub))
            parts.append(param if key in required else Rep(param, 0, 1))
        if schema.get("additionalProperties", not props) is not False:
            parts.append(Rep(seq(_WS, self.param(None, {}))))
        return seq(*parts)

    def param(self, key: str | None, schema: Any) -> Expr:
        """One parameter: a raw-text value where it may be a string, JSON of its schema where
        it may be another type. Where the style writes every type alike (no type attribute),
        the raw text already spells every value the parser types by the schema, so it stands
        alone (one alternative: no ambiguity for the engine)."""
        kinds = _value_kinds(schema)
        if "string" in kinds and all(self.frame(key, k) == self.frame(key, "string") for k in kinds):
            kinds = ["string"]
        enum = schema.get("enum") if isinstance(schema, Mapping) else None
        options: list[Expr] = []
        for kind in kinds:
            head, close = self.frame(key, kind)
            if kind == "string" and enum and all(isinstance(v, str) for v in enum):
                value: Expr = seq(self.pad, alt(*(Lit(v) for v in enum)), self.pad, Lit(close))
            elif kind == "string":
                value = Until(self.excludes, close)
            else:
                sub = {**schema, "type": kind} if isinstance(schema, Mapping) and kind != "any" else {}
                value = seq(_WS, Json.of(_closed(sub)), _WS, Lit(close))
            options.append(seq(head, value))
        return alt(*options)

    def frame(self, key: str | None, kind: str) -> tuple[Expr, str]:
        """The text before the value (the key included) and the closing marker."""
        name: Expr = Lit(key) if key is not None else Regex("[A-Za-z_][A-Za-z0-9_.-]*")
        # Kimi writes integer and number alike; an undeclared key takes any type name
        kimi = {"string": "string", "integer": "number", "number": "number"}.get(kind, kind)
        typ: Expr = Lit(kimi) if key is not None and kind != "any" else Regex("[a-z]+")
        text = _XML_KEY_TEXT[self.style].replace("{flag}", "true" if kind == "string" else "false")
        before, _, after = text.partition("{key}")
        parts: list[Expr] = [Lit(self.start), Lit(before), name]
        for piece in re.split(r"(\{type\})", after):
            parts.append(typ if piece == "{type}" else Lit(piece))
        parts.append(Lit(self.key_close))
        if self.value_start:
            parts += [_WS, Lit(self.value_start)]
        return seq(*parts), self.close


def _value_kinds(schema: Any) -> list[str]:
    """``string`` (a raw value) and the JSON types a value may have (``any``: any JSON value,
    when the schema says nothing)."""
    if not isinstance(schema, Mapping) or not schema:
        return ["string", "any"]
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list) and declared:
        return [t for t in declared if isinstance(t, str)]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        return ["string"]
    return ["string", "any"]
