"""House rules a command can check: ruff clean and formatted (see pyproject.toml), no assertion that
passes by construction."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.fail("ruff is part of the test extra: pip install -e '.[test]'")
    result = subprocess.run([ruff, "check", "src", "tests", "bench"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    result = subprocess.run(
        [ruff, "format", "--check", "src", "tests", "bench"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, "run `ruff format src tests bench`:\n" + result.stdout + result.stderr


def _always_true_asserts(tree: ast.AST) -> list[int]:
    """Lines of ``assert X if C else <constant truthy>``: an assertion that passes whenever C is false."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.IfExp):
            for branch in (node.test.body, node.test.orelse):
                if isinstance(branch, ast.Constant) and branch.value:
                    found.append(node.lineno)
    return found


def test_no_assertion_passes_by_construction() -> None:
    bad = []
    for path in sorted((ROOT / "tests").rglob("*.py")) + sorted((ROOT / "src").rglob("*.py")):
        bad += [f"{path.relative_to(ROOT)}:{line}" for line in _always_true_asserts(ast.parse(path.read_text()))]
    assert not bad, "assert X if C else True passes whenever C is false: " + ", ".join(bad)


def test_the_assertion_check_finds_the_pattern() -> None:
    assert _always_true_asserts(ast.parse("assert f(x) == 1 if n < 4 else True")) == [1]
    assert _always_true_asserts(ast.parse("assert (a if c else b) == 1")) == []
