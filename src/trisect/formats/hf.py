"""vLLM's ``hf`` reasoning and tool-call parsers: formats described by the model's own
``response_template`` (Hugging Face's response-parsing metadata), compiled at run time.

The template is data in the checkpoint: ``tokenizer.response_template``, or the
``"response_template"`` key of ``tokenizer_config.json`` (``tokenizer.init_kwargs``)::

    {"version": 1, "start_anchor": "<|im_start|>assistant\\n",
     "fields": {
       "thinking": {"open": "<think>", "close": "</think>"},
       "content": {},
       "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "content": "json", "repeats": true,
                      "transform": {"type": "function",
                                    "function": {"name": "{content.name}", "arguments": "{content.arguments}"}}}}}

``Parser("hf", "hf", tokenizer=tok)`` reads it from the tokenizer;
``response_template_formats(template)`` builds the two specs from a dict (``Parser(*specs)``).

What the template says, as trisect reads it (vLLM 0.33 ``parser/chat_parsing/``): each field is
a region between its ``open`` and ``close`` literals (a list: several spellings); the field
without ``open`` is the implicit region, where text outside the others goes (here: ``content``,
so the output starts in content unless the prompt left a region open); outside a region every
field's opener is watched, inside one only its own closer (so ``<tool_call>`` inside thinking is
reasoning text). ``thinking`` becomes the reasoning block (a reasoning format: ``THINK_START`` /
``THINK_END``); ``tool_calls`` with ``content: "json"`` and a ``transform`` that maps the
region's JSON keys to ``function.name`` / ``function.arguments`` (and optionally ``id``) becomes a
JSON envelope call per region; with ``transform_each`` the region holds a JSON list of such
objects. ``start_anchor`` literals are the prompt's turn markers (where the assistant message
starts). Field text is kept verbatim (vLLM strips nothing from ``thinking`` / ``content``).

Where trisect keeps its own rules rather than the reference parser's: a complete but malformed
tool region keeps its text as content (vLLM drops it; trisect never loses model text); the JSON
decides where a call ends, so a closer inside a JSON string is string text (vLLM ends the region
there and drops the broken call); arguments stream as they arrive and keep the JSON the model
wrote (vLLM sends each call whole and coerces string arguments to the schema's types); a region
cut off by the end of the output follows the engine's rule for cut-off calls. Not expressible as
a trisect table, and a ``FormatError`` naming the key: regex delimiters (``open_pattern`` /
``close_pattern``) and captures, a thinking field that is the implicit region, ``xml-inline`` /
``kv-lines`` tool bodies, transforms other than the key mapping above.

``beam`` is the same parser under the name vLLM gives Beam checkpoints (``parser/beam.py``:
``BeamParser`` is a ``ResponseTemplateParser`` reading the checkpoint's template; what it adds
is grammar policy — a structural tag that requires non-empty reasoning when thinking is on and
writes arguments sorted by name — not a different output format).

Reference: vLLM 0.33 ``parser/response_template.py`` and ``parser/chat_parsing/``
(``response_templates.py``, ``response_parser.py``, ``content_parsers.py``); registered as
``hf`` (and ``beam``, ``parser/beam.py``) in ``reasoning/__init__.py`` and
``tool_parsers/__init__.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from typing import Any

from ..codecs import JsonEnvelope
from ..engine.spec import CONTENT, REASONING, Act, FormatSpec, Region, Rule, rules
from ..engine.vocab import Vocab
from ..errors import FormatError
from ._json_tools import listed, wrapped

# vLLM's names for the response-template parsers: ``beam`` (Beam checkpoints) parses the same way
# (vLLM 0.33 parser/beam.py: BeamParser is a ResponseTemplateParser; only its grammar differs)
NAMES = ("hf", "beam")
FIELDS = ("thinking", "content", "tool_calls")
_TOP = {"version", "defaults", "fields", "start_anchor", "start_anchor_pattern"}
_FIELD = {"open", "open_pattern", "close", "close_pattern", "content", "content_args", "repeats", "join", "optional"}
_FIELD |= {"transform", "transform_each"}
_PLACEHOLDER = re.compile(r"\{(\w+(?:\.\w+)*)\}")
MODELS = ("any model whose tokenizer config carries a response_template", "Beam")
REFERENCE = "the checkpoint's response_template (Hugging Face response parsing); vLLM hf parsers"


FORMATS: list[FormatSpec] = []  # built per template (``formats_for``), not at import


def template_of(tokenizer: Any) -> Mapping[str, Any] | None:
    """The tokenizer's ``response_template`` (its attribute, else the ``tokenizer_config.json``
    key that transformers keeps in ``init_kwargs``), if it is an object."""
    value = getattr(tokenizer, "response_template", None)
    if not isinstance(value, Mapping):
        kwargs = getattr(tokenizer, "init_kwargs", None)
        value = kwargs.get("response_template") if isinstance(kwargs, Mapping) else None
    return value if isinstance(value, Mapping) else None


def formats_for(kind: str, tokenizer: Any, vocab: Vocab | None, *, reasoning: bool = True) -> FormatSpec:
    """The ``hf`` format of ``kind`` for the model of ``tokenizer`` (``FormatError`` if its
    tokenizer has no usable template); ``reasoning``: a reasoning format is used with it (else
    the tool format reads the thinking region as content, see ``response_template_formats``)."""
    flag = "--reasoning-parser" if kind == "reasoning" else "--tool-call-parser"
    template = template_of(tokenizer) if tokenizer is not None else None
    if template is None:
        raise FormatError(
            f"{flag} hf reads the model's response_template: give Parser(..., tokenizer=tok) whose "
            "tokenizer_config.json has one, or Parser(*trisect.formats.hf.response_template_formats(template))"
        )
    specs = _cached(json.dumps(template, sort_keys=True), vocab, reasoning)
    spec = specs[0] if kind == "reasoning" else specs[1]
    if spec is None:
        field = "thinking" if kind == "reasoning" else "tool_calls"
        raise FormatError(f"{flag} hf needs a {field!r} field in the model's response_template")
    return spec


@lru_cache(maxsize=64)
def _cached(template: str, vocab: Vocab | None, reasoning: bool) -> tuple[FormatSpec | None, FormatSpec | None]:
    return response_template_formats(json.loads(template), vocab=vocab, reasoning=reasoning)


def response_template_formats(
    template: Mapping[str, Any], *, vocab: Vocab | None = None, reasoning: bool = True
) -> tuple[FormatSpec | None, FormatSpec | None]:
    """``(reasoning format or None, tool format or None)``, both named ``hf``, from a
    response_template dict (``FormatError`` naming the key for one trisect cannot read). With a
    ``vocab``, markers that are single added tokens are matched by id. ``reasoning=False``: the
    tool format is used without a reasoning format, so it reads the thinking region itself, its
    text as content and its delimiters dropped (as vLLM routes thinking without a reasoning
    parser)."""
    fields = _validate(template)
    anchors = _literals(template.get("start_anchor"), "start_anchor") or ()
    think = _reasoning(fields["thinking"], anchors, vocab) if "thinking" in fields else None
    tools = None
    if "tool_calls" in fields:
        tools = _tools(fields["tool_calls"], vocab, None if reasoning else think)
    return think, tools


# ---------------------------------------------------------------------------- validation


def _fail(where: str, message: str) -> FormatError:
    return FormatError(f"response_template: {where}: {message}")


def _literals(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(s, str) and s for s in items):
        raise _fail(where, "must be a non-empty string or a non-empty list of them")
    return tuple(dict.fromkeys(sorted(items, key=len, reverse=True)))  # longest first, as the reference


def _validate(template: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The reference parser's checks for serving (vLLM ``validate_response_template_for_serving``),
    then what a trisect table cannot say."""
    if not isinstance(template, Mapping):
        raise FormatError(f"response_template must be an object, not {type(template).__name__}")
    if template.get("version", 1) != 1:
        raise _fail("version", f"{template.get('version')!r} is not a supported version (1)")
    unknown = set(template) - _TOP
    if unknown:
        raise _fail(sorted(unknown)[0], f"unknown key; known: {', '.join(sorted(_TOP))}")
    if ("start_anchor" in template) == ("start_anchor_pattern" in template):
        raise _fail("start_anchor", "give exactly one of start_anchor / start_anchor_pattern")
    defaults = template.get("defaults", {})
    if not isinstance(defaults, Mapping) or set(defaults) - {"role"}:
        raise _fail("defaults", "may only set role")
    fields = template.get("fields")
    if not isinstance(fields, Mapping) or not fields:
        raise _fail("fields", "must be a non-empty object")
    out: dict[str, Mapping[str, Any]] = {}
    for name, field in fields.items():
        where = f"fields.{name}"
        if name not in FIELDS:
            raise _fail(where, f"only {', '.join(FIELDS)} can be served")
        if not isinstance(field, Mapping):
            raise _fail(where, "must be an object")
        unknown = set(field) - _FIELD
        if unknown:
            raise _fail(f"{where}.{sorted(unknown)[0]}", "unknown key")
        for key in ("open_pattern", "close_pattern"):
            if key in field:
                raise _fail(f"{where}.{key}", "regex delimiters have no trisect form; give the literal spellings")
        if name in ("thinking", "content"):
            if field.get("content", "text") != "text" or "transform" in field or "join" in field:
                raise _fail(where, 'must be content "text" without transform or join (it streams)')
        out[name] = field
    implicit = [name for name, field in out.items() if "open" not in field]
    if len(implicit) > 1:
        raise _fail("fields", f"at most one field may omit open (found {', '.join(implicit)})")
    if implicit and implicit[0] != "content":
        raise _fail(f"fields.{implicit[0]}.open", "only content may be the implicit region here")
    if not implicit and "content" in out:
        raise _fail("fields.content.open", "a content field with an opener leaves text outside every region")
    return out


