"""Live flows on the SQLite checkpointer: resume at the exact point, pauses for a person,
interrupted tools that must not run twice, forks, and damaged or mismatched stores."""

from __future__ import annotations

import sqlite3

import pytest
from live_helpers import Killed, KilledAfter, counting_llm, kill_after, looping_flow

from statebound.errors import CheckpointError
from statebound.flow import (
    AskHuman,
    CallLLM,
    CallTool,
    ExitReason,
    Flow,
    Instruction,
    State,
    ToolResult,
    always,
    contains,
)
from statebound.flow.live import SQLiteCheckpointer
from statebound.llm.base import Request
from statebound.llm.testing import FunctionLLM, ScriptedLLM


def _uninterrupted(tmp_path):
    log: list[str] = []
    with kill_after(SQLiteCheckpointer(tmp_path / "whole.db"), None) as store:
        result = looping_flow().run_sync("solve", llm=counting_llm(log), checkpointer=store, thread="t")
        commits = store.commits  # type: ignore[attr-defined]
    return result, log, commits


def test_a_stored_run_returns_what_an_unstored_one_does(tmp_path):
    plain = looping_flow().run_sync("solve", llm=counting_llm([]))
    stored, _, _ = _uninterrupted(tmp_path)
    assert stored.exit_reason is ExitReason.FINAL
    assert (stored.history, stored.trajectory, stored.usage, stored.calls, stored.turns) == (
        plain.history, plain.trajectory, plain.usage, plain.calls, plain.turns)


def test_killed_after_any_commit_the_resumed_run_repeats_no_call(tmp_path):
    whole, whole_log, commits = _uninterrupted(tmp_path)
    assert commits > 5
    for limit in range(1, commits):
        path = tmp_path / f"killed-{limit}.db"
        log: list[str] = []
        with pytest.raises(Killed):
            looping_flow().run_sync("solve", llm=counting_llm(log), checkpointer=KilledAfter(path, limit), thread="t")
        with SQLiteCheckpointer(path) as store:  # a new process opens the store
            result = looping_flow().run_sync("solve", llm=counting_llm(log), checkpointer=store, thread="t")
        assert log == whole_log, f"killed after checkpoint {limit}: calls {log} != {whole_log}"
        assert (result.history, result.trajectory, result.usage, result.turns) == (
            whole.history, whole.trajectory, whole.usage, whole.turns), limit
        assert result.exit_reason is ExitReason.FINAL


def test_killed_before_the_first_commit_the_thread_starts_again(tmp_path):
    def dies(request: Request) -> str:
        raise Killed

    whole, whole_log, _ = _uninterrupted(tmp_path)
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        with pytest.raises(Killed):
            looping_flow().run_sync("solve", llm=FunctionLLM(respond=dies), checkpointer=store, thread="t")
        assert store.threads()[0].checkpoints == 0  # the start and the first instruction were held back
        with pytest.raises(CheckpointError, match="waits for no input"):
            looping_flow().resume_sync("t", checkpointer=store, input="hello")
        log: list[str] = []
        result = looping_flow().resume_sync("t", checkpointer=store, llm=counting_llm(log))
    assert log == whole_log and result.history == whole.history


def test_a_finished_thread_returns_its_result_without_running(tmp_path):
    whole, _, _ = _uninterrupted(tmp_path)
    log: list[str] = []
    with SQLiteCheckpointer(tmp_path / "whole.db") as store:
        again = looping_flow().resume_sync("t", checkpointer=store, llm=counting_llm(log))
    assert log == []
    assert (again.history, again.trajectory, again.usage, again.exit_reason) == (
        whole.history, whole.trajectory, whole.usage, whole.exit_reason)


