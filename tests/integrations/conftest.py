"""Tests that run inside an engine's own environment (not part of the portable suite).

``test_vllm_*.py`` run with a Python that has vLLM 0.33 and trisect (``pip install --no-deps
-e .``); ``test_sglang_*.py`` with one that has SGLang 0.5.23. Elsewhere they are not
collected at all (nothing is skipped): the portable suite never sees them, and ``.ci/run``
runs each set in its venv and fails when a set ran no test (pytest's exit code 5).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for path in (HERE, HERE.parent):  # this folder's helpers, and tests/support
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

for key, value in {
    "VLLM_LOGGING_LEVEL": "ERROR",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}.items():
    os.environ.setdefault(key, value)


def seed_sglang() -> None:
    """Import SGLang's parser modules without ``sglang/__init__.py`` (it imports the whole
    runtime: triton, ...; the CI venv leaves those out): a bare ``sglang`` package first."""
    spec = importlib.util.find_spec("sglang")
    if spec is None or "sglang" in sys.modules:
        return
    package = types.ModuleType("sglang")
    package.__path__ = list(spec.submodule_search_locations or ())
    package.__spec__ = spec
    sys.modules["sglang"] = package


seed_sglang()

collect_ignore_glob = [
    f"test_{engine}_*.py" for engine in ("vllm", "sglang") if importlib.util.find_spec(engine) is None
]

# The engines' own deprecation noise is theirs; trisect's warnings stay errors (pyproject.toml).
_ENGINE_WARNINGS = [
    f"ignore::{category}:{module}"
    for category in ("DeprecationWarning", "FutureWarning", "UserWarning")
    for module in ("torch", "vllm", "transformers", "sglang", "xgrammar", "pydantic", "mistral_common")
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == HERE:
            for spec in _ENGINE_WARNINGS:
                item.add_marker(pytest.mark.filterwarnings(spec))
