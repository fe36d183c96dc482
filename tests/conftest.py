"""Heavy suites: tests that need an extra the portable set-up does not install.

Each heavy suite carries a pytest marker (``HEAVY``, declared in ``pyproject.toml``) and skips
where its dependency is missing, so the README's test command runs on any laptop; an ``OPT_IN``
suite (the real model, the exhaustive replays) runs only when ``-m`` names it. Under
``CI=true`` such a skip is a failure: ``.ci/run`` installs every heavy extra and runs each suite
as its own step, and a suite that could not run fails CI instead of dropping out.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

HEAVY = {
    "xgrammar": "pip install -e '.[xgrammar]' (xgrammar imports torch; .ci/run installs the CPU build)",
    "model": "pip install -e '.[serve]' (xllamacpp) and network for the default model's first fetch",
    "batch": "pip install -e '.[batch]' (pyarrow, for Parquet)",
    "ray": "pip install -e '.[ray]' (Ray Data)",
    "scale_out": "the [test] extra (starlette, uvicorn, httpx) and the tokenizers package",
}
# suites that run only when selected by name (`-m model`): a real model is slow, so are server
# processes under load, and the exhaustive replays (every two-way split of every case) are volume,
# so the portable suite leaves them out even where they could run; .ci/run runs each as its own step
OPT_IN = {"model", "exhaustive", "scale_out", "inversion_heavy"}


def pytest_report_header(config: pytest.Config) -> str:
    """Which build the suite runs: the compiled wheel's modules or pure Python (trisect/native.py)."""
    import trisect
    from trisect import native

    return f"trisect {trisect.__version__}: {native.build()}"


def _ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    selected = config.getoption("markexpr") or ""
    left_out = [item for item in items if any(m in OPT_IN and m not in selected for m in _marks(item))]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        drop = {id(item) for item in left_out}
        items[:] = [item for item in items if id(item) not in drop]


def _marks(item: pytest.Item) -> set[str]:
    return {mark.name for mark in item.iter_markers()}


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