def test_a_run_that_failed_resumes_from_its_last_checkpoint(tmp_path):
    attempts = []

    def flaky(ctx) -> str:
        attempts.append(ctx.turn)
        if len(attempts) == 1:
            raise RuntimeError("network down")
        return "Observation: fine"

    flow = Flow(name="flaky", initial="Work", states=[
        State("Work", outputs=[CallLLM(), CallTool(flaky, blocking=False)], transitions=[(always(), "End")]),
        State("End", final=True),
    ])
    llm = ScriptedLLM(["only once"])
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        failed = flow.run_sync("task", llm=llm, checkpointer=store, thread="t")
        assert failed.exit_reason is ExitReason.ERROR and "network down" in str(failed.error)
        assert store.threads()[0].status == "error"
        done = flow.run_sync("task", llm=llm, checkpointer=store, thread="t")
    assert done.exit_reason is ExitReason.FINAL and attempts == [0, 0]
    assert [e.content for e in done.history] == ["task", "only once", "Observation: fine"]
    assert len(llm.requests) == 1


def _approval_flow() -> Flow:
    return Flow(name="approve", initial="Draft", states=[
        State("Draft", outputs=[CallLLM()], transitions=[(always(), "Approve")]),
        State("Approve", outputs=[AskHuman(lambda ctx: f"Send {ctx.last_of('llm').content!r}?", name="approval")],
              transitions=[(contains("yes", source="human", ignore_case=True), "Send"), (always(), "Draft")]),
        State("Send", final=True),
    ], max_turns=6)


def test_a_pause_survives_a_restart_and_the_reply_picks_the_branch(tmp_path):
    path = tmp_path / "s.db"
    with SQLiteCheckpointer(path) as store:
        paused = _approval_flow().run_sync("write", llm=ScriptedLLM(["draft 1"]), checkpointer=store, thread="t")
    assert paused.exit_reason is ExitReason.PAUSED and paused.pending == "Send 'draft 1'?"
    with SQLiteCheckpointer(path) as store:  # another process
        asked_again = _approval_flow().resume_sync("t", checkpointer=store)
        assert asked_again.pending == "Send 'draft 1'?"
        llm = ScriptedLLM(["draft 2"])
        second = _approval_flow().resume_sync("t", checkpointer=store, input="No, shorter", llm=llm)
        assert second.exit_reason is ExitReason.PAUSED and second.pending == "Send 'draft 2'?"
        sent = _approval_flow().resume_sync("t", checkpointer=store, input="Yes")
        with pytest.raises(CheckpointError, match="waits for no input"):
            _approval_flow().resume_sync("t", checkpointer=store, input="yes again")
    assert sent.trajectory == ("Draft", "Approve", "Draft", "Approve", "Send")
    human = [e for e in sent.history if e.source == "human"]
    assert [(e.role, e.content, e.name) for e in human] == [("user", "No, shorter", "approval"), ("user", "Yes", "approval")]
    # the model reads the person's reply as a user message
    assert llm.requests[0].messages[-1].content == "No, shorter"


def test_without_a_checkpointer_a_pause_ends_the_run(tmp_path):
    result = _approval_flow().run_sync("write", llm=ScriptedLLM(["draft"]))
    assert result.exit_reason is ExitReason.PAUSED and result.pending == "Send 'draft'?" and not result.ok


def _payment_flow(charges: list[str], started: list[str] | None = None) -> Flow:
    def charge(ctx) -> str:
        if started is not None:
            started.append("charge")
            raise Killed  # the process dies while the tool runs
        charges.append("charge")
        return "charged"

    return Flow(name="pay", initial="Pay", states=[
        State("Pay", outputs=[Instruction("Pay."), CallTool(charge, blocking=False, repeatable=False)],
              transitions=[(always(), "End")]),
        State("End", final=True),
    ])


@pytest.mark.parametrize(("answer", "charged", "last"), [("repeat", ["charge"], "charged"),
                                                         ("skip", [], "charge was interrupted and not run again")])
def test_an_interrupted_tool_that_must_not_repeat_asks_first(tmp_path, answer, charged, last):
    path = tmp_path / "s.db"
    with SQLiteCheckpointer(path) as store, pytest.raises(Killed):
        _payment_flow([], started=[]).run_sync("pay 5", checkpointer=store, thread="t")
    charges: list[str] = []
    with SQLiteCheckpointer(path) as store:
        asked = _payment_flow(charges).resume_sync("t", checkpointer=store)
        assert asked.exit_reason is ExitReason.PAUSED and "not safe to run twice" in asked.pending
        assert charges == []
        with pytest.raises(CheckpointError, match="answer 'repeat' or 'skip'"):
            _payment_flow(charges).resume_sync("t", checkpointer=store, input="maybe")
        done = _payment_flow(charges).resume_sync("t", checkpointer=store, input=answer)
    assert done.exit_reason is ExitReason.FINAL and charges == charged
    assert done.history[-1].content == last and done.history[-1].ok is (answer == "repeat")


