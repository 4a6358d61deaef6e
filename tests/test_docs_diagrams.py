"""The machines' diagrams in the docs are the machines as built: every block marked
``<!-- diagram: module:function ... -->`` is followed by the Mermaid diagram ``function()``'s flow
draws (``statebound flow draw``), so a change to a machine that the docs do not show fails here."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARKED = re.compile(r"<!-- diagram: ([\w.]+):(\w+) .*?-->.*?```mermaid\n(.*?)```", re.DOTALL)
DIAGRAMS = [(doc.name, *match.groups()) for doc in sorted((ROOT / "docs").glob("*.md"))
            for match in MARKED.finditer(doc.read_text(encoding="utf-8"))]


def test_the_scoped_machines_are_drawn_in_the_docs() -> None:
    drawn = {(module, name) for _, module, name, _ in DIAGRAMS}
    assert {("statebound.agents.sql.scoped", "build_scoped"), ("statebound.agents.qa.scoped", "build_scoped"),
            ("statebound.agents.qa.scoped_arithmetic", "build_scoped_arithmetic")} <= drawn


@pytest.mark.parametrize(("doc", "module", "name", "shown"), DIAGRAMS, ids=[f"{d[0]}:{d[2]}" for d in DIAGRAMS])
def test_a_diagram_in_the_docs_is_the_machine_as_built(doc: str, module: str, name: str, shown: str) -> None:
    flow = getattr(importlib.import_module(module), name)()
    assert shown.strip() == flow.to_mermaid().strip(), (
        f"docs/{doc}: the diagram of {module}:{name} is not the machine's own; paste flow.to_mermaid() there")
