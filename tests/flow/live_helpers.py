"""Flows, models and stores shared by the live-flow tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from statebound.flow import (
    CallLLM,
    CallTool,
    Flow,
    Instruction,
    State,
    ToolResult,
    always,
    contains,
)
from statebound.flow.live import Checkpointer, SQLiteCheckpointer
from statebound.flow.live.records import StoredCheckpoint
from statebound.llm.base import Request
from statebound.llm.testing import FunctionLLM


class Killed(BaseException):
    """Stands for kill -9: escapes the run at once, nothing more is written."""


def kill_after(store: Checkpointer, limit: int | None) -> Checkpointer:
    """``store``, whose process "dies" right after its ``limit``-th commit (None: never); it
    counts its commits in ``store.commits``."""
    append = store.append
    store.commits = 0  # type: ignore[attr-defined]

    def append_then_die(*checkpoints: StoredCheckpoint) -> None:
        append(*checkpoints)
        store.commits += 1  # type: ignore[attr-defined]
        if store.commits == limit:  # type: ignore[attr-defined]
            raise Killed

    store.append = append_then_die  # type: ignore[method-assign]
    return store


def KilledAfter(path: Path, limit: int) -> Checkpointer:  # noqa: N802 - reads like the store it makes
    return kill_after(SQLiteCheckpointer(path), limit)


def counting_llm(log: list[str]) -> FunctionLLM:
    """A model that answers ``reply-N`` (N: its call number over the whole test) and logs each
    call: on resume, a call made twice shows as a repeated prompt."""

    def respond(request: Request) -> str:
        log.append(request.messages[-1].content)
        return "done" if len(log) % 4 == 0 else f"next {len(log)}"

    return FunctionLLM(respond=respond)


def looping_flow(max_turns: int = 12) -> Flow:
    """Think -> Check -> Think ... until a reply says done; every state calls the model or a tool."""

    def check(ctx) -> ToolResult:
        reply = ctx.last_of("llm").content
        return ToolResult(f"Observation: {reply}", ok="done" in reply, data={"length": len(reply)})

    return Flow(
        name="loop",
        initial="Think",
        states=[
            State("Think", outputs=[Instruction(lambda ctx: f"Turn {ctx.turn}: think."), CallLLM(max_tokens=8)],
                  transitions=[(always(), "Check")]),
            State("Check", outputs=[CallTool(check, blocking=False)],
                  transitions=[(contains("done"), "End"), (always(), "Think")]),
            State("End", final=True),
        ],
        max_turns=max_turns,
    )


def benchmark_module(name: str) -> ModuleType:
    """The script ``benchmarks/NAME.py`` as a module (the kill tests run its harness)."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module