def test_fork_from_a_checkpoint_with_an_edited_reply(tmp_path):
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        _approval_flow().run_sync("write", llm=ScriptedLLM(["draft 1"]), checkpointer=store, thread="t")
        listed = store.checkpoints("t")
        after_reply = next(c for c in listed if any(e.source == "llm" for e in c.added))
        store.fork("t", at=after_reply.seq, thread="edited", edit=(-1, "a better draft"))
        forked = _approval_flow().resume_sync("edited", checkpointer=store)
        assert forked.pending == "Send 'a better draft'?"
        sent = _approval_flow().resume_sync("edited", checkpointer=store, input="yes")
        original = _approval_flow().resume_sync("t", checkpointer=store)
        lineage = store.checkpoints("edited")
        threads = {t.thread: t for t in store.threads()}
        with pytest.raises(CheckpointError, match="cannot edit history entry 9"):
            store.fork("t", at=after_reply.seq, thread="bad", edit=(9, "x"))
        with pytest.raises(CheckpointError, match="has no checkpoint 99"):
            store.fork("t", at=99, thread="bad")
        with pytest.raises(CheckpointError, match="already"):
            store.fork("t", at=0, thread="edited")
    assert sent.exit_reason is ExitReason.FINAL
    assert [e.content for e in sent.history] == ["write", "a better draft", "yes"]
    assert original.pending == "Send 'draft 1'?"  # the source thread is untouched
    assert [c.thread for c in lineage[: after_reply.seq + 1]] == ["t"] * (after_reply.seq + 1)
    assert lineage[after_reply.seq + 1].kind == "fork"
    assert threads["edited"].parent == "t" and threads["edited"].status == "final"
    assert threads["t"].status == "paused" and threads["t"].state == "Approve"


def test_checkpoints_are_deltas_of_constant_size(tmp_path):
    """The 10th and the 90th turn write as many bytes, but for the digits of growing counters
    (the prompt's tokens, the history index): no checkpoint repeats the history."""
    states = [State("Talk", outputs=[CallLLM()], transitions=[(contains("stop"), "End"), (always(), "Talk")]),
              State("End", final=True)]
    flow = Flow(name="long", initial="Talk", states=states, max_turns=200)
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        flow.run_sync("go", llm=ScriptedLLM(["same reply"] * 99 + ["stop"]), checkpointer=store, thread="t")
        sizes = {(row[0], row[1]): row[2] for row in store.db.execute(
            "SELECT turn, kind, length(body) FROM checkpoints WHERE thread = 't'")}
    for kind in ("output", "transition"):
        assert 0 <= sizes[(90, kind)] - sizes[(10, kind)] <= 6, kind  # the history grew by 80 replies


def test_a_resumed_thread_must_be_run_by_the_same_flow(tmp_path):
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        with pytest.raises(Killed):
            looping_flow().run_sync("solve", llm=counting_llm([]), checkpointer=KilledAfter(tmp_path / "s.db", 3), thread="t")
        other = Flow(name="loop", initial="Think", states=[
            State("Think", outputs=[CallLLM()], transitions=[(always(), "Review")]),
            State("Review", outputs=[CallLLM()], transitions=[(always(), "End")]),
            State("End", final=True),
        ])
        with pytest.raises(CheckpointError) as refused:
            other.resume_sync("t", checkpointer=store, llm=ScriptedLLM([]))
        with pytest.raises(CheckpointError, match="started with another task"):
            looping_flow().run_sync("another task", llm=counting_llm([]), checkpointer=store, thread="t")
        with pytest.raises(CheckpointError, match="no thread 'nope'"):
            looping_flow().resume_sync("nope", checkpointer=store)
    message = str(refused.value)
    assert "states added: Review" in message and "states removed: Check" in message
    assert "state 'Think' outputs ['Instruction', 'LLM'] -> ['LLM']" in message


