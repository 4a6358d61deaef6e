"""One writer per thread, on SQLite and PostgreSQL: two resumes at once (one runs, the other is
refused naming the holder), a holder killed with kill -9 (its lease is taken over), a commit
that fails (a full disk gives its checkpoint numbers back) and a run that lost its thread to
another writer (it writes nothing more into it)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable

import pytest
from live_helpers import counting_llm, looping_flow

from statebound.errors import CheckpointError, ThreadTaken
from statebound.flow import ExitReason
from statebound.flow.live import Checkpointer, open_checkpointer
from statebound.flow.live.records import StoredCheckpoint
from statebound.llm.base import Request
from statebound.llm.testing import FunctionLLM


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def where(request: pytest.FixtureRequest, tmp_path) -> str:
    """Where a store lives: a SQLite file, or a fresh database on the private PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "threads.db")
    return request.getfixturevalue("postgres_url")


def _contiguous(store: Checkpointer, thread: str) -> list[int]:
    numbers = [c.seq for c in store.own_checkpoints(thread)]
    assert numbers == list(range(len(numbers))), numbers
    return numbers


async def _slow(request: Request) -> str:  # yields, so two runs in one loop interleave
    await asyncio.sleep(0.001)
    return "next"


def test_two_resumes_of_one_thread_at_once_one_runs_and_the_other_is_refused(where):
    with open_checkpointer(where) as store:  # a thread stopped part-way (its model failed)
        def broken(request: Request) -> str:
            raise RuntimeError("the model server went away")

        stopped = looping_flow().run_sync("solve", llm=FunctionLLM(respond=broken), checkpointer=store, thread="t")
        assert stopped.exit_reason is ExitReason.ERROR

    async def both() -> list:
        stores = [open_checkpointer(where), open_checkpointer(where)]
        try:
            runs = [looping_flow().resume("t", checkpointer=s, llm=FunctionLLM(respond=_slow)) for s in stores]
            return await asyncio.gather(*runs, return_exceptions=True)
        finally:
            for store in stores:
                store.close()

    outcomes = asyncio.run(both())
    refused = [o for o in outcomes if isinstance(o, ThreadTaken)]
    finished = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(refused) == 1 and len(finished) == 1, outcomes
    assert f"is being run by this process on {os.uname().nodename}" in str(refused[0])
    assert finished[0].exit_reason is ExitReason.TURN_LIMIT
    with open_checkpointer(where) as store:
        _contiguous(store, "t")
        again = looping_flow().resume_sync("t", checkpointer=store)  # ended: the stored result, nothing runs
        assert (again.history, again.exit_reason) == (finished[0].history, ExitReason.TURN_LIMIT)


HOLDER = textwrap.dedent("""
    import sys, time
    from statebound.flow.live import open_checkpointer
    store = open_checkpointer(sys.argv[1])
    with store.holding("t"):
        print("held", flush=True)
        time.sleep(600)
""")


def test_a_holder_killed_with_kill_9_holds_the_thread_no_more(where):
    with open_checkpointer(where) as store:
        looping_flow().run_sync("solve", llm=counting_llm([]), checkpointer=store, thread="t")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, where], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with open_checkpointer(where) as store:
            with pytest.raises(ThreadTaken, match=f"is being run by process {holder.pid} on "):
                looping_flow().resume_sync("t", checkpointer=store)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        with open_checkpointer(where) as store:  # the dead holder's lease is taken over
            assert looping_flow().resume_sync("t", checkpointer=store).exit_reason is ExitReason.FINAL
    finally:
        holder.kill()
        holder.wait(timeout=30)


def _failing_append(store: Checkpointer, commit: int, fail: Callable[[StoredCheckpoint], None]) -> None:
    """``store``'s ``commit``-th append fails the way ``fail`` does (the checkpoints not written)."""
    append, count = store.append, [0]

    def flaky(*checkpoints: StoredCheckpoint) -> None:
        count[0] += 1
        if count[0] == commit:
            fail(checkpoints[0])
        append(*checkpoints)

    store.append = flaky  # type: ignore[method-assign]


def by_turn(log: list[str]) -> FunctionLLM:
    """A model whose reply depends on the prompt only ("Turn 6: think." is done), logging each call."""

    def respond(request: Request) -> str:
        prompt = request.messages[-1].content
        log.append(prompt)
        return "done" if prompt.startswith("Turn 6") else f"next after {prompt}"

    return FunctionLLM(respond=respond)


def test_a_failed_commit_gives_its_checkpoint_numbers_back_and_the_thread_resumes(where):
    whole_log: list[str] = []
    with open_checkpointer(where) as store:
        whole = looping_flow().run_sync("solve", llm=by_turn(whole_log), checkpointer=store, thread="whole")

    def disk_full(checkpoint: StoredCheckpoint) -> None:
        raise CheckpointError(f"cannot write to checkpoint store {where}: database or disk is full")

    log: list[str] = []
    with open_checkpointer(where) as store:
        _failing_append(store, 5, disk_full)
        failed = looping_flow().run_sync("solve", llm=by_turn(log), checkpointer=store, thread="t")
        assert failed.exit_reason is ExitReason.ERROR and "disk is full" in str(failed.error)
        numbers = _contiguous(store, "t")  # the error end took the number the failed commit gave back
        assert store.own_checkpoints("t")[-1].status == "error" and len(numbers) > 1
    with open_checkpointer(where) as store:
        resumed = looping_flow().resume_sync("t", checkpointer=store, llm=by_turn(log))
        _contiguous(store, "t")
    assert (resumed.history, resumed.trajectory) == (whole.history, whole.trajectory)
    assert len(log) == len(whole_log) + 1  # the reply whose commit failed was asked for again, no other


def test_a_run_that_lost_its_thread_to_another_writer_writes_nothing_more_into_it(where):
    with open_checkpointer(where) as store, open_checkpointer(where) as other:
        def intruder(checkpoint: StoredCheckpoint) -> None:  # another writer takes this number first
            other.append(dataclasses.replace(checkpoint, kind="output", body=b"", status="running"))

        _failing_append(store, 4, intruder)
        lost = looping_flow().run_sync("solve", llm=counting_llm([]), checkpointer=store, thread="t")
        assert lost.exit_reason is ExitReason.ERROR and isinstance(lost.error, ThreadTaken)
        last = store.own_checkpoints("t")[-1]
        assert (last.kind, last.body) == ("output", b"")  # the other writer's, and nothing after it
        _contiguous(store, "t")
