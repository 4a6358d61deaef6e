"""Choices in a run store: `statebound show` prints each one readably, reports count them per episode.

The store is written from real flow runs with Pick states on the scripted double (its scorer gives
each word a log-probability), converted to traces as the harness converts them."""

from __future__ import annotations

import asyncio

import pytest
from typer.testing import CliRunner

from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.cli.app import app
from statebound.contract.converters import trace_of_flow
from statebound.contract.result import EpisodeResult
from statebound.flow import CallLLM, Flow, Instruction, Pick, State, always
from statebound.llm.testing import ScriptedLLM
from statebound.report.finish import finish_run
from statebound.report.show import choice_lines

COLOURS = ["red", "green", "blue", "cyan", "magenta", "yellow", "black", "white", "grey", "olive", "navy", "teal"]
SCORES = {colour: -1.0 - index / 2 for index, colour in enumerate(["blue", "navy", "teal", "cyan", "grey"])}

PICKER = Flow(name="picker", initial="Colour", states=[
    State("Colour", outputs=[Instruction("Which colour is the sky?"), Pick(lambda ctx: COLOURS, name="colour")],
          transitions=[(always(), "Size")]),
    State("Size", outputs=[Instruction("Big or small?"), Pick(lambda ctx: ["big", "small"], name="size")],
          transitions=[(always(), "End")]),
    State("End", final=True),
])
PLAIN = Flow(name="plain", initial="Answer", states=[
    State("Answer", outputs=[Instruction("Answer."), CallLLM(max_tokens=4)], transitions=[(always(), "End")]),
    State("End", final=True),
])


def _result(flow: Flow, agent: str, task: str) -> EpisodeResult:
    llm = ScriptedLLM(["blue"], scorer=lambda context, text: [SCORES.get(word, -5.0) for word in text.split()])
    trace = trace_of_flow(asyncio.run(flow.run(f"task {task}", llm=llm)))
    return EpisodeResult(task=task, agent=agent, model="scripted", success=True, reward=1.0, turns=2,
                         exit_state=trace.exit_state, exit_reason=trace.exit, trajectory=trace.to_dicts(),
                         events=[dict(event) for event in trace.events])


@pytest.fixture
def run_dir(tmp_path):
    config = RunConfig(benchmark="hand", agents=("picker", "plain"), models=(ModelSpec("scripted"),),
                       task_ids=("t1", "t2"))
    with RunStore(tmp_path) as store:
        store.start(config, resume=False)
        for position, (flow, agent, task) in enumerate(
                [(PICKER, "picker", "t1"), (PICKER, "picker", "t2"), (PLAIN, "plain", "t1"), (PLAIN, "plain", "t2")]):
            store.save(_result(flow, agent, task), benchmark="hand", position=position)
    return tmp_path


def test_show_prints_each_choice_with_its_scores_the_pick_marked_and_long_lists_shortened(run_dir):
    shown = CliRunner().invoke(app, ["show", str(run_dir), "--task", "t1", "--agent", "picker"],
                               env={"COLUMNS": "120"})
    assert shown.exit_code == 0, shown.output
    text = shown.output
    assert "choice colour by score: 12 candidates" in text and "choice size by score: 2 candidates" in text
    assert text.index("> blue") < text.index("navy") < text.index("teal")  # best score first, the pick marked
    assert "-1.000" in text and "... 6 more (lower scores)" in text
    assert "olive" not in text  # a -5 candidate beyond the six shown


def test_choice_lines_keep_the_pick_in_view_and_read_unscored_choices():
    many = {"name": "n", "method": "score", "candidates": [f"c{i}" for i in range(10)],
            "scores": [-float(i) for i in range(10)], "picked": 9}  # the pick has the lowest score
    lines = choice_lines(many, shown=3)
    assert lines[0] == "choice n by score: 10 candidates"
    assert [line.split()[0] for line in lines[1:3]] == ["c0", "c1"] and lines[3].lstrip().startswith("> c9")
    assert lines[-1].strip() == "... 7 more (lower scores)"
    drawn = choice_lines({"name": "table", "method": "random", "candidates": ["a", "b"], "scores": None, "picked": 1})
    assert drawn == ["choice table by random: 2 candidates", "    a", "  > b"]
    empty = choice_lines({"name": "t", "method": "score", "candidates": [], "scores": None, "picked": None})
    assert empty == ["choice t by score: nothing to choose from"]


def test_reports_count_choices_per_episode_only_when_a_run_has_some(run_dir, tmp_path_factory):
    report, _ = finish_run([run_dir], out_dir=run_dir, plots=False)
    counts = {row.group["agent"]: row.extra["choices"] for row in report.main}
    assert counts == {"picker": 2.0, "plain": 0.0}
    markdown = (run_dir / "report.md").read_text()
    header, picker, plain = (line.split(" | ") for line in markdown.splitlines()[2:6] if "---" not in line)
    column = header.index("Choices/ep")
    assert (picker[0], picker[column], plain[column]) == ("| picker", "2.00", "0.00")
    assert "- **Choices/ep**: mean choices per episode" in markdown
    page = (run_dir / "report.html").read_text()
    assert "<dt>Choices/ep</dt>" in page and 'title="mean choices per episode' in page

    plain_only = tmp_path_factory.mktemp("plain")
    config = RunConfig(benchmark="hand", agents=("plain",), models=(ModelSpec("scripted"),), task_ids=("t1",))
    with RunStore(plain_only) as store:
        store.start(config, resume=False)
        store.save(_result(PLAIN, "plain", "t1"), benchmark="hand", position=0)
    report, _ = finish_run([plain_only], out_dir=plain_only, plots=False)
    assert "choices" not in report.main[0].extra and "Choices/ep" not in (plain_only / "report.md").read_text()


def test_candidates_without_a_score_come_after_the_scored_ones():
    choice = {"name": "t", "method": "label", "candidates": ["unscored", "worse", "best"],
              "scores": [None, -2.0, -0.5], "picked": 2}
    names = [line.replace(">", " ").split()[0] for line in choice_lines(choice)[1:]]
    assert names == ["best", "worse", "unscored"]
