"""scripts/records.sh names agents and options the benchmarks really have."""

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
    assert set(agents) <= set(load_benchmark(benchmark).agents())
    assert not any(agent in ("gold", "replay", "walkthrough") for agent in agents)  # records are of models


def test_sql_record_uses_the_stratified_sample_and_the_paper_turn_limit():
    _, options = _listing("intercode-sql")
    assert options == ["--stratified", "100", "-O", "format=grammar", "--max-turns", "10"]


def test_an_unknown_benchmark_is_refused_with_the_choices():
    done = subprocess.run(["bash", str(SCRIPT), "nope"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "unknown benchmark 'nope'" in done.stderr and "intercode-sql" in done.stderr
