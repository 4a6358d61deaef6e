"""What a user met building a first own flow, smoothed: help that reads right, one naming rule
for event kinds (documented), flow files that say what they hold, the model options every model
takes, what `statebound run` prints and takes (variables, the tools' environment), a threads
listing that fits 80 columns, diagrams that tell model calls apart, reports that do not credit a
model-free control with a model, one meaning per public name, and a Pick of a fixed list."""

from __future__ import annotations

import io
import re
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console
from typer.testing import CliRunner

from statebound.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
TICKETS = "docs/examples/tickets.py"


def invoke(*args: str, columns: int = 200):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns)})


@pytest.mark.parametrize("command", ["run", "eval"])
def test_the_otel_help_names_the_extra_and_no_file_a_pip_user_lacks(command: str) -> None:
    shown = " ".join(invoke(command, "--help", columns=300).output.replace("│", " ").split())
    assert "pip install 'statebound[otel]'" in shown and "docs/tracing.md" not in shown


def test_every_event_kind_is_documented_with_its_class() -> None:
    from statebound.flow import events
    from statebound.flow.listeners import RunFinished

    text = " ".join((ROOT / "docs" / "flow.md").read_text(encoding="utf-8").split())
    for event in (events.StateEntered, events.MessageAdded, events.SpeakerSelected, events.TransitionTaken,
                  events.BudgetHit, RunFinished):
        assert event.kind == re.sub(r"(?<!^)(?=[A-Z])", "_", event.__name__).lower()  # its class name in snake case
        assert f'`{event.__name__}` (`"{event.kind}"`)' in text
    assert events.TokenDelta.kind == "token" and '`TokenDelta`\'s kind is `"token"`' in text


@dataclass(frozen=True)
class Draft:
    tone: str | None = None
    length: int = 3


def long_flow():
    from statebound.flow import CallLLM, Flow, State, always

    return Flow(name="a-flow-with-a-long-name", initial="Ask", states=[
        State("Ask", outputs=[CallLLM(max_tokens=4)], transitions=[(always(), "End")]), State("End", final=True)])


FLOW_FILE = '''from os.path import join  # imported: not the file's own
from statebound import CallLLM, Flow, State, always


def helper(x):  # needs an argument: builds no flow
    return x


def build():
    return Flow(name="triage", initial="Ask", states=[
        State("Ask", outputs=[CallLLM(max_tokens=8)], transitions=[(always(), "End")]), State("End", final=True)])


flow = build()
'''


