"""Grammars for constrained decoding, generated from the same description the parser runs.

* ``json_schema(tools, tool_choice)``: for ``tool_choice="required"`` a JSON array of
  ``{"name", "parameters"}`` objects (one ``anyOf`` branch per tool), for a named choice the
  function's arguments object. Tools' ``$defs`` / ``definitions`` are merged at the root (the
  same name with two different definitions is a ``ToolSchemaError``); the caller's tool objects
  are never mutated. This is exactly what ``Parser.parse(..., tool_choice=...)`` reads back.
* ``structural_tag(parser, tools, ...)``: for ``"auto"`` (and for required/named when the
  format keeps its native markers) an xgrammar structural tag, triggered by the format's own
  call-opening marker. The call's shape is derived from the format's ``FormatSpec``: the
  shortest path through its transition table that opens a call on its (preferably special)
  opening marker, passes the name and the argument region, and closes the call back into
  content; marker strings are the spec's own terminals and the argument syntax is the codec's.
  ``call_shape(spec)`` returns that path, or a string saying why the format has none
  (``grammar_support(spec)`` gives the one-line summary ``trisect formats`` prints).
* Per-tool argument schemas (``strict_level``, not to be confused with the parser's
  ``strict``): ``"auto"`` uses a tool's schema when the tool says
  ``"strict": true`` and any JSON object otherwise; ``"function"`` uses every tool's schema;
  ``"parameter"`` also closes every object (``additionalProperties: false``).

xgrammar is not imported here: the results are plain dicts (``json.dumps`` them for
``GrammarCompiler.compile_structural_tag`` / ``compile_json_schema``).
"""

from __future__ import annotations

import copy
import json
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from ..codecs.schema import tool_index
from ..engine.spec import ARGS_DONE, CONTENT, Act, FormatSpec, Region
from ..errors import RequestError, ToolSchemaError
from ..request.choice import keeps_native_markers, normalize_tool_choice

STRICT_LEVELS = ("auto", "function", "parameter")
_WS = {"type": "regex", "pattern": "[ \\t\\r\\n]{0,4}"}  # formatting between markers (templates use "\n")


# ---------------------------------------------------------------------------- JSON schema


