"""The test set-up itself: the portable extra installs nothing machine-specific, and a heavy
suite that cannot run fails under CI=true instead of dropping out (``tests/conftest.py``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.work import HANG

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]

# packages whose wheels are platform- or accelerator-specific (the CUDA torch is multi-GB)
MACHINE_SPECIFIC = {"torch", "triton", "xgrammar", "transformers", "vllm", "sglang", "jax", "tensorflow"}


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def test_the_test_extra_is_portable() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    assert not _names(extras["test"]) & MACHINE_SPECIFIC
    assert "llguidance" in _names(extras["test"]) and "mypy" in _names(extras["test"])
    assert "pytest-xdist" in _names(extras["test"])  # the README's test command runs `pytest -n auto`
    assert _names(extras["xgrammar"]) == {"xgrammar"}
    # the core needs nothing but the standard library (tomli only stands in for 3.11's tomllib)
    assert project["dependencies"] == ["tomli>=1.1; python_version < '3.11'"]


HEAVY_TEST = """
import pytest
pytestmark = pytest.mark.xgrammar

def test_round_trip():
    pytest.skip("xgrammar is not installed")
"""


# the README's command runs the suite under pytest-xdist (`-n auto`): the rule must hold where the
# report is made in a worker and sent to the controller too
WORKERS = [pytest.param([], id="serial"), pytest.param(["-n", "1"], id="xdist")]  # one worker: a controller still


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("ci", ["true", ""])
def test_a_skipped_heavy_suite_fails_under_ci(tmp_path: Path, ci: str, workers: list[str]) -> None:
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_heavy.py").write_text(HEAVY_TEST, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    xgrammar: heavy\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CI"} | ({"CI": ci} if ci else {})
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers, str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    if ci:
        assert run.returncode != 0 and "the xgrammar suite must run here" in run.stdout, run.stdout
    else:
        assert run.returncode == 0 and "1 skipped" in run.stdout, run.stdout
