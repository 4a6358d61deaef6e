"""Engine overhead per transition: statebound.flow vs LangGraph, same 5-state machine, same replies.

The machine: S0 -> S1 -> S2 -> S3 -> S0 ... (each state sends an instruction and calls the LLM;
the reply decides the transition by substring), until a reply says "done" -> End. Both engines
call the same ScriptedLLM; time spent inside the LLM double is measured and subtracted, so the
figures are the engines' own overhead per transition.

    .venv/bin/python benchmarks/flow_overhead.py [--runs 500] [--turns 20]
"""

from __future__ import annotations

import argparse
import asyncio
import operator
import time
from typing import Annotated, TypedDict

from statebound.flow import CallLLM, Flow, Instruction, State, contains
from statebound.llm.base import Message, Request
from statebound.llm.testing import ScriptedLLM

STATES = ["S0", "S1", "S2", "S3"]


class S(TypedDict):
    """LangGraph state: the history as (role, content) pairs, appended by each node."""

    history: Annotated[list, operator.add]


class TimedLLM:
    """Wraps an LLM and adds up the time spent inside ``complete``."""

    def __init__(self, inner: ScriptedLLM) -> None:
        self.inner = inner
        self.model = inner.model
        self.capabilities = inner.capabilities
        self.seconds = 0.0

    async def complete(self, request: Request):
        start = time.perf_counter()
        completion = await self.inner.complete(request)
        self.seconds += time.perf_counter() - start
        return completion


def replies(turns: int) -> list[str]:
    return ["next"] * (turns - 1) + ["done"]


def statebound_flow(turns: int) -> Flow:
    states = []
    for i, name in enumerate(STATES):
        following = STATES[(i + 1) % len(STATES)]
        states.append(State(name, outputs=[Instruction(f"Instruction for {name}"), CallLLM(max_tokens=8)],
                            transitions=[(contains("done"), "End"), (contains("next"), following)]))
    states.append(State("End", final=True))
    return Flow(name="bench", initial="S0", states=states, max_turns=turns + 1)


async def bench_statebound(runs: int, turns: int, *, record_events: bool) -> tuple[float, int]:
    flow = statebound_flow(turns)
    llm = TimedLLM(ScriptedLLM())
    transitions = 0
    start = time.perf_counter()
    for _ in range(runs):
        llm.inner.enqueue(*replies(turns))
        result = await flow.run("task", llm=llm, record_events=record_events)
        assert result.exit_state == "End", result.error
        transitions += result.turns
    wall = time.perf_counter() - start
    return (wall - llm.seconds) / transitions * 1e6, transitions


def langgraph_app(make_node, make_router, checkpointer=None):
    """The machine as a LangGraph graph: ``make_node(name)`` runs a state, ``make_router(next)``
    picks the edge after it (``END`` or ``next``)."""
    from langgraph.graph import END, START, StateGraph

    graph = StateGraph(S)
    for name in STATES:
        graph.add_node(name, make_node(name))
    graph.add_edge(START, "S0")
    for i, name in enumerate(STATES):
        following = STATES[(i + 1) % len(STATES)]
        graph.add_conditional_edges(name, make_router(following), [following, END])
    return graph.compile(checkpointer=checkpointer)


async def bench_langgraph(runs: int, turns: int) -> tuple[float, int]:
    from langgraph.graph import END

    llm = TimedLLM(ScriptedLLM())

    def make_node(name: str):
        async def node(state: S) -> dict:
            instruction = ("user", f"Instruction for {name}")
            history = [*state["history"], instruction]
            messages = tuple(Message(role, content) for role, content in history)
            completion = await llm.complete(Request(messages=messages, max_tokens=8))
            return {"history": [instruction, ("assistant", completion.text)]}

        return node

    def make_router(following: str):
        def route(state: S) -> str:
            content = state["history"][-1][1]
            if "done" in content:
                return END
            if "next" in content:
                return following
            raise RuntimeError("no transition")

        return route

    app = langgraph_app(make_node, make_router)
    transitions = 0
    start = time.perf_counter()
    for _ in range(runs):
        llm.inner.enqueue(*replies(turns))
        out = await app.ainvoke({"history": [("user", "task")]}, config={"recursion_limit": turns + 10})
        assert out["history"][-1][1] == "done"
        transitions += turns
    wall = time.perf_counter() - start
    return (wall - llm.seconds) / transitions * 1e6, transitions


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--turns", type=int, default=20, help="transitions per run")
    args = parser.parse_args()
    await bench_statebound(20, args.turns, record_events=True)  # warm up
    await bench_langgraph(20, args.turns)
    ours, n = await bench_statebound(args.runs, args.turns, record_events=True)
    quiet, _ = await bench_statebound(args.runs, args.turns, record_events=False)
    theirs, m = await bench_langgraph(args.runs, args.turns)
    print(f"statebound.flow (events recorded): {ours:8.1f} us/transition over {n} transitions")
    print(f"statebound.flow (no listeners):    {quiet:8.1f} us/transition over {n} transitions")
    print(f"langgraph:                         {theirs:8.1f} us/transition over {m} transitions")
    print(f"ratio langgraph / statebound:      {theirs / ours:8.1f}x (events recorded), "
          f"{theirs / quiet:.1f}x (no listeners)")


if __name__ == "__main__":
    asyncio.run(main())
