"""What a user's own work leaves for the viewer: a run of the ticket-routing benchmark and agents
defined in a file (docs/examples/tickets.py, named ``path.py:name`` as `statebound eval` takes
them), and a live-flow store whose thread keeps typed variables; a folder holding such a store
beside a run. Imported by the viewer tests that read them."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from statebound.bench.diagrams import store_diagrams
from statebound.bench.evaluate import run_task
from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.registry import load_benchmark
from statebound.bench.store import RunStore
from statebound.contract.benchmark import EpisodeLimits
from statebound.flow import CallTool, Flow, Pick, State, ToolResult, always
from statebound.flow.live import SQLiteCheckpointer
from statebound.llm.testing import ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
BENCHMARK = "docs/examples/tickets.py:Tickets"  # as a user types it, from the project's folder
AGENTS = ("docs/examples/tickets.py:scoped", "docs/examples/tickets.py:control")
TASKS = ("1", "2")


def words_in_context(context: str, text: str) -> list[float]:
    """A scorer: a word the prompt holds is likely (-0.1), any other less so (-2.0)."""
    return [-0.1 if word.lower() in context.lower() else -2.0 for word in text.split()]


@pytest.fixture(scope="session")
def tickets_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``tickets``: two tickets, each routed by the scoped machine (a scoring double) and the control."""
    run = tmp_path_factory.mktemp("own") / "tickets"
    here = Path.cwd()
    os.chdir(ROOT)  # the file's path is relative, as typed in the project's folder
    try:
        loaded = load_benchmark(BENCHMARK, {})
        config = RunConfig(benchmark=BENCHMARK, agents=AGENTS, models=(ModelSpec("scripted"),), task_ids=TASKS)
        with RunStore(run) as store:
            store.start(config, resume=False)
            store_diagrams(store, loaded, AGENTS, loaded.benchmark.tasks()[0], 4)  # as statebound eval does
            for position, (task, agent) in enumerate((t, a) for t in TASKS for a in AGENTS):
                llm = ScriptedLLM(scorer=words_in_context)
                result = asyncio.run(run_task(loaded, agent, task, llm=llm, limits=EpisodeLimits(max_turns=4)))
                assert result.error is None, result.error
                store.save(result, benchmark=BENCHMARK, position=position)
    finally:
        os.chdir(here)
    yield run


@dataclass(frozen=True)
class Draft:
    """A thread's typed state: the reply chosen, and how it was sent."""

    tone: str | None = None
    sent: bool = False


def drafting_flow() -> Flow:
    return Flow(name="drafting", initial="Tone", vars=Draft, max_turns=4, states=[
        State("Tone", outputs=[Pick(lambda ctx: ["polite", "curt"], prompt=lambda ctx: f"Answer {ctx.task}. Tone:",
                                    baseline="Answer N/A. Tone:", name="tone", into="tone")],
              transitions=[(always(), "Send")]),
        State("Send", outputs=[CallTool(lambda ctx: ToolResult(f"sent a {ctx.vars.tone} answer", update={"sent": True}),
                                        name="send", writes=("sent",))],
              transitions=[(always(), "Done")]),
        State("Done", final=True),
    ])


@pytest.fixture
def vars_store(tmp_path: Path) -> Path:
    """``drafts.sqlite``: thread ``d1`` of a flow with typed variables, run to its end."""
    path = tmp_path / "drafts.sqlite"
    with SQLiteCheckpointer(path) as store:
        drafting_flow().run_sync("a polite customer", llm=ScriptedLLM(scorer=words_in_context), checkpointer=store,
                                 thread="d1")
    return path


@pytest.fixture
def folder_of_work(tmp_path: Path, vars_store: Path, hostile_run: Path) -> Path:
    """A folder holding a run, a live-flow store two levels down, and SQLite and other files that
    are neither (a QA response cache, a note named like a store, a store under a hidden folder)."""
    folder = tmp_path / "work"
    (folder / "flows" / "week1").mkdir(parents=True)
    (folder / ".venv").mkdir()
    hostile_run.rename(folder / "run-html")
    vars_store.rename(folder / "flows" / "week1" / "drafts.sqlite")
    with sqlite3.connect(folder / "flows" / "llm-cache.sqlite") as db:
        db.execute("CREATE TABLE responses (key TEXT, value TEXT)")
    (folder / "notes.db").write_text("not a database")
    with SQLiteCheckpointer(folder / ".venv" / "hidden.sqlite") as store:
        drafting_flow().run_sync("x", llm=ScriptedLLM(scorer=words_in_context), checkpointer=store, thread="h")
    return folder
