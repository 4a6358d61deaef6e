"""Typed flow variables come back typed: every type a flow accepts (pydantic models, dataclasses,
lists, tuples, dicts, sets and frozensets of them, optional and union fields, enums, Literal,
dates) through a pause and resume, a kill -9 and resume (a real process) and a fork, on SQLite
and PostgreSQL; what cannot round-trip is refused when the flow is built or the field written;
a stored value that no longer fits is refused naming the field, never coerced."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typed_vars
from typed_vars import FILLED, Triage, flow

from statebound.errors import DefinitionError
from statebound.flow import ExitReason, Flow, State, Update, VarsWritten, always
from statebound.flow.live import open_checkpointer

HERE = Path(__file__).parent


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def where(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "threads.db")
    return request.getfixturevalue("postgres_url")


def test_in_one_process_a_write_is_already_what_a_resume_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("CRASH_MARKER", str(tmp_path / "marker"))
    (tmp_path / "marker").write_text("no crash here")
    events: list = []
    paused = flow.run_sync("x", on_event=events.append)
    assert paused.exit_reason is ExitReason.PAUSED and paused.vars == FILLED
    assert isinstance(paused.vars.nested[0]["a"], tuple)  # written as plain data, converted at the write
    written = next(e for e in events if isinstance(e, VarsWritten))
    assert written.fields["report"] == FILLED.report and written.data["severity"] == "high"
    assert written.to_dict()["fields"]["due"] == "2026-12-24"


def test_every_type_through_pause_resume_and_fork(where, tmp_path, monkeypatch):
    monkeypatch.setenv("CRASH_MARKER", str(tmp_path / "marker"))
    (tmp_path / "marker").write_text("no crash here")
    with open_checkpointer(where) as store:
        assert flow.run_sync("x", checkpointer=store, thread="t").vars == FILLED
    with open_checkpointer(where) as store:  # another store object: read back from the store alone
        paused_again = flow.resume_sync("t", checkpointer=store)
        assert paused_again.vars == FILLED and paused_again.vars.report.severity == "high"
        done = flow.resume_sync("t", checkpointer=store, input="yes")
        assert (done.exit_state, done.vars) == ("Done", FILLED)
        fill_output = next(c.seq for c in store.checkpoints("t") if c.kind == "output")
        store.fork("t", at=fill_output, thread="f")
        assert flow.resume_sync("f", checkpointer=store).vars == FILLED  # runs on to the pause
        forked = flow.resume_sync("f", checkpointer=store, input="yes")
    assert (forked.exit_state, forked.vars) == ("Done", FILLED)


@pytest.mark.integration
def test_every_type_through_kill_9_and_resume(where, tmp_path):
    env = {**os.environ, "CRASH_MARKER": str(tmp_path / "marker"),
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, typed_vars.__file__, where, *args], env=env, capture_output=True,
                              text=True, timeout=120)

    assert run().stdout.split() == ["paused", "Ask"]
    killed = run("yes")
    assert killed.returncode == -9 and (tmp_path / "marker").exists()  # killed inside the tool
    assert run().stdout.split() == ["final", "Done"]  # the typed condition held after the kill
    with open_checkpointer(where) as store:
        assert flow.resume_sync("t", checkpointer=store).vars == FILLED  # the stored result, typed


class Handle:
    """An object with no JSON form."""


@dataclass(frozen=True)
class Holds:
    handle: Handle | None = None


def test_a_type_without_a_json_form_is_refused_when_the_flow_is_built_naming_the_field():
    @dataclass(frozen=True)
    class Inner:
        name: str = ""

    @dataclass(frozen=True)
    class Local:
        inner: Inner | None = None

    with pytest.raises(DefinitionError, match="Flow\\(vars=Local\\): its field types cannot be resolved"):
        Flow(name="f", initial="A", vars=Local, states=[State("A", final=True)])
    with pytest.raises(DefinitionError, match="field 'handle' cannot be checkpointed: .*Handle \\| None has no JSON "
                                              "form \\(Unable to generate pydantic-core schema for .*Handle'>\\); use"):
        Flow(name="f", initial="A", vars=Holds, states=[State("A", final=True)])


def test_a_write_that_would_not_come_back_as_it_went_in_is_refused_naming_the_field():
    def nan(ctx) -> dict:
        return {"priority": float("nan")}

    @dataclass(frozen=True)
    class Scored:
        priority: float = 0.0
        raw: bytes = b""

    scored = Flow(name="f", initial="A", vars=Scored, states=[
        State("A", outputs=[Update(nan)], transitions=[(always(), "B")]), State("B", final=True)])
    error = scored.run_sync("x").error
    assert isinstance(error, DefinitionError)
    assert "Update(nan) writes 'priority' = nan, which does not come back from a checkpoint" in str(error)
    not_text = Flow(name="f", initial="A", vars=Scored, states=[
        State("A", outputs=[Update(lambda ctx: {"raw": b"\xff"})], transitions=[(always(), "B")]), State("B", final=True)])
    assert "writes 'raw' = b'\\xff', which cannot be checkpointed" in str(not_text.run_sync("x").error)
    wrong = Flow(name="f", initial="A", vars=Triage, states=[
        State("A", outputs=[Update(lambda ctx: {"items": [{"nom": "x"}]})], transitions=[(always(), "B")]),
        State("B", final=True)])
    assert "writes 'items' = [{'nom': 'x'}], which is not a list[" in str(wrong.run_sync("x").error)


def test_a_stored_value_that_no_longer_fits_is_refused_naming_the_field_never_coerced(tmp_path, monkeypatch):
    monkeypatch.setenv("CRASH_MARKER", str(tmp_path / "marker"))

    @dataclass(frozen=True)
    class Counted:
        count: int = 0

    @dataclass(frozen=True)
    class Texted:
        count: str = ""

    def states() -> list[State]:
        return [State("A", outputs=[Update(lambda ctx: {"count": ctx.vars.count or "7"}, writes=["count"]),
                                    typed_vars.AskHuman("more?")], transitions=[(always(), "B")]),
                State("B", final=True)]

    with open_checkpointer(str(tmp_path / "s.db")) as store:
        Flow(name="f", initial="A", vars=Texted, states=states()).run_sync("x", checkpointer=store, thread="t")
        changed = Flow(name="f", initial="A", vars=Counted, states=states())
        with pytest.raises(DefinitionError, match="field 'count' \\(expected int\\): Input should be a valid integer"):
            changed.resume_sync("t", checkpointer=store, input="yes")  # "7" is not silently made 7
