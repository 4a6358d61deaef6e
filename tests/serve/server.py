"""``statebound serve`` started as a real process for the tests, on a free loopback port."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
from processes import free_port, stop

HERE = Path(__file__).parent
STATEBOUND = Path(sys.executable).with_name("statebound")
FLOWS = [f"{HERE / 'served_flows.py'}:{name}" for name in ("steps", "approve", "shop", "slow")]
MODEL = ["-m", "function:served_model:respond", "--model-option", "tools=true"]


class Server:
    """A running server: its URL and process (``kill`` it with SIGKILL, ``start`` it again)."""

    def __init__(self, store: str, args: Sequence[str], env: dict[str, str], log: Path) -> None:
        self.store, self.args, self.env, self.log = store, list(args), env, log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        command = [str(STATEBOUND), "serve", *FLOWS, *MODEL, "--store", self.store, "--port", str(self.port),
                   *self.args]
        with open(self.log, "ab") as log:  # a file, not a pipe: a full pipe would stop the server
            self.process = subprocess.Popen(command, env=self.env, stdout=log, stderr=log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server stopped: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=1).status_code in (200, 401):  # up (401: it wants its token)
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("the server did not answer within 60 s")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop(self.process, timeout=10)


@contextmanager
def serving(store: str, *args: str, env: dict[str, str] | None = None, log: Path | None = None) -> Iterator[Server]:
    """A server on ``store`` (its output in ``log``, by default beside a SQLite store)."""
    environment = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    where = log or (Path(store).with_suffix(".log") if "://" not in store else Path(tempfile.mkdtemp()) / "serve.log")
    server = Server(store, args, environment, where)
    try:
        yield server.start()
    finally:
        server.stop()
