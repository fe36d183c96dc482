"""Writing and checking generated case files, shared by every ``render_*.py`` generator."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent  # the repository


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
