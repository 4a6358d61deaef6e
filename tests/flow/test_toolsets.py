"""Tools a run learns as it goes (a :class:`Toolset`, an MCP server's tools): ``CallLLM`` asks for
them each time it runs, ``CallTool(tool, args=...)`` calls one tool with fixed or computed
arguments, and ``ctx.opened`` keeps what a run's outputs share (a connection) open for the run
and closes it when the run ends, however it ends."""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest
from live_helpers import Killed

from statebound import AskHuman, CallLLM, Flow, Instruction, State, always, called, tool
from statebound.errors import DefinitionError
from statebound.flow import CallTool, ExitReason, tool_failed, tool_ok
from statebound.flow.checks import check_flow
from statebound.flow.context import RunContext
from statebound.flow.live import SQLiteCheckpointer
from statebound.flow.tool_calls import ModelTool, Toolset
from statebound.llm.base import Capabilities, Choice, Request, ToolCall
from statebound.llm.testing import FunctionLLM

TOOLS = Capabilities(chat=True, tools=True)


class Lights:
    """The world outside the run, and a toolset that learns its tools as the run goes."""

    def __init__(self) -> None:
        self.listed = 0
        self.opened: list[str] = []
        self.switched: list[str] = []
        self.die = False

    def switch(self, room: str) -> str:
        """Switch a room's light."""
        self.switched.append(room)
        if self.die:
            self.die = False
            raise Killed
        return f"{room} is lit"


@dataclass(frozen=True)
class LightTools:
    """A :class:`Toolset`: its tools known only once the run asks (as a server lists them)."""

    lights: Lights
    repeatable: bool = True
    name: str = "the lights"
    writes: tuple[str, ...] = ()

    async def tools(self, ctx: RunContext) -> list[ModelTool]:
        await ctx.opened("lights", lambda: _session(self.lights))
        self.lights.listed += 1
        return [tool(self.lights.switch, repeatable=self.repeatable)]


@asynccontextmanager
async def _session(lights: Lights):
    lights.opened.append("open")
    try:
        yield lights
    finally:
        lights.opened.append("closed")


def switcher(prompts: list[str] | None = None) -> FunctionLLM:
    def respond(request: Request) -> Choice:
        if prompts is not None:
            prompts.append(request.messages[-1].role)
        if request.messages[-1].role == "tool":
            return Choice(text="lit")
        assert [spec.name for spec in request.tools] == ["switch"]
        return Choice(text="", tool_calls=(ToolCall("c1", "switch", '{"room": "hall"}'),))

    return FunctionLLM(respond=respond, capabilities=TOOLS)


def lights_flow(tools: object) -> Flow:
    act = CallLLM(tools=[tools])
    return Flow(name="lights", initial="Act", max_turns=4, states=[
        State("Act", outputs=[Instruction("Light the hall."), act], transitions=[(called(), "Again"), (always(), "End")]),
        State("Again", outputs=[act], transitions=[(always(), "End")]),
        State("End", final=True)])


def test_a_toolset_gives_its_tools_as_the_run_goes_and_what_it_opened_closes_with_the_run():
    lights = Lights()
    toolset = LightTools(lights)
    assert isinstance(toolset, Toolset) and not isinstance(toolset, ModelTool)
    result = lights_flow(toolset).run_sync("x", llm=switcher())
    assert result.exit_reason is ExitReason.FINAL and lights.switched == ["hall"]
    assert lights.listed == 2  # asked each time an output ran
    assert lights.opened == ["open", "closed"]  # opened once for the run, closed as it ended
    assert (result.history[3].source, result.history[3].ok, result.history[3].content) == ("tool", True, "hall is lit")


def test_what_a_run_opened_closes_when_the_run_fails_or_pauses():
    lights = Lights()

    def broken(request: Request) -> str:
        raise RuntimeError("the model is down")

    failed = lights_flow(LightTools(lights)).run_sync("x", llm=FunctionLLM(respond=broken, capabilities=TOOLS))
    assert failed.exit_reason is ExitReason.ERROR and lights.opened == ["open", "closed"]

    async def asks(ctx: RunContext) -> str:
        await ctx.opened("lights", lambda: _session(lights))
        return "asked"

    flow = Flow(name="ask", initial="Ask", states=[
        State("Ask", outputs=[CallTool(asks), AskHuman("Which room?")], transitions=[(always(), "End")]),
        State("End", final=True)])
    paused = flow.run_sync("x")
    assert paused.exit_reason is ExitReason.PAUSED and lights.opened == ["open", "closed"] * 2


