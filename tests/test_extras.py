"""Every test imports its third-party dependencies one way (``tests/support/extras.py``).

Read from the source with ``ast``: a module from a distribution the ``[test]`` extra lists is
imported plainly; any other third-party module comes through ``require(module, extra)``, whose
extra exists in ``pyproject.toml`` and lists that distribution; nothing else calls
``pytest.importorskip``. The engine suites (``tests/integrations/``) run only inside an engine's
own venv, where their engine is installed; the portable suite does not collect them
(``tests/integrations/conftest.py``).
"""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: trisect's own dependency
    import tomli as tomllib

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
LOCAL = {p.stem for p in TESTS.rglob("*.py")} | {p.parent.name for p in TESTS.rglob("__init__.py")} | {"trisect"}


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised (``ray[data]>=2.9`` -> ``ray``)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group(0)).lower()


@cache
def _distributions() -> dict[str, list[str]]:
    return packages_distributions()  # reads every installed package's metadata: once, when a test runs


# modules whose distribution is named otherwise, for when it is not installed here
NOT_INSTALLED = {"agents": "openai-agents"}


def _distribution(module: str) -> str:
    return _name(_distributions().get(module, [NOT_INSTALLED.get(module, module)])[0])


# imported plainly: what [test] installs, and trisect's own dependencies
TEST_EXTRA = {_name(r) for r in EXTRAS["test"] + PROJECT["dependencies"]}
# what an extra needs installed beside it, as pyproject.toml says: torch before [xgrammar]
BESIDE = {"torch": "xgrammar"}


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def problems(source: str) -> list[str]:
    """What in one test file's source breaks the rule, one line each."""
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if _type_checking(node):
            return
        modules = []
        if isinstance(node, ast.Import):
            modules = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module.split(".")[0]]
        for module in modules:
            if module in sys.stdlib_module_names or module in LOCAL:
                continue
            if _distribution(module) not in TEST_EXTRA:
                found.append(
                    f"line {node.lineno}: {module} is not in [test]: import it with require({module!r}, EXTRA)"
                )
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called == "importorskip":
                found.append(f"line {node.lineno}: pytest.importorskip: use support.extras.require(module, extra)")
            elif called == "require" and len(node.args) == 2 and all(isinstance(a, ast.Constant) for a in node.args):
                module, extra = (a.value for a in node.args)
                dist = _distribution(module.split(".")[0])
                if dist in TEST_EXTRA:
                    found.append(f"line {node.lineno}: {module} is in [test]: import it plainly")
                elif dist not in {_name(r) for r in EXTRAS.get(extra, [])} and BESIDE.get(dist) != extra:
                    found.append(f"line {node.lineno}: the {extra!r} extra does not install {module}")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def test_every_test_file_imports_its_dependencies_one_way() -> None:
    skip = {TESTS / "support" / "extras.py"}
    files = [p for p in sorted(TESTS.rglob("*.py")) if "integrations" not in p.parts and p not in skip]
    found = [f"{p.relative_to(ROOT)} {line}" for p in files for line in problems(p.read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)


def test_the_check_finds_each_kind() -> None:
    assert problems("import json\nimport pytest\nfrom hypothesis import given\nfrom support import cases") == []
    assert problems("import pyarrow") == ["line 1: pyarrow is not in [test]: import it with require('pyarrow', EXTRA)"]
    assert problems("pa = require('pyarrow', 'batch')") == []
    assert problems("pa = require('pyarrow', 'serve')") == ["line 1: the 'serve' extra does not install pyarrow"]
    assert problems("h = require('httpx', 'serve')") == ["line 1: httpx is in [test]: import it plainly"]
    assert problems("import pytest\npytest.importorskip('ray')")[0].startswith("line 2: pytest.importorskip")
    assert problems("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import ray") == []