# ---------------------------------------------------------------------------- the formats


def _special(terminals: Mapping[str, tuple[str, ...]], vocab: Vocab | None) -> frozenset[str]:
    if vocab is None:
        return frozenset()
    return frozenset(t for t, markers in terminals.items() if all(vocab.special_id(m) is not None for m in markers))


def _reasoning(field: Mapping[str, Any], anchors: tuple[str, ...], vocab: Vocab | None) -> FormatSpec:
    start = _literals(field.get("open"), "fields.thinking.open")
    end = _literals(field.get("close"), "fields.thinking.close")
    assert start is not None  # _validate: thinking is an explicit region
    terminals: dict[str, tuple[str, ...]] = {"THINK_START": start}
    rows: list[tuple[Any, ...]] = [(CONTENT, "THINK_START", REASONING, ())]
    if end is not None:  # no closer: the region lasts to the end of the output
        terminals["THINK_END"] = end
        rows.append((REASONING, "THINK_END", CONTENT, (Act.REASONING_END,)))
    return FormatSpec(
        name="hf",
        kind="reasoning",
        terminals=terminals,
        special=_special(terminals, vocab),
        regions={REASONING: Region.REASONING, CONTENT: Region.CONTENT},
        table=rules(*rows),
        turn_markers=anchors,
        strip="",
        models=MODELS,
        reference=REFERENCE,
    )


