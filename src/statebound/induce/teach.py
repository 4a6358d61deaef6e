"""From run stores to a machine: the solved episodes of run directories become demonstrations
(:class:`~statebound.induce.learn.Demonstration`), and :func:`induce_machine` learns from them.

An episode's steps are the ones the harness kept (each action with what the environment offered
before it); a store made before the harness kept them is read from its choices instead (each
:class:`~statebound.flow.Pick` with its candidates). Runs of another benchmark, runs whose solved
episodes keep no offered candidates, and a set of runs with no solved episode are refused, saying
what is missing.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statebound.bench.store import RunStore
from statebound.contract.converters import CHOICE_KEY
from statebound.contract.result import EpisodeResult
from statebound.contract.trace import Step
from statebound.errors import DefinitionError
from statebound.induce.domains import Domain, benchmark_name, domain_for
from statebound.induce.learn import Demonstration, learn
from statebound.induce.machine import Machine, Trained

if TYPE_CHECKING:
    from statebound.flow import ChoiceMethod, Flow

__all__ = ["demonstrations", "induce", "induce_machine"]


def _task_text(result: EpisodeResult) -> str:
    if result.task_text is not None:
        return result.task_text
    return next((str(e.get("content", "")) for e in result.trajectory if e.get("source") == "task"), "")


def _chosen_steps(trajectory: Sequence[dict[str, Any]]) -> list[Step]:
    """A store made before steps were kept: each choice's pick among its candidates, answered by
    the tool result that follows it."""
    steps: list[Step] = []
    for index, entry in enumerate(trajectory):
        choice = entry.get(CHOICE_KEY)
        if not isinstance(choice, dict) or choice.get("picked") is None:
            continue
        answer = next((e for e in trajectory[index + 1:] if e.get("role") == "tool"), {})
        steps.append(Step(action=choice["candidates"][choice["picked"]], observation=str(answer.get("content", "")),
                          ok=answer.get("ok", True) is not False, offered=tuple(choice["candidates"])))
    return steps


def _steps(result: EpisodeResult) -> list[Step]:
    kept = [Step.from_dict(step) for step in result.env_steps]
    if any(step.offered is not None for step in kept):
        return kept
    return _chosen_steps(result.trajectory)


def _task_type(result: EpisodeResult, text: str, domain: Domain) -> str:
    return str(result.meta.get("task_type") or domain.task_type(text) or "task")


def demonstrations(run_dirs: Sequence[str | Path], *, benchmark: str,
                   tasks: Collection[str] | None = None) -> list[Demonstration]:
    """The solved episodes of ``run_dirs`` (of ``tasks`` only, when given) as demonstrations."""
    if not run_dirs:
        raise DefinitionError("give at least one run directory to learn from (made by statebound eval)")
    domain = domain_for(benchmark)
    found: list[Demonstration] = []
    seen = solved = 0
    for run_dir in run_dirs:
        with RunStore(run_dir, read_only=True) as store:
            config = store.config()
            if config is not None and benchmark_name(config.benchmark) != benchmark_name(benchmark):
                raise DefinitionError(f"{run_dir} holds a {config.benchmark} run, not {benchmark}: give runs of "
                                      f"{benchmark}, or --benchmark {config.benchmark}")
            results = [r for r in store.results(with_trajectories=True) if tasks is None or r.task in tasks]
        seen += len(results)
        wins = [r for r in results if r.success and r.error is None]
        solved += len(wins)
        without = [r.task for r in wins if not any(step.offered for step in _steps(r))]
        if without:
            raise DefinitionError(
                f"{run_dir}: {len(without)} of its {len(wins)} solved episodes keep no offered candidates (e.g. "
                f"{', '.join(without[:3])}): they were stored before the harness kept them, or the environment "
                "lists none; run the agent again with this version (statebound eval ... --out NEW_DIR)")
        for result in wins:
            text = _task_text(result)
            found.append(Demonstration(result.task, _task_type(result, text, domain), text, domain.slot_values(text),
                                       _steps(result), result.prompt_tokens + result.completion_tokens, str(run_dir)))
    if not found:
        where = f" among tasks {', '.join(sorted(tasks)[:5])}{', ...' if len(tasks) > 5 else ''}" if tasks else ""
        raise DefinitionError(f"no solved episode to learn from in {', '.join(map(str, run_dirs))}{where} "
                              f"({seen} episodes, {solved} solved)")
    return found


def induce_machine(run_dirs: Sequence[str | Path], *, benchmark: str, tasks: Collection[str] | None = None,
                   held_out: Sequence[str] = ()) -> Machine:
    """The machine learnt from the solved episodes of ``run_dirs`` (of ``tasks`` only, when given;
    ``held_out``: the tasks kept out to evaluate it on, recorded with it)."""
    started = time.perf_counter()
    demos = demonstrations(run_dirs, benchmark=benchmark, tasks=tasks)
    domain = domain_for(benchmark)
    machine = learn(demos, benchmark=benchmark_name(benchmark), slots=domain.slots, canonical=domain.canonical)
    trained = Trained(runs=tuple(str(r) for r in run_dirs), tasks=tuple(sorted({d.task for d in demos})),
                      held_out=tuple(held_out), episodes=len(demos),
                      steps=sum(1 for d in demos for s in d.steps if s.ok), tokens=sum(d.tokens for d in demos),
                      seconds=round(time.perf_counter() - started, 3))
    return replace(machine, trained=trained)


def induce(run_dirs: Sequence[str | Path], *, benchmark: str, tasks: Collection[str] | None = None,
           chooser: ChoiceMethod = "auto", seed: int = 0, max_turns: int = 50) -> Flow:
    """The flow of the machine learnt from ``run_dirs`` (:func:`induce_machine`; ``chooser`` picks
    among the offered actions, ``random`` being the control)."""
    return induce_machine(run_dirs, benchmark=benchmark, tasks=tasks).flow(chooser=chooser, seed=seed,
                                                                           max_turns=max_turns)
