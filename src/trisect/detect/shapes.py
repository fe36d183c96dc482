"""Tool-call formats built from the call regions one and two sentinel calls render as.

Each recogniser looks for one structure and hands its parts to the catalogue's own builder:

* a JSON envelope ``{"name": …, "arguments": …}`` after a start marker, one per call or in a
  JSON list -> ``formats._json_tools.wrapped`` / ``listed``;
* a name between markers, then the arguments as a JSON object (DeepSeek-V3.1, Devstral) -> a
  five-row table with ``JsonArgsCodec``;
* an invoke element with the name, parameter elements with each key and value (Qwen3-Coder,
  MiniMax-M2, DSML) -> ``formats._xml_invoke.invoke_format``.

The second call's region says what repeats per call (a call element) and what is written once
(a block around the calls). Anything else — a name that carries a call index or an id, keys and
values in separate tags, bare JSON with nothing marking where a call starts — is not guessed at:
``tool_format`` returns ``None``. Cost: string searches over a few hundred characters.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from ..codecs import JsonArgsCodec, JsonEnvelope
from ..engine.spec import ARGS_DONE, CONTENT, Act, FormatSpec, Region, rules
from ..formats._json_tools import listed, wrapped
from ..formats._xml_invoke import Quote, invoke_format
from . import probe as p
from .diff import Markers, common_prefix, common_suffix
from .evidence import ToolShape
from .synth import REFERENCE, recorded

_DECODER = json.JSONDecoder()


def tool_format(shape: ToolShape, markers: Markers, *, name: str = "detected") -> FormatSpec | None:
    if not shape.regions:
        return None
    one = shape.regions[0].text
    two = shape.regions[1].text if len(shape.regions) > 1 else None
    for build in (_envelope, _named_json, _invoke):
        spec = build(one, two, markers, name)
        if spec is not None:
            return spec
    return None


def _json_at(text: str, value: Any) -> tuple[int, int] | None:
    """The span of the first JSON text in ``text`` that decodes to ``value``."""
    for m in re.finditer(r"[\[{]", text):
        try:
            decoded, end = _DECODER.raw_decode(text, m.start())
        except ValueError:
            continue
        if decoded == value:
            return m.start(), end
    return None


def _envelope_keys(text: str) -> tuple[str, str, tuple[int, int]] | None:
    for name_key in ("name", "function", "tool_name"):
        for args_key in ("arguments", "parameters", "args", "input"):
            span = _json_at(text, {name_key: p.NAMES[0], args_key: dict(p.ARGUMENTS)})
            if span is not None:
                return name_key, args_key, span
    return None


def _envelope(one: str, two: str | None, markers: Markers, name: str) -> FormatSpec | None:
    found = _envelope_keys(one)
    if found is None:
        return None
    name_key, args_key, (a, b) = found
    before, after = one[:a], one[b:]
    codec = JsonEnvelope(
        name_keys=(name_key,),
        args_keys=(args_key, *(k for k in ("arguments", "parameters") if k != args_key)),
    )
    start = before.strip()
    in_list = start.endswith("[") and after.lstrip().startswith("]")
    if in_list:
        start, end = start[:-1].rstrip(), after.lstrip()[1:].strip()
    else:
        end = after.strip()
    if not start:
        return None  # a bare envelope: nothing marks where a call starts
    special = _special(markers, start, end)
    if in_list or (two is not None and two.count(start) == 1):
        return recorded(
            listed(
                name,
                (start,),
                (end,) if end else None,
                codec=codec,
                special=frozenset(k for k, m in (("LIST_START", start), ("LIST_END", end)) if m and m in special),
                models=(name,),
                reference=REFERENCE,
            )
        )
    return recorded(
        wrapped(
            name,
            (start,),
            (end,) if end else None,
            codec=codec,
            special=bool(special),
            models=(name,),
            reference=REFERENCE,
        )
    )


def _special(markers: Markers, *strings: str) -> set[str]:
    """The strings that are one marker each (special tokens when the vocabulary is known)."""
    return {s for s in strings if s and markers.first(s) == s}


def _named_json(one: str, two: str | None, markers: Markers, name: str) -> FormatSpec | None:
    """``[BLOCK] CALL NAME SEP {arguments} [CALL_END] [BLOCK_END]``."""
    span = _json_at(one, dict(p.ARGUMENTS))
    at = one.find(p.NAMES[0])
    if span is None or at < 0 or at > span[0]:
        return None
    head, sep, tail = one[:at], one[at + len(p.NAMES[0]) : span[0]], one[span[1] :]
    if not head.strip() or not sep.strip() or markers.first(sep.strip()) != sep.strip():
        return None  # the name must sit between markers (an index or an id beside it is not handled)
    call_start, call_end, block_start, block_end = head.strip(), tail.strip(), "", ""
    if two is not None:
        a2, b2 = _second_call(two, head, sep, tail)
        if a2 is None:
            return None
        between = two[a2:b2]  # call end + separator + call start
        cs = len(head) - markers.right(head, len(head) - common_suffix(head, between))
        ce = markers.left(tail, common_prefix(tail, between))
        call_start, block_start = head[len(head) - cs :].strip(), head[: len(head) - cs].strip()
        call_end, block_end = tail[:ce].strip(), tail[ce:].strip()
        if not call_start:
            return None
    terminals: dict[str, tuple[str, ...]] = {"CALL_START": (call_start,), "SEP": (sep.strip(),)}
    outer = "BLOCK" if block_start else CONTENT
    rows: list[tuple[Any, ...]] = [
        (outer, "CALL_START", "NAME", (Act.CALL_START,)),
        ("NAME", "SEP", "ARGS", (Act.NAME_END,)),
    ]
    regions = {CONTENT: Region.CONTENT, "NAME": Region.NAME, "ARGS": Region.ARGS}
    if block_start:
        terminals["BLOCK_START"] = (block_start,)
        regions["BLOCK"] = Region.SKIP
        rows.append((CONTENT, "BLOCK_START", "BLOCK", ()))
        if block_end:
            terminals["BLOCK_END"] = (block_end,)
            rows += [("BLOCK", "BLOCK_END", CONTENT, ()), ("ARGS", "BLOCK_END", CONTENT, (Act.CALL_END,))]
    if call_end:
        terminals["CALL_END"] = (call_end,)
        rows += [("ARGS", "CALL_END", outer, (Act.CALL_END,)), ("ARGS", "CALL_START", "NAME", (Act.CALL_START,))]
    else:
        rows.append(("ARGS", ARGS_DONE, outer, (Act.CALL_END,)))
    special = _special(markers, *(m for ms in terminals.values() for m in ms))
    return recorded(
        FormatSpec(
            name=name,
            kind="tools",
            terminals=terminals,
            special=frozenset(t for t, ms in terminals.items() if ms[0] in special),
            regions=regions,
            table=rules(*rows),
            codec=JsonArgsCodec,
            models=(name,),
            reference=REFERENCE,
        )
    )


def _second_call(two: str, head: str, sep: str, tail: str) -> tuple[int | None, int]:
    """In the two-call region: where the first call's arguments end and the second name begins."""
    first = _json_at(two, dict(p.ARGUMENTS))
    second = two.find(p.NAMES[1])
    if first is None or second < 0 or two[second + len(p.NAMES[1]) :].find(sep.strip()) < 0:
        return None, 0
    return first[1], second


