"""trisect's build backend: setuptools' own hooks, plus mypyc for a wheel.

``pip wheel .``, ``python -m build`` and a plain ``pip install .`` call ``build_wheel``. That build
asks for mypy (whose mypyc compiles the hot path from the same ``.py`` files: ``setup.py`` says
which) and compiles. Editable installs (``pip install -e``, the README's two commands) and the
sdist go through the other hooks, which are setuptools' own: no mypy to install, nothing
compiled, as fast as a pure-Python package. ``TRISECT_PURE=1`` in the build's environment, or
an interpreter other than CPython, builds the pure-Python wheel.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (
    build_editable,
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

# pinned: the C that mypyc writes is the wheel's code, so one mypy gives one wheel
MYPYC = "mypy==2.4.1"
COMPILE = "TRISECT_COMPILE"  # build_wheel's word to setup.py: compile the hot path


def compiles() -> bool:
    """Whether a wheel built here is compiled: CPython (mypyc targets only it) and no TRISECT_PURE=1."""
    return sys.implementation.name == "cpython" and os.environ.get("TRISECT_PURE", "") != "1"


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    requires: list[str] = _setuptools.get_requires_for_build_wheel(config_settings)
    return [*requires, MYPYC] if compiles() else requires


def build_wheel(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    os.environ[COMPILE] = "1" if compiles() else "0"
    try:
        name: str = _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
    finally:
        del os.environ[COMPILE]
    return name
