"""Episode workspaces on MariaDB: copies of the Spider databases, one per episode running at once.

``scripts/mariadb.sh start`` makes N workspaces (``STATEBOUND_MARIADB_WORKSPACES``, default 8):
workspace K holds ``NAME__wK`` for each database, which only the account ``statebound_wK`` may read
and change (rows, not schema). An episode leases a free workspace for its life: a named lock
(``GET_LOCK``) held by a connection of the backend's own account, which the server frees when that
connection ends, however it ends (a killed process holds none). Episodes running at once (``-j``,
Ray workers) thus neither see one another's sessions (an account without ``PROCESS`` sees only its
own in ``SHOW PROCESSLIST`` and ``information_schema.PROCESSLIST``) nor lock one another's rows; each
episode's transaction is rolled back at its end, so its workspace stays a copy of the databases.

Error messages name a workspace's database as the database itself (``Table 'network_1.x' doesn't
exist``), as upstream's would; ``SELECT DATABASE()`` and ``information_schema`` show the workspace's
name.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statebound.errors import EnvironmentUnavailable

__all__ = ["LEASE_WAIT_S", "Workspace", "lease_workspace", "workspace_database", "workspace_user"]

LEASE_WAIT_S = 3600.0
"""How long an episode waits for a free workspace (more episodes at once than workspaces)."""


def workspace_user(user: str, number: int) -> str:
    """The account of workspace ``number`` (``statebound_w3``)."""
    return f"{user}_w{number}"


def workspace_database(database: str, number: int) -> str:
    """Workspace ``number``'s copy of ``database`` (``network_1__w3``)."""
    return f"{database}__w{number}"


def _lock_name(number: int) -> str:
    return f"statebound.workspace.{number}"


@dataclass(slots=True)
class Workspace:
    """A leased workspace: its number and the connection that holds its lock (closing it, in
    :meth:`release`, frees the workspace)."""

    number: int
    holder: Any

    def own_names(self, message: str, database: str) -> str:
        """``message`` with this workspace's copy of ``database`` named as the database itself."""
        copy = re.compile(re.escape(workspace_database(database, self.number)), re.IGNORECASE)
        return copy.sub(database.lower(), message)

    def release(self) -> None:
        if self.holder.open:
            self.holder.close()


def lease_workspace(connect: Callable[[], Any], count: int, *, wait_s: float = LEASE_WAIT_S,
                    poll_s: float = 0.2) -> Workspace:
    """A free workspace of ``count``, leased through a connection ``connect()`` opens (the
    backend's own account); waits up to ``wait_s`` while every one is in use."""
    holder = connect()
    deadline = time.monotonic() + wait_s
    try:
        while True:
            with holder.cursor() as cursor:
                for number in range(1, count + 1):
                    cursor.execute("SELECT GET_LOCK(%s, 0)", (_lock_name(number),))
                    if cursor.fetchone()[0] == 1:
                        return Workspace(number, holder)
            if time.monotonic() >= deadline:
                raise EnvironmentUnavailable(
                    f"every one of the {count} MariaDB workspaces has been in use for {wait_s:g} s: run fewer "
                    "episodes at once, or make more (STATEBOUND_MARIADB_WORKSPACES=N scripts/mariadb.sh start, "
                    "then STATEBOUND_MYSQL_WORKSPACES=N)")
            time.sleep(poll_s)
    except BaseException:
        holder.close()
        raise
