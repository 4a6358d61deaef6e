from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from statebound.agents.sql import AGENTS
from statebound.bench.evaluate import run_task
from statebound.bench.registry import load_benchmark
from statebound.benchmarks.intercode_sql import SqlOptions
from statebound.contract.benchmark import EpisodeLimits, Setup, Task
from statebound.envs.sql import SqlEnvironment, load_tasks
from statebound.envs.sql.sqlite_backend import SqliteBackend
from statebound.errors import DefinitionError
from statebound.llm.testing import ScriptedLLM

TASK = load_tasks()[0]  # poker_player: names ordered by final tables made
GOLD = f"Thought: answer\nAction: execute[{TASK.gold}]"
DESC = "Thought: look\nAction: execute[DESC people]"
BAD = "Thought: guess\nAction: execute[SELECT nope FROM people]"
SUBMIT = "Thought: done\nAction: submit"


def flow_of(name: str, **options: object):
    """The flow agent ``name`` runs on TASK (options as -O gives them)."""
    setup = Setup(options=SqlOptions(**options), task=Task(TASK.id, TASK.query), seed=0, max_turns=10)
    return AGENTS[name].build(setup).flow


def run(name: str, replies: list[str], backend: SqliteBackend, **options: object):
    env = SqlEnvironment(backend=backend)
    env.reset(TASK.id)
    llm = ScriptedLLM(replies)
    result = flow_of(name, **options).run_sync(TASK.query, llm=llm, deps=env)
    return result, env.score(), llm


@pytest.mark.parametrize("view", ["stateflow", "sf-agent"])
def test_full_machine_walks_every_state(view: str, sqlite_backend: SqliteBackend) -> None:
    result, score, _ = run(view, [DESC, BAD, DESC, GOLD, SUBMIT], sqlite_backend)
    assert result.trajectory == ("Init", "Observe", "Solve", "Error", "Solve", "Verify", "End")
    # one failed of five commands (Init's SHOW TABLES included) and the submit
    assert score.success and score.metrics["error_rate"] == pytest.approx(1 / 6)
    assert result.history[1].content.endswith("Action: execute[SHOW TABLES]\nObservation: [('people',), ('poker_player',)]")


def test_stateflow_keeps_instructions_and_sf_agent_does_not(sqlite_backend: SqliteBackend) -> None:
    flow_result, _, _ = run("stateflow", [DESC, GOLD, SUBMIT], sqlite_backend)
    agent_result, _, agent_llm = run("sf-agent", [DESC, GOLD, SUBMIT], sqlite_backend)
    assert sum(e.source == "instruction" for e in flow_result.history) == 3
    assert not any(e.source == "instruction" for e in agent_result.history)
    assert "## Instructions" in agent_llm.requests[-1].messages[0].content  # in the agent's system message


@pytest.mark.parametrize("view", ["stateflow", "sf-agent"])
def test_no_observe_goes_from_init_to_solve(view: str, sqlite_backend: SqliteBackend) -> None:
    result, score, _ = run(f"{view}-no-observe", [GOLD, SUBMIT], sqlite_backend)
    assert result.trajectory == ("Init", "Solve", "Verify", "End") and score.success


@pytest.mark.parametrize("view", ["stateflow", "sf-agent"])
def test_no_error_sends_errors_to_verify(view: str, sqlite_backend: SqliteBackend) -> None:
    result, score, _ = run(f"{view}-no-error", [DESC, BAD, GOLD, SUBMIT], sqlite_backend)
    assert result.trajectory == ("Init", "Observe", "Solve", "Verify", "Verify", "End") and score.success


@pytest.mark.parametrize("view", ["stateflow", "sf-agent"])
def test_no_verify_stays_in_solve_and_asks_to_submit(view: str, sqlite_backend: SqliteBackend) -> None:
    result, score, llm = run(f"{view}-no-verify", [DESC, GOLD, SUBMIT], sqlite_backend)
    assert result.trajectory == ("Init", "Observe", "Solve", "Solve", "End") and score.success
    assert any("Action: submit" in m.content for m in llm.requests[-1].messages)


