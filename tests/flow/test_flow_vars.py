"""Flow variables: a typed state the outputs write and the transitions read; checked when built,
when written and when a stored thread is resumed; checkpointed as deltas; seen by flow check."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pydantic import BaseModel, ConfigDict

from statebound.errors import DefinitionError
from statebound.flow import (
    AskHuman,
    CallTool,
    Flow,
    Pick,
    SQLiteCheckpointer,
    State,
    ToolResult,
    Update,
    always,
    check_flow,
)
from statebound.llm.testing import ScriptedLLM

TEAMS = ["billing", "shipping"]


@dataclass(frozen=True)
class Ticket:
    team: str | None = None
    priority: str | None = None
    notes: tuple[str, ...] = ()


def prefers(word: str):
    """A scorer that likes candidates equal to ``word``."""
    return lambda context, text: [-0.1 if text == word else -3.0] * len(text.split())


def needs_priority(ctx) -> bool:
    return ctx.vars.team == "billing"


def router(**settings) -> Flow:
    return Flow(name="route", initial="Team", vars=settings.pop("vars", Ticket), states=[
        State("Team", outputs=[Pick(lambda ctx: TEAMS, name="team", into="team")],
              transitions=[(needs_priority, "Priority"), (always(), "Done")]),
        State("Priority", outputs=[Update(lambda ctx: {"priority": "high", "notes": (*ctx.vars.notes, "urgent")},
                                          writes=["priority", "notes"])],
              transitions=[(always(), "Done")]),
        State("Done", final=True)], **settings)


def test_outputs_write_the_variables_and_transitions_read_them():
    result = router().run_sync("refund me", llm=ScriptedLLM(scorer=prefers("billing")))
    assert result.trajectory == ("Team", "Priority", "Done")
    assert result.vars == Ticket(team="billing", priority="high", notes=("urgent",))
    other = router().run_sync("where is my parcel", llm=ScriptedLLM(scorer=prefers("shipping")))
    assert other.trajectory == ("Team", "Done") and other.vars == Ticket(team="shipping")


def test_a_tool_writes_through_its_result_and_an_instance_sets_the_start():
    def look_up(ctx) -> ToolResult:
        return ToolResult("found", update={"priority": "low"})

    flow = Flow(name="tool", initial="Look", vars=Ticket(team="billing"), states=[
        State("Look", outputs=[CallTool(look_up, writes=["priority"])], transitions=[(always(), "End")]),
        State("End", final=True)])
    assert flow.run_sync("x").vars == Ticket(team="billing", priority="low")


def test_a_pydantic_model_works_the_same():
    class Order(BaseModel):
        model_config = ConfigDict(frozen=True)
        team: str | None = None
        priority: str | None = None
        notes: tuple[str, ...] = ()

    result = router(vars=Order).run_sync("refund", llm=ScriptedLLM(scorer=prefers("billing")))
    assert result.vars == Order(team="billing", priority="high", notes=("urgent",))


def test_what_cannot_be_checkpointed_or_does_not_exist_is_refused_with_names():
    @dataclass(frozen=True)
    class Handle:
        file: object = None

    with pytest.raises(DefinitionError, match="field 'file' cannot be checkpointed"):
        Flow(name="f", initial="A", vars=Handle, states=[State("A", final=True)])

    @dataclass
    class Mutable:
        team: str | None = None

    with pytest.raises(DefinitionError, match="frozen=True"):
        Flow(name="f", initial="A", vars=Mutable, states=[State("A", final=True)])

    @dataclass(frozen=True)
    class Required:
        team: str

    with pytest.raises(DefinitionError, match="fields without defaults.*Flow\\(vars=Required\\(...\\)\\)"):
        Flow(name="f", initial="A", vars=Required, states=[State("A", final=True)])
    with pytest.raises(DefinitionError, match="state 'A': Pick\\(team, auto\\) writes 'teem'.*fields: team, priority"):
        Flow(name="f", initial="A", vars=Ticket, states=[
            State("A", outputs=[Pick(lambda ctx: TEAMS, name="team", into="teem")], transitions=[(always(), "B")]),
            State("B", final=True)])


def test_a_write_to_a_field_the_type_lacks_names_the_output_and_the_field():
    flow = Flow(name="f", initial="A", vars=Ticket, states=[
        State("A", outputs=[Update(lambda ctx: {"queue": "x"})], transitions=[(always(), "B")]),
        State("B", final=True)])
    result = flow.run_sync("x")
    assert isinstance(result.error, DefinitionError)
    assert "Update(<lambda>) writes 'queue', which Ticket has no field for" in str(result.error)
    untyped = Flow(name="g", initial="A", states=[
        State("A", outputs=[Update(lambda ctx: {"team": "x"})], transitions=[(always(), "B")]), State("B", final=True)])
    assert "declares none: give it Flow(vars=YourType)" in str(untyped.run_sync("x").error)


def test_a_stored_thread_resumes_with_its_variables_and_checkpoints_only_what_changed(tmp_path):
    asked = Flow(name="ask", initial="Team", vars=Ticket, states=[
        State("Team", outputs=[Pick(lambda ctx: TEAMS, name="team", into="team")], transitions=[(always(), "Ask")]),
        State("Ask", outputs=[AskHuman("Priority?", name="priority"),
                              Update(lambda ctx: {"priority": ctx.last.content}, writes=["priority"])],
              transitions=[(always(), "Done")]),
        State("Done", final=True)])
    with SQLiteCheckpointer(tmp_path / "t.db") as store:
        paused = asked.run_sync("refund", llm=ScriptedLLM(scorer=prefers("billing")), checkpointer=store, thread="t1")
        assert paused.pending == "Priority?" and paused.vars == Ticket(team="billing")
        bodies = [c.body for c in store.own_checkpoints("t1")]
    with SQLiteCheckpointer(tmp_path / "t.db") as store:
        done = asked.resume_sync("t1", checkpointer=store, input="high")
    assert done.vars == Ticket(team="billing", priority="high")
    assert sum(b"billing" in body for body in bodies) == 1  # written once, in the checkpoint of its write


def test_resuming_with_a_type_the_stored_variables_do_not_fit_is_refused(tmp_path):
    @dataclass(frozen=True)
    class Other:
        team: str | None = None

    flow = Flow(name="ask", initial="Team", vars=Ticket, states=[
        State("Team", outputs=[Pick(lambda ctx: TEAMS, name="team", into="team"), AskHuman("ok?")],
              transitions=[(always(), "Done")]),
        State("Done", final=True)])
    with SQLiteCheckpointer(tmp_path / "t.db") as store:
        flow.run_sync("x", llm=ScriptedLLM(scorer=prefers("billing")), checkpointer=store, thread="t")
        changed = flow.replace(vars=Other)
        with pytest.raises(DefinitionError, match="do not fit Other: stored fields it does not have: notes, priority"):
            changed.resume_sync("t", checkpointer=store, input="yes")


def test_flow_check_warns_about_a_condition_on_a_variable_nothing_writes():
    def urgent(ctx) -> bool:
        return ctx.vars.priority == "high"

    flow = Flow(name="f", initial="Team", vars=Ticket, states=[
        State("Team", outputs=[Pick(lambda ctx: TEAMS, name="team", into="team")],
              transitions=[(urgent, "Fast"), (lambda ctx: ctx.vars.team == "billing", "Fast"), (always(), "Slow")]),
        State("Fast", final=True), State("Slow", final=True)])
    found = [(d.code, d.message) for d in check_flow(flow)]
    unwritten = [message for code, message in found if code == "unwritten-variable"]
    assert len(unwritten) == 1 and "reads vars.priority" in unwritten[0] and "'urgent'" in unwritten[0]
    assert "unwritten-variable" not in {d.code for d in check_flow(router())}


def test_flows_without_variables_are_as_before():
    flow = Flow(name="plain", initial="A", states=[State("A", final=True)])
    assert flow.vars is None and flow.run_sync("x").vars is None
