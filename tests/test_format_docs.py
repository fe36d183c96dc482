"""docs/formats/README.md's table names every registered format and the module that registers it,
and each vLLM 0.33 name in it is a name ``tests/test_vllm_names.py`` holds trisect to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support.format_modules import modules
from test_vllm_names import VLLM_REASONING, VLLM_TOOLS
from trisect.formats import hf

DOC = Path(__file__).resolve().parent.parent / "docs" / "formats" / "README.md"
ROW = re.compile(r"^\| `([\w-]+)` \| (.+?) \| `formats/(\w+)\.py` \|$", re.M)


def _table(kind: str) -> dict[str, tuple[str, str]]:
    """name -> (vLLM column, module) for one of the two tables ("Reasoning" or "Tool-call")."""
    text = DOC.read_text(encoding="utf-8")
    section = re.search(rf"^### {kind} formats.*?\n(.*?)(?=^### |\Z)", text, re.S | re.M)
    assert section, f"no '### {kind} formats' table in {DOC.name}"
    return {name: (vllm, module) for name, vllm, module in ROW.findall(section.group(1))}


def _registered(kind: str) -> dict[str, str]:
    found = {n: "hf" for n in hf.NAMES}
    for module in modules():
        for spec in getattr(module, "FORMATS", ()):
            if spec.kind == kind:
                found.update(dict.fromkeys((spec.name, *spec.aliases), module.__name__.rpartition(".")[2]))
    return found


@pytest.mark.parametrize(
    ("kind", "title", "vllm"), [("reasoning", "Reasoning", VLLM_REASONING), ("tools", "Tool-call", VLLM_TOOLS)]
)
def test_the_table_names_each_format_and_its_module(kind: str, title: str, vllm: tuple[str, ...]) -> None:
    table = _table(title)
    assert {name: module for name, (_, module) in table.items()} == _registered(kind)
    assert sorted(name for name, (column, _) in table.items() if column != "—") == sorted(vllm)
