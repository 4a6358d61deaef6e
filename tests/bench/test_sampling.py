"""The stratified sample keeps each stratum's share, spans it, and is deterministic."""

from __future__ import annotations

import pytest

from statebound.bench.plan import TaskSelection, select_tasks
from statebound.bench.sampling import stratified_sample
from statebound.contract.benchmark import Task
from statebound.errors import DefinitionError


def _tasks() -> list[Task]:
    levels = ["easy"] * 24 + ["medium"] * 44 + ["hard"] * 17 + ["extra"] * 15
    return [Task(id=str(i), question="q", meta={"hardness": level}) for i, level in enumerate(levels)]


def _count(tasks: list[Task], level: str) -> int:
    return sum(task.meta["hardness"] == level for task in tasks)


def test_shares_follow_the_strata_by_largest_remainder() -> None:
    sample = stratified_sample(_tasks(), 10, key="hardness")
    # quotas 2.4 / 4.4 / 1.7 / 1.5: floors 2+4+1+1 = 8, the two largest remainders (hard, extra) get one more
    assert [_count(sample, level) for level in ("easy", "medium", "hard", "extra")] == [2, 4, 2, 2]


def test_picks_spread_over_each_stratum_in_stable_order() -> None:
    sample = stratified_sample(_tasks(), 50, key="hardness")
    easy = [int(task.id) for task in sample if task.meta["hardness"] == "easy"]
    assert easy == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22]
    assert sample == stratified_sample(_tasks(), 50, key="hardness")


def test_selection_applies_the_sample_after_filters() -> None:
    chosen = select_tasks(_tasks(), TaskSelection(hardness="medium", stratified=4))
    assert [task.id for task in chosen] == ["24", "35", "46", "57"]


@pytest.mark.parametrize("size", [0, 101])
def test_sizes_outside_the_task_count_are_refused(size: int) -> None:
    with pytest.raises(DefinitionError, match="stratified sample needs 1 to 100"):
        stratified_sample(_tasks(), size, key="hardness")


def test_a_missing_key_is_refused() -> None:
    with pytest.raises(DefinitionError, match="no task has a 'fs'"):
        stratified_sample(_tasks(), 5, key="fs")
