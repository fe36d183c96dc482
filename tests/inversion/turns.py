"""Assistant turns for the inversion tests: generated, rendered through a target's template, and
the message trisect must give back.

``turns(target)`` is a hypothesis strategy of ``Turn`` (reasoning or none; content; 0-5 tool calls
whose arguments follow the tools' schemas). ``render(target, turn)`` is what the model wrote: the
conversation with the turn rendered, less the prompt rendered with the generation prompt, less the
end-of-turn text the engine stops at. ``expected(target, turn)`` is the turn as the template keeps
it: exactly the turn, but for the rules of ``lossy.py``.
"""

from __future__ import annotations

import datetime
import json
import math
from dataclasses import dataclass
from functools import cache
from typing import Any

from hypothesis import strategies as st

from trisect import Parser
from trisect.templates.render import ChatTemplate

from .lossy import LOSSES, Loss
from .targets import Target

HISTORY: list[dict[str, Any]] = [{"role": "user", "content": "Fix the file, then check the weather."}]

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "edit_file",
            "description": "Replace old_string with new_string in a file.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_string": {"type": "string"},
                    "new_string": {"type": "string"},
                    "count": {"type": "integer"},
                    "ratio": {"type": "number"},
                    "force": {"type": "boolean"},
                    "options": {"type": "object"},
                    "lines": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["path", "old_string", "new_string"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
]

# text that looks like markup: markers of many formats, JSON, Python, escapes, code
MARKUP = (
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|python_tag|>",
    "<function=f>",
    "<parameter=x>",
    "</parameter>",
    "<arg_key>",
    "</arg_value>",
    "<|tool_call|>",
    "<|tool_calls_section_begin|>",
    "<｜tool▁calls▁begin｜>",
    '<｜DSML｜invoke name="f">',
    '<invoke name="f">',
    "<minimax:tool_call>",
    "<|channel|>",
    "<|start|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<function_call>",
    "<|action_start|>",
    "[f(a=1)]",
    "<|tool_call_start|>",
    "<tool_calls>",
    "<SPECIAL_12>",
    "[e~[",
    '{"name": "f", "arguments": {}}',
    '{"a": 1}',
    "[1, 2]",
    "null",
    "true",
    "False",
    "None",
    "-0",
    "1e5",
    "0x1F",
    "' + x + '",
    '\\"',
    "\\\\",
    "\\n",
    "\\u00e9",
    "C:\\path\\to",
    "'",
    '"',
    "`",
    "\n",
    "\r\n",
    "\t",
    "  ",
    "    ",
    "\n\n",
    " ",
    "é",
    "日本語",
    "🙂",
    "\u00a0",
    "def f(x):\n    return x\n",
    "    if x:\n        return 1\n",
    "a=1, b=2",
    ")]",
    "}}",
    "{{",
    "%",
    "<",
    ">",
    "&amp;",
    "=",
)


@dataclass(frozen=True)
class Turn:
    reasoning: str | None
    content: str
    calls: tuple[tuple[str, dict[str, Any]], ...]

    def as_dict(self) -> dict[str, Any]:
        return {"reasoning": self.reasoning, "content": self.content, "calls": [list(c) for c in self.calls]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        return cls(data["reasoning"], data["content"], tuple((n, a) for n, a in data["calls"]))


def losses(target: Target) -> dict[str, Loss]:
    return {loss.rule: loss for loss in LOSSES.get(target.name, ())}


@cache
def own_markers(target: Target) -> tuple[str, ...]:
    """The marker strings of the target's formats: a template writes text raw, so text holding
    one of them cannot be told from the marker (the generator does not write them whole)."""
    spec = Parser(target.reasoning, target.tools).spec
    found = {s for values in spec.terminals.values() for s in values if s.strip()}
    found |= {e.strip() for e in (target.end, *target.also_ends)} - {""}
    found |= set(target.special.values())
    return tuple(sorted(found))


@cache  # a strategy is built (and validated by hypothesis) once, not at every draw
def _text(target: Target, *, max_pieces: int) -> st.SearchStrategy[str]:
    own = own_markers(target)
    pieces = [p for p in MARKUP if not any(m in p for m in own)]
    pieces += [m[:-1] for m in own if len(m) > 2]  # a marker cut short is text
    piece = st.sampled_from(pieces) | st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
    plain = st.text("abcxyz ", min_size=1, max_size=8)
    return (
        st.lists(piece | plain, max_size=max_pieces)
        .map("".join)
        .filter(lambda s: not any(m in s for m in own) and "\r" not in s)
    )


@st.composite
def _value(draw: st.DrawFn, target: Target, schema: dict[str, Any], depth: int = 0) -> Any:
    kind = schema.get("type")
    if kind == "string":
        return draw(_text(target, max_pieces=6))
    if kind == "integer":
        return draw(st.sampled_from([0, 1, -1, 2**31 - 1, -(2**31), 2**53, -(2**53), 10**18]) | st.integers(-999, 999))
    if kind == "number":
        return draw(
            st.sampled_from([0.5, -0.25, 1e300, -1e-300, 5e-324, 1.7976931348623157e308, 3.14159])
            | st.floats(allow_nan=False, allow_infinity=False)
        )
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "array":
        return draw(st.lists(st.integers(-5, 5), max_size=4))
    return draw(_object(target))


@cache
def _object(target: Target) -> st.SearchStrategy[dict[str, Any]]:
    """JSON of any shape, nested."""
    scalar = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _text(target, max_pieces=3)
    return st.dictionaries(
        st.text("abk_", min_size=1, max_size=4),
        st.recursive(
            scalar,
            lambda inner: (
                st.lists(inner, max_size=3) | st.dictionaries(st.text("xyz", min_size=1, max_size=3), inner, max_size=3)
            ),
            max_leaves=6,
        ),
        max_size=3,
    )


@st.composite
def _call(draw: st.DrawFn, target: Target) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(TOOLS))["function"]
    params = tool["parameters"]
    args: dict[str, Any] = {}
    raw = "no quote in strings" in losses(target)
    for key, schema in params["properties"].items():
        if key in params["required"] or draw(st.booleans()):
            value = _value(target, schema)
            if raw and schema.get("type") == "string":
                value = value.map(lambda s: s.replace("'", ""))
            args[key] = draw(value)
    order = draw(st.permutations(list(args)))
    return tool["name"], {k: args[k] for k in order}


