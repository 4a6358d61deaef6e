"""An output's declared writes are checked against what it writes: an undeclared write fails the run
naming the field; a declared write never made in a whole run is a warning naming the state, the
output and the field."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from statebound.flow import Flow, Output, RunContext, State, UnwrittenDeclaration, Update, always


@dataclass(frozen=True)
class Plan:
    steps: int = 0
    done: bool = False


class Count(Output):
    """An output class of a user's own that declares what it writes."""

    writes = ("steps", "done")

    def __init__(self, *, finish: bool) -> None:
        self.finish = finish

    async def run(self, ctx: RunContext[Plan]) -> None:
        ctx.update({"steps": ctx.vars.steps + 1, **({"done": True} if self.finish else {})}, by="Count")


def _flow(*outputs: Output) -> Flow[Plan]:
    return Flow(name="plan", initial="Work", vars=Plan, states=[
        State("Work", outputs=list(outputs), transitions=[(always(), "End")]), State("End", final=True)])


def _warned(flow: Flow[Plan]) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = flow.run_sync("task")
    assert result.error is None
    return [str(w.message) for w in caught if issubclass(w.category, UnwrittenDeclaration)]


def test_a_declared_write_never_made_is_named_with_its_state_output_and_field() -> None:
    assert _warned(_flow(Count(finish=False))) == [
        "flow 'plan', state 'Work': Count declares it writes 'done' but did not write it in a whole run; "
        "drop it from writes= or write it"]


def test_every_declared_write_made_warns_of_nothing() -> None:
    assert _warned(_flow(Count(finish=True))) == []


def test_an_undeclared_write_fails_the_run_naming_the_field() -> None:
    result = _flow(Update(lambda ctx: {"done": True}, writes=["steps"])).run_sync("task")
    assert "writes 'done', which its writes=['steps'] does not declare" in str(result.error)
