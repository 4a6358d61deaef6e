"""StateFlow's SQL machine, transition by transition, on scripted replies and a real SQLite database
(the authors' ``InterCode/experiments/flow_sql.py`` where the paper is silent)."""

from __future__ import annotations

import asyncio

import pytest

from statebound.agents.sql import AGENTS
from statebound.benchmarks.intercode_sql import SqlOptions
from statebound.contract.benchmark import Setup, Task
from statebound.envs.sql import SqlEnvironment, load_tasks
from statebound.envs.sql.sqlite_backend import SqliteBackend
from statebound.llm.testing import ScriptedLLM

TASK = load_tasks()[0]  # poker_player
SELECT = f"Thought: answer\nAction: execute[{TASK.gold}]"
SELECT_LOWER = "Thought: answer\nAction: execute[select Name from people]"
DESC = "Thought: look\nAction: execute[DESC people]"
SHOW = "Thought: tables\nAction: execute[SHOW TABLES]"
BAD = "Thought: guess\nAction: execute[SELECT nope FROM people]"
UNPARSABLE = "Thought: hmm\nAction: I am not sure"
SUBMIT = "Thought: done\nAction: submit"


def _run(view: str, replies: list[str], backend: SqliteBackend):
    setup = Setup(options=SqlOptions(), task=Task(TASK.id, TASK.query), seed=0, max_turns=10)
    agent = AGENTS[view].build(setup)
    env = SqlEnvironment(backend=backend)
    env.reset(TASK.id)
    llm = ScriptedLLM(replies)
    trace = asyncio.run(agent(TASK.query, llm=llm, env=env))
    states = [entry.state for entry in trace.entries if entry.role == "tool"]
    return states, trace, llm, env


# (replies after Init, the states they are written in): each reply's state is where the
# previous reply's outcome sent the machine, so every row checks one transition per reply.
WALKS = {
    "observe-error": ([BAD, DESC, SUBMIT], ["Observe", "Error", "Solve"]),
    "observe-select-goes-to-solve": ([SELECT, SUBMIT], ["Observe", "Solve"]),
    "solve": ([DESC, DESC, SHOW, SELECT_LOWER, SELECT, SUBMIT],
              ["Observe", "Solve", "Solve", "Solve", "Solve", "Verify"]),
    "solve-errors": ([DESC, BAD, UNPARSABLE, SUBMIT], ["Observe", "Solve", "Error", "Error"]),
    "verify": ([DESC, SELECT, SELECT, SHOW, SELECT, DESC, SELECT, BAD, SUBMIT],
               ["Observe", "Solve", "Verify", "Verify", "Solve", "Verify", "Solve", "Verify", "Error"]),
    "error": ([DESC, BAD, SHOW, BAD, DESC, BAD, SELECT, SUBMIT],
              ["Observe", "Solve", "Error", "Solve", "Error", "Solve", "Error", "Verify"]),
}


@pytest.mark.parametrize("view", ["stateflow", "sf-agent"])
@pytest.mark.parametrize("walk", WALKS, ids=list(WALKS))
def test_each_outcome_goes_where_the_authors_machine_sends_it(view: str, walk: str, sqlite_backend: SqliteBackend) -> None:
    replies, states = WALKS[walk]
    seen, trace, _, env = _run(view, replies, sqlite_backend)
    assert seen == ["Init", *states]  # the state each action was sent from
    assert trace.exit_state == "End" and env.score().metrics["turns"] == 1 + len(replies)


def test_the_model_sees_the_question_and_inits_show_tables(sqlite_backend: SqliteBackend) -> None:
    _, _, llm, _ = _run("sf-agent", [DESC, SUBMIT], sqlite_backend)
    first_user = next(m.content for m in llm.requests[0].messages if m.role == "user")
    assert first_user == (
        f"Question: {TASK.query}\n\nThought: I should first find out what tables are available in this MySQL "
        "database that can help me answer this question.\nAction: execute[SHOW TABLES]\n"
        "Observation: [('people',), ('poker_player',)]"
    )


@pytest.mark.parametrize("ablation,replies,states", [
    ("no-observe", [SHOW, SELECT, SUBMIT], ["Solve", "Solve", "Verify"]),
    ("no-error", [BAD, DESC, BAD, SELECT, SUBMIT], ["Observe", "Verify", "Solve", "Verify", "Verify"]),
    ("no-verify", [DESC, SELECT, BAD, SHOW, SUBMIT], ["Observe", "Solve", "Solve", "Error", "Solve"]),
])
def test_ablations_reroute_the_removed_state(ablation: str, replies: list[str], states: list[str],
                                             sqlite_backend: SqliteBackend) -> None:
    seen, trace, _, _ = _run(f"stateflow-{ablation}", replies, sqlite_backend)
    assert seen == ["Init", *states] and trace.exit_state == "End"
