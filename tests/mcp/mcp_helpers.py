"""Where the real MCP servers, clients and conformance suite that scripts/setup_mcp.sh installs
into .mcp/ are, for the MCP tests (importable by name: pytest puts this folder on the path). A
test that needs one that is not there is skipped naming it, and conftest.py prints the reasons at
the end of the run (never a silent skip)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".mcp"
NODE_BIN = TOOLS / "node" / "node_modules" / ".bin"
PYTHON_BIN = TOOLS / "python" / "bin"
SETUP = "bash scripts/setup_mcp.sh"
skipped: list[str] = []  # the reasons, for the summary


def installed(path: Path, what: str) -> str:
    """``path`` as a string, or the test is skipped naming what is missing and how to install it."""
    if not path.exists():
        reason = f"{what} is not installed ({path.relative_to(ROOT)} is missing): run {SETUP}"
        skipped.append(reason)
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
