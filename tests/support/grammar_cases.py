"""What the grammar tests of both backends share: which tool formats have a structural tag, the
rendered cases each is proven on, malformed variants of them, and the request tools.

``tests/test_grammar_llguidance.py`` (portable) and ``tests/test_grammar_xgrammar.py`` (the
``[xgrammar]`` extra) run the same checks through llguidance and xgrammar.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from typing import Any

import trisect
from support.cases import load_cases
from trisect import grammar
from trisect.engine.spec import FormatSpec
from trisect.formats import reasoning_format, tool_format

SHAPED = sorted(s.name for s in trisect.formats() if s.kind == "tools" and not isinstance(grammar.call_shape(s), str))
UNSHAPED = sorted(s.name for s in trisect.formats() if s.kind == "tools" and isinstance(grammar.call_shape(s), str))

# Shapes a parser accepts but no template writes (recovery paths, other spellings of the same
# envelope) are not what a grammar should produce; xgrammar's XML argument styles also cannot
# hold the format's own closing tag inside a value (the parser can).
NOT_TEMPLATE = re.compile(
    r"recovery|missing|marker-text|marker-inside|close-tag|closer-token|inside-value|arguments-before-name|"
    r"compact|string-args|arguments-as-string|type-key|hand-fenced|unknown-name|without-index|invalid-for-type|bare-word|no-string-attribute|attribute-unescaping|"
    r"quote-styles"
)


def markers(*specs: FormatSpec | None) -> tuple[str, ...]:
    """The multi-character markers of the specs: whole tokens of the test vocabulary."""
    out = {s for spec in specs if spec is not None for v in spec.terminals.values() for s in v if len(s) > 1}
    return tuple(sorted(out))


def cases(fmt: str) -> list[dict[str, Any]]:
    """The format's cases whose output is a template's rendering of complete calls."""
    spec = tool_format(fmt)
    names = {spec.name, *spec.aliases}
    out = []
    for case in load_cases():
        if case["tools_format"] not in names or not case["expected"].get("tool_calls"):
            continue
        if case.get("malformed") or case.get("truncated") or case.get("ids_only") or NOT_TEMPLATE.search(case["id"]):
            continue
        out.append(case)
    return out


def reasoning_mode(case: dict[str, Any]) -> bool | str:
    """The ``reasoning`` argument of ``structural_tag`` for the case's output."""
    if not case["reasoning"]:
        return False
    think = reasoning_format(case["reasoning"])
    if "THINK_END" not in think.terminals or think.terminals["THINK_END"][0] not in case["output"]:
        return False
    start = think.terminals.get("THINK_START", ("",))[0]
    return True if start and case["output"].startswith(start) else "open"


def calls(msg: trisect.Message) -> list[tuple[str, Any]]:
    return [(c.name, json.loads(c.arguments)) for c in msg.tool_calls]


def expected_calls(case: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(c["name"], c.get("arguments", {})) for c in case["expected"]["tool_calls"]]


def other_spelling(tag: dict[str, Any], output: str) -> bool:
    """Does the text outside the grammar's blocks hold a marker the grammar keeps out of free
    text (a call opened by another spelling)?"""
    fmt = tag["format"]
    if fmt["type"] == "sequence":
        fmt = fmt["elements"][-1]
    excluded = fmt.get("excludes", [])
    blocks = [(t["begin"], t["end"]) for t in fmt.get("tags", [])]
    free, i = [], 0
    while i < len(output):
        hits = [(output.find(b, i), b, e) for b, e in blocks if output.find(b, i) >= 0]
        if not hits:
            free.append(output[i:])
            break
        at, begin, end = min(hits)
        free.append(output[i:at])
        close = output.find(end, at + len(begin)) if end else -1
        i = close + len(end) if close >= 0 else len(output)
    return any(m in text for text in free for m in excluded)


@cache
def proof_cases(fmt: str) -> tuple[tuple[dict[str, Any], trisect.Parser, dict[str, Any]], ...]:
    """(case, parser, structural tag) for every case the grammar should write as rendered (once
    per process: several tests of both backends prove the same cases)."""
    out = []
    for case in cases(fmt):
        parser = trisect.Parser(case["reasoning"], fmt)
        tag = grammar.structural_tag(parser, case["tools"] or None, reasoning=reasoning_mode(case))
        if other_spelling(tag, case["output"]):
            continue  # another spelling the parser also reads; the grammar writes the canonical one
        out.append((case, parser, tag))
    return tuple(out)


