"""The package's shape: layers as packages, imports only downward, no import cycle.

The import graph is read from the source with ``ast``: every ``import`` / ``from … import``
of a trisect module, at module level or inside a function, except those under
``if TYPE_CHECKING:`` (they never run). Two checks:

* no cycle among modules (a cycle that only works because of import order is a bug waiting);
* each module imports only from its own layer or below (``LAYERS``), and no shell imports
  another shell.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "trisect"

# lowest first; a module may import from its own layer and the layers before it
LAYERS: list[tuple[str, ...]] = [
    ("trisect.errors", "trisect.native"),  # native: which build runs (compiled or pure), nothing of trisect
    ("trisect.engine",),
    ("trisect.codecs",),
    ("trisect.formats",),
    ("trisect.message",),
    ("trisect.request",),
    ("trisect.parser",),
    ("trisect.grammar", "trisect.openai", "trisect.chat"),
    ("trisect.testing", "trisect.templates"),
    ("trisect", "trisect.detect", "trisect.many"),  # the public API (trisect/__init__.py), detection, parse_many
    ("trisect.cli", "trisect.serve", "trisect.integrations", "trisect.batch", "trisect.__main__"),
]
SHELLS = set(LAYERS[-1]) - {"trisect.__main__", "trisect.cli"}


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


MODULES: dict[str, Path] = {_module_name(p)[0]: p for p in PACKAGE.rglob("*.py")}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path) -> set[str]:
    name, is_package = _module_name(path)
    base = name.split(".") if is_package else name.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def target(module: str) -> str | None:
        while module and module not in MODULES:
            module = module.rpartition(".")[0]
        return module or None

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "trisect":
                    t = target(alias.name)
                    if t:
                        found.add(t)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[: len(base) - node.level + 1]
                module = ".".join(parent + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] == "trisect":
                for alias in node.names:  # `from .pkg import module` imports that module
                    t = target(f"{module}.{alias.name}")
                    if t == f"{module}.{alias.name}":
                        found.add(t)
                    else:
                        t = target(module)
                        if t:
                            found.add(t)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(name)
    return found


@cache
def graph() -> dict[str, set[str]]:
    """Every module's trisect imports (read when a test needs them, not when the suite is collected)."""
    return {name: _imports(path) for name, path in MODULES.items()}


def _layer(module: str) -> int:
    best = (-1, -1)  # (length of the matching prefix, layer)
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best[0]:
                best = (len(prefix), rank)
    if best[1] < 0:
        raise AssertionError(f"{module} belongs to no layer: add its package to LAYERS")
    return best[1]


def _shell(module: str) -> str | None:
    return next((s for s in SHELLS if module == s or module.startswith(s + ".")), None)


def test_the_graph_was_read() -> None:
    assert "trisect.engine.compile" in graph()["trisect.engine.event_stream"]
    assert len(graph()) > 60


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as a path (first node repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return path[path.index(dep) :] + [dep]
            if dep not in state:
                found = walk(dep)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = walk(node)
            if found:
                return found
    return None


def test_no_import_cycle() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_the_cycle_check_would_catch_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_go_down(module: str) -> None:
    rank = _layer(module)
    for dep in graph()[module]:
        assert _layer(dep) <= rank, f"{module} (layer {rank}) imports {dep} (layer {_layer(dep)}) from above"
        shell, other = _shell(module), _shell(dep)
        # the trisect command dispatches a subcommand to its shell's own command module
        # (``trisect serve`` -> ``trisect.serve.cli``); nothing else crosses into a shell
        dispatch = module.startswith("trisect.cli") and other is not None and dep == other + ".cli"
        crossing = f"shell {shell or module} imports another shell's module {dep}"
        assert other is None or other == shell or dispatch, crossing


def test_the_engine_imports_nothing_above_it() -> None:
    for module, deps in graph().items():
        if module.startswith("trisect.engine"):
            assert all(d.startswith("trisect.engine") or d in ("trisect.errors", "trisect.native") for d in deps), (
                module,
                deps,
            )
