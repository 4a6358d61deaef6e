"""A run stopped by a visit or turn limit ends in the last state it entered: the state the limit
kept it out of is in no trajectory, exit state, visit count or read-back thread; the BudgetHit
event names it, and `statebound show` says so."""

from __future__ import annotations

import asyncio
import io

import pytest

from statebound.contract.converters import trace_of_flow
from statebound.contract.result import EpisodeResult
from statebound.flow import CallLLM, ExitReason, Flow, State, always, contains
from statebound.flow.events import refused_by_limit
from statebound.flow.live import SQLiteCheckpointer
from statebound.llm.testing import ScriptedLLM
from statebound.report.show import render_episode

# A -> B -> A -> B ... until a reply says submit
LIMITS = [
    # limits, exit reason, trajectory (exit state last), the refused state and what BudgetHit says
    ({"visit_limits": {"B": 1}}, ExitReason.VISIT_LIMIT, ("A", "B", "A"), ("visits", "B", 2, 1)),
    ({"max_turns": 2}, ExitReason.TURN_LIMIT, ("A", "B"), ("turns", "A", 2, 2)),
]


def _flow(**limits: object) -> Flow:
    return Flow(name="ab", initial="A", states=[
        State("A", outputs=[CallLLM()], transitions=[(always(), "B")]),
        State("B", outputs=[CallLLM()], transitions=[(contains("submit"), "End"), (always(), "A")]),
        State("End", final=True),
    ], **limits)  # type: ignore[arg-type]


@pytest.mark.parametrize(("limits", "reason", "trajectory", "hit"), LIMITS)
async def test_a_limit_ends_the_run_in_the_last_state_entered(limits, reason, trajectory, hit) -> None:
    llm = ScriptedLLM(["no"] * 10)
    result = await _flow(**limits).run("t", llm=llm)
    assert (result.exit_reason, result.trajectory, result.exit_state) == (reason, trajectory, trajectory[-1])
    assert len(llm.requests) == len(trajectory)  # every state entered ran, the refused one did not
    assert [e.state for e in result.events if e.kind == "state_entered"] == list(trajectory)
    (budget,) = [e for e in result.events if e.kind == "budget_hit"]
    assert (budget.limit, budget.state, budget.used, budget.allowed) == hit
    refused = refused_by_limit(e.to_dict() for e in result.events)
    assert refused.startswith(f"{hit[1]} not entered: ") and refused.endswith(f" is {hit[3]}")


async def test_a_final_state_is_entered_at_the_turn_limit() -> None:
    result = await _flow(max_turns=2).run("t", llm=ScriptedLLM(["no", "submit"]))
    assert (result.exit_reason, result.trajectory, result.exit_state) == (ExitReason.FINAL, ("A", "B", "End"), "End")
    assert refused_by_limit(e.to_dict() for e in result.events) == ""


@pytest.mark.parametrize(("limits", "reason", "trajectory", "hit"), LIMITS)
def test_a_stored_thread_reads_back_as_it_ended(tmp_path, limits, reason, trajectory, hit) -> None:
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        ran = _flow(**limits).run_sync("t", llm=ScriptedLLM(["no"] * 10), checkpointer=store, thread="t")
        again = _flow(**limits).resume_sync("t", checkpointer=store, llm=ScriptedLLM([]))
    assert (again.exit_reason, again.trajectory, again.exit_state) == (reason, trajectory, trajectory[-1])
    assert (again.history, again.turns) == (ran.history, ran.turns)


@pytest.mark.parametrize(("limits", "reason", "trajectory", "hit"), LIMITS)
def test_show_names_the_state_a_limit_refused(limits, reason, trajectory, hit) -> None:
    from rich.console import Console

    trace = trace_of_flow(asyncio.run(_flow(**limits).run("t", llm=ScriptedLLM(["no"] * 10))))
    assert trace.exit_state == trajectory[-1]
    episode = EpisodeResult(task="t1", agent="ab", model="scripted", turns=len(trajectory), exit_state=trace.exit_state,
                            exit_reason=trace.exit, trajectory=trace.to_dicts(), events=[dict(e) for e in trace.events])
    out = io.StringIO()
    render_episode(episode, console=Console(file=out, width=200))
    heading = out.getvalue().splitlines()[0]
    limit = "its visit limit is 1" if hit[0] == "visits" else "the turn limit is 2"
    assert f"exit {trajectory[-1]} ({reason.value}; {hit[1]} not entered: {limit})" in heading


def test_statebound_run_says_which_state_a_limit_refused(tmp_path) -> None:
    from typer.testing import CliRunner

    from statebound.cli.app import app

    path = tmp_path / "ab.py"
    path.write_text(
        "from statebound.flow import CallLLM, Flow, State, always, contains\n"
        "flow = Flow(name='ab', initial='A', visit_limits={'B': 1}, states=[\n"
        "    State('A', outputs=[CallLLM()], transitions=[(always(), 'B')]),\n"
        "    State('B', outputs=[CallLLM()], transitions=[(contains('submit'), 'End'), (always(), 'A')]),\n"
        "    State('End', final=True)])\n"
    )
    result = CliRunner().invoke(app, ["run", f"{path}:flow", "--task", "t", "-m", "scripted",
                                      "--model-option", 'replies=["no", "no", "no"]'], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert "limit reached: B not entered: its visit limit is 1" in result.output
    assert "exit: A (visit_limit) after 3 turns" in result.output
