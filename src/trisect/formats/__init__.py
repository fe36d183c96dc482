"""The format catalogue: every module in this package contributes ``FORMATS``; users add more
at run time with ``register_format``.

Reasoning formats and tool-call formats live in two namespaces, as in vLLM
(``--reasoning-parser`` / ``--tool-call-parser``): ``kimi_k2`` or ``mistral`` name one of each.
Modules are found by name, so adding a family is adding one module; nothing else changes.

Names are exact, as vLLM's registry is (it normalises neither case nor ``-`` / ``_``: its one
hyphenated name is ``granite-20b-fc``). An unknown name is a ``FormatError`` that suggests the
closest registered names, comparing spellings with case, ``-`` and ``_`` folded first.
Cost: the modules are imported once, on the first lookup; a lookup is a dict access.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from functools import cache

from ..engine.spec import FormatSpec
from ..errors import FormatError
from ._userformat import format_from_toml, load_format

__all__ = ["all_formats", "format_from_toml", "load_format", "reasoning_format", "register_format", "tool_format"]

_KINDS = {"reasoning": "reasoning", "tools": "tool-call"}


@cache
def _catalogue() -> dict[str, dict[str, FormatSpec]]:
    """Per kind: every name and alias -> its spec (module formats first, then registered ones)."""
    catalogue: dict[str, dict[str, FormatSpec]] = {kind: {} for kind in _KINDS}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for spec in getattr(module, "FORMATS", ()):
            _add(catalogue, spec, module.__name__)
    return catalogue


def _add(catalogue: dict[str, dict[str, FormatSpec]], spec: FormatSpec, source: str) -> None:
    if spec.kind not in _KINDS:
        raise FormatError(
            f"{source}: format {spec.name!r} has kind {spec.kind!r}; registered formats are 'reasoning' or 'tools'"
        )
    target = catalogue[spec.kind]
    for name in (spec.name, *spec.aliases):
        if not isinstance(name, str) or not name:
            raise FormatError(f"{source}: format {spec.name!r} has an empty or non-string name or alias")
        if name in target:
            known = target[name].name
            raise FormatError(
                f"{_KINDS[spec.kind]} format {name!r} is already registered (as {known!r}): {source} adds new names"
            )
    for name in (spec.name, *spec.aliases):
        target[name] = spec


def register_format(spec: FormatSpec) -> FormatSpec:
    """Add a format under its name and aliases, for ``Parser(reasoning=…, tools=…)`` by name.

    A name or alias already registered in the same namespace is a ``FormatError`` (nothing is
    added then). Returns ``spec``. The format is checked by compiling it (``FormatError``)."""
    if not isinstance(spec, FormatSpec):
        raise FormatError(f"register_format() takes a FormatSpec, not {type(spec).__name__}")
    from ..engine.compile import compile_format

    compile_format(spec)
    _add(_catalogue(), spec, "register_format()")
    return spec


def _lookup(kind: str, name: object) -> FormatSpec:
    formats = _catalogue()[kind]
    if not isinstance(name, str):
        raise FormatError(f"a {_KINDS[kind]} format is a name or a FormatSpec, not {type(name).__name__}")
    spec = formats.get(name)
    if spec is None:
        raise FormatError(_unknown(kind, name, formats))
    return spec


def _fold(name: str) -> str:
    return name.lower().replace("-", "_")


def _unknown(kind: str, name: str, formats: dict[str, FormatSpec]) -> str:
    """ "unknown … 'deepseek-r1'; did you mean deepseek_r1?" and the known names."""
    folded = [known for known in formats if _fold(known) == _fold(name)]
    close = folded or difflib.get_close_matches(name, list(formats), n=3, cutoff=0.6)
    if not close:
        close = [known for known in formats if _fold(known).startswith(_fold(name)) and len(name) >= 3][:3]
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    other = next(k for k in _KINDS if k != kind)
    if name in _catalogue()[other]:
        hint += f" ({name!r} is a {_KINDS[other]} format)"
    shown = repr(name) if len(name) <= 60 else repr(name[:57] + "...")
    return f"unknown {_KINDS[kind]} format {shown}{hint} (known: {', '.join(sorted(formats))})"


def reasoning_format(name: str) -> FormatSpec:
    return _lookup("reasoning", name)


def tool_format(name: str) -> FormatSpec:
    return _lookup("tools", name)


def all_formats() -> list[FormatSpec]:
    """Every registered spec once (aliases folded), reasoning formats first."""
    seen: dict[int, FormatSpec] = {}
    for formats in _catalogue().values():
        for spec in formats.values():
            seen.setdefault(id(spec), spec)
    return sorted(seen.values(), key=lambda s: (s.kind != "reasoning", s.name))
