"""``statebound.flow`` has no import cycle: every import inside it (at the top, under
TYPE_CHECKING or inside a function) goes one way, from the engine's users down to its parts."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import statebound.flow

PACKAGE = "statebound.flow"
ROOT = Path(statebound.flow.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((PACKAGE, *parts))


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def imports_of(path: Path) -> set[str]:
    """The ``statebound.flow`` modules a file imports anywhere in it (``from pkg import mod``
    counts as importing ``pkg.mod``); a package's own ``__init__`` imports are left out."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if _is_module(child) else node.module)
    return {name for name in found if name.startswith(PACKAGE + ".")}


def graph() -> dict[str, set[str]]:
    edges = {}
    for path in ROOT.rglob("*.py"):
        if path.name != "__init__.py":  # a package's __init__ gathers its modules: not a part of them
            edges[_module_name(path)] = imports_of(path)
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return None
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if (cycle := visit(nxt)) is not None:
                return cycle
        path.pop()
        done.add(node)
        return None

    for start in sorted(edges):
        if (cycle := visit(start)) is not None:
            return cycle
    return None


def test_flow_modules_import_each_other_one_way_only() -> None:
    edges = graph()
    assert "statebound.flow.engine" in edges and "statebound.flow.live.session" in edges
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_flow_module_imports_a_package_init() -> None:
    """Parts import parts: importing ``statebound.flow`` (or ``.live``) from inside would be a
    cycle through the package's ``__init__``."""
    offenders = {name: sorted(deps & {PACKAGE, f"{PACKAGE}.live"}) for name, deps in graph().items()}
    assert {name: deps for name, deps in offenders.items() if deps} == {}


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
