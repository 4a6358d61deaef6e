"""Held-out evaluation: learn on part of the tasks, evaluate on the rest, each way.

:func:`write_folds` splits the tasks the runs cover into ``k`` folds (round robin within each task
type, or the values of another meta key, in the benchmark's order, so each fold has its share of
every type) and writes one machine
per fold, learnt from the solved episodes of the other folds' tasks (``fold-1.json``...). The
machines' directory is one agent (``-a induced:DIR``: each task is played by the machine that kept
it out), so one run holds it, its random control and the benchmark's hand-written
machine with its control on every task once, into one run whose report pairs them task by task
(McNemar, paired bootstrap) (:func:`fold_run`). :func:`offline_coverage` measures without a model how often a
machine offers the teacher's next action on the tasks it kept out, and among how many.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statebound.bench.evaluate import prepare_run
from statebound.bench.plan import RunConfig, TaskSelection
from statebound.bench.registry import LoadedBenchmark, load_benchmark
from statebound.bench.store import RunStore
from statebound.contract.benchmark import EpisodeLimits
from statebound.errors import DefinitionError
from statebound.induce.domains import domain_for
from statebound.induce.files import load_machine, write_machine
from statebound.induce.flow import state_plans
from statebound.induce.learn import Demonstration
from statebound.induce.machine import Machine
from statebound.induce.teach import demonstrations, induce_machine
from statebound.induce.templates import read_words

__all__ = ["Coverage", "fold_run", "fold_tasks", "offline_coverage", "read_folds", "summary", "write_folds"]


def fold_tasks(task_ids: Sequence[str], strata: Mapping[str, str], folds: int) -> list[list[str]]:
    """``task_ids`` in ``folds`` parts: round robin within each stratum (task type), in the given
    order."""
    if folds < 2:
        raise DefinitionError(f"--folds must be at least 2 (learn on some tasks, evaluate on the others), got {folds}")
    parts: list[list[str]] = [[] for _ in range(folds)]
    seen: dict[str, int] = defaultdict(int)
    for task in task_ids:
        kind = strata.get(task, "")
        parts[seen[kind] % folds].append(task)
        seen[kind] += 1
    if any(not part for part in parts):
        raise DefinitionError(f"{len(task_ids)} tasks cannot make {folds} folds; use fewer folds")
    return parts


def _tasks_in(run_dirs: Sequence[str | Path], benchmark: str, stratify_by: str) -> tuple[list[str], dict[str, str]]:
    """The benchmark's tasks the runs hold episodes of (in the benchmark's order), and the value
    of each one's ``stratify_by`` meta key."""
    stored: set[str] = set()
    for run_dir in run_dirs:
        with RunStore(run_dir, read_only=True) as store:
            stored |= {result.task for result in store.results()}
    tasks = [task for task in load_benchmark(benchmark).benchmark.tasks() if task.id in stored]
    return [t.id for t in tasks], {t.id: str(t.meta.get(stratify_by, "")) for t in tasks}


def write_folds(run_dirs: Sequence[str | Path], *, benchmark: str, folds: int, out_dir: str | Path,
                suffix: str = ".json", stratify_by: str = "task_type") -> list[Path]:
    """Learn a machine per fold (module docstring; the folds stratified by the tasks'
    ``stratify_by`` meta key) and write them into ``out_dir``."""
    task_ids, strata = _tasks_in(run_dirs, benchmark, stratify_by)
    written = []
    for number, held_out in enumerate(fold_tasks(task_ids, strata, folds), 1):
        learnt_from = [task for task in task_ids if task not in held_out]
        machine = induce_machine(run_dirs, benchmark=benchmark, tasks=learnt_from, held_out=held_out)
        written.append(write_machine(machine, Path(out_dir) / f"fold-{number}{suffix}"))
    return written


def read_folds(out_dir: str | Path) -> list[tuple[Path, Machine]]:
    """The fold machines in ``out_dir``, in order."""
    files = sorted(p for p in Path(out_dir).glob("fold-*") if p.suffix in (".json", ".py"))
    if not files:
        raise DefinitionError(f"{out_dir} holds no fold machines (fold-1.json...); make them with statebound induce "
                              "RUN_DIR... --folds K --out DIR")
    return [(file, load_machine(file)) for file in files]


