"""Actions an InterCode environment could not read ran nothing, so no error rate counts them: the SQL
and Bash benchmarks show them per episode in the Invalid/ep column."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from statebound.bench.evaluate import run_task
from statebound.bench.registry import load_benchmark
from statebound.contract.benchmark import EpisodeLimits
from statebound.contract.result import EpisodeResult
from statebound.llm.testing import ScriptedLLM
from statebound.report.metrics import summarize
from statebound.report.sections import sections
from statebound.report.tables import Report, to_markdown


def _episode(benchmark: str, agent: str, task: str, *, llm=None, options=None, max_turns=3) -> EpisodeResult:
    loaded = load_benchmark(benchmark, options or {})
    return asyncio.run(run_task(loaded, agent, task, llm=llm or ScriptedLLM([]), limits=EpisodeLimits(max_turns=max_turns)))


def _report(results: list[EpisodeResult], columns) -> Report:
    return Report(("agent",), summarize(results, by=("agent",), columns=columns), columns=tuple(columns))


def _markdown_row(results: list[EpisodeResult], columns) -> dict[str, str]:
    report = _report(results, columns)
    header, row = (line.strip("| ").split(" | ") for line in to_markdown(report).splitlines()[2:5] if "---" not in line)
    return dict(zip(header, row))


def test_sql_replies_that_hold_no_action_are_counted_and_shown():
    from statebound.benchmarks.intercode_sql import InterCodeSql

    replies = ScriptedLLM(["I am not sure what to do."] * 3)  # no execute[...], no submit
    result = _episode("intercode-sql", "react", "0", llm=replies)
    assert (result.turns, result.error_rate, result.meta["invalid_actions"]) == (3, 0.0, 3)
    row = _markdown_row([result], InterCodeSql.report_columns)
    assert (row["Error %"], row["Invalid/ep"]) == ("0.00", "3.00")  # Error % alone would say all is well
    (results,) = [s for s in sections(_report([result], InterCodeSql.report_columns)) if s.title == "Results"]
    invalid = results.columns[results.header.index("Invalid/ep")]
    assert invalid.essential and "nothing ran" in invalid.note  # in the first table that fits, explained


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (apt-get install bubblewrap)")
def test_bash_actions_that_are_no_command_are_counted(tmp_path):
    from statebound.benchmarks.intercode_bash import InterCodeBash

    replay = tmp_path / "actions.jsonl"
    replay.write_text(json.dumps({"task": "3-59", "actions": ["list the files", "execute[ls /workspace]", "submit"]}))
    result = _episode("intercode-bash", "replay", "3-59", options={"replay": str(replay)}, max_turns=10)
    assert (result.turns, result.meta["invalid_actions"]) == (3, 1)
    assert _markdown_row([result], InterCodeBash.report_columns)["Invalid/ep"] == "1.00"
