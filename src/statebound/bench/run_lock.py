"""One writer per run directory: a run holds ``run.lock`` in its directory while it runs.

The lock is the operating system's (``flock``), so a process that dies, however it dies, holds it
no more: a crashed run never leaves a directory locked. The file says who holds it (process id,
host, command, since when), and a second ``statebound eval`` on the directory is refused naming
that process, before it reads or writes anything (two writers would run the same episodes twice:
paid twice, and one result of each thrown away). Readers (``report``, ``status``, ``view``) take
no lock: they may watch a run that is being written.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path
from types import TracebackType

from statebound.errors import DefinitionError

__all__ = ["LOCK_NAME", "RunInUse", "RunLock"]

LOCK_NAME = "run.lock"


class RunInUse(DefinitionError):
    """Another process is running the run in this directory."""


class RunLock:
    """``with RunLock(run_dir):`` holds ``run_dir``'s lock (creating the directory if needed, and
    removing it again if the run leaves it empty); :class:`RunInUse` when another process holds it."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME
        self._fd: int | None = None
        self._made_dir = False

    def __enter__(self) -> RunLock:
        if self.run_dir.exists() and not self.run_dir.is_dir():
            raise DefinitionError(f"{self.run_dir} is a file, not a run directory: choose another --out")
        if not self.run_dir.exists():
            try:
                self.run_dir.mkdir(parents=True)
            except OSError as error:
                raise DefinitionError(f"cannot use {self.run_dir} as a run directory: {error.strerror}") from None
            self._made_dir = True
        while self._fd is None:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self._holder(fd)
                os.close(fd)
                self._tidy()
                raise RunInUse(f"{self.run_dir} is in use by {holder}: one run writes a directory at a time; "
                               "wait for it to end (or stop it), then --resume") from None
            if self._same_file(fd):  # not a file its last holder removed while we opened it
                self._fd = fd
            else:
                os.close(fd)
        os.ftruncate(self._fd, 0)
        held = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(),
                "command": " ".join(sys.argv)[:500]}
        os.write(self._fd, json.dumps(held).encode())
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)  # removed while held: nobody else can hold this file
        finally:
            os.close(self._fd)
            self._fd = None
            self._tidy()

    @classmethod
    def refuse_if_held(cls, run_dir: str | Path) -> None:
        """:class:`RunInUse` when another process holds ``run_dir``'s lock now (nothing is made)."""
        if (Path(run_dir) / LOCK_NAME).is_file():
            with cls(run_dir):
                pass

    def _open(self) -> int:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            why = "it is read-only" if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else error.strerror
            raise DefinitionError(f"cannot run into {self.run_dir}: {why}") from None

    def _same_file(self, fd: int) -> bool:
        try:
            return os.path.samestat(os.fstat(fd), os.stat(self.path))
        except FileNotFoundError:
            return False

    def _holder(self, fd: int) -> str:
        """Who holds the lock, as its file says (written right after it was taken)."""
        try:
            info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        except (OSError, ValueError):
            info = {}
        if not isinstance(info, dict) or "pid" not in info:
            return "another process"
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info.get("since", 0))))
        return (f"process {info['pid']} on {info.get('host', '?')} (since {since}: "
                f"{str(info.get('command', '?'))[:200]})")

    def _tidy(self) -> None:
        """Remove the run directory this lock made, when the run left nothing in it."""
        if self._made_dir:
            try:
                self.run_dir.rmdir()
            except OSError:  # it holds the run now
                pass
            self._made_dir = False
