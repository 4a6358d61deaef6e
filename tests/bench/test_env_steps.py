"""The harness keeps the environment's side of every episode: the task text and each action sent,
with what the environment offered just before it; stores made before it still read, and take it
once resumed."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from statebound.bench.evaluate import execute_run, prepare_run
from statebound.bench.plan import TaskSelection
from statebound.bench.steps import StepRecorder
from statebound.bench.store import RunStore
from statebound.contract.result import EpisodeResult
from statebound.contract.trace import Step
from statebound.envs.base import Score, StepResult

ORACLE = "function:statebound.benchmarks.toy:oracle"


class Counter:
    """A tiny environment that offers the next two numbers."""

    def __init__(self) -> None:
        self.value = 0

    def offered_actions(self) -> list[str]:
        return [str(self.value + 1), str(self.value + 2)]

    def step(self, action: str) -> StepResult:
        ok = action in self.offered_actions()
        self.value = int(action) if ok else self.value
        return StepResult(f"at {self.value}", ok=ok)

    def reset(self, task_id: str) -> str:
        return "count"

    def score(self) -> Score:
        return Score(reward=0.0, success=False)

    def close(self) -> None:
        return None


def test_the_recorder_passes_for_the_environment_where_a_flow_checks_its_deps_type() -> None:
    from statebound.flow import CallTool, Flow, State, always

    flow: Flow[None, Counter] = Flow(name="counting", initial="Go", deps=Counter, states=[
        State("Go", outputs=[CallTool(lambda ctx: ctx.deps.step("1").observation)], transitions=[(always(), "End")]),
        State("End", final=True)])
    recorder = StepRecorder(Counter())
    assert isinstance(recorder, Counter)
    result = flow.run_sync("count", deps=recorder)
    assert result.error is None and [step.action for step in recorder.steps] == ["1"]


def test_the_recorder_notes_what_was_offered_and_is_otherwise_the_environment() -> None:
    env = Counter()
    recorder = StepRecorder(env)
    recorder.step("2")
    recorder.step("7")
    assert recorder.value == 2 and recorder.offered_actions() == ["3", "4"]
    recorder.value = 10  # an agent's assignment reaches the environment
    assert env.value == 10
    assert [s.to_dict() for s in recorder.steps] == [
        {"action": "2", "observation": "at 2", "ok": True, "offered": ["1", "2"]},
        {"action": "7", "observation": "at 2", "ok": False, "offered": ["3", "4"]}]
    assert Step.from_dict(recorder.steps[1].to_dict()) == recorder.steps[1]


def test_an_environment_that_offers_nothing_leaves_steps_without_candidates(tmp_path: Path) -> None:
    config, bench = prepare_run("toy", agents=["direct"], models=[ORACLE], benchmark_options={"count": 2})
    asyncio.run(execute_run(config, out_dir=tmp_path, benchmark=bench))
    with RunStore(tmp_path, read_only=True) as store:
        results = store.results(with_trajectories=True)
    assert all(r.task_text and r.task_text.startswith("task toy-") for r in results)
    assert all(r.env_steps and "offered" not in r.env_steps[0] for r in results)
    assert all("Answer: " in r.env_steps[0]["action"] for r in results)


def _old_store(run_dir: Path) -> None:
    """A store as made before the environment's side was kept (no ``environment`` column)."""
    run_dir.mkdir()
    db = sqlite3.connect(run_dir / "run.sqlite")
    db.executescript("""
        CREATE TABLE run (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE episodes (benchmark TEXT NOT NULL, task TEXT NOT NULL, agent TEXT NOT NULL,
            model TEXT NOT NULL, seed INTEGER NOT NULL, position INTEGER NOT NULL, error TEXT, row TEXT NOT NULL,
            trajectory TEXT NOT NULL, events TEXT NOT NULL, finished_at REAL NOT NULL,
            PRIMARY KEY (benchmark, task, agent, model, seed));""")
    row = EpisodeResult(task="t1", agent="a", model="m", success=True).row()
    db.execute("INSERT INTO episodes VALUES ('toy', 't1', 'a', 'm', 0, 0, NULL, ?, '[]', '[]', 0)", (json.dumps(row),))
    db.commit()
    db.close()


def test_a_store_made_before_the_column_reads_and_takes_it_when_written(tmp_path: Path) -> None:
    _old_store(tmp_path / "run")
    with RunStore(tmp_path / "run", read_only=True) as store:
        [old] = store.results(with_trajectories=True)
    assert old.task == "t1" and old.env_steps == [] and old.task_text is None
    with RunStore(tmp_path / "run") as store:
        store.save(EpisodeResult(task="t2", agent="a", model="m", task_text="do it",
                                 env_steps=[Step(action="x", observation="y", ok=True).to_dict()]),
                   benchmark="toy", position=1)
    with RunStore(tmp_path / "run", read_only=True) as store:
        by_task = {r.task: r for r in store.results(with_trajectories=True)}
    assert by_task["t1"].env_steps == [] and by_task["t2"].task_text == "do it"
    assert by_task["t2"].env_steps == [{"action": "x", "observation": "y", "ok": True}]


@pytest.mark.integration
def test_a_walkthrough_run_keeps_the_admissible_commands_beside_each_action(tmp_path: Path) -> None:
    pytest.importorskip("alfworld")
    config, bench = prepare_run("alfworld", agents=["walkthrough"], models=[ORACLE],
                                selection=TaskSelection(ids=("examine-000",)))
    asyncio.run(execute_run(config, out_dir=tmp_path, benchmark=bench))
    with RunStore(tmp_path, read_only=True) as store:
        [result] = store.results(with_trajectories=True)
    assert result.success and result.task_text.endswith("examine the alarmclock with the desklamp.")
    steps = [Step.from_dict(s) for s in result.env_steps]
    assert [s.action for s in steps] == ["go to desk 2", "take alarmclock 1 from desk 2", "go to desk 1",
                                         "use desklamp 1"]
    assert all(s.offered and s.action in s.offered for s in steps)
    assert "go to bed 1" in steps[0].offered and "look" in steps[0].offered
