"""The packages of statebound import each other in one order only: a package imports only packages
of lower layers (imports for annotations under ``if TYPE_CHECKING:`` too). So agents never import
the harness or their benchmarks, and the harness never imports the report.

    errors, exits, processes, quick_init, sqlite_files  <  user_files, web  <  llm  <  spec, flow, envs  <  chain, examples, mcp  <  contract
    <  agents, telemetry  <  benchmarks  <  bench  <  report  <  view, serve, induce  <  cli
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "statebound"
LAYERS = (("errors", "exits", "processes", "quick_init", "sqlite_files"), ("user_files", "web"), ("llm",), ("spec", "flow", "envs"), ("chain", "examples", "mcp"), ("contract",),
          ("agents", "telemetry"), ("benchmarks",), ("bench",), ("report",), ("view", "serve", "induce"), ("cli",))
LAYER = {name: level for level, names in enumerate(LAYERS) for name in names}


def _lazy_names() -> dict[str, str]:
    """The module each name of ``statebound``'s top level loads from (``from statebound import Flow``)."""
    import statebound

    return dict(statebound._WHERE)


def imports(source: str, module: str) -> Iterator[tuple[int, str]]:
    """``(line, module)`` of each statebound module ``source`` (the text of ``module``, dotted)
    imports, anywhere in it: relative imports are resolved, and a name taken from the top level
    (``from statebound import bench``, ``from statebound import finish_run``) counts as its module."""
    package = module if module.endswith(".__init__") else module.rpartition(".")[0]
    package = package.removesuffix(".__init__")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = importlib.util.resolve_name("." * node.level + base, package)
            if base == "statebound" or not node.module:  # each name may be a module of its own
                lazy = _lazy_names() if base == "statebound" else {}
                names = [lazy.get(alias.name, f"{base}.{alias.name}") for alias in node.names]
            else:
                names = [base]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        yield from ((node.lineno, name) for name in names if name.startswith("statebound."))


def violations(module: str, source: str, where: str) -> list[str]:
    """Each import in ``source`` (the text of ``module``, dotted) of a package that is not below
    ``module``'s own."""
    package = module.split(".")[1]
    found = []
    for line, imported_module in imports(source, module):
        imported = imported_module.split(".")[1]
        if imported != package and LAYER[imported] >= LAYER[package]:
            found.append(f"{where}:{line} imports {imported_module} ({package} is layer {LAYER[package]}, "
                         f"{imported} layer {LAYER[imported]})")
    return found


def test_every_package_has_a_layer() -> None:
    packages = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
                if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.name != "__init__.py")}
    assert packages <= set(LAYER), f"give these a layer: {sorted(packages - set(LAYER))}"


def test_the_packages_import_downwards_only() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative == Path("__init__.py"):  # the top-level names load lazily, from every layer
            continue
        module = ".".join(("statebound", *relative.with_suffix("").parts))
        found += violations(module, path.read_text(encoding="utf-8"), f"src/statebound/{relative}")
    assert not found, "imports against the layer order:\n" + "\n".join(found)


def test_the_check_finds_upward_imports_for_annotations_too() -> None:
    source = ("from typing import TYPE_CHECKING\nfrom statebound.flow import Flow\nimport statebound.bench.store\n"
              "if TYPE_CHECKING:\n    from statebound.report.tables import Report\n")
    assert sorted(violations("statebound.agents.x", source, "x.py")) == [
        "x.py:3 imports statebound.bench.store (agents is layer 6, bench layer 8)",
        "x.py:5 imports statebound.report.tables (agents is layer 6, report layer 9)"]


def test_the_check_resolves_relative_imports_and_names_from_the_top_level() -> None:
    source = ("from ...bench import store\nfrom ... import report\nfrom . import reading\nfrom .scoped import machine\n"
              "from statebound import Flow, bench, finish_run\n")
    assert sorted(violations("statebound.agents.sql.joins", source, "x.py")) == [
        "x.py:1 imports statebound.bench (agents is layer 6, bench layer 8)",
        "x.py:2 imports statebound.report (agents is layer 6, report layer 9)",
        "x.py:5 imports statebound.bench (agents is layer 6, bench layer 8)",
        "x.py:5 imports statebound.report.finish (agents is layer 6, report layer 9)"]
    # a package's __init__ resolves against itself: ``from .store import RunStore`` in bench/__init__.py
    assert list(imports("from .store import RunStore\n", "statebound.bench.__init__")) == [(1, "statebound.bench.store")]