@cache
def _case_grammar(kind: str, parser: trisect.Parser, tools: str, reasoning: bool | str) -> grammar.Grammar | None:
    make = grammar.gbnf if kind == "gbnf" else grammar.lark
    return make(parser, json.loads(tools) or None, **({} if kind == "gbnf" else {"reasoning": reasoning}))


def case_grammar(kind: str, parser: trisect.Parser, case: dict[str, Any]) -> grammar.Grammar | None:
    """The lazy GBNF (``"gbnf"``) or the whole Lark grammar (``"lark"``) for a proof case's
    request, derived once per parser and tools."""
    return _case_grammar(kind, parser, json.dumps(case["tools"], sort_keys=True), reasoning_mode(case))


def malformed(fmt: str, case: dict[str, Any]) -> dict[str, str]:
    """Broken variants of a rendered output: an unknown tool, junk after the opening marker,
    the output cut before its closing marker."""
    output = case["output"]
    shape = grammar.call_shape(tool_format(fmt))
    assert not isinstance(shape, str)
    name = case["expected"]["tool_calls"][0]["name"]
    block = min((s for s in (shape, *shape.alternates) if s.trigger in output), key=lambda s: output.index(s.trigger))
    begin = block.trigger
    at = output.index(begin)
    bad = {
        "unknown tool": output[:at] + output[at:].replace(name, "no_such_tool", 1),
        "junk after the opening marker": output[: at + len(begin)] + "@@" + output[at + len(begin) :],
    }
    end = block.steps[-1].marker
    if end:
        bad["cut before the closing marker"] = output[: output.rindex(end)]
    return bad


# ---------------------------------------------------------------------------- request tools


def tool(name: str, props: dict[str, Any], required: list[str], strict: bool | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": name,
        "parameters": {"type": "object", "properties": props, "required": required},
    }
    if strict is not None:
        function["strict"] = strict
    return {"type": "function", "function": function}


WEATHER = tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}, ["city"])
TIME = tool("get_time", {"tz": {"type": "string", "enum": ["UTC", "CET"]}}, [])
TOOLS = [WEATHER, TIME]
STRICT_TOOLS = [tool("get_weather", WEATHER["function"]["parameters"]["properties"], ["city"], strict=True), TIME]

# per format: a call typed as the tools say, and one ill-typed or missing a required argument
TYPED = {
    "hermes": (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n</tool_call>',
    ),
    "qwen3_coder": (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n"
        "</parameter>\n</function>\n</tool_call>",
        "<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
    ),
    "glm47": (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key>"
        "<arg_value>3</arg_value></tool_call>",
        "<tool_call>get_weather<arg_key>days</arg_key><arg_value>three</arg_value></tool_call>",
    ),
}

DEFS_A = tool("a", {"p": {"$ref": "#/$defs/Point"}}, ["p"])
DEFS_A["function"]["parameters"]["$defs"] = {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}}
DEFS_B = tool("b", {"q": {"$ref": "#/$defs/Point"}}, ["q"])
DEFS_B["function"]["parameters"]["$defs"] = copy.deepcopy(DEFS_A["function"]["parameters"]["$defs"])
DEFS_C = tool("c", {"r": {"$ref": "#/$defs/Point"}}, [])
DEFS_C["function"]["parameters"]["$defs"] = {"Point": {"type": "string"}}

# tool_choice="required" texts and whether the schema takes them
REQUIRED_GOOD = (
    '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}, '
    '{"name": "a", "parameters": {"p": {"x": 1}}}]'
)
REQUIRED_TEXTS = [
    (REQUIRED_GOOD, True),
    ('[{"name": "nope", "parameters": {}}]', False),
    ('[{"name": "get_weather", "parameters": {"days": 3}}]', False),
    ('[{"name": "a", "parameters": {"p": {"x": "1"}}}]', False),
    ("[]", False),
]


def valid_args(args: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Do sampled arguments satisfy the (flat) schemas of ``TOOLS``?"""
    props = schema.get("properties", {})
    if not set(schema.get("required", ())) <= set(args):
        return False
    types: dict[str, type] = {"string": str, "integer": int, "object": dict, "array": list, "boolean": bool}
    for key, value in args.items():
        prop = props.get(key)
        if prop is None:
            continue
        if "enum" in prop and value not in prop["enum"]:
            return False
        kind = types.get(prop.get("type"))
        if kind is not None and (not isinstance(value, kind) or kind is int and isinstance(value, bool)):
            return False
    return True