def test_a_flow_file_says_which_flows_it_holds(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("triage.py").write_text(FLOW_FILE)
    misspelt = invoke("run", "triage.py:flw", "-m", "scripted")
    assert misspelt.exit_code == 2
    assert misspelt.stderr.strip() == ("error: triage.py has no variable 'flw' (a Flow). Did you mean 'flow'? "
                                       "What could be a Flow there: build, flow")
    bare = invoke("run", "triage.py", "-m", "scripted")
    assert bare.exit_code == 2 and bare.stderr.strip() == "error: triage.py is a file: name the flow in it, triage.py:build or triage.py:flow"
    example = invoke("run", "arithmetc", "-m", "scripted")
    assert example.exit_code == 2 and "Did you mean 'arithmetic'?" in example.stderr


def test_the_options_every_model_takes_are_offered_with_a_did_you_mean() -> None:
    from statebound.errors import DefinitionError
    from statebound.llm import open_model

    with pytest.raises(DefinitionError) as raised:
        open_model("openai:gpt-4o-mini", pric="3", api_key="sk-test")
    said = str(raised.value)
    assert "unknown option(s) pric (did you mean price?)" in said
    assert re.search(r"it takes .*\bcache\b.*\bprice\b", said)


def test_run_shows_a_pick_with_its_scores_and_the_final_variables(tmp_path) -> None:
    from statebound.cli.run import _print_usage, _printer
    from statebound.flow import Flow, Pick, State, always
    from statebound.llm.testing import ScriptedLLM

    flow = Flow(name="drafts", initial="Tone", vars=Draft, states=[
        State("Tone", outputs=[Pick(["polite", "curt"], prompt="Tone:", name="tone", into="tone")],
              transitions=[(always(), "End")]),
        State("End", final=True)])
    console = Console(file=io.StringIO(), width=120, color_system=None)
    llm = ScriptedLLM(scorer=lambda context, text: [-0.1 if word == "curt" else -2.0 for word in text.split()])
    result = flow.run_sync("x", llm=llm, on_event=_printer(console))
    _print_usage(console, result)
    printed = console.file.getvalue()
    assert "llm: curt" in printed and "picked by score among 2: curt -0.10, polite -2.00" in printed
    assert "vars: Draft(tone='curt', length=3)" in printed


def test_run_takes_starting_variables_and_the_tools_environment(tmp_path, monkeypatch) -> None:
    routed = tmp_path / "routed.py"
    routed.write_text(textwrap.dedent('''
        from dataclasses import dataclass
        from statebound import CallTool, Flow, State, ToolResult, always

        @dataclass(frozen=True)
        class Routing:
            team: str = "unknown"
            priority: str = "low"

        class Desk:
            name = "desk 7"

        def route(ctx) -> ToolResult:
            return ToolResult(f"routed to {ctx.vars.team} by {ctx.deps.name}")

        flow = Flow(name="routed", initial="Route", vars=Routing, states=[
            State("Route", outputs=[CallTool(route)], transitions=[(always(), "End")]), State("End", final=True)])
    '''))
    ran = invoke("run", f"{routed}:flow", "-m", "scripted", "--task", "I was charged twice", "--var", "team=billing",
                 "--var", "priority=high", "--deps", f"{routed}:Desk")
    assert ran.exit_code == 0, ran.output
    assert "vars: Routing(team='billing', priority='high')" in ran.output and "routed to billing by desk 7" in ran.output
    monkeypatch.chdir(ROOT)
    refused = {
        ("--var", "tem=billing"): "error: --var tem: Routing has no field 'tem'. Did you mean 'team'? Its fields: team, priority",
        ("--deps", "Desk"): "error: --deps 'Desk' is not path.py:name (an object in a Python file, or a function or class "
                            "there that makes it from no arguments)",
        ("--deps", f"{TICKETS}:Desks"): f"error: {TICKETS} has no variable 'Desks' (what the tools get as ctx.deps). "
                                        "Did you mean 'Desk'?",
    }
    for flags, said in refused.items():
        result = invoke("run", f"{TICKETS}:flow", "-m", "scripted", "--task", "x", *flags)
        assert result.exit_code == 2 and result.stderr.strip().startswith(said), result.stderr
    none = invoke("run", "arithmetic", "-m", "scripted", "--var", "x=1")
    assert none.exit_code == 2 and "arithmetic declares no variables (Flow(vars=...)) for --var to set" in none.stderr


def test_threads_fit_80_columns_with_names_whole_and_one_line_per_task(tmp_path) -> None:
    from statebound.cli.threads import _checkpoint_table, _thread_table
    from statebound.flow.live import SQLiteCheckpointer
    from statebound.llm.testing import ScriptedLLM

    task = "My parcel has not arrived and the tracking page has not changed for a week, and nobody answers"
    with SQLiteCheckpointer(tmp_path / "t.sqlite") as store:
        for n in (1, 2):
            long_flow().run_sync(task, llm=ScriptedLLM(["ok"]), checkpointer=store, thread=f"customer-ticket-number-{n}")
        for width in (80, 160):
            console = Console(file=io.StringIO(), width=width, color_system=None)
            console.print(_thread_table(store, width))
            shown = console.file.getvalue()
            lines = shown.splitlines()
            assert max(map(cell_len, lines)) <= width, shown
            for n in (1, 2):
                assert f"customer-ticket-number-{n}" in shown and "a-flow-with-a-long-name" in shown
                assert len([line for line in lines if "My parcel has not" in line]) == 2  # one line each
        console = Console(file=io.StringIO(), width=80, color_system=None)
        console.print(_checkpoint_table(store, "customer-ticket-number-1"))
        assert "stored by: the thread that stored the checkpoint" in " ".join(console.file.getvalue().split())


def test_diagrams_tell_model_calls_apart_and_stored_signatures_stay() -> None:
    from pydantic import BaseModel

    from statebound.flow import CallLLM, Flow, State, always
    from statebound.flow.live.signature import signature

    class BugReport(BaseModel):
        title: str

    def search(query: str) -> str:
        """Search the notes."""
        return query

    flow = Flow(name="bugs", initial="Read", states=[
        State("Read", outputs=[CallLLM(schema=BugReport)], transitions=[(always(), "Look")]),
        State("Look", outputs=[CallLLM(tools=[search])], transitions=[(always(), "Say")]),
        State("Say", outputs=[CallLLM()], transitions=[(always(), "End")]),
        State("End", final=True)])
    assert '"Read" [label="Read\\nLLM(schema=BugReport)"];' in flow.to_dot()
    assert 'state "Look (LLM(tools#58; search))" as Look' in flow.to_mermaid()
    assert '"Say" [label="Say\\nLLM"];' in flow.to_dot()
    assert '"outputs":["LLM"]' in signature(flow)  # threads stored before still resume


def test_a_model_free_control_is_not_credited_with_a_model(tmp_path) -> None:
    from statebound.contract.result import EpisodeResult
    from statebound.report.sections import sections
    from statebound.report.tables import LoadedRun, build_report

    picked = {"name": "team", "method": "random", "candidates": ["a", "b"], "scores": None, "picked": 0}
    one = {"name": "team", "method": "score", "candidates": ["a"], "scores": None, "picked": 0}
    control = [EpisodeResult(task=str(n), agent="control", model="smollm2", llm_calls=0,
                             trajectory=[{"role": "assistant", "content": "a", "choice": picked}] * 3) for n in range(2)]
    scoped = [EpisodeResult(task=str(n), agent="scoped", model="smollm2", llm_calls=2,
                            trajectory=[{"role": "assistant", "content": "a", "choice": one},
                                        {"role": "assistant", "content": "b"}, {"role": "assistant", "content": "b"}])
              for n in range(2)]
    report = build_report([LoadedRun("run", tmp_path, None, [*control, *scoped])])
    results, *others = sections(report)
    rows = {row[0]: row for row in results.rows}
    assert "smollm2 (not called)" in rows["control"] and "smollm2" in rows["scoped"]
    assert "smollm2 (not called)" not in rows["scoped"]
    assert [r.group["agent"] for r in report.repetition] == ["scoped"]  # random picks are no model's replies
    assert report.repetition[0].repeated == 50.0  # b b: the single-candidate pick is not a reply


def test_one_meaning_per_public_name_and_the_old_names_warn() -> None:
    import statebound
    from statebound.flow.agent import Agent
    from statebound.llm.base import Choice

    assert statebound.StateAgent is Agent and statebound.Sample is Choice
    for old, new in (("Agent", "StateAgent"), ("Choice", "Sample")):
        with pytest.warns(DeprecationWarning, match=f"statebound.{old} is now statebound.{new}"):
            assert getattr(statebound, old) is getattr(statebound, new)
    assert "Agent" not in statebound.__all__ and "Choice" not in statebound.__all__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from statebound import ChoiceMethod, Sample, StateAgent  # noqa: F401 - the new names, silent


def test_a_pick_takes_a_fixed_list_and_the_example_needs_no_type_ignore() -> None:
    from statebound.errors import DefinitionError
    from statebound.flow import Flow, Pick, State, always
    from statebound.llm.testing import ScriptedLLM

    pick = Pick(["low", "high"], prompt="Priority:", name="priority")
    assert pick == Pick(("low", "high"), prompt="Priority:", name="priority")  # the same Pick, comparable
    flow = Flow(name="p", initial="P", states=[State("P", outputs=[pick], transitions=[(always(), "End")]),
                                               State("End", final=True)])
    result = flow.run_sync("x", llm=ScriptedLLM(scorer=lambda context, text: [-1.0 if text == "low" else -0.5]))
    assert result.history[-1].content == "high"
    with pytest.raises(DefinitionError, match="a list of str or a function candidates"):
        Pick([1, 2])  # type: ignore[list-item]
    assert "type: ignore" not in (ROOT / TICKETS).read_text(encoding="utf-8")
