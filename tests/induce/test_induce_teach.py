"""From run stores to demonstrations: the steps the harness kept, the choices of a store made
before them, and the runs refused with what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.contract.result import EpisodeResult
from statebound.contract.trace import Step
from statebound.errors import DefinitionError
from statebound.induce import load_machine
from statebound.induce.teach import demonstrations, induce_machine

TASK = "You are in the middle of a room.\nYour task is to: put some apple in fridge."
WON = [Step(action="go to countertop 1", observation="On the countertop 1, you see a apple 1.", ok=True,
            offered=("go to countertop 1", "go to fridge 1")),
       Step(action="take apple 1 from countertop 1", observation="You pick up the apple 1.", ok=True,
            offered=("go to fridge 1", "take apple 1 from countertop 1")),
       Step(action="go to fridge 1", observation="The fridge 1 is closed.", ok=True, offered=("go to fridge 1",)),
       Step(action="move apple 1 to fridge 1", observation="You put the apple 1 in/on the fridge 1.", ok=True,
            offered=("put apple 1 in/on fridge 1",))]


def _store(run_dir: Path, benchmark: str, episodes: list[EpisodeResult]) -> Path:
    with RunStore(run_dir) as store:
        store.start(RunConfig(benchmark=benchmark, agents=("a",), models=(ModelSpec("m"),),
                              task_ids=tuple(e.task for e in episodes)), resume=False)
        for position, episode in enumerate(episodes):
            store.save(episode, benchmark=benchmark, position=position)
    return run_dir


def _episode(task: str, *, success: bool = True, steps: list[Step] | None = None, **more) -> EpisodeResult:
    fields = {"task_text": TASK, **more}
    return EpisodeResult(task=task, agent="a", model="m", success=success, meta={"task_type": "put"},
                         env_steps=[s.to_dict() for s in (WON if steps is None else steps)], **fields)


def test_solved_episodes_become_demonstrations_with_their_offered_candidates(tmp_path: Path):
    run = _store(tmp_path / "run", "alfworld", [_episode("put-1"), _episode("put-2", success=False)])
    [demo] = demonstrations([run], benchmark="alfworld")
    assert demo.task == "put-1" and demo.task_type == "put" and demo.slots == {"object": "apple", "receptacle": "fridge"}
    assert demo.steps[1].offered == ("go to fridge 1", "take apple 1 from countertop 1")
    machine = induce_machine([run], benchmark="alfworld", held_out=["put-2"])
    assert machine.trained.episodes == 1 and machine.trained.steps == 4 and machine.trained.held_out == ("put-2",)
    # one episode is too few to keep "in/on" a constant (min_constant), so only the slots stay
    assert [r.template for r in machine.graph("put").roles][-1] == "put {object} {n} {any} {receptacle} {n}"


def test_a_store_made_before_steps_were_kept_teaches_from_its_choices(tmp_path: Path):
    trajectory = [{"state": "Find", "role": "user", "content": TASK, "source": "task"},
                  {"state": "Find", "role": "assistant", "content": "go to countertop 1", "source": "llm",
                   "choice": {"name": "Find", "method": "random", "candidates": ["go to countertop 1", "go to fridge 1"],
                              "scores": None, "picked": 0}},
                  {"state": "Find", "role": "tool", "content": "On the countertop 1, you see a apple 1.", "ok": True}]
    run = _store(tmp_path / "run", "alfworld", [_episode("put-1", steps=[], trajectory=trajectory, task_text=None)])
    [demo] = demonstrations([run], benchmark="alfworld")
    assert demo.task_text == TASK
    assert demo.steps == [Step(action="go to countertop 1", observation="On the countertop 1, you see a apple 1.",
                               ok=True, offered=("go to countertop 1", "go to fridge 1"))]


@pytest.mark.parametrize(("episodes", "benchmark", "says"), [
    ([_episode("put-1")], "intercode-bash", "holds a alfworld run, not intercode-bash"),
    ([_episode("put-1", success=False)], "alfworld", "no solved episode to learn from in"),
    ([_episode("put-1", steps=[Step(action="look", observation="x", ok=True)])], "alfworld",
     "1 of its 1 solved episodes keep no offered candidates (e.g. put-1)"),
])
def test_runs_that_cannot_teach_are_refused_saying_what_is_missing(tmp_path: Path, episodes, benchmark, says):
    run = _store(tmp_path / "run", "alfworld", episodes)
    with pytest.raises(DefinitionError, match=says.replace("(", r"\(").replace(")", r"\)")):
        induce_machine([run], benchmark=benchmark)


def test_learning_from_tasks_no_run_holds_is_refused(tmp_path: Path):
    run = _store(tmp_path / "run", "alfworld", [_episode("put-1")])
    with pytest.raises(DefinitionError, match=r"among tasks put-9 \(0 episodes, 0 solved\)"):
        induce_machine([run], benchmark="alfworld", tasks={"put-9"})


def test_the_command_writes_a_machine_and_folds_of_them(tmp_path: Path):
    from typer.testing import CliRunner

    from statebound.cli.app import app
    from statebound.induce import load_machine

    run = _store(tmp_path / "run", "alfworld", [_episode(task) for task in ("put-018", "put-019", "put-020", "put-021")])
    done = CliRunner().invoke(app, ["induce", str(run), "--benchmark", "alfworld", "--out", str(tmp_path / "m.py")])
    assert done.exit_code == 0, done.output
    assert "1 task types, 4 roles, learnt from 4 solved episodes (16 steps, 0 model tokens)" in done.output
    assert load_machine(tmp_path / "m.py").trained.tasks == ("put-018", "put-019", "put-020", "put-021")
    out = tmp_path / "folds"
    done = CliRunner().invoke(app, ["induce", str(run), "--benchmark", "alfworld", "--folds", "2", "--out", str(out),
                                    "--no-eval"])
    assert done.exit_code == 0, done.output
    one, two = load_machine(out / "fold-1.json"), load_machine(out / "fold-2.json")
    assert one.trained.held_out == ("put-018", "put-020") and two.trained.tasks == ("put-018", "put-020")
    assert "| all | 16 | 100.0 |" in (out / "induction.md").read_text()  # each game held out once: 4 x 4 steps
    again = CliRunner().invoke(app, ["induce", str(run), "--benchmark", "alfworld", "--folds", "2", "--out", str(out),
                                     "--no-eval"])
    assert again.exit_code == 2 and "already holds machines" in again.output


def _found_at(place: str) -> list[Step]:
    """The won episode with the apple on ``place`` instead of the countertop."""
    return [Step(action=s.action.replace("countertop", place), observation=s.observation.replace("countertop", place),
                 ok=s.ok, offered=tuple(a.replace("countertop", place) for a in s.offered or ())) for s in WON]


def test_each_fold_learns_its_places_from_its_own_tasks_only(tmp_path: Path):
    from statebound.induce.folds import write_folds

    # the apple lay on the countertop in the first fold's games, on the diningtable in the second's
    places = {"put-018": "countertop", "put-019": "diningtable", "put-020": "countertop", "put-021": "diningtable"}
    run = _store(tmp_path / "run", "alfworld", [_episode(t, steps=_found_at(p)) for t, p in places.items()])
    one, two = (load_machine(path) for path in write_folds([run], benchmark="alfworld", folds=2, out_dir=tmp_path / "f"))
    assert one.trained.held_out == ("put-018", "put-020") and two.trained.held_out == ("put-019", "put-021")
    assert one.places["apple"]["diningtable"] == 4 and "countertop" not in one.places["apple"]
    assert two.places["apple"]["countertop"] == 4 and "diningtable" not in two.places["apple"]
