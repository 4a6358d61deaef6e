"""scripts/records.sh names agents and options the benchmarks really have."""

import os
import subprocess
from pathlib import Path

import pytest

from statebound.bench.registry import load_benchmark

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "records.sh"


def _listing(benchmark: str) -> tuple[list[str], list[str]]:
    out = subprocess.run(["bash", str(SCRIPT), benchmark, "--list"], capture_output=True, text=True, check=True).stdout
    rows = [line.split(" ", 1) for line in out.splitlines()]
    return [v for k, v in rows if k == "agent"], [v for k, v in rows if k == "option"]


@pytest.mark.parametrize("benchmark", ["intercode-sql", "intercode-bash", "gsm8k", "hotpotqa", "alfworld"])
def test_every_record_agent_exists(benchmark):
    agents, _ = _listing(benchmark)
    assert agents, "a record needs agents"
    assert set(agents) <= set(load_benchmark(benchmark).agents)
    assert not any(agent in ("gold", "replay", "walkthrough") for agent in agents)  # records are of models


def test_sql_record_uses_the_stratified_sample_and_the_paper_turn_limit():
    _, options = _listing("intercode-sql")
    assert options == ["--stratified", "100", "-O", "format=grammar", "--max-turns", "10"]


def test_an_unknown_benchmark_is_refused_with_the_choices():
    done = subprocess.run(["bash", str(SCRIPT), "nope"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "unknown benchmark 'nope'" in done.stderr and "intercode-sql" in done.stderr


def test_checkpoint_packs_a_store_being_written_without_stopping_the_writer(tmp_path, monkeypatch):
    """A run writes in WAL mode; `checkpoint` packs what it committed (the log included) into the
    run.sqlite.xz that is committed, and the writer carries on."""
    from statebound.bench.models import ModelSpec
    from statebound.bench.plan import RunConfig
    from statebound.bench.store import RunStore
    from statebound.contract.result import EpisodeResult

    run_dir = tmp_path / "toy-smollm2" / "direct"
    config = RunConfig(benchmark="toy", agents=("direct",), models=(ModelSpec("smollm2"),), task_ids=("t1", "t2", "t3"))
    with RunStore(run_dir) as writer:
        writer.start(config, resume=False)
        for position, task in enumerate(("t1", "t2")):
            writer.save(EpisodeResult(task=task, agent="direct", model="smollm2"), benchmark="toy", position=position)
        done = subprocess.run(["bash", str(SCRIPT), "checkpoint"], capture_output=True, text=True, check=True,
                              env={**os.environ, "RECORDS": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")})
        assert f"{run_dir}: " in done.stdout
        writer.save(EpisodeResult(task="t3", agent="direct", model="smollm2"), benchmark="toy", position=2)
    (run_dir / "run.sqlite").unlink()  # as a clean clone has it: the packed store only
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with RunStore(run_dir, read_only=True) as packed:
        assert [r.task for r in packed.results()] == ["t1", "t2"]


def test_status_shows_progress_and_the_agents_not_started(tmp_path):
    from statebound.bench.models import ModelSpec
    from statebound.bench.plan import RunConfig
    from statebound.bench.store import RunStore
    from statebound.contract.result import EpisodeResult

    run_dir = tmp_path / "intercode-bash-smollm2" / "stateflow"
    config = RunConfig(benchmark="intercode-bash", agents=("stateflow",), models=(ModelSpec("smollm2"),),
                       task_ids=("1-0", "1-1", "1-2"))
    with RunStore(run_dir) as store:
        store.start(config, resume=False)
        store.save(EpisodeResult(task="1-0", agent="stateflow", model="smollm2", wall_seconds=60.0),
                   benchmark="intercode-bash", position=0)
    done = subprocess.run(["bash", str(SCRIPT), "status"], capture_output=True, text=True, check=True,
                          env={**os.environ, "RECORDS": str(tmp_path), "WORKERS": "2"})
    header, row, *rest = done.stdout.splitlines()
    assert header.split("\t")[:4] == ["benchmark", "agent", "model", "done"]
    assert row.split("\t")[:4] == ["intercode-bash", "stateflow", "smollm2", "1/3"]
    assert "\t1m00s\t" in row  # two episodes of 60 s left on two workers
    assert "not started, intercode-bash: sf-agent react plan-solve" in rest
    assert any(line.startswith("not started, gsm8k: direct cot") for line in rest)


def test_a_complete_record_agent_is_skipped_without_opening_its_run(tmp_path):
    from statebound.bench.models import ModelSpec
    from statebound.bench.plan import RunConfig
    from statebound.bench.store import RunStore
    from statebound.contract.result import EpisodeResult

    run_dir = tmp_path / "intercode-bash-smollm2" / "stateflow"
    config = RunConfig(benchmark="intercode-bash", agents=("stateflow",), models=(ModelSpec("smollm2"),),
                       task_ids=("1-0",))
    with RunStore(run_dir) as store:
        store.start(config, resume=False)
        store.save(EpisodeResult(task="1-0", agent="stateflow", model="smollm2"), benchmark="intercode-bash", position=0)
    done = subprocess.run(["bash", str(SCRIPT), "intercode-bash", "stateflow"], capture_output=True, text=True,
                          env={**os.environ, "RECORDS": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "== intercode-bash / stateflow: complete" in done.stdout
    assert "episodes run" not in done.stdout  # no eval ran
    assert (tmp_path / "intercode-bash-smollm2" / "report.md").exists()  # the record's report is rebuilt


def test_a_crashed_episode_is_run_again(tmp_path):
    """A record agent with a crashed episode is not complete, and running the record redoes that
    episode alone (here the gold oracle, so no model time is spent)."""
    from statebound.bench.models import ModelSpec
    from statebound.bench.plan import EpisodeLimits, RunConfig
    from statebound.bench.store import RunStore
    from statebound.contract.result import EpisodeResult

    tasks = tuple(task.id for task in load_benchmark("intercode-bash").benchmark.tasks())
    run_dir = tmp_path / "intercode-bash-smollm2" / "gold"
    config = RunConfig(benchmark="intercode-bash", benchmark_options={"format": "grammar"}, agents=("gold",),
                       models=(ModelSpec("smollm2"),), task_ids=tasks, limits=EpisodeLimits(max_turns=10))
    with RunStore(run_dir) as store:
        store.start(config, resume=False)
        for position, task in enumerate(tasks):
            crashed = "OperationalError: database is locked" if task == "1-0" else None
            store.save(EpisodeResult(task=task, agent="gold", model="smollm2", error=crashed),
                       benchmark="intercode-bash", position=position)
    done = subprocess.run(["bash", str(SCRIPT), "intercode-bash", "gold"], capture_output=True, text=True,
                          env={**os.environ, "RECORDS": str(tmp_path), "EXECUTOR": "local", "WORKERS": "1"})
    assert done.returncode == 0, done.stderr
    assert "1 episodes run" in done.stdout
    with RunStore(run_dir, read_only=True) as store:
        redone = [episode for episode in store.results() if episode.task == "1-0"]
    assert len(redone) == 1 and redone[0].error is None and redone[0].success
