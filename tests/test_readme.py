"""The README's example runs and prints what the README says it prints; its map (the Layout)
is true; CI runs its two commands as a newcomer does."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
from pathlib import Path

from test_layers import LAYERS, _layer

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
    pages = [f"docs/{p.name}" for p in docs.glob("*.md")] + [
        f"docs/{p.parent.name}/{p.name}" for p in docs.glob("*/README.md")
    ]
    assert sorted(linked) == sorted(pages)
    assert all((README.parent / link).is_file() for link in linked)


def _layout() -> tuple[list[tuple[str, int]], dict[str, list[str]]]:
    """The Layout map: (entry, floor) rows top to bottom, and each section's entries."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"^## Layout\n.*?```\n(.*?)```", text, re.S | re.M).group(1)
    rows: list[tuple[str, int]] = []
    sections: dict[str, list[str]] = {}
    section = ""
    for line in block.splitlines():
        if line.startswith("  ═══"):
            section = line.strip("═ ").split(":")[0]
            sections[section] = []
        elif m := re.match(r"^  (\S+)\s+(\d+)\s", line):
            rows.append((m.group(1), int(m.group(2))))
            sections[section].append(m.group(1))
    return rows, sections


def _module(entry: str) -> str:
    """The module test_layers.py names for a Layout entry (``serve/`` -> ``trisect.serve``)."""
    name = entry.removesuffix("/").removesuffix(".py")
    return "trisect" if name == "__init__" else f"trisect.{name}"


def test_the_layout_lists_every_package_on_its_floor() -> None:
    rows, _ = _layout()
    package = README.parent / "src" / "trisect"
    entries = {f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()}
    entries |= {p.name for p in package.glob("*.py")}
    assert sorted(entry for entry, _ in rows) == sorted(entries), "the Layout must list every package and module"
    assert [floor for _, floor in rows] == sorted((floor for _, floor in rows), reverse=True), "top floor first"
    assert {entry: floor for entry, floor in rows} == {entry: _layer(_module(entry)) + 1 for entry, _ in rows}


def test_the_layout_tells_the_core_from_the_shells() -> None:
    _, sections = _layout()
    assert {_module(e) for e in sections["shells"]} == set(LAYERS[-1])
    core = {
        "trisect.errors",
        "trisect.native",
        "trisect.engine",
        "trisect.codecs",
        "trisect.formats",
        "trisect.message",
        "trisect.request",
    }
    assert {_module(e) for e in sections["the core"]} == core | {"trisect.parser"}


def _readme_step(tmp_path: Path, commands: list[str]) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run .ci/run's readme step (its function, as CI does) in a repository whose README has
    ``commands`` on its first screen, with a ``python3`` on PATH that does nothing."""
    script = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    function = re.search(r"^readme_commands\(\) \{\n.*?^\}\n", script, re.S | re.M).group(0)
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    log = tmp_path / "log"
    (repo / "README.md").write_text("# x\n\n" + "".join(f"{c}\n" for c in commands), encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    (bin_dir / "python3").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "CI": "true", "LOG": str(log)}
    result = subprocess.run(
        ["bash", "-c", f"set -euo pipefail\n{function}readme_commands"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    return result, log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_ci_runs_the_readme_commands_in_order_in_one_copy(tmp_path: Path) -> None:
    """.ci/run's portable step runs the first screen's two commands in order (``readme_commands``,
    in the checkout; by default in one copy of the repository) without CI set, and fails when one
    fails or when there are not two."""
    script = (README.parent / ".ci" / "run").read_text()
    assert re.search(r"^step portable portable$", script, re.M)
    assert re.search(r"^portable\(\) \{\n(?:.*\n)*?  readme_commands \. \|\| return$", script, re.M)
    first = 'python3 -m venv .venv && touch made-by-first && echo "first $PWD ${CI-unset}" >> "$LOG"'
    second = 'python3 -m venv .venv && test -f made-by-first && echo "second $PWD ${CI-unset}" >> "$LOG"'
    result, log = _readme_step(tmp_path, [first, second])
    assert result.returncode == 0, result.stderr
    assert [line.split()[0] for line in log] == ["first", "second"]
    assert log[0].split()[1:] == log[1].split()[1:] and log[0].split()[2] == "unset"
    assert not log[0].split()[1].startswith(str(tmp_path / "repo"))  # a copy, not the checkout
    failing, log = _readme_step(tmp_path / "a", [first, "python3 -m venv .venv && false"])
    assert failing.returncode != 0 and [line.split()[0] for line in log] == ["first"]
    assert _readme_step(tmp_path / "b", [first])[0].returncode != 0
