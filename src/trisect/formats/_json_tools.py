"""Builders shared by the JSON-bodied tool-call formats (one table shape per envelope kind).

* ``wrapped``: each call is one JSON envelope after a start marker, closed by an end marker or,
  where the family has none, where its JSON ends (Granite 4, InternLM2, granite-20b-fc …);
* ``listed``: a start marker, then a JSON array of envelopes (or envelopes one after another),
  closed by ``]`` and an optional end marker (Granite 3, Jamba, Hunyuan, Cohere …).

In both, the JSON decides where a call ends, so a marker inside a string argument is text, and
a call whose JSON is invalid ends where the JSON broke: its text is content and what follows is
scanned again. Markers that frame a list are envelope: they never reach content.
"""

from __future__ import annotations

import random
import string
from typing import Any

from ..codecs import CodecFactory
from ..engine.spec import ARGS_DONE, CONTENT, NO_GRAMMAR_FACTS, Act, FormatSpec, GrammarFacts, Region, rules


def alnum_id(_request: Any, _index: int, _name: str) -> str:
    """Mistral-style call id: 9 random letters and digits."""
    return "".join(random.choices(string.ascii_letters + string.digits, k=9))


def wrapped(
    name: str,
    start: tuple[str, ...],
    end: tuple[str, ...] | None,
    *,
    codec: CodecFactory,
    special: bool,
    models: tuple[str, ...],
    reference: str,
    grammar: GrammarFacts = NO_GRAMMAR_FACTS,
) -> FormatSpec:
    """``START {envelope} END``, several blocks in a row; ``end=None``: the call ends with its JSON."""
    terminals: dict[str, tuple[str, ...]] = {"TOOL_START": start}
    rows: list[tuple[Any, ...]] = [(CONTENT, "TOOL_START", "TOOL_BODY", (Act.CALL_START,))]
    if end is None:
        rows.append(("TOOL_BODY", ARGS_DONE, CONTENT, (Act.CALL_END,)))
    else:
        terminals["TOOL_END"] = end
        rows += [
            (CONTENT, "TOOL_END", CONTENT, ()),  # a stray closer is absorbed
            ("TOOL_BODY", "TOOL_END", CONTENT, (Act.CALL_END,)),
            ("TOOL_BODY", "TOOL_START", "TOOL_BODY", (Act.CALL_START,)),
        ]
    return FormatSpec(
        name=name,
        kind="tools",
        terminals=terminals,
        special=frozenset(terminals) if special else frozenset(),
        regions={CONTENT: Region.CONTENT, "TOOL_BODY": Region.ARGS},
        table=rules(*rows),
        codec=codec,
        models=models,
        reference=reference,
        grammar=grammar,
    )


def listed(
    name: str,
    start: tuple[str, ...],
    end: tuple[str, ...] | None,
    *,
    codec: CodecFactory,
    special: frozenset[str] = frozenset(),
    start_opens_list: bool = False,
    models: tuple[str, ...],
    reference: str,
    grammar: GrammarFacts = NO_GRAMMAR_FACTS,
) -> FormatSpec:
    """``START [{envelope}, {envelope}] END``; ``end=None``: the list ends at ``]``;
    ``start_opens_list``: the start marker ends with the ``[`` (``functools[``).

    Objects may also follow each other without brackets or commas (MiniMax-M1 writes one per
    line); whitespace between them is formatting. ``special`` names the terminals
    (``LIST_START``, ``LIST_END``) that are special tokens of the family's vocabulary."""
    terminals: dict[str, tuple[str, ...]] = {
        "LIST_START": start,
        "OPEN_BRACKET": ("[",),
        "CLOSE_BRACKET": ("]",),
        "OPEN_BRACE": ("{",),
        "COMMA": (",",),
    }
    after_list = "LIST_CLOSED" if end is not None else CONTENT
    rows: list[tuple[Any, ...]] = [
        (CONTENT, "LIST_START", "LIST" if start_opens_list else "LIST_OPEN", ()),
        ("LIST_OPEN", "OPEN_BRACKET", "LIST", ()),
        ("LIST_OPEN", "OPEN_BRACE", "ITEM", (Act.CALL_START, Act.ARG_MARKER)),
        ("LIST", "OPEN_BRACE", "ITEM", (Act.CALL_START, Act.ARG_MARKER)),
        ("LIST", "CLOSE_BRACKET", after_list, ()),
        ("ITEM", ARGS_DONE, "LIST_NEXT", (Act.CALL_END,)),
        ("LIST_NEXT", "COMMA", "LIST", ()),
        ("LIST_NEXT", "OPEN_BRACE", "ITEM", (Act.CALL_START, Act.ARG_MARKER)),
        ("LIST_NEXT", "CLOSE_BRACKET", after_list, ()),
    ]
    regions = {
        CONTENT: Region.CONTENT,
        "LIST_OPEN": Region.SKIP,
        "LIST": Region.SKIP,
        "ITEM": Region.ARGS,
        "LIST_NEXT": Region.SKIP,
    }
    if end is None:
        # no closer: a call ends with its JSON, so the family's start marker after it opens the
        # next call of the block (Granite 3 writes `<|tool_call|> {…}` once per call)
        rows.append(("LIST_NEXT", "LIST_START", "LIST" if start_opens_list else "LIST_OPEN", ()))
    else:
        terminals["LIST_END"] = end
        regions["LIST_CLOSED"] = Region.SKIP
        rows += [
            (CONTENT, "LIST_END", CONTENT, ()),  # a stray closer is absorbed
            ("LIST_CLOSED", "LIST_END", CONTENT, ()),
            ("LIST", "LIST_END", CONTENT, ()),
            ("LIST_NEXT", "LIST_END", CONTENT, ()),  # no ``]``, or objects without a list
        ]
    if start_opens_list:
        del regions["LIST_OPEN"], terminals["OPEN_BRACKET"]
        rows = [row for row in rows if row[0] != "LIST_OPEN"]
    elif end is not None:
        rows.append(("LIST_OPEN", "LIST_END", CONTENT, ()))
    return FormatSpec(
        name=name,
        kind="tools",
        terminals=terminals,
        special=special,
        regions=regions,
        table=rules(*rows),
        codec=codec,
        models=models,
        reference=reference,
        grammar=grammar,
    )
