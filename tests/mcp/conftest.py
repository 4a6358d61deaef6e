"""The real MCP servers, clients and conformance suite that scripts/setup_mcp.sh installs into
.mcp/. A test that needs one that is not there is skipped, and the reasons are printed at the end
of the run (never a silent skip)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from processes import free_port

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".mcp"
NODE_BIN = TOOLS / "node" / "node_modules" / ".bin"
PYTHON_BIN = TOOLS / "python" / "bin"
SETUP = "bash scripts/setup_mcp.sh"
_skipped: list[str] = []


def installed(path: Path, what: str) -> str:
    """``path`` as a string, or the test is skipped naming what is missing and how to install it."""
    if not path.exists():
        reason = f"{what} is not installed ({path.relative_to(ROOT)} is missing): run {SETUP}"
        _skipped.append(reason)
        pytest.skip(reason)
    return str(path)


def everything() -> str:
    return installed(NODE_BIN / "mcp-server-everything", "@modelcontextprotocol/server-everything")


def filesystem() -> str:
    return installed(NODE_BIN / "mcp-server-filesystem", "@modelcontextprotocol/server-filesystem")


def time_server() -> str:
    return installed(PYTHON_BIN / "mcp-server-time", "mcp-server-time")


def git_server() -> str:
    return installed(PYTHON_BIN / "mcp-server-git", "mcp-server-git")


def node22() -> str:
    return installed(NODE_BIN / "node", "Node 22 (npm's node@22)")


def server_processes(marker: str) -> list[int]:
    """The ids of this process's descendants whose command line holds ``marker``."""
    import psutil

    found = []
    for child in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if marker in " ".join(child.cmdline()):
                found.append(child.pid)
        except psutil.NoSuchProcess:
            continue
    return found


@pytest.fixture(scope="module")
def flow_server(tmp_path_factory) -> Iterator[str]:
    """``statebound mcp greet_flow.py:flow --http`` on a free port of 127.0.0.1, its URL."""
    port = free_port()
    store = tmp_path_factory.mktemp("mcp") / "threads.sqlite"
    command = [sys.executable, "-c", "from statebound.cli import main; main()", "mcp", f"{Path(__file__).parent / 'greet_flow.py'}:flow",
               "--http", "--port", str(port), "--store", str(store), "-m", "scripted"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"statebound mcp --http did not start: {server.stdout.read() if server.stdout else ''}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


@pytest.fixture
def python() -> str:
    return sys.executable


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    for reason in dict.fromkeys(_skipped):
        terminalreporter.write_line(f"MCP tests skipped: {reason}", yellow=True)
