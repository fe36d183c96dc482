"""Which build of the hot path runs: compiled by mypyc from this same source, or pure Python.

A wheel (``pip wheel .``, ``pip install .``) carries, beside each ``.py`` file of the engine, the
codecs and the message layer, an extension module mypyc compiled from it (``setup.py``), and
Python's import system prefers the extension. ``TRISECT_PURE=1`` in the environment, read once
when trisect is first imported, puts a finder first on ``sys.meta_path`` that loads every trisect
module from its ``.py`` file instead. An editable install (the README's commands) or a wheel built
without a C compiler has only the ``.py`` files: it runs pure Python with nothing to set.

Both builds run the same source and pass the same suite; the compiled one is faster per delta.
Cost: nothing at import unless ``TRISECT_PURE=1`` (then one finder lookup per trisect module).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import EXTENSION_SUFFIXES, SOURCE_SUFFIXES, FileFinder, ModuleSpec, SourceFileLoader
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar

_C = TypeVar("_C")

PURE = os.environ.get("TRISECT_PURE", "") == "1"


class PureFinder:
    """Finds ``trisect.*`` modules as ``.py`` source only, so a compiled sibling is never loaded."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith("trisect.") or path is None:
            return None
        for entry in path:
            spec = FileFinder(entry, (SourceFileLoader, SOURCE_SUFFIXES)).find_spec(fullname, target)
            if spec is not None:
                return spec
        return None


if PURE and not any(isinstance(finder, PureFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, PureFinder())  # trisect/__init__.py imports this module before any other


def compiled_modules() -> list[str]:
    """The trisect modules imported so far that run compiled (empty for a pure-Python run)."""
    return sorted(
        name
        for name, module in list(sys.modules.items())
        if name.startswith("trisect.")
        and not name.endswith("__mypyc")  # the shared library mypyc links them into, not a module of the source
        and str(getattr(module, "__file__", "")).endswith(tuple(EXTENSION_SUFFIXES))
    )


if TYPE_CHECKING:  # mypyc reads the decorator by this name when it compiles a module that uses it
    from mypy_extensions import mypyc_attr as mypyc_attr
else:

    def mypyc_attr(*attrs: str, **values: object) -> Callable[[_C], _C]:
        """``mypy_extensions.mypyc_attr`` for pure Python (no package needed): the class unchanged."""
        return lambda cls: cls


def build() -> str:
    """One line for a log or a test report: which build of trisect this process runs (after ``import trisect``)."""
    compiled = compiled_modules()
    if compiled:
        return f"compiled (mypyc): {len(compiled)} modules"
    if PURE:
        return "pure Python (TRISECT_PURE=1)"
    return "pure Python (no compiled modules installed)"
