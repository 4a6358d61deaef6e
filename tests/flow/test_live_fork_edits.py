"""Forks that edit state, on SQLite and PostgreSQL: an edited Pick reply re-derives its variable
and its stored choice, an edited structured reply its typed value; variables set in a fork
(``vars=``, ``--set``, the viewer's form) are checked against the type before anything is
written; an edit that cannot be re-derived is refused saying why and how."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import BaseModel
from starlette.testclient import TestClient
from typer.testing import CliRunner

from statebound import AskHuman, CallLLM, Flow, Instruction, Pick, State, Update, always, tool
from statebound.cli.app import app
from statebound.errors import CheckpointError, DefinitionError
from statebound.flow import ExitReason
from statebound.flow.choice import last_pick
from statebound.flow.live import open_checkpointer
from statebound.llm.base import Capabilities, Choice, ToolCall
from statebound.llm.testing import ScriptedLLM
from statebound.view.app import build_app
from statebound.view.sources import find_sources

COMPONENTS = ["disk", "network", "memory"]


class Report(BaseModel):
    severity: str
    title: str


@dataclass(frozen=True)
class Ticket:
    component: str | None = None
    report: Report | None = None
    owner: str = "nobody"
    count: int = 0


def owner_of(ctx) -> dict:
    return {"owner": f"team-{ctx.vars.component}"}


FLOW = Flow(name="triage", initial="Sort", vars=Ticket, states=[
    State("Sort", outputs=[Instruction("Which component?"),
                           Pick(lambda ctx: COMPONENTS, name="component", into="component", method="random"),
                           Update(owner_of, writes=["owner"])],
          transitions=[(always(), "Describe")]),
    State("Describe", outputs=[CallLLM(schema=Report, into="report"), AskHuman("File it?")],
          transitions=[(lambda ctx: ctx.vars.component == "network", "Network"), (always(), "Done")]),
    State("Network", final=True),
    State("Done", final=True),
])
REPORT = '{"severity": "low", "title": "slow disk"}'


def reporter() -> ScriptedLLM:
    return ScriptedLLM([REPORT], capabilities=Capabilities(chat=True, schema=True))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def where(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "threads.db")
    return request.getfixturevalue("postgres_url")


def _paused(where: str) -> dict[str, int]:
    """Runs the triage to its pause; the checkpoints of the pick, the owner and the report."""
    with open_checkpointer(where) as store:
        paused = FLOW.run_sync("the disk is slow", llm=reporter(), checkpointer=store, thread="t")
        assert paused.exit_reason is ExitReason.PAUSED and paused.vars.component == "disk"
        points = store.checkpoints("t")
    pick = next(p.seq for p in points if any(e.content == "disk" for e in p.added))
    reply = next(p.seq for p in points if any(e.content == REPORT for e in p.added))
    return {"pick": pick, "owner": pick + 1, "report": reply}  # the Update writing owner follows the pick


def test_an_edited_pick_re_derives_its_variable_and_stored_choice(where):
    at = _paused(where)
    with open_checkpointer(where) as store:
        store.fork("t", at=at["pick"], thread="f", edit=(2, "network"))
        forked = FLOW.resume_sync("f", checkpointer=store, llm=reporter())  # runs on to the pause
        assert forked.vars.component == "network" and forked.vars.owner == "team-network"
        picked = last_pick(_ctx_of(forked), "component")
        assert (picked.text, picked.index) == ("network", 1)
        done = FLOW.resume_sync("f", checkpointer=store, input="yes")
    assert done.exit_state == "Network"  # the forked run goes on with the new decision


def test_an_edit_that_cannot_be_re_derived_is_refused_saying_how_and_nothing_is_written(where):
    at = _paused(where)
    with open_checkpointer(where) as store:
        with pytest.raises(CheckpointError, match="is the choice 'component' among 'disk', 'network', 'memory': "
                                                  "edit it to one of them, or set the variables with --set"):
            store.fork("t", at=at["pick"], thread="f", edit=(2, "printer"))
        with pytest.raises(CheckpointError, match="wrote variables that may depend on its old text \\(owner\\): "
                                                  f"fork at checkpoint {at['pick']}, right after it"):
            store.fork("t", at=at["owner"], thread="f", edit=(2, "network"))
        store.fork("t", at=at["owner"], thread="f", edit=(2, "network"), vars={"owner": "team-network"})
        with pytest.raises(CheckpointError, match="is a structured reply: the edited text must be JSON"):
            store.fork("t", at=at["report"], thread="g", edit=(3, "not json"))
        assert [info.thread for info in store.threads()] == ["t", "f"]


def test_an_edited_structured_reply_re_derives_its_typed_value(where):
    at = _paused(where)
    with open_checkpointer(where) as store:
        store.fork("t", at=at["report"], thread="f", edit=(3, '{"severity": "high", "title": "disk on fire"}'))
        forked = FLOW.resume_sync("f", checkpointer=store)
    assert forked.vars.report == Report(severity="high", title="disk on fire")
    assert forked.history[3].data["structured"] == {"severity": "high", "title": "disk on fire"}


def test_variables_set_in_a_fork_are_checked_against_the_type_first(where):
    at = _paused(where)
    with open_checkpointer(where) as store:
        with pytest.raises(CheckpointError, match="no field 'colour' \\(fields: component, report, owner, count\\)"):
            store.fork("t", at=at["owner"], thread="f", vars={"colour": "red"})
        with pytest.raises(CheckpointError, match="cannot set 'count' to \"three\": 'three' is not of type 'integer' "
                                                  "\\(the field takes an integer\\)"):
            store.fork("t", at=at["owner"], thread="f", vars={"count": "three"})
        with pytest.raises(DefinitionError, match="the fork of 't' writes 'report' = 'x', which is not a Report \\| None: Input should be"):
            FLOW.fork("t", checkpointer=store, at=at["owner"], vars={"report": "x"})
        assert [info.thread for info in store.threads()] == ["t"]
        name = FLOW.fork("t", checkpointer=store, at=at["owner"], vars={"component": "network", "count": 3,
                                                                        "report": Report(severity="low", title="x")})
        forked = FLOW.resume_sync(name, checkpointer=store, llm=reporter())
    assert name == f"t-at-{at['owner']}"
    assert (forked.vars.component, forked.vars.count, forked.vars.report.title) == ("network", 3, "slow disk")


def test_a_reply_whose_tool_calls_ran_cannot_be_edited(tmp_path):
    def look(item: str) -> str:
        """Look."""
        return f"saw {item}"

    flow = Flow(name="look", initial="A", states=[
        State("A", outputs=[CallLLM(tools=[tool(look)]), AskHuman("ok?")], transitions=[(always(), "B")]),
        State("B", final=True)])
    calls = ScriptedLLM([Choice(text="", tool_calls=(ToolCall("1", "look", '{"item": "x"}'),))],
                        capabilities=Capabilities(chat=True, tools=True))
    with open_checkpointer(str(tmp_path / "s.db")) as store:
        flow.run_sync("go", llm=calls, checkpointer=store, thread="t")
        last = store.checkpoints("t")[-1].seq
        with pytest.raises(CheckpointError, match="is a reply whose tool calls ran: its text cannot be edited"):
            store.fork("t", at=last, thread="f", edit=(1, "something else"))


def test_the_command_line_and_the_viewer_fork_with_variables_set(tmp_path, monkeypatch):
    where = str(tmp_path / "threads.db")
    module = tmp_path / "triage_flow.py"
    module.write_text(Path(__file__).read_text())  # this file's FLOW, loadable by path
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    at = _paused(where)
    runner = CliRunner()
    bad = runner.invoke(app, ["threads", where, "t", "--fork", str(at["owner"]), "--set", "count=three"])
    assert bad.exit_code == 2 and "cannot set 'count' to \"three\"" in bad.output
    made = runner.invoke(app, ["threads", where, "t", "--fork", str(at["owner"]), "--set", "component=network",
                               "--set", "count=4"])
    assert made.exit_code == 0, made.output
    assert "(component set, count set)" in made.output
    assert "flow.resume('t-at-" in made.output  # made in Python: the call, not a command that cannot work
    web = TestClient(build_app(find_sources([Path(where)])))
    posted = web.post(f"/store/{Path(where).stem}/fork/t", data={"seq": str(at["owner"]), "set": "count=5\nowner=me"},
                      follow_redirects=False)
    assert posted.status_code == 303, posted.text
    refused = web.post(f"/store/{Path(where).stem}/fork/t", data={"seq": str(at["owner"]), "set": "colour=red"})
    assert refused.status_code == 400 and "no field &#39;colour&#39;" in refused.text
    with open_checkpointer(where) as store:
        forked = FLOW.resume_sync(posted.headers["location"].rsplit("/", 1)[1], checkpointer=store,
                                  llm=reporter())
    assert (forked.vars.count, forked.vars.owner) == (5, "me")


def _ctx_of(result):
    """A stand-in context whose history is the result's (what last_pick reads)."""

    class Seen:
        history = result.history

    return Seen()