def _functions(tools: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
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
    functions = _functions(tools)
    if choice == "named":
        function = next(f for f in functions if f["name"] == forced)
        return _params(function)
    defs: dict[str, dict[str, Any]] = {}
    branches = []
    for function in functions:
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


# ---------------------------------------------------------------------------- call shape


@dataclass(frozen=True)
class Step:
    """One transition of the call path: its marker (``""`` for ``ARGS_DONE``), the region of
    the state it enters, and whether the marker is the first character of the arguments
    (``Act.ARG_MARKER`` on a structured codec: the argument grammar writes it)."""

    terminal: str
    marker: str
    region: Region
    in_args: bool = False
    state: str = ""  # the state it enters


@dataclass(frozen=True)
class CallShape:
    """A block of calls as the template writes it: ``opener`` steps (the first is the trigger),
    one ``call`` (from the transition that opens it to the one that closes it), then ``closer``
    steps back to content. ``repeat``: more calls follow in the same block, each after the
    ``separator`` steps (Kimi's section, Granite's list)."""

    opener: tuple[Step, ...]
    call: tuple[Step, ...]
    closer: tuple[Step, ...]
    args: str  # "json" (arguments object), "json_envelope" ({"name", "arguments"}), or an xgrammar XML style
    envelope_keys: tuple[str, str] = ("name", "arguments")
    repeat_open: Step | None = None  # the transition that opens each further call in the block
    separator: tuple[Step, ...] = ()
    alternates: tuple[CallShape, ...] = ()  # other blocks that open calls (bare JSON: Llama's "{")
    markers: tuple[str, ...] = ()  # every marker string of the format (kept out of raw-text values)

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.opener + self.call + self.closer

    @property
    def repeat(self) -> bool:
        return self.repeat_open is not None and bool(self.closer)

    @property
    def trigger(self) -> str:
        return self.steps[0].marker


# formats whose calls the table describes but whose template writes text a structural tag
# generated from the table cannot know (a table entry is the better home: FormatSpec.extra)
_NOT_EXPRESSIBLE: dict[str, str] = {
    "deepseek_v3": "the template writes the call type ('function') in a region the table skips",
    "deepseek_v31": "the template writes the call type ('function') in a region the table skips",
    "minimax": "the table takes JSON lines and a [list] alike; the template writes JSON lines, the "
    "derivation picks the list",
    "inkling": "a call is a message whose header marker decides the body; the end marker closes every message",
}


def _codec_style(spec: FormatSpec) -> tuple[str, tuple[str, str]] | str:
    """The xgrammar argument style of the format's codec, or why there is none."""
    from ..codecs import JsonArgsCodec, JsonEnvelopeCodec, XmlParamsCodec

    factory = spec.codec
    func = getattr(factory, "func", factory)
    keywords = dict(getattr(factory, "keywords", {}) or {})
    declared = getattr(func, "grammar_args", None)
    if isinstance(declared, str):
        return declared, ("name", "arguments")
    if isinstance(func, type) and issubclass(func, JsonArgsCodec):
        return "json", ("name", "arguments")
    if isinstance(func, type) and issubclass(func, JsonEnvelopeCodec):
        name_keys = keywords.get("name_keys", ("name",))
        args_keys = keywords.get("args_keys", ("arguments", "parameters"))
        if keywords.get("id_keys"):
            return "the envelope carries a call id key, which the grammar cannot fill"
        return "json_envelope", (name_keys[0], args_keys[0])
    if func is XmlParamsCodec:

        def marker(key: str) -> str:
            terminal = keywords.get(key)
            return spec.terminals[terminal][0] if terminal in spec.terminals else ""

        start, end = marker("param_start"), marker("param_end")
        key_end = marker("key_marker") or keywords.get("key_end", ">")
        value_start = marker("value_start")
        if keywords.get("parse_key") is not None:  # the key is an attribute: name="key" …
            attribute_styles = {
                ("<｜DSML｜parameter", "</｜DSML｜parameter>"): "deepseek_xml",
                ("<｜DSML｜ parameter", "</｜DSML｜ parameter>"): "deepseek_v4_1_xml",
                ("<parameter name=", "</parameter>"): "minimax_xml",
                ("<|open|>argument", "<|close|>argument<|sep|>"): "kimi_k3_xml",
            }
            style = attribute_styles.get((start, end))
            if style is None:
                return f"XML parameters {start}…{key_end}VALUE{end} have no xgrammar style"
            return style, ("name", "arguments")
        if (start, key_end, value_start, end) == ("<parameter=", ">", "", "</parameter>"):
            return "qwen_xml", ("name", "arguments")
        if (start, key_end, value_start, end) == ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"):
            return "glm_xml", ("name", "arguments")
        return f"XML parameters {start}KEY{key_end}{value_start}VALUE{end} have no xgrammar style"
    name = getattr(func, "__name__", repr(func))
    return f"argument codec {name} has no xgrammar style"


def _name_spelling(spec: FormatSpec) -> str | None:
    """How the grammar writes a name the format reads with ``parse_name``: quoted (as templates
    write an attribute value) or plain, whichever the format reads back as the bare name with
    no call id; ``None`` if neither (the name region carries an id)."""
    if spec.parse_name is None:
        return "{name}"
    for spelling in ('"{name}"', "{name}"):
        probe = "get_weather_2"
        try:
            read = spec.parse_name(spelling.format(name=probe))
        except (ValueError, KeyError, IndexError):
            continue
        if tuple(read) == (probe, None):
            return spelling
    return None


def _transitions(spec: FormatSpec, state: str) -> list[tuple[str, Any]]:
    rows = [(t, r) for (s, t), r in spec.table.items() if s == state and t != "ARGS_FAILED"]
    # special-token markers first: the model's own call marker, not a recovery spelling
    rows.sort(key=lambda tr: (tr[0] != ARGS_DONE and tr[0] not in spec.special, tr[0]))
    return rows


_STRUCTURAL = {Act.CALL_START, Act.NAME_END, Act.ARGS_END, Act.CALL_END, Act.REASONING_END}
_MAX_STEPS = 10


# the text the arguments begin with, per style: a marker that is argument structure
# (Act.ARG_MARKER) may stand on the path only where it is that first text
_ARGS_OPEN = {
    "json": ("{",),
    "json_envelope": ("{",),
    "qwen_xml": ("<parameter=",),
    "glm_xml": ("<arg_key>",),
    "deepseek_xml": ("<｜DSML｜parameter",),
    "deepseek_v4_1_xml": ("<｜DSML｜ parameter",),
    "minimax_xml": ("<parameter name=",),
    "kimi_k3_xml": ("<|open|>argument",),
}


def _allowed(spec: FormatSpec, state: str, terminal: str, rule: Any, args: str) -> bool:
    extra = set(rule.acts) - _STRUCTURAL
    if not extra:
        return True
    if extra == {Act.ARG_MARKER} and spec.regions[state] is not Region.ARGS:
        marker = spec.terminals.get(terminal, ("",))[0]
        if marker in _ARGS_OPEN.get(args, ()):
            return True
        # "[{": a list opened together with its first call (xLAM)
        return args == "json_envelope" and marker.startswith("[") and marker.endswith("{")
    return False


@lru_cache(maxsize=128)
def call_shape(spec: FormatSpec) -> CallShape | str:
    """The canonical call block of a tool format (see the module docstring), or why it has none.

    Among the paths from content back to content that open exactly one call, name it (unless
    the JSON envelope carries the name), pass its argument region and close it, the one
    through the most distinct states wins, then the longest: the template's envelope rather
    than a recovery shortcut. Markers that are argument structure stand on the path only
    where they are the first text of the arguments (the argument grammar writes them).
    """
    reason = spec.extra.get("grammar_unsupported") or _NOT_EXPRESSIBLE.get(spec.name)
    if reason:
        return str(reason)
    if spec.codec is None:
        return "the format has no tool calls"
    if Region.HEADER in spec.regions.values():
        return "a message header (its recipient) decides which message is a call and names it"
    style = _codec_style(spec)
    if isinstance(style, str):
        return style
    args, keys = style
    if spec.parse_name is not None and "grammar_name" not in spec.extra and _name_spelling(spec) is None:
        return "the name region also carries a call id (parse_name), which the grammar cannot fill"
    regions = spec.regions

    def valid(path: tuple[tuple[str, Any], ...]) -> bool:
        starts = [k for k, (_t, r) in enumerate(path) if Act.CALL_START in r.acts]
        ends = [k for k, (_t, r) in enumerate(path) if Act.CALL_END in r.acts]
        if len(starts) != 1 or len(ends) != 1 or starts[0] > ends[0]:
            return False
        inside = [regions[r.next] for _t, r in path[starts[0] : ends[0]]]
        if Region.ARGS not in inside:
            return False
        return args == "json_envelope" or Region.NAME in inside

    def walk(state: str, path: tuple[tuple[str, Any], ...], used: frozenset, seen: frozenset) -> None:
        for t, r in _transitions(spec, state):
            if (state, t) in used or not _allowed(spec, state, t, r, args):
                continue
            if r.next in seen and r.next != state and Act.CALL_END not in r.acts:
                continue  # back to an earlier state: not the template's shape
            if r.next in opens_call and any(Act.CALL_END in rr.acts for _tt, rr in path):
                continue  # after the call, a separator towards the next one (a trailing comma)
            region = regions[r.next]
            step = (*path, (t, r))
            if region in (Region.CONTENT, Region.REASONING):
                if region is Region.CONTENT and valid(step):
                    score = (len({rr.next for _tt, rr in step}), len(step))
                    opener = step[0][0]
                    if opener not in best or score > best[opener][0]:
                        best[opener] = (score, step)
                continue
            if region not in (Region.SKIP, Region.NAME, Region.ARGS) or len(step) >= _MAX_STEPS:
                continue
            walk(r.next, step, used | {(state, t)}, seen | {r.next})

    opens_call = {st for (st, _t), r in spec.table.items() if Act.CALL_START in r.acts and st != CONTENT}
    best: dict[str, tuple[tuple[int, int], tuple[tuple[str, Any], ...]]] = {}
    walk(CONTENT, (), frozenset(), frozenset())
    if not best:
        return "no path through the table opens a call, names it, reads its arguments and closes it"
    # the best path wins; a call that opens on the first character of bare JSON is a call too
    order = sorted(best.values(), key=lambda sp: sp[0], reverse=True)
    shapes = [_shape(spec, order[0][1], args, keys)]
    for _score, path in order[1:]:
        if Act.ARG_MARKER in path[0][1].acts:
            shapes.append(_shape(spec, path, args, keys))
    for shape in shapes:
        if isinstance(shape, str):
            return shape
    first = shapes[0]
    assert not isinstance(first, str)
    return replace(first, alternates=tuple(shapes[1:]))  # type: ignore[arg-type]


def _shape(spec: FormatSpec, path: tuple[tuple[str, Any], ...], args: str, keys: tuple[str, str]) -> CallShape | str:
    steps = _steps(spec, path)
    if steps[0].in_args and args not in ("json_envelope",):
        return "the call opens on the first character of its bare JSON arguments"
    k0 = next(k for k, (_t, r) in enumerate(path) if Act.CALL_START in r.acts)
    k1 = next(k for k, (_t, r) in enumerate(path) if Act.CALL_END in r.acts)
    repeat_open, separator = None, ()
    if k0 > 0 or len(steps[0].marker) > 1:  # the block opens before the call: may more calls follow in it?
        loop = _repeat_path(spec, path[k1][1].next, path[k0][0], {r.next for _t, r in path[k0:k1]})
        if loop is not None:
            *sep, last = loop
            repeat_open, separator = _steps(spec, (last,))[0], _steps(spec, tuple(sep))
    markers = tuple(sorted({m for strings in spec.terminals.values() for m in strings if len(m) > 1}))
    return CallShape(
        steps[:k0], steps[k0 : k1 + 1], steps[k1 + 1 :], args, keys, repeat_open, separator, markers=markers
    )


def _repeat_path(spec: FormatSpec, after: str, opens: str, inside: set[str]) -> tuple[tuple[str, Any], ...] | None:
    """Transitions leading from ``after`` (the state a call ends in) to the next call of the
    same block: the same opening terminal again (or a ``{`` that opens a JSON call), after
    separators that open nothing; the last one opens the call. The longest such path wins, so
    a list's "," rather than the recovery that accepts calls without it."""
    found: list[tuple[tuple[str, Any], ...]] = []
    queue: deque[tuple[str, tuple[tuple[str, Any], ...]]] = deque([(after, ())])
    seen = {after}
    while queue:
        state, path = queue.popleft()
        for t, r in _transitions(spec, state):
            if Act.CALL_START in r.acts:
                json_call = Act.ARG_MARKER in r.acts and spec.terminals[t][0] == "{"
                if t == opens or json_call or r.next in inside:
                    found.append((*path, (t, r)))
                continue
            if r.acts or spec.regions[r.next] is not Region.SKIP or r.next in seen:
                continue
            seen.add(r.next)
            queue.append((r.next, (*path, (t, r))))
    return max(found, key=len) if found else None


def _steps(spec: FormatSpec, path: tuple[tuple[str, Any], ...]) -> tuple[Step, ...]:
    return tuple(
        Step(
            t,
            "" if t == ARGS_DONE else spec.terminals[t][0],
            spec.regions[r.next],
            Act.ARG_MARKER in r.acts,
            r.next,
        )
        for t, r in path
    )


def grammar_support(spec: FormatSpec) -> str:
    """One line for ``trisect formats``: the structural tag's shape, or why there is none."""
    if spec.kind == "reasoning":
        return "reasoning block: allowed before the structural tag"
    shape = call_shape(spec)
    if isinstance(shape, str):
        return f"no structural tag: {shape}"
    native = "; keeps its markers under required/named" if keeps_native_markers(spec) else ""
    many = ", several calls per block" if shape.repeat else ""
    return f"structural tag triggered by {shape.trigger!r}, arguments as {shape.args}{many}{native}"


# ---------------------------------------------------------------------------- structural tag


def _strict_schema(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {k: _strict_schema(v) for k, v in schema.items()}
        if out.get("type") == "object" or "properties" in out:
            out.setdefault("additionalProperties", False)
        return out
    if isinstance(schema, list):
        return [_strict_schema(v) for v in schema]
    return schema


def _args_schema(function: Mapping[str, Any], strict: str) -> dict[str, Any]:
    if strict == "auto" and not function.get("strict"):
        return {"type": "object"}
    params = _params(function)
    return _strict_schema(params) if strict == "parameter" else params


def _const(value: str) -> dict[str, Any]:
    return {"type": "const_string", "value": value}


def _seq(elements: list[dict[str, Any]]) -> dict[str, Any]:
    return elements[0] if len(elements) == 1 else {"type": "sequence", "elements": elements}


class _Writer:
    """Writes the xgrammar elements of one block for one tool: what each state of the path
    holds (whitespace, the name, the arguments) and the markers between them."""

    def __init__(self, shape: CallShape, spec: FormatSpec, name: str, schema: dict[str, Any]) -> None:
        self.shape = shape
        self.name = name
        self.schema = schema
        self.name_pattern = spec.extra.get("grammar_name")
        self.spelling = _name_spelling(spec) or "{name}"

    def region(self, region: Region | None, *, strip_open: bool = False) -> list[dict[str, Any]]:
        if region is Region.NAME:
            if self.name_pattern:
                return [{"type": "regex", "pattern": str(self.name_pattern).format(name=re.escape(self.name))}]
            return [_const(self.spelling.format(name=self.name))]
        if region is Region.ARGS:
            args = _args_elements(self.shape, self.name, self.schema, strip_open)
            return [*([] if strip_open else [_WS]), *args, _WS]
        if region is Region.SKIP:
            return [_WS]
        return []

    def steps(
        self, before: Region | None, steps: tuple[Step, ...], *, last_is_end: bool = False, strip_open: bool = False
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for k, step in enumerate(steps):
            out += self.region(before, strip_open=strip_open and k == 0)
            if step.marker and not step.in_args and not (last_is_end and k == len(steps) - 1):
                out.append(_const(step.marker))
            before = step.region
        return out


def _args_elements(
    shape: CallShape, name: str, schema: dict[str, Any], strip_open: bool = False
) -> list[dict[str, Any]]:
    """The arguments in the codec's syntax; ``strip_open``: the call's opening marker already
    wrote the envelope's ``{``."""
    if shape.args == "json_envelope":
        name_key, args_key = shape.envelope_keys
        quoted = json.dumps(name, ensure_ascii=False)
        head = f"{{{json.dumps(name_key)}: {quoted}, {json.dumps(args_key)}: "
        return [_const(head[1:] if strip_open else head), {"type": "json_schema", "json_schema": schema}, _const("}")]
    if shape.args == "json":
        return [{"type": "json_schema", "json_schema": schema}]
    # raw-text values: the parser reads the format's markers there as structure
    return [{"type": "json_schema", "json_schema": schema, "style": shape.args, "excludes": list(shape.markers)}]


def _block(shape: CallShape, spec: FormatSpec, tools: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """One xgrammar tag: the block's first marker, the calls, the block's last marker."""
    first = shape.steps[0]
    end = shape.steps[-1].marker

    def unit(writer: _Writer) -> list[dict[str, Any]]:
        if not shape.opener:  # the call opens the block: its first marker is the tag's begin
            return writer.steps(first.region, shape.call[1:], last_is_end=not shape.closer, strip_open=first.in_args)
        before = shape.opener[-1].region
        return writer.steps(before, shape.call, last_is_end=not shape.closer)

    def either(units: list[dict[str, Any]]) -> dict[str, Any]:
        return units[0] if len(units) == 1 else {"type": "or", "elements": units}

    writers = [_Writer(shape, spec, name, schema) for name, schema in tools]
    call = either([_seq(unit(w)) for w in writers])
    w = writers[0]
    elements: list[dict[str, Any]] = []
    if shape.opener:
        elements += w.steps(first.region, shape.opener[1:])
    elements.append(call)
    after = shape.call[-1].region
    if shape.repeat and shape.repeat_open is not None:
        sep = w.steps(after, shape.separator)
        before = shape.separator[-1].region if shape.separator else after
        opened = shape.repeat_open.state
        j = next((k for k, step in enumerate(shape.call) if step.state == opened), 0)
        rest = (shape.repeat_open, *shape.call[j + 1 :])
        again = either([_seq(x.steps(before, rest)) for x in writers])
        elements.append({"type": "star", "content": _seq([*sep, again])})
    if shape.closer:
        elements += w.steps(after, shape.closer, last_is_end=True)
    return {"type": "tag", "begin": first.marker, "content": _seq(elements), "end": end}


def structural_tag(
    parser: Any,
    tools: Sequence[Mapping[str, Any]] | None,
    *,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    strict_level: str = "auto",
    reasoning: bool | str = False,
) -> dict[str, Any]:
    """An xgrammar structural tag (``{"type": "structural_tag", "format": …}``) for ``parser``'s
    tool format (a ``Parser`` or a tool ``FormatSpec``).

    ``reasoning``: ``False`` (the grammar starts after reasoning, see
    ``Parser.reasoning_ended_at_start``), ``True`` (a whole reasoning block first, start marker
    included) or ``"open"`` (the prompt opened the block: reasoning text up to its end marker).
    Raises ``RequestError`` when the format has no structural tag (``call_shape`` says why).
    """
    if strict_level not in STRICT_LEVELS:
        raise RequestError(f"strict_level must be one of {', '.join(STRICT_LEVELS)}")
    spec, think = _specs(parser)
    shape = call_shape(spec)
    if isinstance(shape, str):
        raise RequestError(f"{spec.name}: no structural tag: {shape}")
    index = tool_index(tools)
    choice, forced = normalize_tool_choice(tool_choice, tools, index)
    functions = _functions(tools) if tools else []
    if forced is not None:
        functions = [f for f in functions if f["name"] == forced]
    schemas = [(f["name"], _args_schema(f, strict_level)) for f in functions]
    tags = [_block(sh, spec, schemas) for sh in (shape, *shape.alternates)] if functions else []
    if choice == "none" or not tags:
        suffix: dict[str, Any] = {"type": "any_text"}
    else:
        triggers = list(dict.fromkeys(t["begin"] for t in tags))
        suffix = {
            "type": "triggered_tags",
            "triggers": triggers,
            "tags": tags,
            "excludes": _free_text_excludes(spec, triggers),
            "at_least_one": choice in ("required", "named"),
            "stop_after_first": not parallel_tool_calls or choice == "named",
        }
    fmt = suffix
    if reasoning and think is not None:
        begin = "" if reasoning == "open" else think.terminals["THINK_START"][0]
        prefix = {
            "type": "tag",
            "begin": begin,
            "content": {"type": "any_text"},
            "end": think.terminals["THINK_END"][0],
        }
        fmt = {"type": "sequence", "elements": [prefix, suffix]}
    return {"type": "structural_tag", "format": fmt}


def _free_text_excludes(spec: FormatSpec, triggers: list[str]) -> list[str]:
    """Markers that open something in content (another spelling of the call marker, a recovery
    opener) are not free text: the grammar's text must parse back as text. Markers the parser
    absorbs there (a stray closer, a message separator) and bare JSON ("{" opening a call)
    stay free text."""
    out = {
        m
        for (state, terminal), rule in spec.table.items()
        if state == CONTENT and terminal in spec.terminals and rule.next != CONTENT and Act.ARG_MARKER not in rule.acts
        for m in spec.terminals[terminal]
        if m not in triggers
    }
    return sorted(out)


def _specs(parser: Any) -> tuple[FormatSpec, FormatSpec | None]:
    from ..formats import reasoning_format, tool_format

    if isinstance(parser, FormatSpec):
        return parser, None
    if parser.tools is None:
        raise RequestError(f"{parser!r} has no tool format")
    think = reasoning_format(parser.reasoning) if parser.reasoning is not None else None
    if think is not None and "THINK_END" not in think.terminals:
        think = None
    return tool_format(parser.tools), think


def for_request(parser: Any, **options: Any) -> dict[str, Any] | None:
    """The constraint for one request: ``{"json_schema": …}`` for required/named (unless the
    format keeps its markers), ``{"structural_tag": …}`` for auto, ``None`` for none."""
    tools = options.get("tools")
    choice = options.get("tool_choice", "auto")
    parallel = options.get("parallel_tool_calls", True)
    kind, _forced = normalize_tool_choice(choice, tools, tool_index(tools))
    if kind == "none":
        return None
    spec = _specs(parser)[0] if getattr(parser, "tools", None) is not None else None
    if kind in ("required", "named") and not keeps_native_markers(spec):
        return {"json_schema": json_schema(tools, choice, parallel_tool_calls=parallel)}
    if spec is None or isinstance(call_shape(spec), str):
        return None
    return {
        "structural_tag": structural_tag(
            parser,
            tools,
            tool_choice=choice,
            parallel_tool_calls=parallel,
            strict_level=options.get("strict_level", "auto"),
        )
    }
