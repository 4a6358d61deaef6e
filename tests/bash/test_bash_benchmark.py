"""The intercode-bash benchmark through its registry entry: oracles, agents and options."""

from __future__ import annotations

import asyncio
import json

import pytest
from bash_doubles import needs_sandbox

from statebound.bench.evaluate import run_task
from statebound.bench.registry import load_benchmark
from statebound.benchmarks.intercode_bash import BashOptions
from statebound.contract.benchmark import EpisodeLimits
from statebound.errors import DefinitionError
from statebound.exits import ExitReason
from statebound.llm.testing import ScriptedLLM


def test_registry_builds_the_benchmark():
    benchmark = load_benchmark("intercode-bash")
    assert benchmark.name == "intercode-bash"
    tasks = benchmark.benchmark.tasks()
    assert len(tasks) == 200 and tasks[0].id == "1-0" and tasks[0].meta == {"fs": 1}
    assert set(benchmark.agents) == {
        "stateflow",
        "sf-agent",
        "stateflow-output-end",
        "sf-agent-output-end",
        "stateflow-rethink",
        "sf-agent-rethink",
        "react",
        "plan-solve",
        "stateflow-scoped",
        "stateflow-scoped-random",
        "stateflow-scoped-compose",
        "stateflow-scoped-compose-random",
        "gold",
        "nothing",
        "replay",
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"bogus": "1"}, "intercode-bash has no option 'bogus'"),
        ({"observation_chars": "x"}, "integer"),
    ],
)
def test_bad_options_are_clear_errors(options, message):
    with pytest.raises(DefinitionError, match=message):
        load_benchmark("intercode-bash", options)


def test_replay_file_errors_name_the_file_and_line(tmp_path):
    check = load_benchmark("intercode-bash").agent("replay").check
    assert check is not None
    with pytest.raises(DefinitionError, match="cannot read the replay file"):
        check(BashOptions(replay="/nonexistent/actions.jsonl"))
    path = tmp_path / "bad.jsonl"
    path.write_text('{"task": "1-0", "actions": ["submit"]}\n{"task": "1-1"}\n')
    with pytest.raises(DefinitionError, match=r"bad.jsonl:2: .*actions: Field required"):
        check(BashOptions(replay=str(path)))


def _episode(benchmark, task_id, agent, llm=None, max_turns=10):
    return asyncio.run(run_task(benchmark, agent, task_id, llm=llm or ScriptedLLM([]),
                                limits=EpisodeLimits(max_turns=max_turns)))


@pytest.mark.integration
@needs_sandbox
def test_gold_and_replay_oracles(tmp_path):
    replay = tmp_path / "actions.jsonl"
    replay.write_text(
        json.dumps({"task": "3-59", "actions": ["execute[ls /workspace]", "submit"]}) + "\n"
    )
    benchmark = load_benchmark("intercode-bash", {"replay": str(replay)})
    gold = _episode(benchmark, "3-59", "gold")
    # the gold command and its submit: two turns (StateFlow's Table 1 counts the submit)
    assert (gold.reward, gold.success, gold.turns, gold.exit_reason) == (1.0, True, 2, ExitReason.FINAL)
    replayed = _episode(benchmark, "3-59", "replay")
    assert replayed.turns == 2 and not replayed.success
    assert replayed.meta["missing"] == 1 and replayed.meta["p1"] == 0.05
    assert [e["role"] for e in replayed.trajectory] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    crashed = _episode(benchmark, "1-0", "replay")
    assert crashed.exit_reason is ExitReason.CRASHED and "no line for task" in str(crashed.error)


@pytest.mark.integration
@needs_sandbox
def test_the_nothing_baseline_wins_exactly_where_doing_nothing_scores_one():
    benchmark = load_benchmark("intercode-bash")
    free = _episode(benchmark, "2-23", "nothing")  # its gold removes files that do not exist
    assert (free.success, free.turns, free.prompt_tokens) == (True, 2, 0) and "informative_success" not in free.meta
    missed = _episode(benchmark, "3-59", "nothing")  # its gold makes a link
    assert not missed.success and missed.meta["informative_success"] is False


@pytest.mark.integration
@needs_sandbox
def test_stateflow_episode_is_submitted_at_the_limit():
    replies = ["Thought: look\nAction: execute[nosuchtool]"] * 3
    result = _episode(
        load_benchmark("intercode-bash"), "4-0", "stateflow", ScriptedLLM(replies), max_turns=3
    )
    # three failed commands; the submit at the limit is no turn but counts in the error rate
    assert result.turns == 3 and result.error_rate == 0.75
    assert result.exit_reason == ExitReason.TURN_LIMIT and result.llm_calls == 3
    assert 0 < result.reward < 1 and set(result.meta) >= {"fs", "p1", "p2", "p3"}
