"""Which grammar a request sends to the engine, and how the grammar starts after reasoning.

What is constrained (from ``trisect.grammar``, derived from the same ``FormatSpec`` the parser
runs, so the grammar and the parser cannot drift apart):

* ``tool_choice`` ``required`` / named: ``grammar.for_request`` — the JSON schema of the call(s)
  (a JSON array of ``{name, parameters}`` / the named function's arguments), or the format's
  structural tag when its model keeps native markers under a constraint;
* ``tool_choice="auto"`` with ``--strict-tool-calling``: the format's structural tag (free
  text, and calls that are well-formed once the call marker is written); for llama.cpp a
  **lazy** GBNF grammar (``grammar.gbnf``): free sampling until the call opener appears, the
  call constrained from there — it needs no phases, its trigger comes after reasoning;
* the ``embedded`` model: that lazy grammar under ``auto`` always (with every tool's schema), so
  that a call the default model starts is well formed; under required / named the JSON of the
  schema as trisect's GBNF (objects closed, whitespace bounded, which a 135M model needs: under
  llama.cpp's JSON-schema conversion it adds keys and blank lines until ``max_tokens``);
* ``response_format`` ``json_object`` / ``json_schema``: that JSON schema;
* anything else: no grammar.

**Grammars start after reasoning ends** (``Parser.reasoning_ended_at_start`` on the rendered
prompt says whether the output can start inside reasoning). When it can, per upstream kind:

* ``vllm`` — one request whose grammar admits the reasoning block first: a structural tag
  ``sequence[tag("" … end marker, any text), whitespace, constraint]`` (xgrammar matches the
  end marker by its text, special token or not).
* ``sglang``, ``llamacpp``, ``embedded`` — two phases (``generate.after_reasoning``): sample
  freely with the reasoning end marker as a stop string; if the engine says it stopped on it,
  continue the prompt + the reasoning + the marker under the grammar. Works on any engine that
  reports which stop string it matched; costs a second prefill (engines cache the prefix).
* ``openai`` — no grammar at all: constrained requests are a 400 (``plan``).

A reasoning format without an end marker (channel formats) cannot do either: a 400 naming the
field that asked for the grammar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import RequestError
from ..grammar import for_request, gbnf, structural_tag
from .errors import APIError
from .model import ServedModel
from .plan import Plan
from .upstream.base import Constraint

ONE_REQUEST = frozenset({"vllm"})  # kinds whose grammar can carry the reasoning block itself
TWO_PHASE = frozenset({"sglang", "llamacpp", "embedded"})
STRUCTURAL_TAGS = frozenset({"vllm", "sglang"})  # kinds that take xgrammar structural tags
LAZY_GBNF = frozenset({"llamacpp", "embedded"})  # kinds that take lazy GBNF grammars
_WS = {"type": "regex", "pattern": "[ \\t\\r\\n]{0,4}"}


@dataclass(frozen=True)
class Decoding:
    constraint: Constraint | None = None
    after_reasoning: tuple[str, ...] = ()  # two phases: the reasoning end markers to stop at


def _wanted(served: ServedModel, plan: Plan, strict: bool) -> tuple[str, dict[str, Any], str] | None:
    """(constraint kind, value, the request field that asked for it), or None."""
    if plan.response_format is not None:
        return "json_schema", plan.response_format["schema"], "response_format"
    options = plan.parser_options
    tools = options.get("tools")
    choice = options.get("tool_choice", "auto" if tools else "none")
    if not tools or choice == "none" or (choice == "auto" and not strict):
        return None
    found = for_request(
        served.parser, tools=tools, tool_choice=choice, parallel_tool_calls=options["parallel_tool_calls"]
    )
    if found is None:
        return None
    ((kind, value),) = found.items()
    return kind, value, "tool_choice"


def decoding(served: ServedModel, plan: Plan, prompt: str, *, kind: str, strict_tool_calling: bool) -> Decoding:
    """The constraint and phases for one request (``APIError`` when the kind cannot do it)."""
    options = {k: v for k, v in plan.parser_options.items() if k != "history_tool_calls"}
    tools = options.get("tools")
    embedded = kind == "embedded"  # the default model: always the lazy grammar, every tool's schema
    if (strict_tool_calling or embedded) and kind in LAZY_GBNF and tools and plan.response_format is None:
        if options.get("tool_choice", "auto") == "auto":
            try:
                lazy = gbnf(
                    served.parser,
                    tools,
                    tool_choice="auto",
                    parallel_tool_calls=options["parallel_tool_calls"],
                    strict_level="function" if embedded else "auto",
                )
            except RequestError:
                if not embedded:
                    raise
                lazy = None  # a --model whose format has no call shape: free text, parsed as always
            return Decoding(Constraint("gbnf", lazy.text, lazy.triggers)) if lazy is not None else Decoding()
    wanted = _wanted(served, plan, strict_tool_calling and kind not in LAZY_GBNF)
    if wanted is None:
        return Decoding()
    grammar_kind, value, param = wanted
    if embedded and param == "tool_choice" and grammar_kind == "json_schema":
        grammar_kind, value = "gbnf", _calls_gbnf(served, plan)  # type: ignore[assignment]
    if grammar_kind == "structural_tag" and kind not in STRUCTURAL_TAGS:
        raise APIError(
            f"this request needs an xgrammar structural tag ({served.parser.tools} calls), "
            f"which the {kind} upstream cannot take",
            param=param,
        )
    if served.parser.reasoning_ended_at_start(prompt_text=prompt, **options):
        return Decoding(Constraint(grammar_kind, value))  # type: ignore[arg-type]
    end = served.reasoning_end
    if not end:
        raise APIError(
            f"the output may start with reasoning and the {served.parser.reasoning} format has no end marker "
            "for the grammar to wait for",
            param=param,
        )
    if kind in ONE_REQUEST:
        return Decoding(Constraint("structural_tag", _with_reasoning(served, plan, grammar_kind, value, end[0])))
    if kind in TWO_PHASE:
        return Decoding(Constraint(grammar_kind, value), after_reasoning=end)  # type: ignore[arg-type]
    raise APIError(f"the {kind} upstream takes no grammar", param=param)


def _calls_gbnf(served: ServedModel, plan: Plan) -> str:
    """``required`` / named for the embedded model: the JSON of the schema as trisect's GBNF."""
    options = plan.parser_options
    found = gbnf(
        served.parser,
        options.get("tools"),
        tool_choice=options.get("tool_choice"),
        parallel_tool_calls=options["parallel_tool_calls"],
    )
    assert found is not None  # required / named always constrain
    return found.text


def _with_reasoning(served: ServedModel, plan: Plan, kind: str, value: dict[str, Any], end: str) -> dict[str, Any]:
    if kind == "structural_tag" and plan.response_format is None:
        options = plan.parser_options
        return structural_tag(
            served.parser,
            options.get("tools"),
            tool_choice=options.get("tool_choice", "auto"),
            parallel_tool_calls=options["parallel_tool_calls"],
            reasoning="open",
        )
    think = {"type": "tag", "begin": "", "content": {"type": "any_text"}, "end": end}
    body = {"type": "json_schema", "json_schema": value} if kind == "json_schema" else value["format"]
    return {"type": "structural_tag", "format": {"type": "sequence", "elements": [think, _WS, body]}}