def _keys(transform: Any, where: str, scope: str) -> tuple[str, str, str | None]:
    """``(name key, arguments key, id key or None)`` of a transform that maps the region's JSON
    object (``{content.K}`` placeholders, or ``{K}`` with transform_each) to a tool call."""
    function = transform.get("function") if isinstance(transform, Mapping) else None
    extra = set(transform) - {"type", "function", "id"} if isinstance(transform, Mapping) else set()
    if not isinstance(function, Mapping) or extra or set(function) - {"name", "arguments"}:
        raise _fail(where, 'must map the region to {"function": {"name": …, "arguments": …}} (and id)')
    if transform.get("type", "function") != "function":
        raise _fail(f"{where}.type", 'must be "function"')

    def key(value: Any, what: str) -> str:
        m = _PLACEHOLDER.fullmatch(value) if isinstance(value, str) else None
        parts = m.group(1).split(".") if m else []
        if scope:
            parts = parts[1:] if parts[:1] == [scope] else []
        if len(parts) != 1:
            placeholder = f"{{{scope}.KEY}}" if scope else "{KEY}"
            raise _fail(f"{where}.{what}", f"must be a placeholder {placeholder} naming a key of the region's JSON")
        return parts[0]

    name = key(function.get("name"), "function.name")
    arguments = key(function.get("arguments"), "function.arguments")
    call_id = key(transform["id"], "id") if "id" in transform else None
    return name, arguments, call_id


def _tools(field: Mapping[str, Any], vocab: Vocab | None, thinking: FormatSpec | None) -> FormatSpec:
    where = "fields.tool_calls"
    start = _literals(field.get("open"), f"{where}.open")
    end = _literals(field.get("close"), f"{where}.close")
    assert start is not None  # _validate: only content may be implicit
    if field.get("content", "text") != "json":
        raise _fail(f"{where}.content", "trisect reads tool regions written as JSON (content: json)")
    args = field.get("content_args") or {}
    if args:
        raise _fail(f"{where}.content_args", "JSON dialect options have no trisect form")
    if "transform" not in field:
        raise _fail(f"{where}.transform", "needs the transform that names the call's name and arguments keys")
    each = bool(field.get("transform_each", False))
    name, arguments, call_id = _keys(field["transform"], f"{where}.transform", "" if each else "content")
    codec = JsonEnvelope(name_keys=(name,), args_keys=(arguments,), id_keys=(call_id,) if call_id else ())
    if each:
        spec = listed("hf", start, end, codec=codec, models=MODELS, reference=REFERENCE)
    else:
        spec = wrapped("hf", start, end, codec=codec, special=False, models=MODELS, reference=REFERENCE)
    # the reference watches only the region's own closer outside it: a stray closer is text
    stray = {(CONTENT, t) for t in ("TOOL_END", "LIST_END")}
    table = {key: rule for key, rule in spec.table.items() if key not in stray}
    terminals, regions = dict(spec.terminals), dict(spec.regions)
    if thinking is not None:  # no reasoning format: the thinking region is read here, as content
        terminals.update(thinking.terminals)
        regions[_THOUGHT] = Region.CONTENT
        table[(CONTENT, "THINK_START")] = Rule(_THOUGHT)
        if "THINK_END" in thinking.terminals:
            table[(_THOUGHT, "THINK_END")] = Rule(CONTENT)
    special = _special(terminals, vocab)
    return replace(spec, terminals=terminals, regions=regions, table=table, special=special, strip="")


_THOUGHT = "THOUGHT_AS_CONTENT"  # the thinking region of a tool format used without reasoning