def test_turn_limit_ends_the_machine(sqlite_backend: SqliteBackend) -> None:
    result, score, _ = run("stateflow", [DESC] * 20, sqlite_backend)
    assert result.exit_state == "End" and score.metrics["turns"] == 10 and not score.success


@pytest.mark.parametrize("name", ["react", "react-refined"])
def test_react_numbers_its_steps(name: str, sqlite_backend: SqliteBackend) -> None:
    replies = ["I list tables.\nAction 1: execute[SHOW TABLES]",
               f"I answer.\nAction 2: execute[{TASK.gold}]", "Done.\nAction 3: submit"]
    result, score, llm = run(name, replies, sqlite_backend)
    assert score.success and result.trajectory == ("ReAct", "ReAct", "ReAct", "End")
    prompt = llm.requests[-1].messages[-1].content
    assert prompt.startswith(f"Question: {TASK.query}") and prompt.endswith("Thought 3:")
    assert "Observation 1: [('people',), ('poker_player',)]" in prompt
    first_example = "Action 1: execute[SHOW TABLES]" if name == "react-refined" else "Action 1: execute[SELECT name, grade FROM high_schoolers]"
    assert first_example in llm.requests[0].messages[0].content


def test_plan_solve_runs_one_command_per_step_then_submits(sqlite_backend: SqliteBackend) -> None:
    plan = "Plan:\n1. Check the tables.\n2. Answer."
    replies = [plan, "```sql\nSHOW TABLES\n```", f"```sql\n{TASK.gold}\n```"]
    result, score, llm = run("plan-solve", replies, sqlite_backend)
    assert result.trajectory == ("Plan", "Execute", "Execute", "Submit", "End") and score.success
    assert llm.requests[-1].messages[-1].content.startswith("Observation: [('people',), ('poker_player',)]\nStep: Answer.")


def test_gold_and_replay_oracles(sqlite_backend: SqliteBackend, tmp_path: Path) -> None:
    _, score, _ = run("gold", [], sqlite_backend)
    assert score.success
    path = tmp_path / "replay.jsonl"
    path.write_text(json.dumps({"task": 0, "actions": ["execute[SHOW TABLES]", f"execute[{TASK.gold}]", "submit"]}) + "\n")
    _, score, _ = run("replay", [], sqlite_backend, replay=str(path))
    assert score.success and score.metrics["turns"] == 3


def test_bad_replay_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"task": 1, "actions": ["submit"]}\nnot json\n')
    with pytest.raises(DefinitionError, match="bad.jsonl:2"):
        AGENTS["replay"].check(SqlOptions(replay=str(path)))  # type: ignore[misc]
    with pytest.raises(DefinitionError, match="needs recorded actions"):
        AGENTS["replay"].check(SqlOptions())  # type: ignore[misc]


def test_every_agent_name_builds(tmp_path: Path) -> None:
    path = tmp_path / "replay.jsonl"
    path.write_text("")
    assert len(AGENTS) == 17
    for name in AGENTS:
        assert flow_of(name, replay=str(path)).name == name


def test_benchmark_runs_an_episode(sqlite_backend: SqliteBackend) -> None:
    bench = load_benchmark("intercode-sql", {"cache_dir": str(sqlite_backend.directory.parent.parent)})
    task = bench.benchmark.tasks()[0]
    assert task.meta == {"hardness": TASK.hardness, "db": "poker_player"}
    result = asyncio.run(run_task(bench, "stateflow", task.id, llm=ScriptedLLM([DESC, GOLD, SUBMIT]),
                                  limits=EpisodeLimits(max_turns=10)))
    assert result.success and result.exit_state == "End" and result.turns == 4
    assert result.prompt_tokens > 0 and {"state", "role", "content"} <= set(result.trajectory[0])
    with pytest.raises(DefinitionError, match=r"db='oracle': input should be 'sqlite' or 'mysql'"):
        load_benchmark("intercode-sql", {"db": "oracle"})
