"""The builder of the key / value tag family: ``<call>NAME<key>K</key><value>V</value></call>``.

GLM-4.5 … 5.x (``<tool_call>`` / ``<arg_key>`` / ``<arg_value>``), Ling 3 and poolside Laguna
write it bare; Tencent HY v3 / v4 wrap the calls in a ``<tool_calls>`` block (HY v3 also ends
the name with ``<tool_sep>``); K2 Horizon writes it with ``<ifm|…>`` tags and an optional
``<ifm|arg_type>`` element between key and value. ``key_value_format`` takes the differences as
parameters:

* ``call``, ``key``, ``value``: the markers of the call element and of a key and a value;
* ``block``: the element around one or more calls (the calls live in it; its closer also ends
  a call left open); ``name_sep``: a marker that ends the name (else the first key does);
* ``between``: elements written between a key and its value that carry no argument text
  (K2 Horizon's type tag): their markers and text are formatting;
* ``special``, ``validate_names``, ``vocab_suffix``, ``style`` (the xgrammar argument style).

The name is the text after the call marker up to the first key (or ``name_sep``, or the call's
end), stripped. Values are kept verbatim (no template adds whitespace inside a value) and
typed by the tool schema. Recovered: a missing call closer before the next call, a missing
value closer before the next key (only a new key the tool declares: the key of a parameter
the call has, or an undeclared one, is value text, ``Rule.key_end``), a missing value closer
before the call's closer when nothing but the call's end can follow it (the next call, the
block's end, the end of the output where no block holds the calls: ``<arg_value>Berlin</tool_call>``);
an unfinished call is not a call. Marker text inside a value: the value closer ends it only
before the next key, the call's end, the next call or the block's end (not the end of the
output: a cut-off value never completes a call); every other marker there is value text. Cost:
building a table, once per format at import.
"""

from __future__ import annotations

from typing import Any

from ..codecs import XmlParams
from ..engine.spec import CONTENT, Act, FormatSpec, Region, VocabSuffix, rules

BLOCK, NAME, ARGS, VALUE = "TOOL_BLOCK", "TOOL_NAME", "TOOL_ARGS", "TOOL_VALUE"
START, END, NAME_END, MARK = Act.CALL_START, Act.CALL_END, Act.NAME_END, Act.ARG_MARKER


def key_value_format(
    name: str,
    *,
    call: tuple[str, str],
    key: tuple[str, str],
    value: tuple[str, str],
    block: tuple[str, str] | None = None,
    name_sep: str | None = None,
    between: tuple[tuple[str, str], ...] = (),
    special: bool = True,
    validate_names: bool = True,
    style: str | None = None,
    vocab_suffix: VocabSuffix | None = None,
    models: tuple[str, ...],
    reference: str,
    aliases: tuple[str, ...] = (),
) -> FormatSpec:
    """A format of the key / value family; see the module docstring for the parameters."""
    terminals: dict[str, tuple[str, ...]] = {
        "TOOL_START": (call[0],),
        "TOOL_END": (call[1],),
        "KEY_START": (key[0],),
        "KEY_END": (key[1],),
        "VALUE_START": (value[0],),
        "VALUE_END": (value[1],),
    }
    outer = BLOCK if block is not None else CONTENT  # where calls live
    rows: list[tuple[Any, ...]] = []
    after_value = [key[0], call[1], call[0]]
    after_call = [call[0]]  # what may follow a call's closer
    if block is not None:
        terminals["BLOCK_START"], terminals["BLOCK_END"] = (block[0],), (block[1],)
        after_value.append(block[1])
        after_call.append(block[1])
        rows += [
            (CONTENT, "BLOCK_START", BLOCK, ()),
            (BLOCK, "BLOCK_END", CONTENT, ()),
            (NAME, "BLOCK_END", CONTENT, (END,)),
            (ARGS, "BLOCK_END", CONTENT, (END,)),
        ]
    if name_sep is not None:
        terminals["TOOL_SEP"] = (name_sep,)
        rows.append((NAME, "TOOL_SEP", ARGS, (NAME_END,)))
    for k, (opener, closer) in enumerate(between):
        terminals[f"BETWEEN_START_{k}"], terminals[f"BETWEEN_END_{k}"] = (opener,), (closer,)
        rows += [(ARGS, f"BETWEEN_START_{k}", ARGS, (MARK,)), (ARGS, f"BETWEEN_END_{k}", ARGS, (MARK,))]
    rows += [
        (outer, "TOOL_START", NAME, (START,)),
        (NAME, "KEY_START", ARGS, (NAME_END, MARK)),
        (NAME, "TOOL_END", outer, (END,)),
        (NAME, "TOOL_START", NAME, (START,)),
        (ARGS, "KEY_START", ARGS, (MARK,)),
        (ARGS, "KEY_END", ARGS, (MARK,)),
        (ARGS, "VALUE_START", VALUE, (MARK,)),
        (ARGS, "TOOL_END", outer, (END,)),
        (ARGS, "TOOL_START", NAME, (START,)),
        # inside a value: its closer when the structure goes on after it, the next key (a
        # missing closer) when a key the tool can take follows, and the call's closer when
        # only the call's end can follow it (the value ends with the call)
        (VALUE, "VALUE_END", ARGS, (MARK,), tuple(after_value)),
        (VALUE, "KEY_START", ARGS, (MARK,), {"key_end": key[1]}),
        (VALUE, "TOOL_END", outer, (END,), {"follow": tuple(after_call), "follow_end": block is None}),
    ]
    if block is not None:
        rows.append((VALUE, "BLOCK_END", CONTENT, (END,), {"follow": (block[0],), "follow_end": True}))
    regions = {CONTENT: Region.CONTENT, NAME: Region.NAME, ARGS: Region.ARGS, VALUE: Region.ARGS}
    if block is not None:
        regions[BLOCK] = Region.SKIP
    return FormatSpec(
        name=name,
        kind="tools",
        aliases=aliases,
        terminals=terminals,
        special=frozenset(terminals) if special else frozenset(),
        regions=regions,
        table=rules(*rows),
        codec=XmlParams(
            param_start="KEY_START",
            param_end="VALUE_END",
            key_marker="KEY_END",
            value_start="VALUE_START",
            trim="none",
            style=style,
            between=tuple((f"BETWEEN_START_{k}", f"BETWEEN_END_{k}") for k in range(len(between))),
        ),
        validate_names=validate_names,
        vocab_suffix=vocab_suffix,
        models=models,
        reference=reference,
    )
