"""The packages of statebound import each other in one order only: a package imports only packages
of lower layers (imports for annotations under ``if TYPE_CHECKING:`` too). So agents never import
the harness or their benchmarks, and the harness never imports the report.

    errors, exits  <  user_files  <  llm  <  spec, flow, envs  <  chain, examples  <  contract
    <  agents  <  benchmarks  <  bench  <  report  <  cli
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "statebound"
LAYERS = (("errors", "exits"), ("user_files",), ("llm",), ("spec", "flow", "envs"), ("chain", "examples"), ("contract",),
          ("agents",), ("benchmarks",), ("bench",), ("report",), ("cli",))
LAYER = {name: level for level, names in enumerate(LAYERS) for name in names}


def imports(source: str) -> Iterator[tuple[int, str]]:
    """``(line, module)`` of each statebound module ``source`` imports (anywhere in it)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        yield from ((node.lineno, name) for name in names if name.startswith("statebound."))


def violations(package: str, source: str, where: str) -> list[str]:
    """Each import in ``source`` (a module of ``package``) of a package that is not below it."""
    found = []
    for line, module in imports(source):
        imported = module.split(".")[1]
        if imported != package and LAYER[imported] >= LAYER[package]:
            found.append(f"{where}:{line} imports {module} ({package} is layer {LAYER[package]}, "
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
        package = relative.parts[0].removesuffix(".py")
        found += violations(package, path.read_text(encoding="utf-8"), f"src/statebound/{relative}")
    assert not found, "imports against the layer order:\n" + "\n".join(found)


def test_the_check_finds_upward_imports_for_annotations_too() -> None:
    source = ("from typing import TYPE_CHECKING\nfrom statebound.flow import Flow\nimport statebound.bench.store\n"
              "if TYPE_CHECKING:\n    from statebound.report.tables import Report\n")
    assert sorted(violations("agents", source, "x.py")) == [
        "x.py:3 imports statebound.bench.store (agents is layer 6, bench layer 8)",
        "x.py:5 imports statebound.report.tables (agents is layer 6, report layer 9)"]