@dataclass(frozen=True, slots=True)
class Coverage:
    """How a machine does on the teacher's steps of tasks it kept out, without a model: ``hits``
    of ``steps`` offered the teacher's action, among ``candidates`` offered in all (the
    environment offered ``offered`` in all)."""

    steps: int = 0
    hits: int = 0
    candidates: int = 0
    offered: int = 0

    def __add__(self, other: Coverage) -> Coverage:
        return Coverage(self.steps + other.steps, self.hits + other.hits, self.candidates + other.candidates,
                        self.offered + other.offered)


def _replay(machine: Machine, demo: Demonstration) -> Coverage:
    """Walk ``demo``'s steps through the machine of its task type, as its flow would."""
    graph = machine.graph(demo.task_type)
    if graph is None:
        return Coverage()
    canonical = domain_for(machine.benchmark).canonical
    plans = state_plans(machine, graph)
    role_of = {plan.name: role for role, plan in plans.items()}
    role: str | None = None
    seen, found = read_words(demo.task_text), Coverage()
    sent: list[str] = []
    for step in demo.steps:
        if not step.ok or step.offered is None:
            continue
        action, plan = canonical(step.action), plans[role]
        offered = plan.offer(step.offered, demo.slots, seen, sent)
        found += Coverage(1, int(action in offered), len(offered), len(step.offered))
        role = role_of.get(plan.after(action, demo.slots), role)
        sent.insert(0, action)
        seen |= read_words(step.observation)
    return found


def offline_coverage(machines: Sequence[Machine], run_dirs: Sequence[str | Path]) -> dict[str, Coverage]:
    """Per task type (and ``all``), each machine replayed on the solved episodes of the tasks it
    kept out."""
    by_type: dict[str, Coverage] = defaultdict(Coverage)
    for machine in machines:
        held = set(machine.trained.held_out)
        for demo in demonstrations(run_dirs, benchmark=machine.benchmark, tasks=held):
            coverage = _replay(machine, demo)
            by_type[demo.task_type] += coverage
            by_type["all"] += coverage
    return dict(by_type)


def fold_run(out_dir: str | Path, *, benchmark: str, models: Sequence[str], max_turns: int,
             options: Mapping[str, Any] | None = None, seeds: Sequence[int] = (0,),
             beside: Sequence[str] | None = None) -> tuple[RunConfig, LoadedBenchmark, Path]:
    """The evaluation of the fold machines in ``out_dir``: they (``induced:OUT``), their random
    control and the agents ``beside`` them (by default the benchmark's hand-written machine and
    its control, when it has one), on every held-out task, at ``max_turns``; its run directory is
    ``OUT/eval-<max_turns>``. Run it with :func:`statebound.bench.evaluate.execute_run`."""
    machines = [m for _, m in read_folds(out_dir)]
    held_out = [task for machine in machines for task in machine.trained.held_out]
    agents = [f"induced:{out_dir}", f"induced-random:{out_dir}"]
    agents += list(beside if beside is not None else domain_for(benchmark).hand_written or ())
    config, loaded = prepare_run(benchmark, agents=agents, models=list(models), seeds=seeds,
                                 selection=TaskSelection(ids=tuple(held_out)),
                                 limits=EpisodeLimits(max_turns=max_turns), benchmark_options=options)
    return config, loaded, Path(out_dir) / f"eval-{max_turns}"


def summary(machines: Sequence[tuple[Path, Machine]], coverage: Mapping[str, Coverage]) -> str:
    """What the folds cost to make and how their machines cover the tasks they kept out (Markdown)."""
    lines = ["| machine | learnt from (tasks) | episodes | steps | model tokens | seconds | held out | roles |",
             "|---|---|---|---|---|---|---|---|"]
    for file, machine in machines:
        t = machine.trained
        roles = sum(len(g.roles) for g in machine.graphs)
        lines.append(f"| {file.name} | {len(t.tasks)} | {t.episodes} | {t.steps} | {t.tokens} | {t.seconds:.2f} | "
                     f"{len(t.held_out)} | {roles} |")
    lines += ["", "| task type | held-out steps | teacher's action offered % | candidates/step | offered by the "
              "environment/step |", "|---|---|---|---|---|"]
    for kind, c in sorted(coverage.items(), key=lambda item: (item[0] == "all", item[0])):
        if c.steps:
            lines.append(f"| {kind} | {c.steps} | {100 * c.hits / c.steps:.1f} | {c.candidates / c.steps:.1f} | "
                         f"{c.offered / c.steps:.1f} |")
    return "\n".join(lines) + "\n"
