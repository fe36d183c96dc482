"""xgrammar structural tags, and the constraint for one request.

* ``structural_tag(parser, tools, ...)``: for ``"auto"`` (and for required/named when the
  format keeps its native markers) an xgrammar structural tag, triggered by the format's own
  call-opening marker, written along the format's ``CallShape`` (``shape``): the marker strings
  are the spec's own terminals and the argument syntax is the codec's.
* ``for_request(parser, **options)``: ``{"json_schema": …}`` (``schema``) for required / named,
  ``{"structural_tag": …}`` for auto, ``None`` for none.

xgrammar is not imported here: the results are plain dicts (``json.dumps`` them for
``GrammarCompiler.compile_structural_tag`` / ``compile_json_schema``). Cost: O(tools x the
shape's steps) per tag.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..codecs.schema import tool_index
from ..engine.compile import for_vocab
from ..engine.spec import CONTENT, Act, FormatSpec, Region
from ..errors import RequestError
from ..request.choice import keeps_native_markers, normalize_tool_choice
from .schema import STRICT_LEVELS, args_schema, functions, json_schema
from .shape import CallShape, Step, call_shape, name_spelling

_WS = {"type": "regex", "pattern": "[ \\t\\r\\n]{0,4}"}  # formatting between markers (templates use "\n")


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
        self.name_pattern = spec.grammar.name_pattern
        self.spelling = name_spelling(spec) or "{name}"

    def region(self, region: Region | None, *, strip_open: bool = False) -> list[dict[str, Any]]:
        if region is Region.NAME:
            if self.name_pattern:
                return [{"type": "regex", "pattern": self.name_pattern.format(name=re.escape(self.name))}]
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


def _block(
    shape: CallShape, spec: FormatSpec, tools: list[tuple[str, dict[str, Any]]], *, single: bool = False
) -> dict[str, Any]:
    """One xgrammar tag: the block's first marker, the calls, the block's last marker. A block
    that may hold several calls holds exactly one when ``single`` (``parallel_tool_calls=False``
    or a named choice): xgrammar's ``stop_after_first`` ends the output after one tag, and
    the tag itself then admits one call, so the grammar allows exactly one call in all."""
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
    if shape.repeat and shape.repeat_open is not None and not single:
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
    listed = functions(tools) if tools else []
    if forced is not None:
        listed = [f for f in listed if f["name"] == forced]
    schemas = [(f["name"], args_schema(f, strict_level)) for f in listed]
    single = not parallel_tool_calls or choice == "named"
    tags = [_block(sh, spec, schemas, single=single) for sh in (shape, *shape.alternates)] if listed else []
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
            "stop_after_first": single,
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
    if isinstance(parser, FormatSpec):
        return parser, None
    tools: FormatSpec | None = parser.tools_spec  # registered or the user's own (Parser(tools=spec))
    if tools is None:
        raise RequestError(f"{parser!r} has no tool format")
    vocab = getattr(parser, "vocab", None)  # markers with a checkpoint suffix are spelled as its vocabulary does
    think: FormatSpec | None = parser.reasoning_spec
    if think is not None and "THINK_END" not in think.terminals:
        think = None
    return for_vocab(tools, vocab), None if think is None else for_vocab(think, vocab)


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
