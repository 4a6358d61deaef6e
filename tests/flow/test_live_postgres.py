"""The PostgreSQL checkpointer on a real, private server (see postgres_server.py)."""

from __future__ import annotations

import dataclasses

import pytest
from live_helpers import Killed, counting_llm, kill_after, looping_flow
from typer.testing import CliRunner

from statebound.cli.app import app
from statebound.errors import CheckpointError
from statebound.flow import AskHuman, CallLLM, ExitReason, Flow, State, always, contains
from statebound.flow.live import PostgresCheckpointer, open_checkpointer
from statebound.llm.testing import ScriptedLLM

pytestmark = pytest.mark.integration


def test_killed_runs_resume_without_repeating_a_call(postgres_url):
    whole_log: list[str] = []
    with kill_after(PostgresCheckpointer(postgres_url), None) as store:
        whole = looping_flow().run_sync("solve", llm=counting_llm(whole_log), checkpointer=store, thread="whole")
        commits = store.commits  # type: ignore[attr-defined]
    for limit in (1, commits // 2, commits - 1):
        log: list[str] = []
        with pytest.raises(Killed):
            looping_flow().run_sync("solve", llm=counting_llm(log), thread=f"k{limit}",
                                    checkpointer=kill_after(PostgresCheckpointer(postgres_url), limit))
        with open_checkpointer(postgres_url) as store:  # another process, another connection
            result = looping_flow().run_sync("solve", llm=counting_llm(log), checkpointer=store, thread=f"k{limit}")
        assert log == whole_log, limit
        assert (result.history, result.trajectory, result.exit_reason) == (whole.history, whole.trajectory,
                                                                          ExitReason.FINAL)


def test_pause_fork_and_listing(postgres_url):
    flow = Flow(name="approve", initial="Draft", states=[
        State("Draft", outputs=[CallLLM()], transitions=[(always(), "Approve")]),
        State("Approve", outputs=[AskHuman("Send it?")],
              transitions=[(contains("yes", source="human"), "Send"), (always(), "Draft")]),
        State("Send", final=True),
    ])
    with PostgresCheckpointer(postgres_url) as store:
        assert flow.run_sync("write", llm=ScriptedLLM(["draft"]), checkpointer=store, thread="t").pending == "Send it?"
    with PostgresCheckpointer(postgres_url) as store:
        reply_at = next(c.seq for c in store.checkpoints("t") if any(e.source == "llm" for e in c.added))
        store.fork("t", at=reply_at, thread="t2", edit=(1, "better draft"))
        sent = flow.resume_sync("t", checkpointer=store, input="yes")
        assert flow.resume_sync("t2", checkpointer=store).pending == "Send it?"  # it runs on to the pause
        forked = flow.resume_sync("t2", checkpointer=store, input="yes")
        listing = {t.thread: (t.status, t.state, t.parent) for t in store.threads()}
    assert sent.exit_reason is ExitReason.FINAL and forked.history[1].content == "better draft"
    assert listing == {"t": ("final", "Send", None), "t2": ("final", "Send", "t")}
    listed = CliRunner().invoke(app, ["threads", postgres_url, "t2"])
    assert listed.exit_code == 0 and "llm: 'draft'" in listed.output and "fork" in listed.output  # read through t


def test_two_writers_of_one_thread_cannot_both_write(postgres_url):
    with PostgresCheckpointer(postgres_url) as first, PostgresCheckpointer(postgres_url) as second:
        with pytest.raises(Killed):
            looping_flow().run_sync("solve", llm=counting_llm([]), checkpointer=kill_after(first, 3), thread="t")
        newest = second.lineage("t")[-1]  # both machines read the thread, then both write next
        first.append(dataclasses.replace(newest, seq=newest.seq + 1))
        with pytest.raises(CheckpointError, match=f"has a checkpoint {newest.seq + 1} already: another run"):
            second.append(dataclasses.replace(newest, seq=newest.seq + 1))


def test_a_missing_server_is_one_line_naming_the_url_without_its_password(postgres_server):
    port = int(postgres_server.rsplit(":", 1)[1].split("/")[0]) + 1  # nothing listens there... most likely
    url = f"postgresql://alice:s3cret@127.0.0.1:{port}/flows"
    with pytest.raises(CheckpointError) as missing:
        PostgresCheckpointer(url, connect_timeout=2)
    message = str(missing.value)
    assert message.startswith(f"cannot connect to PostgreSQL at postgresql://alice@127.0.0.1:{port}/flows: ")
    assert "s3cret" not in message and "\n" not in message


def test_durability_maps_to_synchronous_commit(postgres_url):
    with PostgresCheckpointer(postgres_url, durability="disk") as store:
        assert store._db.execute("SHOW synchronous_commit").fetchone()[0] == "on"
    with PostgresCheckpointer(postgres_url) as store:
        assert store._db.execute("SHOW synchronous_commit").fetchone()[0] == "off"
