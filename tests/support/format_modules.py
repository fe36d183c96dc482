"""Which ``trisect.formats`` module defines a registered spec (for tests of module docstrings)."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType

from trisect.engine.spec import FormatSpec

CATALOGUE = importlib.import_module("trisect.formats")  # ``trisect.formats`` is also a function


@cache
def modules() -> tuple[ModuleType, ...]:
    names = sorted(m.name for m in pkgutil.iter_modules(CATALOGUE.__path__) if not m.name.startswith("_"))
    return tuple(importlib.import_module(f"trisect.formats.{n}") for n in names)


def module_of(spec: FormatSpec) -> ModuleType:
    """The module whose ``FORMATS`` holds ``spec`` (by identity)."""
    for module in modules():
        if any(s is spec for s in getattr(module, "FORMATS", ())):
            return module
    raise LookupError(f"no format module defines {spec.name}")
