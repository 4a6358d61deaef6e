"""A fork can start at a child run's checkpoint (a Sub's, a parallel branch's, a grandchild's), on
SQLite and PostgreSQL: the new top-level thread runs the parent's nesting output again, which
continues inside the forked child from its checkpoint; the child's finished siblings return their
stored results (no model call again), unfinished ones continue; the original threads are left as
they were; a child's thread that cannot be placed in its parent is refused saying why, before
anything is written."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from statebound.cli.app import app
from statebound.errors import CheckpointError
from statebound.flow import (
    AskHuman,
    CallLLM,
    ExitReason,
    FanOut,
    Flow,
    Instruction,
    Parallel,
    State,
    Sub,
    Update,
    always,
    append,
    questions,
)
from statebound.flow.live import open_checkpointer
from statebound.flow.live.fold import fold
from statebound.llm.testing import FunctionLLM
from statebound.view.app import build_app
from statebound.view.sources import find_sources


@dataclass(frozen=True)
class Draft:
    title: str = ""
    text: str = ""


@dataclass(frozen=True)
class Post:
    titles: list[str] = field(default_factory=lambda: ["owls", "bats", "moths"])
    article: str = ""
    first: str = ""
    second: str = ""
    articles: list[str] = field(default_factory=list)


def writer_model(calls: list[str], fail_once: str | None = None) -> FunctionLLM:
    """Outlines a topic, then writes from the outline it sees; each prompt logged in ``calls``
    (``fail_once``: the first outline of that topic fails, as a server that went away)."""
    async def respond(request):
        last = request.messages[-1].content
        calls.append(last)
        if "Outline" in last:
            topic = last.split()[-1]
            if topic == fail_once and calls.count(last) == 1:
                raise RuntimeError("the server went away")
            return f"outline: {topic} facts"
        outline = [m.content for m in request.messages if m.content.startswith("outline:")]
        return f"article from {outline[-1]}" if outline else "plan: write"
    return FunctionLLM(respond)


def text_of(ctx) -> dict:
    return {"text": ctx.last_of("llm").content}


WRITER = Flow(name="writer", initial="Outline", vars=Draft, states=[
    State("Outline", outputs=[Instruction(lambda ctx: f"Outline {ctx.vars.title or ctx.task}"), CallLLM()],
          transitions=[(always(), "Write")]),
    State("Write", outputs=[Instruction("Write it"), CallLLM(), Update(text_of, writes=["text"])],
          transitions=[(always(), "Done")]),
    State("Done", final=True),
])
BLOG = Flow(name="blog", initial="Plan", vars=Post, states=[
    State("Plan", outputs=[Instruction("Plan"), CallLLM()], transitions=[(always(), "Compose")]),
    State("Compose", outputs=[Instruction("Compose"), Sub(WRITER, vars_out={"article": "text"})],
          transitions=[(always(), "End")]),
    State("End", final=True),
])
FANNED = Flow(name="fanned", initial="Gather", vars=Post, states=[
    State("Gather", outputs=[FanOut("titles", Sub(WRITER, vars_out={"articles": "text"}), item="title",
                                    merge={"articles": append})],
          transitions=[(always(), "End")]),
    State("End", final=True),
])
PAIR = Flow(name="pair", initial="Plan", vars=Post, states=[
    State("Plan", outputs=[Instruction("Plan"), CallLLM()], transitions=[(always(), "Both")]),
    State("Both", outputs=[Parallel({"a": Sub(WRITER, task="owls", vars_out={"first": "text"}),
                                     "b": Sub(WRITER, task="bats", vars_out={"second": "text"})})],
          transitions=[(always(), "Done")]),
    State("Done", final=True),
])
EDITION = Flow(name="edition", initial="Issue", vars=Post, states=[
    State("Issue", outputs=[Sub(PAIR, vars_out={"first": "first", "second": "second"})],
          transitions=[(always(), "End")]),
    State("End", final=True),
])


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def where(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "threads.db")
    return request.getfixturevalue("postgres_url")


def reply_checkpoint(store, thread: str, text: str) -> int:
    """The checkpoint of ``thread`` that stored the reply ``text``."""
    return next(p.seq for p in store.checkpoints(thread) if any(e.content == text for e in p.added))


def entry_index(store, thread: str, text: str) -> int:
    entries = [e.content for p in store.checkpoints(thread) for e in p.added]
    return entries.index(text)


def test_a_sub_forked_mid_way_with_an_edited_reply_runs_on_inside_the_child(where):
    calls: list[str] = []
    child = "t1/Compose.1/writer"
    with open_checkpointer(where) as store:
        done = BLOG.run_sync("owls", llm=writer_model(calls), checkpointer=store, thread="t1")
        assert done.vars.article == "article from outline: owls facts"
        before = {thread: len(store.checkpoints(thread)) for thread in ("t1", child)}
        at = reply_checkpoint(store, child, "outline: owls facts")
        new = BLOG.fork(child, checkpointer=store, at=at, edit=(entry_index(store, child, "outline: owls facts"),
                                                                 "outline: owl myths"))
        assert new == f"t1-at-Compose.1-writer-{at}"
        record = store.record(new)
        compose = [p for p in store.checkpoints("t1") if p.state == "Compose" and p.kind == "output"][0]
        assert (record.parent, record.parent_seq) == ("t1", compose.seq)  # after Instruction, before the Sub
        calls.clear()
        forked = BLOG.resume_sync(new, checkpointer=store, llm=writer_model(calls))
        assert forked.exit_reason is ExitReason.FINAL, forked.error
        assert forked.vars.article == "article from outline: owl myths"  # projected from the edited child
        assert len(calls) == 1 and calls[0].endswith("Write it")  # neither the plan nor the outline again
        assert WRITER.resume_sync(f"{new}/Compose.1/writer", checkpointer=store).vars.text == \
            "article from outline: owl myths"
        assert {thread: len(store.checkpoints(thread)) for thread in ("t1", child)} == before
        assert BLOG.resume_sync("t1", checkpointer=store).vars.article == "article from outline: owls facts"
        assert sorted(info.thread for info in store.threads()) == sorted(["t1", child, new, f"{new}/Compose.1/writer"])


def test_a_forked_branch_runs_on_while_finished_siblings_are_not_run_again(where):
    calls: list[str] = []
    with open_checkpointer(where) as store:
        crashed = FANNED.run_sync("topics", llm=writer_model(calls, fail_once="moths"), checkpointer=store,
                                  thread="t")
        assert crashed.exit_reason is ExitReason.ERROR and "Gather.1/2 ended with error" in str(crashed.error)
        bats = "t/Gather.1/1"
        at = reply_checkpoint(store, bats, "outline: bats facts")
        new = FANNED.fork(bats, checkpointer=store, at=at, name="t2", edit=(entry_index(store, bats, "outline: bats facts"),
                                                                          "outline: bat myths"),
                          vars={"text": "draft"})
        assert sorted(info.thread for info in store.threads() if info.thread.startswith("t2")) == \
            ["t2", "t2/Gather.1/0", "t2/Gather.1/1", "t2/Gather.1/2"]
        assert fold(store.lineage("t2/Gather.1/1"), "").stored.vars == {"title": "bats", "text": "draft"}
        calls.clear()
        done = FANNED.resume_sync(new, checkpointer=store, llm=writer_model(calls))
    assert done.exit_reason is ExitReason.FINAL, done.error
    assert done.vars.articles == ["article from outline: owls facts", "article from outline: bat myths",
                                  "article from outline: moths facts"]
    # bats writes on from its edited outline, moths (cut off) outlines again and writes; owls: nothing
    assert len(calls) == 3 and calls.count("Write it") == 2 and sum("Outline moths" in call for call in calls) == 1


def test_a_grandchild_fork_forks_each_ancestor_where_its_child_began(where):
    calls: list[str] = []
    grandchild = "t/Issue.1/pair/Both.1/a"
    with open_checkpointer(where) as store:
        EDITION.run_sync("news", llm=writer_model(calls), checkpointer=store, thread="t")
        at = reply_checkpoint(store, grandchild, "outline: owls facts")
        new = store.fork(grandchild, at=at, thread="n",
                         edit=(entry_index(store, grandchild, "outline: owls facts"), "outline: owl news"))
        assert new == "n"
        made = {info.thread: info.parent for info in store.threads() if info.thread.startswith("n")}
        assert made == {"n": "t", "n/Issue.1/pair": "t/Issue.1/pair", "n/Issue.1/pair/Both.1/a": grandchild,
                        "n/Issue.1/pair/Both.1/b": "t/Issue.1/pair/Both.1/b"}
        middle = store.record("n/Issue.1/pair")
        plan_reply = reply_checkpoint(store, "t/Issue.1/pair", "plan: write")
        assert middle.parent_seq > plan_reply  # the middle run starts after its plan: not asked again
        calls.clear()
        done = EDITION.resume_sync("n", checkpointer=store, llm=writer_model(calls))
    assert done.exit_reason is ExitReason.FINAL, done.error
    assert (done.vars.first, done.vars.second) == ("article from outline: owl news", "article from outline: bats facts")
    assert len(calls) == 1 and calls[0].endswith("Write it")


def test_a_forks_child_forks_again_and_a_finished_childs_variables_can_be_set(tmp_path):
    calls: list[str] = []
    child = "t1/Compose.1/writer"
    with open_checkpointer(str(tmp_path / "s.db")) as store:
        BLOG.run_sync("owls", llm=writer_model(calls), checkpointer=store, thread="t1")
        store.fork(child, at=reply_checkpoint(store, child, "outline: owls facts"), thread="n",
                   edit=(entry_index(store, child, "outline: owls facts"), "outline: myths"))
        assert BLOG.resume_sync("n", checkpointer=store, llm=writer_model(calls)).vars.article == \
            "article from outline: myths"
        again = "n/Compose.1/writer"
        store.fork(again, at=reply_checkpoint(store, again, "article from outline: myths"), thread="n2",
                   edit=(entry_index(store, again, "article from outline: myths"), "article: short"))
        assert store.record("n2").parent == "n"
        calls.clear()
        assert BLOG.resume_sync("n2", checkpointer=store, llm=writer_model(calls)).vars.article == "article: short"
        finished = BLOG.fork(child, checkpointer=store, at=store.checkpoints(child)[-1].seq, vars={"text": "by hand"})
        assert BLOG.resume_sync(finished, checkpointer=store, llm=writer_model(calls)).vars.article == "by hand"
    assert calls == []  # the edited reply and the set result were taken as they are


def test_a_child_forked_before_its_own_children_began_runs_them_again(where):
    calls: list[str] = []
    with open_checkpointer(where) as store:
        EDITION.run_sync("news", llm=writer_model(calls), checkpointer=store, thread="t")
        at = reply_checkpoint(store, "t/Issue.1/pair", "plan: write")
        new = store.fork("t/Issue.1/pair", at=at, thread="n", edit=(entry_index(store, "t/Issue.1/pair", "plan: write"),
                                                                     "plan: rewrite"))
        assert sorted(info.thread for info in store.threads() if info.thread.startswith("n")) == ["n", "n/Issue.1/pair"]
        calls.clear()
        done = EDITION.resume_sync(new, checkpointer=store, llm=writer_model(calls))
    assert (done.vars.first, done.vars.second) == ("article from outline: owls facts", "article from outline: bats facts")
    assert len(calls) == 4 and calls.count("Write it") == 2  # both branches outline and write again


REVIEW = Flow(name="review", initial="Ask", vars=Draft, states=[
    State("Ask", outputs=[AskHuman(lambda ctx: f"Approve {ctx.task}?"),
                          Update(lambda ctx: {"text": f"{ctx.task}: {ctx.last_of('human').content}"}, writes=["text"])],
          transitions=[(always(), "Done")]),
    State("Done", final=True),
])
REVIEWS = Flow(name="reviews", initial="Review", vars=Post, states=[
    State("Review", outputs=[Parallel({name: Sub(REVIEW, task=name, vars_out={"articles": "text"})
                                       for name in ("r1", "r2", "r3")}, merge={"articles": append})],
          transitions=[(always(), "End")]),
    State("End", final=True),
])


def test_a_branch_forked_at_its_pause_is_answered_again_and_only_it_waits(where):
    with open_checkpointer(where) as store:
        REVIEWS.run_sync("go", checkpointer=store, thread="t")
        first = REVIEWS.resume_sync("t", checkpointer=store, input={f"Review.1/r{n}": f"yes {n}" for n in (1, 2, 3)})
        assert first.vars.articles == ["r1: yes 1", "r2: yes 2", "r3: yes 3"]
        pause = next(p.seq for p in store.checkpoints("t/Review.1/r2") if p.kind == "pause")
        new = store.fork("t/Review.1/r2", at=pause, thread="again")
        waiting = REVIEWS.resume_sync(new, checkpointer=store)
        assert questions(waiting) == {"Review.1/r2": "Approve r2?"}  # r1 and r3 had finished
        done = REVIEWS.resume_sync(new, checkpointer=store, input={"Review.1/r2": "no 2"})
        assert done.vars.articles == ["r1: yes 1", "r2: no 2", "r3: yes 3"]
        assert REVIEWS.resume_sync("t", checkpointer=store).vars.articles == first.vars.articles


def test_a_child_thread_that_cannot_be_placed_is_refused_before_anything_is_written(tmp_path):
    child = "t1/Compose.1/writer"
    with open_checkpointer(str(tmp_path / "s.db")) as store:
        BLOG.run_sync("owls", llm=writer_model([]), checkpointer=store, thread="t1")
        last = store.checkpoints(child)[-1].seq
        store.fork_one(child, at=last, thread="gone/Compose.1/writer")  # a child's name, no parent
        store.fork_one(child, at=last, thread="t1/Plan.1/writer")  # no output of Plan runs it
        store.fork_one(child, at=last, thread="t1/Compose.2/writer")  # t1 entered Compose once
        names = sorted(info.thread for info in store.threads())
        with pytest.raises(CheckpointError, match=f"thread {child!r} has no checkpoint 99 \\(its last is {last}\\)"):
            store.fork(child, at=99, thread="x")
        with pytest.raises(CheckpointError, match="named as a child run of thread 'gone' .* has no thread 'gone'"):
            store.fork("gone/Compose.1/writer", at=last, thread="x")
        with pytest.raises(CheckpointError, match="no output of state 'Plan' \\(Instruction, LLM\\) runs a child "
                                                  "'writer'"):
            store.fork("t1/Plan.1/writer", at=last, thread="x")
        with pytest.raises(CheckpointError, match="the parent entered state 'Compose' 1 time\\(s\\), not 2"):
            store.fork("t1/Compose.2/writer", at=last, thread="x")
        with pytest.raises(CheckpointError, match="has a thread 't1' already"):
            store.fork(child, at=last, thread="t1")
        with pytest.raises(CheckpointError, match="is a new top-level thread: its name cannot hold '/'"):
            store.fork(child, at=last, thread="t2/Compose.1/writer")
        assert sorted(info.thread for info in store.threads()) == names


def test_the_command_line_and_the_viewer_fork_a_child_and_the_cli_says_where_the_run_goes_on(tmp_path):
    where = str(tmp_path / "s.db")
    child = "t1/Compose.1/writer"
    with open_checkpointer(where) as store:
        BLOG.run_sync("owls", llm=writer_model([]), checkpointer=store, thread="t1")
        at = reply_checkpoint(store, child, "outline: owls facts")
        index = entry_index(store, child, "outline: owls facts")
    made = CliRunner().invoke(app, ["threads", where, child, "--fork", str(at), "--edit", str(index), "outline: moths"])
    assert made.exit_code == 0, made.output
    new = f"t1-at-Compose.1-writer-{at}"
    assert made.output.startswith(f"{new}: a new thread from t1 at checkpoint ")
    assert f"which continues inside {new}/Compose.1/writer, forked from {child} at checkpoint {at} (history entry " \
           f"#{index} edited)" in made.output.replace("\n", "")
    assert f"flow.resume('{new}'" in made.output
    web = TestClient(build_app(find_sources([Path(where)])))
    posted = web.post(f"/store/{Path(where).stem}/fork/{child}", data={"seq": str(at), "name": "from-web"},
                      follow_redirects=False)
    assert posted.status_code == 303 and posted.headers["location"].endswith("/thread/from-web"), posted.text
    with open_checkpointer(where) as store:
        assert BLOG.resume_sync(new, checkpointer=store, llm=writer_model([])).vars.article == \
            "article from outline: moths"
        assert BLOG.resume_sync("from-web", checkpointer=store, llm=writer_model([])).vars.article == \
            "article from outline: owls facts"


INNER = Flow(name="middle", initial="Check", vars=Draft, states=[
    State("Check", outputs=[Sub(REVIEW, vars_out={"text": "text"}, name="inner")], transitions=[(always(), "Done")]),
    State("Done", final=True),
])
OUTER = Flow(name="outer", initial="Work", vars=Post, states=[
    State("Work", outputs=[Sub(INNER, vars_out={"article": "text"})], transitions=[(always(), "End")]),
    State("End", final=True),
])


def test_a_child_forked_while_paused_in_its_own_child_keeps_that_child_as_it_stood(tmp_path):
    with open_checkpointer(str(tmp_path / "s.db")) as store:
        assert list(questions(OUTER.run_sync("ship", checkpointer=store, thread="t"))) == ["Work.1/middle/Check.1/inner"]
        assert OUTER.resume_sync("t", checkpointer=store, input="yes").vars.article == "ship: yes"
        pause = next(p.seq for p in store.checkpoints("t/Work.1/middle") if p.kind == "pause")
        new = store.fork("t/Work.1/middle", at=pause, thread="n")
        assert store.record("n/Work.1/middle/Check.1/inner").parent_seq == \
            next(p.seq for p in store.checkpoints("t/Work.1/middle/Check.1/inner") if p.kind == "pause")
        again = OUTER.resume_sync(new, checkpointer=store)
        assert questions(again) == {"Work.1/middle/Check.1/inner": "Approve ship?"}  # asked again, as it stood
        assert OUTER.resume_sync(new, checkpointer=store, input="no").vars.article == "ship: no"
        assert OUTER.resume_sync("t", checkpointer=store).vars.article == "ship: yes"
