"""The packages of statebound import each other in one order only: a package imports only packages
of lower layers (at run time; imports under ``if TYPE_CHECKING:`` are for annotations). So agents
never import the harness, and the harness never imports the report.

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


def runtime_imports(source: str) -> Iterator[tuple[int, str]]:
    """``(line, module)`` of each statebound module ``source`` imports outside ``if TYPE_CHECKING:``."""
    tree = ast.parse(source)
    typing_only = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(block.test) for node in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
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
    for line, module in runtime_imports(source):
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


def test_the_check_finds_an_upward_import_and_ignores_annotations_only() -> None:
    source = ("from typing import TYPE_CHECKING\nfrom statebound.flow import Flow\nimport statebound.bench.store\n"
              "if TYPE_CHECKING:\n    from statebound.report.tables import Report\n")
    assert violations("agents", source, "x.py") == [
        "x.py:3 imports statebound.bench.store (agents is layer 6, bench layer 8)"]
