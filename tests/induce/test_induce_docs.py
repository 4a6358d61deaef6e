"""docs/induce.md shows the induced ALFWorld machine as learnt: every block marked
``<!-- machine: PATH TASK_TYPE -->`` is followed by the Mermaid drawing of that task type's graph
in the committed machine file, so a machine that changes without its page fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from statebound.induce import load_machine
from statebound.induce.machine import to_mermaid

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "induce.md"
MARKED = re.compile(r"<!-- machine: (\S+) (\w+) -->.*?```mermaid\n(.*?)```", re.DOTALL)
DRAWN = MARKED.findall(PAGE.read_text(encoding="utf-8"))


def test_the_page_draws_the_induced_alfworld_machine():
    assert any(path.startswith("benchmarks/records/") for path, _, _ in DRAWN)


@pytest.mark.parametrize(("path", "task_type", "shown"), DRAWN, ids=[f"{p}:{t}" for p, t, _ in DRAWN])
def test_a_drawn_machine_is_the_committed_one(path: str, task_type: str, shown: str):
    machine = load_machine(ROOT / path)
    assert shown.strip() == to_mermaid(machine, task_type).strip(), (
        f"docs/induce.md: the drawing of {path} ({task_type}) is not the machine's own; paste to_mermaid() there")
