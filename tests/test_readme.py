"""The README's example runs and prints what the README says it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_example_prints_what_it_claims() -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    claimed = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    assert out.getvalue().splitlines() == claimed


def test_readme_first_screen_has_the_two_commands() -> None:
    head = README.read_text(encoding="utf-8").splitlines()[:20]
    commands = [line for line in head if line.startswith("python3 -m venv .venv")]
    assert len(commands) == 2
    assert commands[0].endswith("trisect demo --live") and "'.[serve]'" in commands[0]
    assert commands[1].endswith("python -m pytest -n auto")


def test_the_more_section_links_every_doc() -> None:
    text = README.read_text(encoding="utf-8")
    more = re.search(r"^## More\n(.*?)^## ", text, re.S | re.M).group(1)
    linked = re.findall(r"\]\((docs/[^)]+)\)", more)
    docs = README.parent / "docs"
    assert sorted(linked) == sorted(f"docs/{p.name}" for p in docs.glob("*.md"))
    assert all((README.parent / link).is_file() for link in linked)
