"""The compiled build and the pure one: one source, a switch, and a build that never needs a compiler.

``setup.py`` compiles the engine, the codecs and the message layer with mypyc only when
``build_backend/trisect_build.py`` builds a wheel; editable installs compile nothing. At run time
``TRISECT_PURE=1`` loads every module from its ``.py`` file (``trisect/native.py``). These tests
hold in either build: the suite runs against both in CI (``.ci/run``'s ``compiled`` step).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from types import ModuleType

import pytest

import trisect

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(trisect.__file__).resolve().parent  # the installed package: a wheel's or the checkout's


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SETUP = _load(ROOT / "setup.py", "trisect_setup")
sys.path.insert(0, str(ROOT / "build_backend"))
try:
    BACKEND = _load(ROOT / "build_backend" / "trisect_build.py", "trisect_build")
finally:
    sys.path.remove(str(ROOT / "build_backend"))


def _run(code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "TRISECT_PURE"} | env
    return subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True
    ).stdout.rstrip("\n")


def _compiled_beside(module: str) -> bool:
    """Whether the installed package has an extension module compiled from ``module``'s source."""
    stem = PACKAGE.joinpath(*module.split(".")[1:])
    return any(stem.with_name(stem.name + suffix).is_file() for suffix in EXTENSION_SUFFIXES)


COMPILED = [
    ".".join(Path(p).with_suffix("").parts[1:]) for p in SETUP.sources()
]  # src/trisect/engine/lexer.py -> trisect.engine.lexer


def test_the_build_compiles_the_engine_the_codecs_and_the_message_layer_but_no_package_init() -> None:
    assert {name.split(".")[1] for name in COMPILED} == {"engine", "codecs", "message"}
    assert "trisect.engine.event_stream" in COMPILED and "trisect.message.fold" in COMPILED
    assert not [name for name in COMPILED if name.endswith("__init__")]
    on_disk = {
        f"trisect.{package}.{path.stem}"
        for package in ("engine", "codecs", "message")
        for path in (ROOT / "src" / "trisect" / package).glob("*.py")
        if path.name != "__init__.py"
    }
    assert set(COMPILED) == on_disk


def test_pure_runs_every_module_from_its_source() -> None:
    code = (
        "import trisect, trisect.native as n, trisect.engine.machine as m;"
        "trisect.Parser(reasoning='qwen3', tools='hermes').parse('<think>a</think>b');"
        "print(m.__file__.endswith('.py'), n.compiled_modules(), n.build())"
    )
    assert _run(code, TRISECT_PURE="1") == "True [] pure Python (TRISECT_PURE=1)"


def test_the_run_imports_every_compiled_module_there_is_and_says_which_build_it_is() -> None:
    code = (
        "import trisect, trisect.native as n;"
        "trisect.Parser(reasoning='qwen3', tools='hermes').stream().feed('<think>a</think>b');"
        f"import {', '.join(COMPILED)};"
        "print(' '.join(n.compiled_modules()));"
        "print(n.build())"
    )
    compiled, build = _run(code).splitlines()
    expected = [name for name in COMPILED if _compiled_beside(name)]
    assert compiled.split() == sorted(expected)
    if expected:  # a wheel: every module of the list, and nothing else, compiled
        assert expected == COMPILED and build == f"compiled (mypyc): {len(COMPILED)} modules"
    else:  # an editable install or a build without a compiler
        assert build == "pure Python (no compiled modules installed)"


def test_pure_and_the_build_under_test_give_the_same_message() -> None:
    code = (
        "import trisect;"
        "p = trisect.Parser(reasoning='qwen3', tools='qwen3_coder');"
        "t = '<think>x</think>y<tool_call>\\n<function=f>\\n<parameter=a>\\n1\\n</parameter>\\n</function>';"
        "m = p.parse(t, tools=[{'type': 'function', 'function': {'name': 'f', 'parameters': {}}}]);"
        "print(m.reasoning, m.content, [(c.name, c.arguments) for c in m.tool_calls])"
    )
    assert _run(code) == _run(code, TRISECT_PURE="1")


def test_only_a_wheel_build_asks_for_mypy(monkeypatch: pytest.MonkeyPatch) -> None:
    from setuptools import build_meta

    # editable installs and the sdist are setuptools' own hooks, untouched: no mypy, nothing compiled
    for hook in ("build_editable", "get_requires_for_build_editable", "build_sdist", "get_requires_for_build_sdist"):
        assert getattr(BACKEND, hook) is getattr(build_meta, hook)
    # setuptools' own part of the wheel's requirements runs setup.py: not what is under test here
    monkeypatch.setattr(BACKEND._setuptools, "get_requires_for_build_wheel", lambda config_settings=None: ["wheel"])
    monkeypatch.delenv("TRISECT_PURE", raising=False)
    assert BACKEND.get_requires_for_build_wheel() == ["wheel", BACKEND.MYPYC]
    assert BACKEND.MYPYC.startswith("mypy==")  # pinned: one mypy, one generated C
    monkeypatch.setenv("TRISECT_PURE", "1")
    assert BACKEND.get_requires_for_build_wheel() == ["wheel"]


def test_setup_compiles_nothing_unless_the_wheel_hook_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TRISECT_COMPILE", raising=False)
    assert SETUP.ext_modules() == [] and capsys.readouterr().err == ""  # an editable install: silent
    monkeypatch.setenv("TRISECT_COMPILE", "0")
    assert SETUP.ext_modules() == []
    assert "building the PURE PYTHON wheel" in capsys.readouterr().err


def test_without_a_c_compiler_the_build_says_so_and_builds_pure_python(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("TRISECT_COMPILE", "1")
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    assert SETUP.compiler_missing() is not None
    assert SETUP.ext_modules() == []  # before mypyc is imported: a build without it still works
    line = capsys.readouterr().err
    assert line.startswith("trisect build: no working C compiler") and "PURE PYTHON" in line
