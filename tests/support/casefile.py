"""Building, validating, writing and checking generated case files, shared by every
``render_*.py`` generator."""

from __future__ import annotations

import argparse
import json
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from support import tokenizers as tk

ROOT = Path(__file__).resolve().parent.parent.parent  # the repository
CASES = ROOT / "tests" / "cases"


def check_book(
    book: Any,
    seen: set[str],
    *,
    extra_tool_names: Iterable[str] = (),
    natural_ids_when_ids_only: bool = False,
) -> None:
    """Validate a generator's cases before they are written: unique ids, normalised expected
    text, NFC output, token ids that decode to the output (explicit ids differ from the natural
    encoding, unless ``natural_ids_when_ids_only`` allows it for ids-only cases), expected
    calls naming a tool of the case (or one of ``extra_tool_names``, e.g. built-in tools)."""
    extra = set(extra_tool_names)
    for case in book.cases:
        cid = case["id"]
        assert cid not in seen, f"duplicate id {cid}"
        seen.add(cid)
        exp = case["expected"]
        for field in ("reasoning", "content"):
            v = exp[field]
            assert v is None or (v and v == v.strip()), f"{cid}: {field} not normalised"
        assert unicodedata.is_normalized("NFC", case["output"]), f"{cid}: output not NFC"
        if case["tokenizer"]:
            name = case["tokenizer"]
            assert tk.decode(name, tk.encode(name, case["output"])) == case["output"], cid
            if case["token_ids"] is not None:
                assert tk.decode(name, case["token_ids"]) == case["output"], cid
                natural_ok = natural_ids_when_ids_only and case.get("ids_only")
                assert natural_ok or case["token_ids"] != tk.encode(name, case["output"]), cid
        else:
            assert case["token_ids"] is None, cid
        if case.get("ids_only"):
            assert case["token_ids"] is not None, cid
        names = {t["function"]["name"] for t in case["tools"]} | extra
        for c in exp["tool_calls"]:
            assert c["name"] in names, f"{cid}: {c['name']} not among the tools"
            assert isinstance(c["arguments"], dict), cid


def build(books: Iterable[Callable[[], Any]], **check_options: Any) -> dict[Path, str]:
    """Make every book (a maker may return one book or a tuple of books), validate it, and
    return the JSON-lines text of each case file."""
    files: dict[Path, str] = {}
    seen: set[str] = set()
    for make in books:
        made = make()
        for book in made if isinstance(made, tuple) else (made,):
            check_book(book, seen, **check_options)
            lines = [json.dumps(c, ensure_ascii=False) for c in book.cases]
            files[CASES / book.path] = "\n".join(lines) + "\n"
    return files


def main(build: Callable[[], dict[Path, str]], description: str, argv: list[str] | None = None) -> int:
    """``--check``: exit 1 when a committed file differs from what ``build()`` makes;
    otherwise write the files."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="fail if the files are stale")
    args = parser.parse_args(argv)
    files = build()
    stale = [p for p, text in files.items() if not p.exists() or p.read_text("utf-8") != text]
    if args.check:
        for p in stale:
            print(f"stale: {p.relative_to(ROOT)}")
        return 1 if stale else 0
    for p, text in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        print(f"{p.relative_to(ROOT)}: {text.count(chr(10))} cases")
    return 0
