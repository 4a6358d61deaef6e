"""Deterministic stratified samples of a benchmark's tasks (e.g. 100 SQL tasks in proportion to hardness)."""

from __future__ import annotations

from collections.abc import Sequence

from statebound.contract.benchmark import Task
from statebound.errors import DefinitionError

__all__ = ["stratified_sample"]


def stratified_sample(tasks: Sequence[Task], size: int, *, key: str) -> list[Task]:
    """``size`` tasks whose strata (``task.meta[key]``) keep their shares of ``tasks``.

    Seats go to strata by largest remainder; within a stratum the picks are spread evenly over its
    tasks in their stable order, so the sample is the same on every machine and spans each stratum.
    """
    if not 1 <= size <= len(tasks):
        raise DefinitionError(f"a stratified sample needs 1 to {len(tasks)} tasks, got {size}")
    strata: dict[str, list[Task]] = {}
    for task in tasks:
        strata.setdefault(str(task.meta.get(key)), []).append(task)
    if list(strata) == ["None"]:
        raise DefinitionError(f"no task has a {key!r} to stratify by")
    quotas = {name: size * len(members) / len(tasks) for name, members in strata.items()}
    seats = {name: int(quota) for name, quota in quotas.items()}
    by_remainder = sorted(strata, key=lambda name: (seats[name] - quotas[name], name))
    for name in by_remainder[: size - sum(seats.values())]:
        seats[name] += 1
    chosen: set[str] = set()
    for name, members in strata.items():
        step = len(members) / seats[name] if seats[name] else 0.0
        chosen.update(members[int(i * step)].id for i in range(seats[name]))
    return [task for task in tasks if task.id in chosen]
