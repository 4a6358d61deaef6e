"""What a run is: its configuration, its task selection and its episodes in a fixed order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from statebound.bench.models import ModelSpec
from statebound.bench.sampling import stratified_sample
from statebound.contract.benchmark import EpisodeLimits, Task
from statebound.errors import DefinitionError
from statebound.llm.model_options import redacted

__all__ = ["EpisodeKey", "EpisodePlan", "RunConfig", "TaskSelection", "plan_episodes", "select_tasks"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskSelection:
    """Which tasks to run: ids -> hardness -> task type -> stratified sample -> limit."""

    ids: tuple[str, ...] = ()
    hardness: str | None = None
    task_type: str | None = None
    stratified: int | None = None  # a stratified sample of this many tasks (after the filters)
    stratify_by: str = "hardness"
    limit: int | None = None


def select_tasks(tasks: Sequence[Task], selection: TaskSelection) -> list[Task]:
    """The selected tasks in the benchmark's own (stable) order."""
    chosen = list(tasks)
    if selection.ids:
        known = {task.id for task in chosen}
        unknown = [task_id for task_id in selection.ids if task_id not in known]
        if unknown:
            sample = ", ".join(sorted(known)[:5])
            raise DefinitionError(f"unknown task ids {unknown}; ids look like: {sample}, ...")
        wanted = set(selection.ids)
        chosen = [task for task in chosen if task.id in wanted]
    for key, value in (("hardness", selection.hardness), ("task_type", selection.task_type)):
        if value is not None:
            present = sorted({str(task.meta.get(key)) for task in chosen})
            chosen = [task for task in chosen if str(task.meta.get(key)) == value]
            if not chosen:
                raise DefinitionError(f"no task has {key}={value!r}; present values: {present}")
    if selection.stratified is not None:
        chosen = stratified_sample(chosen, selection.stratified, key=selection.stratify_by)
    if selection.limit is not None:
        if selection.limit < 1:
            raise DefinitionError(f"--limit must be at least 1, got {selection.limit}")
        chosen = chosen[: selection.limit]
    if not chosen:
        raise DefinitionError("the task selection is empty")
    return chosen


@dataclass(frozen=True, slots=True, kw_only=True)
class RunConfig:
    """A run's configuration: what decides its results (:func:`statebound.bench.identity.identity`)
    and how its models are reached (their transport options); not how fast it runs (no
    concurrency, no executor)."""

    benchmark: str
    benchmark_options: Mapping[str, Any] = field(default_factory=dict)
    agents: tuple[str, ...]
    models: tuple[ModelSpec, ...]
    seeds: tuple[int, ...] = (0,)
    task_ids: tuple[str, ...]
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)

    def __post_init__(self) -> None:
        object.__setattr__(self, "benchmark_options", resolved_options(self.benchmark, self.benchmark_options))

    def to_json(self) -> dict[str, Any]:
        """The configuration as the store keeps it: secrets as fingerprints, never in clear."""
        return {
            "version": CONFIG_VERSION,
            "benchmark": self.benchmark,
            "benchmark_options": redacted(self.benchmark_options),
            "agents": list(self.agents),
            "models": [model.to_json() for model in self.models],
            "seeds": list(self.seeds),
            "task_ids": list(self.task_ids),
            "limits": {
                "max_turns": self.limits.max_turns,
                "max_tokens": self.limits.max_tokens,
                "timeout_s": self.limits.timeout_s,
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunConfig:
        data = _migrate(data)
        return cls(
            benchmark=data["benchmark"],
            benchmark_options=dict(data["benchmark_options"]),
            agents=tuple(data["agents"]),
            models=tuple(ModelSpec(m["name"], dict(m["options"])) for m in data["models"]),
            seeds=tuple(data["seeds"]),
            task_ids=tuple(data["task_ids"]),
            limits=EpisodeLimits(**data["limits"]),
        )


CONFIG_VERSION = 2


def _migrate(data: Mapping[str, Any]) -> dict[str, Any]:
    """A stored configuration in today's terms. Version 1 (no ``version`` key) read ``max_turns`` as
    model calls in QA and ignored it in ALFWorld, whose step limit was the option ``max_steps``:
    today both benchmarks read ``max_turns`` as actions, like the others (docs/harness.md, "Limits")."""
    data = dict(data)
    if data.get("version", 1) >= CONFIG_VERSION:
        return data
    options, limits = dict(data["benchmark_options"]), dict(data["limits"])
    if data["benchmark"] == "alfworld":
        limits["max_turns"] = int(options.pop("max_steps", 50))
    elif data["benchmark"] in ("gsm8k", "hotpotqa"):
        options["max_calls"] = max(1, limits["max_turns"])  # what ran: max_turns overrode the option
        limits["max_turns"] = None
    return {**data, "version": CONFIG_VERSION, "benchmark_options": options, "limits": limits}


def resolved_options(benchmark: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Every option of ``benchmark`` with its value (defaults filled in), so that two runs compare
    by what they ran with, not by how it was written; as given for a benchmark not installed here,
    and for one defined in a user's file (``path.py:name``): reading a run never runs its files
    (:func:`~statebound.bench.evaluate.prepare_run` stores that file's options resolved)."""
    from statebound.bench.options import parse_options
    from statebound.bench.registry import benchmark_class, benchmark_names

    if benchmark not in benchmark_names():
        return dict(options)
    return parse_options(benchmark_class(benchmark).Options, options, owner=benchmark).model_dump(mode="json")


@dataclass(frozen=True, slots=True, order=True)
class EpisodeKey:
    """The identity of an episode in a run store."""

    benchmark: str
    task: str
    agent: str
    model: str
    seed: int


@dataclass(frozen=True, slots=True)
class EpisodePlan:
    """One episode to run; ``position`` fixes its place in the run's order."""

    position: int
    key: EpisodeKey
    task: Task
    model: ModelSpec


def plan_episodes(config: RunConfig, tasks: Sequence[Task]) -> list[EpisodePlan]:
    """All episodes, ordered model -> agent -> seed -> task (deterministic)."""
    by_id = {task.id: task for task in tasks}
    plans: list[EpisodePlan] = []
    for model in config.models:
        for agent in config.agents:
            for seed in config.seeds:
                for task_id in config.task_ids:
                    key = EpisodeKey(config.benchmark, task_id, agent, model.name, seed)
                    plans.append(EpisodePlan(len(plans), key, by_id[task_id], model))
    return plans
