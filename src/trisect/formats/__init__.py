"""The format catalogue: every module in this package contributes ``FORMATS``.

Reasoning formats and tool-call formats live in two namespaces, as in vLLM
(``--reasoning-parser`` / ``--tool-call-parser``): ``kimi_k2`` or ``mistral`` name one of each.
Modules are found by name, so adding a family is adding one module; nothing else changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from ..engine.spec import FormatSpec
from ..errors import FormatError


@cache
def _catalogue() -> tuple[dict[str, FormatSpec], dict[str, FormatSpec]]:
    reasoning: dict[str, FormatSpec] = {}
    tools: dict[str, FormatSpec] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for spec in getattr(module, "FORMATS", ()):
            target = reasoning if spec.kind == "reasoning" else tools
            for name in (spec.name, *spec.aliases):
                if name in target:
                    raise FormatError(f"{spec.kind} format {name!r} is defined twice")
                target[name] = spec
    return reasoning, tools


def reasoning_format(name: str) -> FormatSpec:
    formats = _catalogue()[0]
    if name not in formats:
        raise FormatError(f"unknown reasoning format {name!r}; known: {', '.join(sorted(formats))}")
    return formats[name]


def tool_format(name: str) -> FormatSpec:
    formats = _catalogue()[1]
    if name not in formats:
        raise FormatError(f"unknown tool-call format {name!r}; known: {', '.join(sorted(formats))}")
    return formats[name]


def all_formats() -> list[FormatSpec]:
    """Every registered spec once (aliases folded), reasoning formats first."""
    reasoning, tools = _catalogue()
    seen: dict[int, FormatSpec] = {}
    for spec in [*reasoning.values(), *tools.values()]:
        seen.setdefault(id(spec), spec)
    return sorted(seen.values(), key=lambda s: (s.kind != "reasoning", s.name))
