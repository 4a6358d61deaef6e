"""Machines inside machines (Sub) and branches that run at once (Parallel, FanOut): results come
back through declared fields, writes merge through reducers, pauses in branches are answered by
id, checkpoints nest, and bad definitions are refused when the flow is built."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import pytest

from statebound.errors import CheckpointError, DefinitionError
from statebound.flow import (
    AskHuman,
    BranchFailed,
    CallLLM,
    CallTool,
    ChildEvent,
    ExitReason,
    FanOut,
    Flow,
    Instruction,
    Parallel,
    SQLiteCheckpointer,
    State,
    StateEntered,
    Sub,
    ToolResult,
    Update,
    always,
    append,
    check_flow,
    contains,
    maximum,
    questions,
    union,
)
from statebound.llm.testing import FunctionLLM, ScriptedLLM


@dataclass(frozen=True)
class Item:
    title: str = ""
    found: str = ""
    score: int = 0


@dataclass(frozen=True)
class Research:
    titles: list[str] = field(default_factory=lambda: ["alpha", "beta", "gamma"])
    evidence: list[str] = field(default_factory=list)
    best: int = 0
    tags: set[str] = field(default_factory=set)
    verdict: str = ""


def echo_model(delay: float = 0.0) -> FunctionLLM:
    async def respond(request):
        await asyncio.sleep(delay)
        return "about " + request.messages[-1].content.split()[-1]
    return FunctionLLM(respond)


def found(ctx):
    return {"found": ctx.last_of("llm").content, "score": len(ctx.vars.title)}


SEARCH = Flow(name="search", initial="Ask", vars=Item, states=[
    State("Ask", outputs=[Instruction(lambda ctx: f"Search {ctx.vars.title}"), CallLLM(max_tokens=8),
                          Update(found, writes=["found", "score"])],
          transitions=[(always(), "Done")]),
    State("Done", final=True),
])


def fan_out_flow(**options) -> Flow:
    fan = FanOut("titles", Sub(SEARCH, vars_out={"evidence": "found", "best": "score"}), item="title",
                 merge={"evidence": append, "best": maximum}, **options)
    return Flow(name="research", initial="Gather", vars=Research, max_turns=40, states=[
        State("Gather", outputs=[fan], transitions=[(always(), "End")]),
        State("End", final=True),
    ])


def test_sub_runs_the_child_flow_on_projected_vars_and_writes_back_declared_fields():
    parent = Flow(name="one", initial="Look", vars=Research, states=[
        State("Look", outputs=[Sub(SEARCH, vars_in=lambda ctx: {"title": ctx.vars.titles[1]},
                                   vars_out={"verdict": "found"})],
              transitions=[(always(), "End")]),
        State("End", final=True),
    ])
    result = parent.run_sync("find", llm=echo_model())
    assert result.exit_reason is ExitReason.FINAL, result.error
    assert result.vars.verdict == "about beta" and result.vars.evidence == []
    assert list(result.usage_by_state) == ["Look/search/Ask"]  # the child's call, under its path
    assert result.turns == 2  # the parent's transition and the child's


def test_fan_out_merges_in_declared_order_whatever_order_branches_finish():
    async def respond(request):
        title = request.messages[-1].content.split()[-1]
        await asyncio.sleep({"alpha": 0.06, "beta": 0.0, "gamma": 0.03}[title])  # beta finishes first
        return f"about {title}"
    result = fan_out_flow().run_sync("find", llm=FunctionLLM(respond))
    assert result.vars.evidence == ["about alpha", "about beta", "about gamma"]
    assert result.vars.best == 5


def test_branches_run_at_once_and_the_limit_holds_them_back():
    started = time.perf_counter()
    fan_out_flow().run_sync("find", llm=echo_model(0.1))
    at_once = time.perf_counter() - started
    started = time.perf_counter()
    fan_out_flow(limit=1).run_sync("find", llm=echo_model(0.1))
    one_by_one = time.perf_counter() - started
    assert at_once < 0.25 < 0.3 <= one_by_one, (at_once, one_by_one)


def test_fixed_branches_of_outputs_and_subs_with_a_set_reducer():
    def tag(name):
        return CallTool(lambda ctx: ToolResult(name, update={"tags": {name}}), name=name, writes=["tags"])
    flow = Flow(name="tags", initial="Tag", vars=Research, states=[
        State("Tag", outputs=[Parallel({"a": tag("red"), "b": [Instruction("x"), tag("blue")]}, merge={"tags": union})],
              transitions=[(always(), "End")]),
        State("End", final=True),
    ])
    assert flow.run_sync("t").vars.tags == {"red", "blue"}


def failing_flow(on_error):
    def boom(ctx):
        if ctx.vars.title == "beta":
            raise RuntimeError("no beta")
        return ToolResult("ok", update={"found": ctx.vars.title})
    broken = Flow(name="broken", initial="Go", vars=Item, states=[
        State("Go", outputs=[CallTool(boom, writes=["found"])], transitions=[(always(), "Done")]),
        State("Done", final=True),
    ])
    fan = FanOut("titles", Sub(broken, vars_out={"evidence": "found"}), item="title", merge={"evidence": append},
                 on_error=on_error)
    return Flow(name="p", initial="Gather", vars=Research, states=[
        State("Gather", outputs=[fan], transitions=[(always(), "End")]), State("End", final=True)])


def test_a_failing_branch_fails_the_state_or_is_recorded_and_skipped():
    failed = failing_flow("fail").run_sync("t")
    assert failed.exit_reason is ExitReason.ERROR and isinstance(failed.error, BranchFailed)
    assert "Gather.1/1 ended with error" in str(failed.error) and "no beta" in str(failed.error)
    skipped = failing_flow("skip").run_sync("t")
    assert skipped.exit_reason is ExitReason.FINAL and skipped.vars.evidence == ["alpha", "gamma"]
    record = [e for e in skipped.history if e.source == "tool"]
    assert len(record) == 1 and record[0].ok is False and record[0].data["branch"] == "Gather.1/1"


def test_the_token_budget_counts_every_branch():
    flow = fan_out_flow().replace(token_budget=12)
    result = flow.run_sync("find", llm=echo_model())
    assert result.exit_reason is ExitReason.BUDGET
    assert result.usage.calls == 3 and result.usage.total_tokens >= 12  # no branch alone used it up


def test_child_events_reach_the_parent_with_their_path():
    result = fan_out_flow().run_sync("find", llm=echo_model())
    nested = [e for e in result.events if isinstance(e, ChildEvent)]
    entered = {(e.path, e.event.state) for e in nested if isinstance(e.event, StateEntered)}
    assert entered == {(f"Gather.1/{i}", s) for i in range(3) for s in ("Ask", "Done")}
    assert nested[0].to_dict()["event"]["kind"] in ("state_entered", "message_added", "vars_written")


def test_a_listener_sees_a_childs_steps_while_the_child_runs():
    seen: list[str] = []  # what the parent's listener was handed, in order

    def replies_after_looking(request):
        # the child's model is asked once its state is entered: by then the parent's listener has it
        assert "Gather.1/0 Ask" in seen, seen
        return "about it"

    def listen(event):
        if isinstance(event, ChildEvent) and isinstance(event.event, StateEntered):
            seen.append(f"{event.path} {event.event.state}")

    result = fan_out_flow().run_sync("find", llm=FunctionLLM(replies_after_looking), on_event=listen)
    assert result.exit_reason is ExitReason.FINAL, result.error
    assert len(seen) == 6 and seen.index("Gather.1/0 Ask") < seen.index("Gather.1/0 Done")


@dataclass(frozen=True)
class Vote:
    answer: str = ""


REVIEW = Flow(name="review", initial="Ask", vars=Vote, states=[
    State("Ask", outputs=[AskHuman(lambda ctx: f"Approve {ctx.task}?"),
                          Update(lambda ctx: {"answer": ctx.last_of("human").content}, writes=["answer"])],
          transitions=[(always(), "Done")]),
    State("Done", final=True),
])


def review_flow() -> Flow:
    branches = {name: Sub(REVIEW, task=name, vars_out={"evidence": "answer"}) for name in ("r1", "r2", "r3")}
    return Flow(name="reviews", initial="Review", vars=Research, states=[
        State("Review", outputs=[Parallel(branches, merge={"evidence": append})], transitions=[(always(), "End")]),
        State("End", final=True),
    ])


def test_pauses_in_parallel_branches_are_answered_by_id_one_at_a_time_or_together(tmp_path):
    flow = review_flow()
    with SQLiteCheckpointer(tmp_path / "r.db") as store:
        paused = flow.run_sync("go", checkpointer=store, thread="t")
        assert questions(paused) == {"Review.1/r1": "Approve r1?", "Review.1/r2": "Approve r2?",
                                     "Review.1/r3": "Approve r3?"}
        again = flow.resume_sync("t", checkpointer=store)  # no answer: still waiting, nothing runs
        assert questions(again) == questions(paused)
        one = flow.resume_sync("t", checkpointer=store, input={"Review.1/r2": "yes 2"})
        assert set(questions(one)) == {"Review.1/r1", "Review.1/r3"}
        with pytest.raises(CheckpointError, match=r"2 questions wait \(Review.1/r1, Review.1/r3\)"):
            flow.resume_sync("t", checkpointer=store, input="plain text")
        done = flow.resume_sync("t", checkpointer=store, input={"Review.1/r1": "yes 1", "Review.1/r3": "no 3"})
    assert done.exit_reason is ExitReason.FINAL, done.error
    assert done.vars.evidence == ["yes 1", "yes 2", "no 3"]


def test_an_unknown_pause_id_is_refused_naming_those_waiting(tmp_path):
    flow = review_flow()
    with SQLiteCheckpointer(tmp_path / "r.db") as store:
        flow.run_sync("go", checkpointer=store, thread="t")
        with pytest.raises(CheckpointError, match="no question waits with the id 'Review.1/r9'; those waiting: Review.1/r1"):
            flow.resume_sync("t", checkpointer=store, input={"Review.1/r9": "yes"})
        assert len(questions(flow.resume_sync("t", checkpointer=store))) == 3  # refused before anything ran


def test_a_pause_inside_a_sub_inside_a_branch_has_the_whole_path_as_its_id(tmp_path):
    middle = Flow(name="middle", initial="Check", vars=Vote, states=[
        State("Check", outputs=[Sub(REVIEW, vars_out={"answer": "answer"}, name="inner")],
              transitions=[(always(), "Done")]),
        State("Done", final=True),
    ])
    flow = Flow(name="outer", initial="Work", vars=Research, states=[
        State("Work", outputs=[Parallel({"m": Sub(middle, vars_out={"verdict": "answer"}),
                                         "s": Sub(SEARCH, vars_in={"title": "verdict"})})],
              transitions=[(always(), "End")]),
        State("End", final=True),
    ])
    with SQLiteCheckpointer(tmp_path / "n.db") as store:
        paused = flow.run_sync("deep", llm=echo_model(), checkpointer=store, thread="t")
        assert list(questions(paused)) == ["Work.1/m/Check.1/inner"]
        done = flow.resume_sync("t", checkpointer=store, input="sure", llm=ScriptedLLM([]))  # text: the one waiting
        threads = {info.thread: info.status for info in store.threads()}
    assert done.exit_reason is ExitReason.FINAL and done.vars.verdict == "sure"
    assert threads == {"t": "final", "t/Work.1/m": "final", "t/Work.1/m/Check.1/inner": "final", "t/Work.1/s": "final"}


def test_a_resumed_run_continues_only_the_unfinished_branches(tmp_path):
    calls: list[str] = []

    async def respond(request):
        title = request.messages[-1].content.split()[-1]
        calls.append(title)
        if title == "gamma" and calls.count("gamma") == 1:
            raise RuntimeError("the server went away")
        return f"about {title}"
    flow = fan_out_flow()
    with SQLiteCheckpointer(tmp_path / "f.db") as store:
        crashed = flow.run_sync("find", llm=FunctionLLM(respond), checkpointer=store, thread="t")
        assert crashed.exit_reason is ExitReason.ERROR
        done = flow.resume_sync("t", checkpointer=store, llm=FunctionLLM(respond))
    assert sorted(calls) == ["alpha", "beta", "gamma", "gamma"]  # the finished branches were not asked again
    assert done.vars.evidence == ["about alpha", "about beta", "about gamma"]


def test_diagrams_draw_sub_machines_as_clusters_that_collapse():
    flow = review_flow()
    mermaid = flow.to_mermaid()
    assert "    state Review {" in mermaid and "\n        --\n" in mermaid  # branches as concurrent regions
    assert 'state "Ask (AskHuman -> Update(<lambda>))" as Review__r2__Ask' in mermaid
    dot = flow.to_dot()
    assert 'subgraph "cluster_Review"' in dot and '"Review/r3/Ask"' in dot and dot.endswith("}\n")
    assert "cluster" not in flow.to_dot(nested=False) and "{" not in flow.to_mermaid(nested=False)


def build_error(**parts) -> str:
    states = [State("S", outputs=[parts["output"]], transitions=[(always(), "E")]), State("E", final=True)]
    with pytest.raises(DefinitionError) as refused:
        Flow(name="bad", initial="S", vars=parts.get("vars", Research), states=states)
    return str(refused.value)


def test_bad_definitions_are_refused_when_built_naming_state_and_field():
    sub = Sub(SEARCH, vars_out={"evidence": "found"})
    assert "state 'S': Sub(search) vars_in: field 'title' (str) of Item cannot take field 'titles' (list[str])" in \
        build_error(output=Sub(SEARCH, vars_in={"title": "titles"}))
    assert "state 'S': Sub(search) writes 'nope', which Research has no field for" in \
        build_error(output=Sub(SEARCH, vars_out={"nope": "found"}))
    assert "state 'S': Sub(search) vars_out names field 'lost', which Item has no field for" in \
        build_error(output=Sub(SEARCH, vars_out={"verdict": "lost"}))
    assert "branches 'a' and 'b' both write 'evidence', which has no reducer" in \
        build_error(output=Parallel({"a": sub, "b": sub}))
    assert "merge['evidence']: maximum and minimum need a number, text or date field, and it is list[str]" in \
        build_error(output=Parallel({"a": sub, "b": sub}, merge={"evidence": maximum}))
    assert "merge['evidence'] = 3 is not a reducer" in build_error(output=Parallel({"a": sub, "b": sub}, merge={"evidence": 3}))
    assert "fans out over 'verdict' (str), which is not a list" in \
        build_error(output=FanOut("verdict", Sub(SEARCH), item="title"))
    assert "limit must be at least 1" in build_error(output=FanOut("titles", Sub(SEARCH), item="title", limit=0))
    assert "every branch writes 'evidence', which has no reducer" in \
        build_error(output=FanOut("titles", sub, item="title"))
    assert "item field 'score' (int) cannot take the items of 'titles' (str)" in \
        build_error(output=FanOut("titles", Sub(SEARCH), item="score"))


def test_flow_check_looks_inside_sub_machines():
    shadowed = Flow(name="child", initial="A", vars=Item, states=[
        State("A", outputs=[CallLLM()], transitions=[(always(), "Done"), (contains("z"), "B")]),
        State("B", outputs=[CallLLM()], transitions=[(always(), "Done")]),
        State("Done", final=True),
    ])
    flow = Flow(name="p", initial="S", vars=Research, states=[
        State("S", outputs=[Sub(shadowed, vars_out={"verdict": "found"})], transitions=[(always(), "E")]),
        State("E", final=True),
    ])
    codes = {(d.code, d.state) for d in check_flow(flow)}
    assert {("shadowed-transition", "S/child/A"), ("unreachable-in-sub", "S/child/B"),
            ("sub-never-writes", "S")} <= codes
    two_steps = Flow(name="two", initial="A", max_turns=1, vars=Item, states=[
        State("A", outputs=[CallLLM()], transitions=[(always(), "B")]),
        State("B", outputs=[Update(lambda ctx: {"found": "x"}, writes=["found"])], transitions=[(always(), "Done")]),
        State("Done", final=True),
    ])

    def parent(child):
        return Flow(name="p", initial="S", vars=Research, states=[
            State("S", outputs=[Parallel({"a": Sub(child, vars_out={"verdict": "found"})})], transitions=[(always(), "E")]),
            State("E", final=True),
        ])
    assert ("branch-never-finishes", "S") in {(d.code, d.state) for d in check_flow(parent(two_steps))}
    assert ("branch-never-finishes", "S") not in {(d.code, d.state) for d in check_flow(parent(SEARCH))}


def test_a_fan_out_of_8_branches_waiting_200_ms_takes_under_twice_one_branch():
    from statebound.examples.fan_out import build_flow, delayed_model

    def seconds(questions):
        started = time.perf_counter()
        result = build_flow().run_sync("research", llm=delayed_model(0.2), vars={"questions": questions})
        assert result.exit_reason is ExitReason.FINAL and len(result.vars.notes) == len(questions)
        return time.perf_counter() - started
    one = min(seconds(["q1"]) for _ in range(2))
    eight = min(seconds([f"q{n}" for n in range(8)]) for _ in range(2))
    assert 0.2 <= one and eight < 2 * one, (one, eight)


def test_the_bundled_fan_out_example_merges_its_notes_in_order_and_summarises_them():
    from statebound.examples.fan_out import delayed_model, flow

    result = flow.run_sync("research", llm=delayed_model(0.0), vars={"questions": ["x", "y", "z"]})
    assert result.vars.notes == ["found: x", "found: y", "found: z"]
    assert result.vars.summary == "summary of 3 notes" and result.trajectory == ("Gather", "Summarise", "End")


SIGN_OFF_FILE = '''
from dataclasses import dataclass, field

from statebound.flow import AskHuman, Flow, Parallel, State, Sub, Update, always, append


@dataclass(frozen=True)
class Sign:
    answer: str = ""


@dataclass(frozen=True)
class Release:
    signatures: list[str] = field(default_factory=list)


sign = Flow(name="sign", initial="Ask", vars=Sign, states=[
    State("Ask", outputs=[AskHuman(lambda ctx: f"Does {ctx.task} sign off?"),
                          Update(lambda ctx: {"answer": ctx.task + ": " + ctx.last_of("human").content}, writes=["answer"])],
          transitions=[(always(), "Done")]),
    State("Done", final=True),
])
teams = {team: Sub(sign, task=team, vars_out={"signatures": "answer"}) for team in ("legal", "ops")}
flow = Flow(name="release", initial="SignOff", vars=Release, states=[
    State("SignOff", outputs=[Parallel(teams, merge={"signatures": append})], transitions=[(always(), "Ship")]),
    State("Ship", final=True),
])
'''


def test_the_cli_prints_branch_steps_and_answers_pauses_by_id(tmp_path):
    from typer.testing import CliRunner

    from statebound.cli.app import app

    (tmp_path / "release.py").write_text(SIGN_OFF_FILE)
    command = ["run", f"{tmp_path / 'release.py'}:flow", "-m", "scripted", "--store", str(tmp_path / "r.db"),
               "--thread", "r"]
    runner = CliRunner()
    paused = runner.invoke(app, [*command, "--task", "v2"])
    assert paused.exit_code == 3, paused.output
    assert "[SignOff.1/legal] Does legal sign off?" in paused.output and "[SignOff.1/ops] task: ops" in paused.output
    assert "--answer 'SignOff.1/legal=your answer' --answer 'SignOff.1/ops=your answer'" in paused.output
    assert runner.invoke(app, [*command, "--resume", "--answer", "SignOff.1/ops=no"]).exit_code == 3
    done = runner.invoke(app, [*command, "--resume", "--answer", "SignOff.1/legal=yes"])
    assert done.exit_code == 0, done.output
    assert "Release(signatures=['legal: yes', 'ops: no'])" in done.output.replace("\n", "")
    both = runner.invoke(app, [*command, "--resume", "--input", "x", "--answer", "a=b"])
    assert both.exit_code == 2 and "not both" in both.output


def test_a_fan_out_over_an_empty_list_runs_nothing_and_leaves_the_fields_as_they_were():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no declared write is reported unwritten
        result = fan_out_flow().run_sync("find", vars={"titles": [], "evidence": ["kept"]})
    assert result.exit_reason is ExitReason.FINAL and result.vars.evidence == ["kept"] and result.usage.calls == 0
