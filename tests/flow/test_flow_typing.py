"""Typed flow state and dependencies for mypy: ``Flow(vars=Ticket)`` is a ``Flow[Ticket]``, its
results' ``vars`` are ``Ticket`` s, and a condition on ``RunContext[Ticket]`` reads typed fields; a
flow without variables is a ``Flow[None]`` that needs no annotation; ``Flow(deps=Desk)`` takes a
``Desk`` as deps, which its tools read as ``RunContext[..., Desk]``, and a ``Benchmark[Options,
Desk]`` makes and grades ``Desk`` s. mypy runs on small programs using the package."""

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


DEPS_PROGRAM = '''
from statebound import (Benchmark, BenchmarkOptions, CallTool, Flow, Grade, RunContext, Score, State, StepResult, Task,
                        Trace, always)


class Desk:
    routed: str = ""

    def reset(self, task_id: str) -> str:
        return "a ticket"

    def step(self, action: str) -> StepResult:
        self.routed = action
        return StepResult("routed")

    def score(self) -> Score:
        return Score(reward=1.0, success=True)

    def close(self) -> None:
        return None


def route(ctx: RunContext[None, Desk]) -> str:
    return ctx.deps.step("billing").observation


flow = Flow(name="d", initial="A", deps=Desk, states=[
    State("A", outputs=[CallTool(route)], transitions=[(always(), "B")]), State("B", final=True)])
flow.run_sync("task", deps=Desk())


class Tickets(Benchmark[BenchmarkOptions, Desk]):
    name = "tickets"
    summary = "route a ticket"
    Options = BenchmarkOptions

    def tasks(self) -> list[Task]:
        return []

    def make_env(self, *, max_turns: int | None, **settings: object) -> Desk:
        return Desk()

    def grade(self, env: Desk, task: Task, trace: Trace) -> Grade:
        return Grade(reward=float(env.routed == "billing"), success=True, turns=1)
'''


MISUSES = [  # each line, and what mypy says of it
    ("flow.run_sync('task', deps='a desk')", 'Argument "deps" to "run_sync" of "Flow" has incompatible type "str"'),
    ("def misread(ctx: RunContext[None, Desk]) -> str: return ctx.deps.ticket", '"Desk" has no attribute "ticket"'),
    ("desk: str = Tickets(BenchmarkOptions()).make_env(max_turns=1)", 'expression has type "Desk", variable has type "str"'),
]


def test_typed_deps_and_environments_check_and_each_misuse_is_an_error_on_its_line(tmp_path: Path) -> None:
    output, status = _mypy(tmp_path, DEPS_PROGRAM)
    assert status == 0, output
    output, status = _mypy(tmp_path, DEPS_PROGRAM + "".join(f"{line}\n" for line, _ in MISUSES))
    errors = [line for line in output.splitlines() if ": error:" in line]
    first = DEPS_PROGRAM.count("\n") + 1
    assert status == 1 and len(errors) == len(MISUSES), output
    for number, (error, (_, says)) in enumerate(zip(errors, MISUSES, strict=True), start=first):
        assert f"program.py:{number}:" in error and says in error, output
