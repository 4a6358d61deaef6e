"""The tickets of docs/build-a-machine.md on a desk that lists every routing it accepts, so that
the runs of any agent keep what was offered beside what was sent and can teach a machine, and a
``gold`` agent that routes each ticket as its answer says: the clean teacher (docs/induce.md)."""

from __future__ import annotations

import asyncio

from tickets import (  # beside this file (on the path while it loads)
    PRIORITIES,
    TEAMS,
    Desk,
    Tickets,
)

from statebound import AgentSpec
from statebound.contract.converters import trace_of_actions


class ListingDesk(Desk):
    def offered_actions(self) -> list[str]:  # every routing the desk accepts
        return [f"{team} {priority}" for team in TEAMS for priority in PRIORITIES]


class ListedTickets(Tickets):
    name = "tickets-listed"
    summary = "the tickets, on a desk that lists the routings it accepts"

    def make_env(self, *, max_turns: int | None, **settings: object) -> ListingDesk:
        return ListingDesk()


async def route_as_answered(task: str, *, llm: object, env: ListingDesk):
    action = f"{env.ticket['team']} {env.ticket['priority']}"  # the oracle reads the answer
    return trace_of_actions("Gold", task, [(action, await asyncio.to_thread(env.step, action))], finished=True)


gold = AgentSpec(build=lambda setup: route_as_answered, summary="oracle: the ticket's answer", uses_model=False)