def test_a_larger_turn_limit_may_continue_a_thread(tmp_path):
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        log: list[str] = []
        short = looping_flow(max_turns=3).run_sync("solve", llm=counting_llm(log), checkpointer=store, thread="t")
        assert short.exit_reason is ExitReason.TURN_LIMIT
        # a finished thread stays finished: its result comes back
        again = looping_flow(max_turns=30).run_sync("solve", llm=counting_llm(log), checkpointer=store, thread="t")
    assert again.exit_reason is ExitReason.TURN_LIMIT and again.history == short.history


def test_data_that_is_not_json_is_refused_naming_the_tool(tmp_path):
    flow = Flow(name="d", initial="T", states=[
        State("T", outputs=[CallTool(lambda ctx: ToolResult("rows", data={"rows": [(1, {2})]}), name="query",
                                     blocking=False)], transitions=[(always(), "End")]),
        State("End", final=True),
    ])
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        result = flow.run_sync("t", checkpointer=store, thread="t")
    assert result.exit_reason is ExitReason.ERROR
    assert "tool 'query' in state 'T'" in str(result.error) and "data['rows'][0][1] is a set" in str(result.error)


def _damage(path, sql: str) -> bytes:
    db = sqlite3.connect(path)
    db.execute(sql)
    db.commit()
    db.close()
    return path.read_bytes()


def test_a_damaged_checkpoint_is_named_and_nothing_is_written(tmp_path):
    path = tmp_path / "s.db"
    with pytest.raises(Killed):
        looping_flow().run_sync("solve", llm=counting_llm([]), checkpointer=KilledAfter(path, 5), thread="t")
    before = _damage(path, "UPDATE checkpoints SET body = x'7b2265223a' WHERE seq = 2")
    with SQLiteCheckpointer(path) as store, pytest.raises(CheckpointError) as damaged:
        looping_flow().resume_sync("t", checkpointer=store, llm=counting_llm([]))
    assert "thread 't', checkpoint 2 cannot be read" in str(damaged.value)
    assert path.read_bytes() == before
    _damage(path, "DELETE FROM checkpoints WHERE seq = 3")
    with SQLiteCheckpointer(path) as store, pytest.raises(CheckpointError, match="checkpoint 3 cannot be read: it is missing"):
        store.checkpoints("t")


def test_a_truncated_store_is_reported_and_left_alone(tmp_path):
    path = tmp_path / "s.db"
    with SQLiteCheckpointer(path) as store:
        looping_flow().run_sync("solve", llm=counting_llm([]), checkpointer=store, thread="t")
    path.write_bytes(path.read_bytes()[:1500])
    (tmp_path / "s.db-wal").unlink(missing_ok=True)
    before = path.read_bytes()
    with pytest.raises(CheckpointError, match=f"checkpoint store {path}.* cannot be read"):
        with SQLiteCheckpointer(path) as store:
            looping_flow().resume_sync("t", checkpointer=store, llm=counting_llm([]))
    assert path.read_bytes() == before
    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    with pytest.raises(CheckpointError, match="not a checkpoint store"):
        SQLiteCheckpointer(text)
    assert text.read_text() == "not a database"


def test_checkpointer_and_thread_come_together():
    from statebound.errors import DefinitionError

    with pytest.raises(DefinitionError, match="both checkpointer= and thread="):
        looping_flow().run_sync("x", thread="t")


def test_durability_is_checked(tmp_path):
    with pytest.raises(CheckpointError, match="durability must be"):
        SQLiteCheckpointer(tmp_path / "s.db", durability="always")  # type: ignore[arg-type]
    for durability, synchronous in (("process", 0), ("system", 1), ("disk", 2)):  # OFF, NORMAL, FULL
        with SQLiteCheckpointer(tmp_path / "s.db", durability=durability) as store:
            assert store.db.execute("PRAGMA synchronous").fetchone()[0] == synchronous
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        assert store.durability == "system"
