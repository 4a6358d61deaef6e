"""The tickets of docs/build-a-machine.md on a desk that lists every routing it accepts, so that
the runs of any agent keep what was offered beside what was sent and can teach a machine
(docs/induce.md)."""

from __future__ import annotations

from tickets import PRIORITIES, TEAMS, Desk, Tickets  # the file's folder is on the path while it loads


class ListingDesk(Desk):
    def offered_actions(self) -> list[str]:  # every routing the desk accepts
        return [f"{team} {priority}" for team in TEAMS for priority in PRIORITIES]


class ListedTickets(Tickets):
    name = "tickets-listed"
    summary = "the tickets, on a desk that lists the routings it accepts"

    def make_env(self, *, max_turns: int | None, **settings: object) -> ListingDesk:
        return ListingDesk()
