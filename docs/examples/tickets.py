"""Route a support ticket to a team and a priority: a scoped machine with typed state, its random
control, and the benchmark that grades them (docs/build-a-machine.md)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from statebound import (AgentSpec, Benchmark, BenchmarkOptions, CallTool, ChoiceMethod, Flow, FlowAgent,
                        Grade, Message, Pick, RunContext, Score, State, StepResult, Task, always)

TEAMS = ["billing", "shipping", "technical", "account"]
PRIORITIES = ["low", "normal", "high"]
TICKETS = {row["id"]: row for row in csv.DictReader(Path(__file__).with_name("tickets.csv").read_text("utf-8").splitlines())}


@dataclass(frozen=True)
class Routing:  # the machine's typed state: what it has decided so far
    team: str | None = None
    priority: str | None = None


def asking(part: str, *, blind: bool = False):  # a choice's prompt; blind: without the ticket
    return lambda ctx: [Message("user", f"Support ticket: {'N/A' if blind else ctx.task}\n{part}:")]


def choose(part: str, options: list[str], method: ChoiceMethod) -> Pick:
    return Pick(options, prompt=asking(part), baseline=asking(part, blind=True),
                method=method, name=part.lower(), into=part.lower())


def route(ctx: RunContext[Routing, Desk]) -> str:  # the action the environment runs: the routing chosen
    return ctx.deps.step(f"{ctx.vars.team} {ctx.vars.priority}").observation


def machine(method: ChoiceMethod) -> Flow:
    return Flow(name=f"tickets-{method}", initial="Team", vars=Routing, deps=Desk, max_turns=4, states=[
        State("Team", outputs=[choose("Team", TEAMS, method)], transitions=[(always(), "Priority")]),
        State("Priority", outputs=[choose("Priority", PRIORITIES, method)], transitions=[(always(), "Route")]),
        State("Route", outputs=[CallTool(route, reads=["team", "priority"])], transitions=[(always(), "Done")]),
        State("Done", final=True)])


class Desk:  # the environment: one ticket, and the routing sent for it
    def __init__(self) -> None:
        self.ticket: dict[str, str] = {}
        self.routed: list[str] = []

    def reset(self, task_id: str) -> str:
        self.ticket, self.routed = TICKETS[task_id], []
        return self.ticket["text"]

    def step(self, action: str) -> StepResult:
        self.routed = action.split()
        return StepResult(f"routed to {action}", done=True)

    def score(self) -> Score:
        right = self.routed == [self.ticket["team"], self.ticket["priority"]]
        return Score(reward=float(right), success=right)

    def close(self) -> None:  # nothing to release
        return None


class Tickets(Benchmark[BenchmarkOptions, Desk]):
    name = "tickets"
    summary = "route a support ticket to a team and a priority (docs/examples/tickets.csv)"
    Options = BenchmarkOptions

    def tasks(self) -> list[Task]:
        return [Task(id, row["text"], {"team": row["team"]}) for id, row in TICKETS.items()]

    def make_env(self, *, max_turns: int | None, **settings: object) -> Desk:
        return Desk()

    def grade(self, env: Desk, task: Task, trace: object) -> Grade:
        return Grade(reward=env.score().reward, success=env.score().success, turns=1)


scoped: AgentSpec[BenchmarkOptions] = AgentSpec(build=lambda setup: FlowAgent(machine("score")), summary="the model scores each part")
control: AgentSpec[BenchmarkOptions] = AgentSpec(build=lambda setup: FlowAgent(machine("random")),
                                                 summary="seeded random parts", uses_model=False)
flow = machine("score")  # for `statebound flow draw docs/examples/tickets.py:flow` and `flow check`
