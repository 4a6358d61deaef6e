"""``statebound report --informative`` on a store made before episodes were marked informative:
the golds run again on the real SQLite databases, the report gets the column, the store stays."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.cli.app import app
from statebound.contract.result import EpisodeResult
from statebound.report.informative import informative_tasks

# 404 counts the rows of an empty table (a count of 0: doing nothing solves it); 3 and 5 do not
OUTCOMES = {("A", "404"): True, ("A", "3"): True, ("A", "5"): False,
            ("B", "404"): True, ("B", "3"): False, ("B", "5"): False}


def _old_store(directory: Path) -> None:
    config = RunConfig(benchmark="intercode-sql", agents=("A", "B"), models=(ModelSpec("m"),),
                       task_ids=("404", "3", "5"))
    with RunStore(directory) as store:
        store.start(config, resume=False)
        for position, ((agent, task), success) in enumerate(OUTCOMES.items()):
            store.save(EpisodeResult(task=task, agent=agent, model="m", success=success, turns=1,
                                     reward=float(success)), benchmark="intercode-sql", position=position)


def test_the_gold_runs_tell_which_tasks_are_informative() -> None:
    assert informative_tasks("intercode-sql", ["404", "3", "5", "3"]) == {"3", "5"}


def test_report_works_out_the_informative_split_and_leaves_the_store_alone(tmp_path: Path) -> None:
    run, out = tmp_path / "old", tmp_path / "report"
    _old_store(run)
    plain = CliRunner().invoke(app, ["report", str(run), "--out", str(out), "--no-plots"])
    assert plain.exit_code == 0, plain.output
    assert "--informative works it out" in plain.output  # the blank column is explained

    result = CliRunner().invoke(app, ["report", str(run), "--out", str(out), "--no-plots", "--informative"])
    assert result.exit_code == 0, result.output
    document = json.loads((out / "report.json").read_text())
    split = {row["group"]["agent"]: row["extra"]["informative_success"] for row in document["main"]}
    assert split == {"A": 50.0, "B": 0.0}  # task 404 left out: A solves 3 of {3, 5}, B neither
    (comparison,) = document["comparisons"]
    assert comparison["informative_paired"] == 2 and comparison["informative"]["only_a"] == 1
    assert "inf. McNemar p" in (out / "report.md").read_text()
    with RunStore(run, read_only=True) as store:
        assert all("informative_success" not in r.meta for r in store.results())
