"""A store written by the version before the one-step engine (commit ee7f9f5: ``data/threads-ee7f9f5.db``,
made by ``typed_vars.flow``: thread ``paused`` waiting at its question, thread ``done`` finished)
is read and run on by this one: the checkpoint format did not change."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typed_vars import FILLED, flow

from statebound.flow import ExitReason
from statebound.flow.live import open_checkpointer

STORE = Path(__file__).parent / "data" / "threads-ee7f9f5.db"


@pytest.fixture
def store_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CRASH_MARKER", str(tmp_path / "marker"))
    (tmp_path / "marker").write_text("no crash here")
    copy = tmp_path / "threads.db"
    shutil.copyfile(STORE, copy)
    return str(copy)


def test_a_thread_paused_by_the_previous_version_is_answered_and_ends_with_its_typed_vars(store_path: str) -> None:
    with open_checkpointer(store_path) as store:
        assert [c.kind for c in store.checkpoints("paused")] == ["start", "output", "transition", "pause"]
        paused = flow.resume_sync("paused", checkpointer=store)
        assert paused.exit_reason is ExitReason.PAUSED and paused.vars == FILLED
        done = flow.resume_sync("paused", checkpointer=store, input="yes")
    assert (done.exit_state, done.vars) == ("Done", FILLED)
    assert done.vars.report is not None and done.vars.report.severity == "high"


def test_a_thread_finished_by_the_previous_version_forks_and_runs_again(store_path: str) -> None:
    with open_checkpointer(store_path) as store:
        first_output = next(c.seq for c in store.checkpoints("done") if c.kind == "output")
        store.fork("done", at=first_output, thread="again")
        assert flow.resume_sync("again", checkpointer=store).exit_reason is ExitReason.PAUSED  # runs on to the question
        forked = flow.resume_sync("again", checkpointer=store, input="yes")
    assert (forked.exit_state, forked.vars) == ("Done", FILLED)
