"""Does a format parse the template's own turns back exactly?

The sentinel trials (``confirm``) show that a format reads one call with two plain arguments. A
format built from them (``synth``, ``shapes``) could still miss what the template writes for
other values: newlines and indentation in a string, quotes, backslashes, unicode, text that looks
like markers, nested objects and arrays, numbers, booleans and null, two calls, content before a
call, reasoning over several lines. So a built format is offered only if it inverts these turns:
each is rendered through the template (the conversation with the turn, after the prompt with the
generation prompt: the difference is what the model writes, cut where its turn ends) and parsed,
and must give back exactly the turn: calls with the same names and arguments equal as JSON (strings
byte for byte), content and reasoning equal up to whitespace at their ends. Where the template
itself loses something (it trims a value, writes a number as a string), the parse must be a turn
the template renders to the very same text: the template cannot tell the two apart, so neither can
a parser. A turn the template does not render (it raises, or renders a final turn that does not
continue its own prompt) is no evidence either way; at least two turns must render.

Cost: one render of the prompt and of each turn (a few dozen renders in all, cached by the probe)
and one parse of each, per format checked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine.spec import FormatSpec
from ..errors import TrisectError
from ..message import Message
from . import probe as p
from .confirm import parser
from .diff import Markers, middle
from .evidence import OPEN, ReasoningEvidence, cut_at_turn_end

# the tools the turns call: one property of each JSON type
_PROPERTIES: dict[str, Any] = {
    "text": {"type": "string"},
    "count": {"type": "integer"},
    "ratio": {"type": "number"},
    "flag": {"type": "boolean"},
    "items": {"type": "array"},
    "options": {"type": "object"},
}
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": "A detection sentinel.",
            "parameters": {"type": "object", "properties": _PROPERTIES, "required": ["text"]},
        },
    }
    for name in p.NAMES
]

CALL_TURNS: tuple[tuple[str, tuple[tuple[str, Mapping[str, Any]], ...]], ...] = (
    ("", ((p.NAMES[0], {"text": "plain words", "count": 3}),)),
    (
        "",
        (
            (
                p.NAMES[0],
                {
                    "text": '  two\n    lines, "quoted" and a back\\slash\t\n',
                    "count": -12,
                    "ratio": 0.25,
                    "flag": False,
                    "items": [1, "two", None, {"k": []}],
                    "options": {"nested": {"deep": "v"}, "none": None, "on": True},
                },
            ),
        ),
    ),
    (
        "",
        (
            (p.NAMES[0], {"text": "h\u00e9llo \u2014 \u2713 \u65e5\u672c"}),
            (p.NAMES[1], {"text": '<tool_call>{"name": "x", "arguments": {}}</tool_call> [TOOL_CALLS]', "count": 0}),
        ),
    ),
    ("Let me check that.", ((p.NAMES[1], {"text": "", "flag": True, "ratio": 2.5}),)),
)
REASONING_TURNS: tuple[tuple[str, str], ...] = (
    ("First, the facts.\n  Then the `code`: x = {'a': 1}\nDone.", "The answer is 42."),
    ("Short.", "  indented\n    code()\nend"),
    ("Reason about \u00e9t\u00e9 and <b>tags</b>.", 'Text that looks like {"name": "f"} JSON.'),
)


@dataclass(frozen=True)
class Verdict:
    """The turns that rendered, and those a format failed to parse back (with what it gave)."""

    rendered: int
    failed: tuple[str, ...]

    @property
    def inverts(self) -> bool:
        return self.rendered >= 2 and not self.failed


def _call(index: int, name: str, arguments: Mapping[str, Any], as_string: bool) -> dict[str, Any]:
    args: Any = json.dumps(dict(arguments), ensure_ascii=False) if as_string else dict(arguments)
    return {"id": f"zqcall{index:03d}", "type": "function", "function": {"name": name, "arguments": args}}


def _message(
    reasoning: str, content: str, calls: Sequence[tuple[str, Mapping[str, Any]]], key: str, as_string: bool = False
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning:
        message[key] = reasoning
    if calls:
        message["tool_calls"] = [_call(i + 1, name, args, as_string) for i, (name, args) in enumerate(calls)]
    return message


_USER = {"role": "user", "content": p.USER}


def _turn_end(probe: p.Probe) -> str:
    """What the template writes after the model's final turn (its end-of-turn marker and what
    follows it): the text after the answer of a plain answer turn."""
    plain = probe.turn(p.assistant(content=p.CONTENT)).text
    if plain is None or p.CONTENT not in plain:
        return ""
    return plain[plain.rindex(p.CONTENT) + len(p.CONTENT) :]


def _continuation(
    probe: p.Probe, message: Mapping[str, Any], kwargs: Mapping[str, Any], end: str, markers: Markers
) -> tuple[str, str] | None:
    """(the generation prompt, what the model writes after it) for a final turn ``message``
    (a turn without calls, rendered without tools: templates that list them late); None
    unless the template renders the turn as a continuation of that prompt (a template that
    drops the reasoning of a final turn, or writes the closed form of a block the prompt opened,
    renders no output a model could have written)."""
    prompt = probe.render([_USER], generation=True, kwargs=kwargs).text
    full = probe.render([_USER, message], kwargs=kwargs).text
    if prompt is None or full is None or not full.startswith(prompt):
        return None
    out = full[len(prompt) :]
    if end and out.endswith(end):
        out = out[: -len(end)]
    elif end.strip() and out.rstrip().endswith(end.strip()):
        out = out.rstrip()[: -len(end.strip())]
    elif (first := markers.first(end)) and first in out:
        out = out[: out.rindex(first)]
    return prompt, out


def _call_region(probe: p.Probe, message: Mapping[str, Any], markers: Markers, history: bool) -> str | None:
    """What the calls of a turn render as: the turn against the same turn without calls
    (``diff.middle``), a final turn cut where the model's turn ends, as the sentinel trials are
    taken; ``history``: the turn followed by a second user turn (templates that render calls
    only there)."""
    after = [{"role": "user", "content": p.USER2}] if history else []
    full = probe.render([_USER, message, *after], tools=TOOLS).text
    if full is None:
        return None
    content = message.get("content") or ""
    for baseline in dict.fromkeys((content, p.CONTENT) if content else ("", p.CONTENT)):
        base = probe.render([_USER, {"role": "assistant", "content": baseline}, *after], tools=TOOLS).text
        if base is None:
            continue
        region = middle(base, full, markers)
        if not history:
            region = cut_at_turn_end(region, base, baseline, markers, probe.template.eos_token)
        if content and baseline != content:
            region = region.replace(content, "", 1).strip()
        if all(call["function"]["name"] in region for call in message.get("tool_calls", ())):
            return region
    return None


def _same(msg: Message, reasoning: str, content: str, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> bool:
    if (msg.reasoning or "").strip() != reasoning.strip() or (msg.content or "").strip() != content.strip():
        return False
    if [t.name for t in msg.tool_calls] != [name for name, _args in calls]:
        return False
    try:
        return all(json.loads(t.arguments) == dict(args) for t, (_n, args) in zip(msg.tool_calls, calls, strict=True))
    except ValueError:
        return False


def _renders_alike(
    probe: p.Probe,
    msg: Message,
    turn: tuple[str, str, Sequence[tuple[str, Mapping[str, Any]]]],
    kwargs: Mapping[str, Any],
    key: str,
    as_string: bool,
) -> bool:
    """Does the parse render to the same text as the turn (a loss in the template, not the
    parser)? Fields the parse gives back (up to whitespace at the ends) are rendered as the
    turn had them, so that only the fields that differ are put to the template."""
    reasoning, content, calls = turn
    try:
        parsed = [(t.name, json.loads(t.arguments)) for t in msg.tool_calls]
    except ValueError:
        return False
    if len(parsed) != len(calls) or not all(isinstance(a, dict) for _n, a in parsed):
        return False
    again = _message(
        reasoning if (msg.reasoning or "").strip() == reasoning.strip() else msg.reasoning or "",
        content if (msg.content or "").strip() == content.strip() else msg.content or "",
        [(name, args) for name, args in parsed],
        key,
        as_string,
    )
    listed = TOOLS if calls else False
    want = probe.render([_USER, _message(reasoning, content, calls, key, as_string)], tools=listed, kwargs=kwargs)
    return want.text is not None and probe.render([_USER, again], tools=listed, kwargs=kwargs).text == want.text


def tool_verdict(
    probe: p.Probe,
    tools: FormatSpec,
    markers: Markers,
    *,
    as_string: bool = False,
    history: bool = False,
    reasoning: FormatSpec | None = None,
) -> Verdict:
    """How ``tools`` (with ``reasoning``, if any) reads the calls of the template's own turns,
    rendered as the sentinel calls were (arguments as an object or, ``as_string``, as a JSON
    string; a final turn or a ``history`` one): each turn's call region must give back exactly
    its calls, and no content."""
    rendered, failed = 0, []
    for content, calls in CALL_TURNS:
        message = _message("", content, calls, "reasoning_content", as_string)
        region = _call_region(probe, message, markers, history)
        if region is None:
            continue
        rendered += 1
        try:
            msg = parser(reasoning, tools).parse(region, tools=TOOLS)
        except TrisectError as exc:
            failed.append(f"{region!r}: {exc}")
            continue
        if _same(msg, "", "", calls):
            continue
        # a loss in the template: the calls it read render as the template wrote them
        if (msg.content or "").strip() or not _renders_alike(probe, msg, ("", content, calls), {}, "", as_string):
            failed.append(
                f"{region!r} (parsed as {msg.content!r}, {[(t.name, t.arguments) for t in msg.tool_calls]!r})"
            )
    return Verdict(rendered, tuple(failed))


def reasoning_verdict(probe: p.Probe, reasoning: FormatSpec, ev: ReasoningEvidence, markers: Markers) -> Verdict:
    """How ``reasoning`` reads the template's own reasoning turns, under the first setting whose
    prompt leaves the model to reason and whose render continues that prompt."""
    key = {"reasoning": "reasoning", "thinking": "thinking"}.get(ev.shape, "reasoning_content")
    settings = [s.kwargs for s in ev.settings if s.verdict in (OPEN, None)] or [{}]
    end = _turn_end(probe)
    rendered, failed = 0, []
    for reasoning_text, content in REASONING_TURNS:
        message = _message(reasoning_text, content, (), key)
        for kwargs in settings:
            found = _continuation(probe, message, kwargs, end, markers)
            if found is None:
                continue
            prompt, out = found
            rendered += 1
            try:
                msg = parser(reasoning, None).parse(out, prompt_text=prompt, chat_template_kwargs=kwargs)
            except TrisectError as exc:
                failed.append(f"{out!r}: {exc}")
                break
            turn = (reasoning_text, content, ())
            if not _same(msg, *turn) and not _renders_alike(probe, msg, turn, kwargs, key, False):
                failed.append(f"{out!r} (parsed as {msg.reasoning!r}, {msg.content!r})")
            break
    return Verdict(rendered, tuple(failed))
