"""Induced machines as agents of any benchmark: ``-a induced:PATH`` (the model picks, by the
chooser ``-O choice=`` names where the benchmark has that option, else ``auto``) and
``-a induced-random:PATH`` (the same machine with seeded random picks: the control).

``PATH`` is a machine file (``.py`` or ``.json``), or a directory of them, one per fold as
``statebound induce --folds`` writes them: each episode then runs the machine that kept its task
out (``held_out``), so every task is played by a machine that never learnt from it. Each episode's
``meta`` names the machine file and whether the task was held out from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from statebound.agents.budget import actions_allowed
from statebound.contract.benchmark import AgentSpec, Setup
from statebound.contract.converters import trace_of_flow
from statebound.contract.trace import Trace
from statebound.errors import DefinitionError
from statebound.flow import ChoiceMethod, Flow
from statebound.induce.domains import domain_for
from statebound.induce.files import SUFFIXES, load_machine
from statebound.induce.machine import Machine
from statebound.llm.base import LLM

__all__ = ["InducedAgent", "induced", "induced_random", "machine_files"]


def machine_files(path: str | Path) -> list[Path]:
    """The machine files ``path`` names: itself, or the ``.py``/``.json`` files in the directory."""
    target = Path(path)
    if target.is_dir():
        found = sorted(p for p in target.iterdir() if p.suffix in SUFFIXES and p.is_file())
        if not found:
            raise DefinitionError(f"{target} holds no machine file (.py or .json made by statebound induce)")
        return found
    return [target]


@cache
def _loaded(path: str, stamp: int) -> Machine:
    return load_machine(path)


def _machines(path: str) -> dict[Path, Machine]:
    """The machines ``path`` names, read once per version of each file."""
    return {file: _loaded(str(file), file.stat().st_mtime_ns) for file in machine_files(path)}


def machine_for(machines: Mapping[Path, Machine], task: str) -> tuple[Path, Machine, bool]:
    """The machine to run on ``task``: the one that kept it out, else one that never learnt from
    it, else (a single machine) the one there is; with whether ``task`` is held out from it."""
    for file, machine in machines.items():
        if task in machine.trained.held_out:
            return file, machine, True
    unseen = [(file, m) for file, m in machines.items() if task not in m.trained.tasks]
    if unseen:
        return *unseen[0], True
    if len(machines) == 1:
        [(file, machine)] = machines.items()
        return file, machine, False
    raise DefinitionError(f"every machine in {', '.join(map(str, machines))} learnt from task {task}: none can "
                          "play it held out")


_FLOWS: dict[tuple[int, str | None, str, int, int], Flow] = {}


def _flow(machine: Machine, task_type: str | None, chooser: ChoiceMethod, seed: int, max_turns: int) -> Flow:
    """The flow of ``machine`` for ``task_type`` (every type's, for a type it never saw), made once
    (machines are read once per file version, so their identity is the key)."""
    key = (id(machine), task_type, chooser, seed, max_turns)
    if key not in _FLOWS:
        known = task_type in machine.task_types
        _FLOWS[key] = machine.flow(chooser=chooser, seed=seed, max_turns=max_turns,
                                   task_type=task_type if known else None)
    return _FLOWS[key]


@dataclass(frozen=True, slots=True)
class InducedAgent:
    """Runs ``machine`` on one episode: the flow of the task's type (a type it never saw ends in
    ``Untrained`` at once)."""

    machine: Machine
    file: str
    held_out: bool
    chooser: ChoiceMethod
    seed: int
    max_turns: int
    task_type: str | None = None

    async def __call__(self, task: str, *, llm: LLM, env: Any) -> Trace:
        task_type = self.task_type or domain_for(self.machine.benchmark).task_type(task)
        if task_type is None and len(self.machine.graphs) == 1:
            task_type = self.machine.graphs[0].task_type
        flow = _flow(self.machine, task_type, self.chooser, self.seed, self.max_turns)
        run = await flow.run(task, llm=llm, deps=env)
        return trace_of_flow(run, data_keys=("action",), meta={"machine": self.file, "held_out": self.held_out})


def _spec(benchmark: str, argument: str, *, control: bool) -> AgentSpec[Any]:
    if not argument:
        raise DefinitionError("name the machine: -a induced:PATH (a .py or .json file made by statebound "
                              "induce, or a directory of them)")
    machines = _machines(argument)
    for file, machine in machines.items():
        if machine.benchmark != benchmark:
            raise DefinitionError(f"{file} is a machine for {machine.benchmark}, not {benchmark}")
    domain = domain_for(benchmark)
    held_out: Sequence[str] = sorted({t for m in machines.values() for t in m.trained.held_out})

    def build(setup: Setup[Any]) -> InducedAgent:
        file, machine, out = machine_for(machines, setup.task.id)
        chooser: ChoiceMethod = "random" if control else getattr(setup.options, "choice", "auto")
        task_type = setup.task.meta.get("task_type")
        return InducedAgent(machine, str(file), out, chooser, setup.seed, actions_allowed(setup.max_turns),
                            str(task_type) if task_type is not None else None)

    what = "seeded random picks among" if control else "the model picks among"
    return AgentSpec(build=build, summary=f"the machine induced in {argument}: {what} the offered actions that fit",
                     uses_model=not control, chooses=not control, env=dict(domain.env),
                     tasks=(lambda options: held_out) if len(machines) > 1 and held_out else None)


def induced(benchmark: str, argument: str) -> AgentSpec[Any]:
    """a machine statebound induce wrote (a .py or .json file, or a folder of fold machines), the model picking.

    ``-a induced:PATH`` (module docstring)."""
    return _spec(benchmark, argument, control=False)


def induced_random(benchmark: str, argument: str) -> AgentSpec[Any]:
    """the machine at PATH with seeded random picks: the control.

    ``-a induced-random:PATH``."""
    return _spec(benchmark, argument, control=True)
