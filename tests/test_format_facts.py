"""Facts about a format belong to the format: typed fields, checked when the spec is built.

* a tool format whose table opens calls (``Act.CALL_START``, or a header that may route to an
  argument state) without a codec is a ``FormatError`` when the spec is built;
* ``trisect.grammar`` keeps no table keyed on a format name or a marker string, and reads no
  codec option out of ``functools.partial``: every string constant in its modules is checked
  against every format name and marker of the catalogue;
* grammar facts are typed (``GrammarFacts``) and survive ``combine()``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import trisect.grammar
from trisect.codecs import JsonArgsCodec
from trisect.engine.spec import CONTENT, Act, FormatSpec, GrammarFacts, Region, combine, rules
from trisect.errors import FormatError
from trisect.formats import all_formats, reasoning_format, tool_format

GRAMMAR = Path(trisect.grammar.__file__).parent


def _calls(codec: object = None, **fields: object) -> FormatSpec:
    return FormatSpec(
        name="t",
        kind="tools",
        terminals={"OPEN": ("<c>",), "CLOSE": ("</c>",)},
        regions={CONTENT: Region.CONTENT, "ARGS": Region.ARGS},
        table=rules((CONTENT, "OPEN", "ARGS", (Act.CALL_START,)), ("ARGS", "CLOSE", CONTENT, (Act.CALL_END,))),
        codec=codec,  # type: ignore[arg-type]
        **fields,  # type: ignore[arg-type]
    )


def test_a_table_that_opens_calls_needs_a_codec() -> None:
    with pytest.raises(FormatError, match=r"calls open at \(CONTENT, OPEN\) but the format names no codec"):
        _calls()
    assert _calls(JsonArgsCodec).codec is JsonArgsCodec


def test_a_header_that_names_a_tool_needs_a_codec() -> None:
    with pytest.raises(FormatError, match="header -> BODY"):
        FormatSpec(
            name="h",
            kind="tools",
            terminals={"START": ("<s>",), "MSG": ("<m>",)},
            regions={CONTENT: Region.CONTENT, "HEAD": Region.HEADER, "BODY": Region.ARGS},
            table=rules((CONTENT, "START", "HEAD", (Act.HEADER_START,)), ("HEAD", "MSG", CONTENT, (Act.HEADER_END,))),
            header=lambda text: (CONTENT, None),
            header_states=(CONTENT, "BODY"),
        )


def _constants(path: Path) -> set[str]:
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def test_the_grammar_keeps_no_table_of_format_names_or_markers() -> None:
    specs = all_formats()
    names = {n for s in specs for n in (s.name, *s.aliases)}
    markers = {m for s in specs for ms in s.terminals.values() for m in ms if len(m) > 1}
    for path in sorted(GRAMMAR.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "partial" not in text and ".keywords" not in text, path.name
        found = _constants(path) & (names | markers)
        assert not found, f"{path.name} names formats or markers: {sorted(found)}"


def test_grammar_facts_are_typed_and_kept_by_combine() -> None:
    k2 = tool_format("kimi_k2")
    assert isinstance(k2.grammar, GrammarFacts) and k2.grammar.name_pattern
    assert combine(reasoning_format("kimi_k2"), k2).grammar == k2.grammar
    assert tool_format("openai").grammar.native_under_constraint
    assert not tool_format("hermes").grammar.native_under_constraint
    reasons = {s.name: s.grammar.unsupported for s in all_formats() if s.grammar.unsupported}
    assert set(reasons) == {"deepseek_v3", "deepseek_v31", "minimax", "inkling", "minimax_m3"}
    for name in reasons:
        assert trisect.grammar.grammar_support(tool_format(name)) == f"no structural tag: {reasons[name]}"
