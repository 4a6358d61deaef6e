"""Stopping a run on SIGINT (Ctrl-C) or SIGTERM, keeping what finished.

``with SignalStop() as stop:`` takes over both signals; a handler inherited as ignored (a process
started with ``&`` by a script has SIGINT ignored) is taken over too, so ``kill -INT`` stops a
background run. Inside :meth:`SignalStop.run` the first signal cancels the coroutine: the runner
stores the episodes that finished (flushing a pending group commit), abandons those in flight (not
stored, so ``--resume`` runs them again) and the executor cancels its Ray tasks and shuts down a
cluster it started; then :class:`RunInterrupted` is raised. Outside :meth:`SignalStop.run` the first
signal raises :class:`RunInterrupted` where the program is, as Ctrl-C raises ``KeyboardInterrupt``.
A second signal exits at once with status 128 + the signal's number.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import sys
import threading
from collections.abc import Coroutine
from types import FrameType
from typing import Any, NoReturn, TypeVar

__all__ = ["STOP_SIGNALS", "RunInterrupted", "SignalStop"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

T = TypeVar("T")


class RunInterrupted(BaseException):
    """The program was stopped by signal ``signum``. A BaseException, like KeyboardInterrupt, so
    that ``except Exception`` (a crashed episode, say) does not swallow it."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")

    @property
    def exit_code(self) -> int:
        """The shell's status for a process ended by the signal: 130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signum


class SignalStop:
    """Turns SIGINT and SIGTERM into an orderly stop while the ``with`` block runs (main thread
    only; elsewhere it changes nothing). The handlers that were there before come back on exit."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None

    def __enter__(self) -> SignalStop:
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.getsignal(signum)
                signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, signal.SIG_DFL if previous is None else previous)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:  # a second signal while stopping: go now
            os.write(2, b"interrupted again: exiting at once\n")
            os._exit(128 + signum)
        self.signum = signum
        task, loop = self._task, self._loop
        if task is not None and loop is not None and not task.done():
            loop.call_soon_threadsafe(task.cancel)  # the coroutine cleans up, then run() raises
            return
        raise RunInterrupted(signum)

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """``asyncio.run(main)``, except that a signal cancels ``main`` and raises
        :class:`RunInterrupted` once it has finished cancelling, without waiting for threads it
        abandoned (an ``asyncio.to_thread`` call in flight runs on unless its backend stops it, as
        the embedded llama.cpp model does at its next evaluation step)."""
        if self.signum is not None:
            main.close()
            raise RunInterrupted(self.signum)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        task = loop.create_task(main)
        self._loop, self._task = loop, task
        try:
            try:
                result = loop.run_until_complete(task)
            except asyncio.CancelledError:
                if self.signum is None:
                    raise
                raise RunInterrupted(self.signum) from None
            finally:
                self._task = None
                _cancel_all_tasks(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
                if self.signum is None:
                    loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            self._loop = None
            asyncio.set_event_loop(None)
            loop.close()  # does not wait for the default executor's threads
        if self.signum is not None:  # the signal came as ``main`` was finishing anyway
            raise RunInterrupted(self.signum)
        return result

    def exit(self, code: int) -> NoReturn:
        """End the process with ``code`` after a stop. Python's own exit would wait for the threads
        of abandoned episodes; when there are some, the exit handlers run and the process ends
        without waiting for them."""
        sys.stdout.flush()
        sys.stderr.flush()
        if _busy_threads():
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        raise SystemExit(code)


def _busy_threads() -> list[threading.Thread]:
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and t.is_alive() and not t.daemon]


def _cancel_all_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does with the tasks left when its coroutine ends."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not pending:
        return
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    for task in pending:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {"message": "unhandled exception while stopping a run", "exception": task.exception(), "task": task}
            )