@st.composite
def turns(draw: st.DrawFn, target: Target) -> Turn:
    rules = losses(target)
    reasoning = None
    if target.reasoning_key is not None and "no reasoning" not in rules:
        text = _text(target, max_pieces=8)
        reasoning = draw(text.filter(bool) if "reasoning required" in rules else st.none() | text)
    max_calls = 0 if target.tools is None or "no calls" in rules else 5
    if "one call" in rules:
        max_calls = 1
    calls = tuple(draw(st.lists(_call(target), max_size=max_calls)))
    if "content or reasoning with calls" in rules and calls and reasoning is not None:
        return Turn(reasoning, "", calls)
    content = _text(target, max_pieces=8)
    if "not empty" in rules and not calls:
        content = content.filter(lambda s: bool(s.strip()))
    return Turn(reasoning, draw(content), calls)


# ---------------------------------------------------------------------- rendering


@cache
def template(target: Target) -> ChatTemplate:
    return ChatTemplate(
        target.template.read_text(encoding="utf-8"),
        dict(target.special),
        now=lambda: datetime.datetime(2026, 1, 2),
    )


def message(target: Target, turn: Turn) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": turn.content}
    if turn.reasoning is not None and target.reasoning_key is not None:
        msg[target.reasoning_key] = turn.reasoning
    if turn.calls:
        msg["tool_calls"] = [
            {"id": f"call{k:05d}", "type": "function", "function": {"name": name, "arguments": args}}
            for k, (name, args) in enumerate(turn.calls)
        ]
    return msg


class NotAContinuation(AssertionError):
    """The template renders the turn so that the prompt is not its beginning, or without its end."""


@cache
def prompt(target: Target) -> str:
    return template(target).render(HISTORY, tools=TOOLS, add_generation_prompt=True, **target.kwargs)


def render(target: Target, turn: Turn) -> str:
    """What the model wrote for ``turn``: the turn's render past the prompt, less the stop text."""
    head = prompt(target)
    full = template(target).render([*HISTORY, message(target, turn)], tools=TOOLS, **target.kwargs)
    if not full.startswith(head):
        raise NotAContinuation(f"{target.name}: the prompt is not the beginning of the rendered turn")
    out = full[len(head) :]
    for end in (target.end, *target.also_ends):
        if out.endswith(end):
            return out[: len(out) - len(end)]
    raise NotAContinuation(f"{target.name}: the rendered turn does not end with {target.end!r}: {out[-60:]!r}")


# ---------------------------------------------------------------------- what comes back


def expected(target: Target, turn: Turn) -> dict[str, Any]:
    """The message trisect must return for ``turn``: the turn itself, with each field stripped as
    a whole of the format's whitespace (``FormatSpec.strip``; docs/CONTRIBUTING-FORMATS.md, "Rules
    the expected values follow"), an empty field
    null, and the target's lossy rules applied (``lossy.py``)."""
    rules = losses(target)
    reasoning = turn.reasoning
    content = turn.content
    calls = [(name, dict(args)) for name, args in turn.calls]
    for loss in rules.values():
        reasoning, content, calls = loss.apply(reasoning, content, calls)
    strip = Parser(target.reasoning, target.tools).spec.strip
    return {
        "reasoning": (reasoning or "").strip(strip) or None,
        "content": (content or "").strip(strip) or None,
        "tool_calls": [{"name": n, "arguments": a} for n, a in calls],
    }


def same(a: Any, b: Any) -> bool:
    """JSON values equal, strings byte for byte, booleans never numbers, numbers by value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=0, abs_tol=0))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