def _open_before(text: str, at: int) -> tuple[str, str] | None:
    """The element opener a name or key at ``at`` is written in (``<function=``, ``<invoke
    name=``) and its quote character ("" when unquoted)."""
    quote = text[at - 1] if at > 0 and text[at - 1] in "\"'" else ""
    head = text[: at - len(quote)]
    lt = head.rfind("<")
    if lt < 0 or ">" in head[lt:]:
        return None
    return head[lt:], quote


def _close_after(text: str, at: int) -> tuple[str, int] | None:
    """The closing tag that starts at ``at`` (whitespace skipped) and where it ends."""
    m = re.compile(r"\s*(</[^<>]{1,60}>)").match(text, at)
    return (m.group(1), m.end()) if m else None


def _invoke(one: str, two: str | None, markers: Markers, name: str) -> FormatSpec | None:
    n_at = one.find(p.NAMES[0])
    keys = list(p.ARGUMENTS)
    k_at = one.find(keys[0], n_at)
    if n_at < 0 or k_at < 0:
        return None
    name_open, name_quote = _open_before(one, n_at) or ("", "")
    key_open, key_quote = _open_before(one, k_at) or ("", "")
    if not name_open or not key_open:
        return None
    if not re.match(rf"{re.escape(name_quote)}\s*>", one[n_at + len(p.NAMES[0]) :]):
        return None  # the name must end at ``>``
    value = str(p.ARGUMENTS[keys[0]])
    v_at = one.find(value, k_at)
    key_rest = one[k_at + len(keys[0]) : v_at]
    if v_at < 0 or ">" not in key_rest:
        return None
    attrs = key_rest[: key_rest.index(">")]
    extra = attrs.strip() not in ("", key_quote)
    key_quote_style = Quote.FIRST if extra else (Quote.OPTIONAL if key_quote else Quote.NONE)
    value_text = key_rest[key_rest.index(">") + 1 :]
    param_close = _close_after(one, v_at + len(value))
    if param_close is None:
        return None
    last_value = str(p.ARGUMENTS[keys[-1]])
    last_at = one.find(last_value, one.find(keys[-1], param_close[1]))
    last_close = _close_after(one, last_at + len(last_value)) if last_at >= 0 else None
    invoke_close = _close_after(one, last_close[1]) if last_close else None
    if invoke_close is None:
        return None
    invoke_start = one.rfind(name_open, 0, n_at)
    pre, post = one[:invoke_start].strip(), one[invoke_close[1] :].strip()
    opens: Literal["block", "call", "invoke"] = "invoke"
    block = call = None
    if pre and post:
        repeated = two is not None and two.count(pre) >= 2
        if repeated:
            call, opens = (pre, post), "call"
        else:
            block = (pre, post)
    elif pre or post:
        return None
    special = bool(_special(markers, pre, post)) if (pre or post) else True
    names = Quote.OPTIONAL if name_quote else Quote.NONE
    spec = invoke_format(
        name,
        invoke=(name_open, invoke_close[0]),
        param=(key_open, param_close[0]),
        opens=opens,
        block=block,
        call=call,
        bare=block is None,  # a call element the model may leave out (recovery, as the catalogue does)
        special=special,
        stray_end=True,
        names=names,
        keys=key_quote_style,
        # the template's own rule: a value wrapped in newlines loses exactly those, any other
        # is written verbatim (a template that trims values shows it as a loss, not a rule)
        trim="newline" if value_text.startswith("\n") else "none",
        models=(name,),
        reference=REFERENCE,
    )
    return recorded(spec, key=_READER[key_quote_style], call_name=_READER[names])


_READER = {Quote.NONE: "as_is", Quote.OPTIONAL: "unquote", Quote.FIRST: "first_quoted", Quote.ALONE: "first_quoted"}
