"""A research flow that fans out: one sub-machine per question, run side by side, their notes
merged in order, then one summary.

    Gather: FanOut("questions", Sub(search), item="question", merge={"notes": append})
        search: Look (instruction, model) -> Note (the reply as the note) -> Done
    -> Summarise (instruction with every note, model) -> End

``build_flow(limit=1)`` is the sequential version (one branch at a time). ``delayed_model(seconds)``
is a scripted double that answers every search after ``seconds`` (the summary at once), for
measuring what running the branches side by side gains (``benchmarks/fan_out.py``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from statebound.flow import (
    CallLLM,
    FanOut,
    Flow,
    Instruction,
    RunContext,
    State,
    Sub,
    Update,
    always,
    append,
)
from statebound.llm.base import Request
from statebound.llm.testing import FunctionLLM

__all__ = ["Notes", "Question", "build_flow", "delayed_model", "flow", "search"]


@dataclass(frozen=True)
class Question:
    """A branch's variables: the question it looks into, and its note."""

    question: str = ""
    note: str = ""


@dataclass(frozen=True)
class Notes:
    """The research's variables: the questions, the notes their branches bring back, the summary."""

    questions: list[str] = field(default_factory=lambda: [f"aspect {n}" for n in range(1, 9)])
    notes: list[str] = field(default_factory=list)
    summary: str = ""


def _note(ctx: RunContext[Question]) -> dict[str, str]:
    reply = ctx.last_of("llm")
    return {"note": reply.content if reply is not None else ""}


def _summary(ctx: RunContext[Notes]) -> dict[str, str]:
    reply = ctx.last_of("llm")
    return {"summary": reply.content if reply is not None else ""}


search = Flow(name="search", initial="Look", vars=Question, states=[
    State("Look", outputs=[Instruction(lambda ctx: f"Search: {ctx.vars.question}"), CallLLM(max_tokens=32)],
          transitions=[(always(), "Note")]),
    State("Note", outputs=[Update(_note, writes=["note"])], transitions=[(always(), "Done")]),
    State("Done", final=True),
])


def build_flow(limit: int | None = None) -> Flow[Notes]:
    """The research flow; ``limit``: how many branches may run at once (None: all)."""
    gather = FanOut("questions", Sub(search, vars_out={"notes": "note"}), item="question",
                    merge={"notes": append}, limit=limit)
    return Flow(name="fan-out-research", initial="Gather", vars=Notes, max_turns=60, states=[
        State("Gather", outputs=[gather], transitions=[(always(), "Summarise")]),
        State("Summarise", outputs=[Instruction(lambda ctx: "Summarise: " + "; ".join(ctx.vars.notes)),
                                    CallLLM(max_tokens=64), Update(_summary, writes=["summary"])],
              transitions=[(always(), "End")]),
        State("End", final=True),
    ])


def delayed_model(seconds: float) -> FunctionLLM:
    """A scripted double: a search is answered after ``seconds`` (``found: QUESTION``), a summary at once."""
    async def respond(request: Request) -> str:
        prompt = request.messages[-1].content.splitlines()[-1] if request.messages else ""
        if prompt.startswith("Search: "):
            await asyncio.sleep(seconds)
            return "found: " + prompt.removeprefix("Search: ")
        return f"summary of {prompt.count(';') + 1} notes"

    return FunctionLLM(respond)


flow = build_flow()
