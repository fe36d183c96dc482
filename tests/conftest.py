"""Heavy suites: tests that need an extra the portable set-up does not install.

Each heavy suite carries a pytest marker (``HEAVY``, declared in ``pyproject.toml``) and skips
where its dependency is missing, so the README's test command runs on any laptop. Under
``CI=true`` such a skip is a failure: ``.ci/run`` installs every heavy extra and runs each suite
as its own step, and a suite that could not run fails CI instead of dropping out.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

HEAVY = {"xgrammar": "pip install -e '.[xgrammar]' (xgrammar imports torch; .ci/run installs the CPU build)"}


def _ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if not (_ci() and report.skipped):
        return
    heavy = [name for name in HEAVY if item.get_closest_marker(name) is not None]
    if heavy:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"CI=true: the {heavy[0]} suite must run here, but it skipped ({reason}); {HEAVY[heavy[0]]}"
