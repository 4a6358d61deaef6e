"""An output's declared writes are checked against what it writes: an undeclared write fails the run
naming the field; a declared write never made in a whole run is named in the result (state, output,
field), and `statebound run` prints it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from statebound.cli.app import app
from statebound.flow import Flow, Output, RunContext, State, Update, always


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


def _unwritten(flow: Flow[Plan]) -> tuple[tuple[str, str, str], ...]:
    result = flow.run_sync("task")
    assert result.error is None
    return result.unwritten


def test_a_declared_write_never_made_is_named_with_its_state_output_and_field() -> None:
    assert _unwritten(_flow(Count(finish=False))) == (("Work", "Count", "done"),)


def test_every_declared_write_made_names_nothing() -> None:
    assert _unwritten(_flow(Count(finish=True))) == ()


def test_statebound_run_prints_the_write_never_made(tmp_path: Path) -> None:
    source = tmp_path / "plan.py"
    source.write_text(f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
                      "from test_flow_declared_writes import Count, _flow\nflow = _flow(Count(finish=False))\n",
                      encoding="utf-8")
    printed = CliRunner().invoke(app, ["run", f"{source}:flow", "--task", "plan", "--model", "scripted"]).output
    assert "note: in state Work, Count declares it writes 'done' but did not write it in this run" in " ".join(printed.split())


def test_an_undeclared_write_fails_the_run_naming_the_field() -> None:
    result = _flow(Update(lambda ctx: {"done": True}, writes=["steps"])).run_sync("task")
    assert "writes 'done', which its writes=['steps'] does not declare" in str(result.error)
