"""Fixtures of the MCP tests: a flow served over streamable HTTP; the reasons MCP tests were
skipped, printed at the end of the run."""

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
from mcp_helpers import ROOT, skipped
from processes import free_port


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
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


@pytest.fixture
def python() -> str:
    return sys.executable


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    for reason in dict.fromkeys(skipped):
        terminalreporter.write_line(f"MCP tests skipped: {reason}", yellow=True)
