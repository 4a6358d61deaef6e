"""Typed flow state for mypy: ``Flow(vars=Ticket)`` is a ``Flow[Ticket]``, its results' ``vars`` are
``Ticket`` s, and a condition on ``RunContext[Ticket]`` reads typed fields; a flow without variables
is a ``Flow[None]`` that needs no annotation. mypy runs on small programs using the package."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

PROGRAM = '''
from dataclasses import dataclass

from statebound import Flow, Instruction, RunContext, State, always


@dataclass(frozen=True)
class Ticket:
    team: str = ""
    priority: int = 0


def urgent(ctx: RunContext[Ticket]) -> bool:
    return ctx.vars.priority > 2


typed = Flow(name="t", initial="A", vars=Ticket, states=[
    State("A", outputs=[Instruction("x")], transitions=[(urgent, "B"), (always(), "B")]),
    State("B", final=True)])
plain = Flow(name="p", initial="A", states=[State("A", final=True)])
result = typed.run_sync("task")
team: str = result.vars.team if result.vars is not None else ""
nothing: None = plain.run_sync("task").vars
'''


def _mypy(tmp_path: Path, program: str) -> tuple[str, int]:
    source = tmp_path / "program.py"
    source.write_text(textwrap.dedent(program), encoding="utf-8")
    out, err, status = mypy_api.run([str(source), "--no-incremental", "--ignore-missing-imports",
                                     "--follow-imports=silent", "--cache-dir", str(tmp_path / "cache")])
    return out + err, status


def test_typed_state_checks_and_a_field_the_type_lacks_is_the_one_error(tmp_path: Path) -> None:
    wrong = "colour: str = result.vars.colour if result.vars else ''\n"
    output, status = _mypy(tmp_path, PROGRAM + wrong)
    errors = [line for line in output.splitlines() if ": error:" in line]
    assert status == 1 and len(errors) == 1, output
    assert f"program.py:{PROGRAM.count(chr(10)) + 1}:" in errors[0] and '"Ticket" has no attribute "colour"' in errors[0]
