from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from statebound.envs.sql.mysql_backend import MySqlBackend
from statebound.envs.sql.sqlite_backend import SqliteBackend

MARIADB_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "mariadb.sh"


@pytest.fixture(scope="session")
def sqlite_backend(tmp_path_factory: pytest.TempPathFactory) -> SqliteBackend:
    """A fresh conversion of the dump into a temporary cache (shared by the whole session)."""
    return SqliteBackend(cache_dir=tmp_path_factory.mktemp("sql-cache"))


def _mariadb(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MARIADB_SCRIPT), command], capture_output=True, text=True,
                          timeout=180, check=False)


@pytest.fixture(scope="session")
def mysql_backend() -> Iterator[MySqlBackend]:
    """The private MariaDB server of `scripts/mariadb.sh` (skips if it cannot start)."""
    was_running = _mariadb("status").returncode == 0
    started = _mariadb("start")
    if started.returncode != 0:
        pytest.skip(f"scripts/mariadb.sh start failed: {started.stderr.strip() or started.stdout.strip()}")
    yield MySqlBackend()
    if not was_running:  # leave the machine as the tests found it
        _mariadb("stop")
