"""Runs and stores the viewer tests read: a real InterCode-SQL run (SQLite, the scoped machine
picking by letter on a server double, and the gold oracle), a run whose texts carry HTML, and a
live-flow store with a thread paused on a question."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import CHROMIUM
from own_flows import folder_of_work, tickets_run, vars_store  # noqa: F401 - the own-flows tests' fixtures
from view_stores import HOSTILE, hostile_result

from statebound.bench.evaluate import run_task
from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.registry import load_benchmark
from statebound.bench.store import RunStore
from statebound.contract.benchmark import EpisodeLimits
from statebound.envs.sql.sqlite_backend import SqliteBackend
from statebound.flow import AskHuman, CallLLM, Flow, State, always, contains
from statebound.flow.live import SQLiteCheckpointer
from statebound.llm.base import Capabilities, Choice, Request, TokenLogprob
from statebound.llm.testing import FunctionLLM, ScriptedLLM

SQL_TASKS = ("3", "0")
SQL_AGENTS = ("stateflow-scoped", "gold")
SERVER = Capabilities(chat=True, completion=True, logprobs=True, top_logprobs=20)


def first_letter(request: Request) -> Choice:
    """Always the first option, "A", with "B" less likely: the scoped machine's picks get scores."""
    return Choice(text="A", logprobs=(TokenLogprob("A", -0.1, (("A", -0.1), ("B", -2.5))),))


@pytest.fixture(scope="session")
def sql_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``run-sql``: two tasks, the scoped machine (label choice, scored) and the gold oracle."""
    cache = tmp_path_factory.mktemp("sql-cache")
    SqliteBackend(cache_dir=cache)  # converts the bundled dump once
    options = {"cache_dir": str(cache), "choice": "label"}
    loaded = load_benchmark("intercode-sql", options)
    limits = EpisodeLimits(max_turns=10)
    run = tmp_path_factory.mktemp("view") / "run-sql"
    config = RunConfig(benchmark="intercode-sql", benchmark_options=options, agents=SQL_AGENTS,
                       models=(ModelSpec("openai:local"),), task_ids=SQL_TASKS, limits=limits)
    with RunStore(run) as store:
        store.start(config, resume=False)
        position = 0
        for task in SQL_TASKS:
            for agent in SQL_AGENTS:
                llm = FunctionLLM(first_letter, model="openai:local", capabilities=SERVER)
                result = asyncio.run(run_task(loaded, agent, task, llm=llm, limits=limits))
                assert result.error is None, result.error
                store.save(result, benchmark="intercode-sql", position=position)
                position += 1
    return run


@pytest.fixture
def hostile_run(tmp_path: Path) -> Path:
    """``run-html``: episodes whose task text, reply, observation, action, candidate and answer hold HTML."""
    run = tmp_path / "run-html"
    config = RunConfig(benchmark="hand", agents=("a<b>", "b"), models=(ModelSpec("m"),), task_ids=("t<1>",))
    with RunStore(run) as store:
        store.start(config, resume=False)
        store.save(hostile_result("t<1>", "a<b>", success=True), benchmark="hand", position=0)
        store.save(hostile_result("t<1>", "b", success=False), benchmark="hand", position=1)
    return run


def approval_flow() -> Flow:
    return Flow(name="approve", initial="Draft", states=[
        State("Draft", outputs=[CallLLM()], transitions=[(always(), "Approve")]),
        State("Approve", outputs=[AskHuman(lambda ctx: f"Send {ctx.last_of('llm').content}?", name="approval")],
              transitions=[(contains("yes", source="human", ignore_case=True), "Send"), (always(), "Draft")]),
        State("Send", final=True),
    ], max_turns=6)


@pytest.fixture
def live_store(tmp_path: Path) -> Path:
    """``live.sqlite``: thread ``t1`` paused on the question ``Send draft <script>...?``."""
    path = tmp_path / "live.sqlite"
    with SQLiteCheckpointer(path) as store:
        approval_flow().run_sync(f"write {HOSTILE}", llm=ScriptedLLM([f"draft {HOSTILE}"]), checkpointer=store,
                                 thread="t1")
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium driven by Playwright (skips without Playwright)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()