def test_two_tools_with_one_name_and_an_unknown_tool_choice_are_refused_when_the_run_meets_them():
    lights = Lights()
    flow = Flow(name="twice", initial="Act", states=[
        State("Act", outputs=[CallLLM(tools=[LightTools(lights), LightTools(lights, name="more lights")])],
              transitions=[(always(), "End")]), State("End", final=True)])
    result = flow.run_sync("x", llm=switcher())
    assert result.exit_reason is ExitReason.ERROR and isinstance(result.error, DefinitionError)
    assert "two tools are named 'switch' (among the tools of the lights, more lights)" in str(result.error)
    choosy = Flow(name="choosy", initial="Act", states=[
        State("Act", outputs=[CallLLM(tools=[LightTools(lights)], tool_choice="dim")], transitions=[(always(), "End")]),
        State("End", final=True)])
    result = choosy.run_sync("x", llm=switcher())
    assert "tool_choice is 'auto', 'required' or an offered function's name (switch), not 'dim'" in str(result.error)


def test_call_tool_with_args_calls_one_tool_and_a_misfit_is_a_failed_result():
    lights = Lights()
    flow = Flow(name="direct", initial="Hall", states=[
        State("Hall", outputs=[CallTool(LightTools(lights, name="switch"), args={"room": "hall"})],
              transitions=[(tool_ok(), "Kitchen"), (always(), "End")]),
        State("Kitchen", outputs=[CallTool(tool(lights.switch), args=lambda ctx: {"room": 7})],
              transitions=[(tool_failed(), "End"), (always(), "End")]),
        State("End", final=True)])
    result = flow.run_sync("x")
    assert lights.switched == ["hall"] and result.trajectory == ("Hall", "Kitchen", "End")
    entry = result.history[-1]
    assert (entry.name, entry.ok) == ("switch", False)
    assert entry.content.startswith('Error: switch({"room": 7}) does not fit its parameters: room: Input should be')
    with pytest.raises(DefinitionError, match="CallTool\\(args=...\\) calls a tool that takes arguments"):
        CallTool(lambda ctx: "x", args={})


def test_a_toolset_tool_that_must_not_run_twice_is_announced_so_a_crash_inside_asks(tmp_path):
    lights = Lights()
    lights.die = True
    flow = Flow(name="direct", initial="Hall", states=[
        State("Hall", outputs=[CallTool(LightTools(lights, repeatable=False, name="switch"), args={"room": "hall"})],
              transitions=[(always(), "End")]),
        State("End", final=True)])
    with SQLiteCheckpointer(tmp_path / "s.db") as store, pytest.raises(Killed):
        flow.run_sync("x", checkpointer=store, thread="t")
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        paused = flow.resume_sync("t", checkpointer=store)
        assert paused.pending.startswith("tool 'switch' was interrupted while it ran and is not safe to run twice")
        done = flow.resume_sync("t", checkpointer=store, input="skip")
    assert lights.switched == ["hall"] and done.exit_reason is ExitReason.FINAL
    assert (done.history[-1].ok, done.history[-1].content) == (False, "switch was interrupted and not run again")


def test_a_toolset_tool_the_model_calls_that_must_not_run_twice_asks_after_a_crash(tmp_path):
    lights, prompts = Lights(), []
    lights.die = True
    flow = lights_flow(LightTools(lights, repeatable=False))
    with SQLiteCheckpointer(tmp_path / "m.db") as store, pytest.raises(Killed):
        flow.run_sync("x", llm=switcher(prompts), checkpointer=store, thread="t")
    with SQLiteCheckpointer(tmp_path / "m.db") as store:
        assert "'switch' was interrupted" in flow.resume_sync("t", checkpointer=store, llm=switcher(prompts)).pending
        done = flow.resume_sync("t", checkpointer=store, input="repeat", llm=switcher(prompts))
    assert lights.switched == ["hall", "hall"] and done.exit_reason is ExitReason.FINAL
    assert prompts == ["user", "tool"]  # the reply with the call was not asked for again


def test_flow_check_counts_a_toolsets_writes():
    @dataclass(frozen=True)
    class Home:
        lit: str | None = None

    lights = Lights()
    flow = Flow(name="home", initial="Act", vars=Home, states=[
        State("Act", outputs=[CallLLM(tools=[LightTools(lights, writes=("lit",))])],
              transitions=[(lambda ctx: ctx.vars.lit is not None, "End"), (always(), "End")]),
        State("End", final=True)])
    assert flow.states_by_name["Act"].outputs[0].writes == ("lit",)
    assert not [d for d in check_flow(flow) if d.code == "unwritten-variable"]
