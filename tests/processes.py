"""Helpers for tests that start real servers in subprocesses (importable from every test folder:
pytest puts ``tests/`` on the path for its conftest)."""

from __future__ import annotations

import socket
import subprocess


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop(process: subprocess.Popen, *, timeout: float) -> None:
    """End ``process``: terminate, then kill if it has not exited within ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
