"""The package's annotations hold: ``mypy --strict src/trisect`` is clean (settings in
pyproject.toml, ``[tool.mypy]``), and ``py.typed`` lets a user's type checker read them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_strict_is_clean() -> None:
    try:
        import mypy  # noqa: F401  (part of the test extra)
    except ImportError:  # pragma: no cover
        raise AssertionError("mypy is part of the test extra: pip install -e '.[test]'") from None
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "src/trisect"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (ROOT / "src" / "trisect" / "py.typed").is_file()
