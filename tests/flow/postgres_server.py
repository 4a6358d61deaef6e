"""A private PostgreSQL server for the tests: Debian's ``postgresql`` binaries, a data directory
in a temporary folder, a free local port; stopped and removed after the session."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _skip(reason: str) -> None:
    warnings.warn(f"PostgreSQL tests skipped: {reason}", stacklevel=2)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a running server (user ``postgres``, trust authentication on 127.0.0.1)."""
    bin_dir = _binaries()
    if bin_dir is None:
        _skip("no PostgreSQL server binaries (Debian's postgresql package; scripts/setup.sh installs it)")
    assert bin_dir is not None
    as_user: list[str] = []
    home = Path(tempfile.mkdtemp(prefix="statebound-pg-"))
    if os.geteuid() == 0:  # the server refuses to run as root
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            _skip("running as root and there is no 'postgres' user to run the server as")
        os.chown(home, account.pw_uid, account.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = home / "data", _free_port()

    def run(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, capture_output=True, timeout=120)

    try:
        run(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
        options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off"
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(home / "log"), "-w", "start")
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(home, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {exc.stderr.decode(errors='replace')[-500:]}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       check=False, capture_output=True, timeout=120)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str, request: pytest.FixtureRequest) -> str:
    """A fresh, empty database on the test server, for one test."""
    import psycopg

    name = "t_" + "".join(c if c.isalnum() else "_" for c in request.node.name).lower()[:50]
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    return postgres_server.rsplit("/", 1)[0] + f"/{name}"
