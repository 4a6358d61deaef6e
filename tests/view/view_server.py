"""The real ``statebound view`` server in a subprocess, on a free port (``--port 0``): its URL is
the first line it prints, once its socket listens."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from processes import stop

STATEBOUND = Path(sys.executable).parent / "statebound"


@contextmanager
def serving(*args: str | Path, cwd: Path | None = None) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``(url, process)`` of ``statebound view ARGS --port 0`` (run in ``cwd``); the process is
    ended afterwards."""
    process = subprocess.Popen([str(STATEBOUND), "view", *map(str, args), "--port", "0"], text=True, cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith("statebound view: http://"), line + (process.stderr.read() if process.stderr else "")
        yield line.split()[2], process
    finally:
        stop(process, timeout=30)
