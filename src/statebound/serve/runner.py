"""Running the server's runs: accepted into the store before anyone is answered, claimed by one
worker at a time under a lease that worker renews, executed as checkpointed flow runs, streamed
as they go.

A run is stored (``pending``) before the request that creates it is answered. A worker claims it
(``running``, its lease until now + ``lease`` seconds) and runs the flow on its thread: a new
thread from the run's task, a stored one from its last checkpoint (with the run's answer when the
thread waits for one and nothing has been written since the run was accepted). A worker that
dies leaves its runs ``running`` with a lease nobody renews: once it runs out, a worker (this one
restarted, or another over the same PostgreSQL store) claims them and resumes their threads,
which repeats nothing but the call that was in flight (docs/live-flows.md). A cancel marks the run;
the worker holding it stops it at its next await.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from statebound.errors import CheckpointError, StateboundError, ThreadTaken
from statebound.flow import Flow
from statebound.flow.events import TokenDelta
from statebound.flow.live import open_checkpointer
from statebound.flow.result import ExitReason
from statebound.llm.base import LLM
from statebound.processes import process_alive, process_started
from statebound.serve.db import ACTIVE, RunRow, ServerDB
from statebound.serve.problems import Problem
from statebound.serve.streams import Mirror
from statebound.serve.threads import now_of

__all__ = ["Executor", "LiveRun"]

_RECENT = 256  # finished runs whose events stay in memory for streams that join late


@dataclass(eq=False)
class LiveRun:
    """A run this worker executes: its events so far (``seq``, event, data), who listens, and
    what ``runs.wait`` answers once it is done."""

    row: RunRow
    events: list[tuple[int, str, Any]] = field(default_factory=list)
    unsaved: list[tuple[int, str, str]] = field(default_factory=list)
    listeners: set[asyncio.Queue[tuple[int, str, Any]]] = field(default_factory=set)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    answer: Any = None
    task: asyncio.Task[None] | None = None
    stopping: str | None = None  # why it is being cancelled: "cancel" or "shutdown"

    def emit(self, event: str, data: Any) -> None:
        item = (len(self.events) + 1, event, data)
        self.events.append(item)
        self.unsaved.append((item[0], event, orjson.dumps(data).decode()))
        for queue in self.listeners:
            queue.put_nowait(item)


class Executor:
    """Accepts, claims, runs, streams and cancels the runs of ``flows`` over the store at
    ``where`` (its checkpoints and the server's tables). ``llm`` is the model runs use; ``lease``
    how long a claim lasts unrenewed; ``concurrency`` how many runs this worker runs at once."""

    def __init__(self, flows: Mapping[str, Flow[Any]], where: str, *, llm: LLM | None, lease: float = 10.0,
                 concurrency: int = 64, poll: float = 0.25) -> None:
        self.flows = dict(flows)
        self.where = where
        self.store = open_checkpointer(where)
        self.db = ServerDB(where)
        self.llm = llm
        self.lease = lease
        self.concurrency = concurrency
        self.poll = poll
        # host, process and its start time (a dead one on this host is seen at once), and a token
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{process_started()}:{uuid.uuid4().hex[:8]}"
        self.live: dict[str, LiveRun] = {}
        self.recent: dict[str, LiveRun] = {}
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None

    # ---- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        self._loop_task = asyncio.create_task(self._loop())

    async def close(self) -> None:
        """Stop: runs still going are handed back (``pending``) for a restart or another worker."""
        if self._loop_task is not None:
            self._loop_task.cancel()
        for live in list(self.live.values()):
            if live.task is not None and not live.task.done():
                live.stopping = "shutdown"
                live.task.cancel()
        await asyncio.gather(*(live.task for live in self.live.values() if live.task is not None),
                             return_exceptions=True)
        self.store.close()
        self.db.close()

    async def _loop(self) -> None:
        while True:
            try:
                self._reap()
                self._renew()
                self._flush()
                self._claim()
            except StateboundError:
                pass  # the store is unreachable for now: try again at the next beat
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=self.poll)
            except TimeoutError:
                pass

    def _reap(self) -> None:
        """Runs held by a dead worker process on this host are free at once (not after their lease)."""
        host = socket.gethostname()
        for worker in self.db.workers_running():
            name, _, rest = worker.partition(":")
            pid, _, started = rest.partition(":")
            if name == host and pid.isdigit() and not process_alive(int(pid), started.split(":")[0]):
                self.db.expire(worker)

    def _renew(self) -> None:
        held = self.db.renew(self.worker, list(self.live), time.time() + self.lease)
        for run_id, live in list(self.live.items()):
            if live.task is None or live.stopping is not None:
                continue
            if run_id not in held:  # stuck past its lease: another worker took it up
                live.stopping = "lost"
                live.task.cancel()
            elif held[run_id]:
                live.stopping = "cancel"
                live.task.cancel()

    def _flush(self) -> None:
        for live in list(self.live.values()):
            self._save(live)

    def _save(self, live: LiveRun) -> None:
        if live.unsaved:
            batch, live.unsaved = live.unsaved, []
            self.db.add_events(live.row.run_id, batch)

    def _claim(self) -> None:
        while len(self.live) < self.concurrency:
            row = self.db.claim(self.worker, time.time(), self.lease)
            if row is None:
                return
            if row.run_id not in self.live:  # else: its lease ran out while this loop was held up; renewed
                self._launch(row)

    def wake(self) -> None:
        self._wake.set()

    # ---- accepting ---------------------------------------------------------------------------
    def accept(self, thread: str, assistant: str, request: dict[str, Any], *, metadata: dict[str, Any],
               multitask: str) -> RunRow:
        """Store a run (``pending``) and start it here when its thread is free; 409 when the thread
        is busy and ``multitask`` is ``reject``."""
        now = time.time()
        lineage = self.store.lineage(thread) if self.store.record(thread) is not None else []
        start_seq = lineage[-1].seq if lineage else -1
        run = RunRow(uuid.uuid4().hex, thread, assistant, "pending", now, now, metadata, request, multitask, None,
                     0.0, start_seq, None, None)
        with self.db.transaction():
            active = self.db.active_runs(thread, locked=True)
            if active and multitask == "reject":
                raise Problem(409, f"thread {thread!r} is busy with run {active[0].run_id} ({active[0].status}); "
                                   "wait for it (runs.join), or ask with multitask_strategy 'enqueue' or 'interrupt'")
            if active and multitask == "interrupt":
                for other in active:
                    status = "interrupted" if other.status == "pending" else other.status
                    self.db.in_transaction("UPDATE statebound_runs SET cancel = 'interrupt', status = ?, updated = ? "
                                           "WHERE run_id = ?", (status, now, other.run_id))
            self.db.insert_run(run)
        if active and multitask == "interrupt":
            self._renew()  # stops the interrupted run at once when it runs here
        elif not active:
            claimed = self.db.claim(self.worker, now, self.lease, run_id=run.run_id)
            if claimed is not None:
                self._launch(claimed)
                return claimed
        self.wake()
        return run

    def cancel(self, run: RunRow, action: str) -> None:
        """Ask the worker holding ``run`` to stop it (a pending run is stopped at once)."""
        now = time.time()
        if run.status == "pending":
            self.db.set_run(run.run_id, now, status="interrupted", cancel=action)
        elif run.status == "running":
            self.db.set_run(run.run_id, now, cancel=action)
            self._renew()

    # ---- running ----------------------------------------------------------------------------
    def _launch(self, row: RunRow) -> None:
        live = LiveRun(row)
        # a run taken up again after its worker died goes on numbering the events it streamed
        live.events = [(seq, event, orjson.loads(data)) for seq, event, data in self.db.events_after(row.run_id, 0)]
        self.live[row.run_id] = live
        live.task = asyncio.create_task(self._execute(live))

    async def _execute(self, live: LiveRun) -> None:
        row = live.row
        attempt = 1 + sum(event == "metadata" for _, event, _ in live.events)
        live.emit("metadata", {"run_id": row.run_id, "thread_id": row.thread, "attempt": attempt})
        status, error = "success", None
        try:
            base = now_of(self.store, row.thread)
            start = base.values() if base is not None else {"messages": [], "vars": None, "state": "", "turn": 0,
                                                              "task": row.request.get("task"), "trajectory": [],
                                                              "status": "new"}
            mirror = Mirror(row.thread, start, row.request.get("stream_mode") or ["values"], live.emit)
            result = await self._run_flow(row, mirror)
            after = now_of(self.store, row.thread)
            shaped = after.values() if after is not None else mirror.values
            mirror.finish(shaped, result.exit_state)
            live.answer = shaped
            if result.exit_reason is ExitReason.ERROR:
                status, error = "error", f"{type(result.error).__name__}: {result.error}"
        except asyncio.CancelledError:
            if live.stopping == "shutdown":
                status = "pending"
            elif live.stopping == "lost":
                status, error = "lost", "another worker took the run up"
            else:
                status, error = "interrupted", "cancelled"
        except ThreadTaken as taken:  # another process runs the thread: try again when it lets go
            status, error = "pending", str(taken)
        except Exception as failure:  # the flow's own failures end its run as ERROR: these are the server's
            status, error = "error", f"{type(failure).__name__}: {failure}"
        if status == "error":
            live.answer = {"__error__": {"error": "RunError", "message": error}}
            live.emit("error", {"error": "RunError", "message": error})
        if status not in ("pending", "lost"):
            live.emit("end", None)
        self._finish(live, status, error)

    def _finish(self, live: LiveRun, status: str, error: str | None) -> None:
        run_id = live.row.run_id
        try:
            if status == "lost":
                return  # the worker holding it now writes its events and its end
            try:
                self._save(live)
                if status in ("success", "error") and live.row.request.get("on_completion") == "delete":
                    self._forget(live.row.thread)
            finally:  # whatever else failed, the run is marked as it ended
                lease = time.time() + self.lease if status == "pending" else 0.0  # retried after a lease
                self.db.set_run(run_id, time.time(), holder=self.worker, status=status, error=error,
                                lease_until=lease)
        finally:
            live.row = self.db.run(run_id) or live.row
            live.done.set()
            self.live.pop(run_id, None)
            if status != "pending":
                self.recent[run_id] = live
                while len(self.recent) > _RECENT:
                    self.recent.pop(next(iter(self.recent)))
            self.wake()  # the thread may be free for a waiting run

    def _forget(self, thread: str) -> None:
        """A run asked to delete its thread when done (a stateless run): its checkpoints go."""
        with contextlib.suppress(CheckpointError):
            if self.store.record(thread) is not None:
                self.store.delete(thread)
        self.db.execute("DELETE FROM statebound_server_threads WHERE thread = ?", (thread,))

    async def _run_flow(self, row: RunRow, mirror: Mirror) -> Any:
        flow = self.flows[row.assistant]
        request = row.request
        loop, loop_thread = asyncio.get_running_loop(), threading.get_ident()

        def piece(delta: TokenDelta) -> None:  # the embedded model writes from its worker thread
            if threading.get_ident() == loop_thread:
                mirror.event(delta)
            else:
                loop.call_soon_threadsafe(mirror.event, delta)

        wants_pieces = bool(mirror.modes & {"messages", "events"})
        running: dict[str, Any] = {"llm": self.llm, "on_event": mirror.event, "record_events": False,
                                   "on_token": piece if wants_pieces else None}
        record = self.store.record(row.thread)
        lineage = self.store.lineage(row.thread) if record is not None else []
        if request.get("vars") and not lineage and flow.vars is not None:
            flow = flow.replace(vars=flow.vars.load(request["vars"]))
        # the thread is held as this run (a worker stuck past its claim on the run is taken over)
        mine, stuck = f"{row.run_id}@{self.worker}", f"{row.run_id}@{row.worker}" if row.worker else None
        with self.store.holding(row.thread, token=mine, take_over=stuck):
            if record is None:
                return await flow.run(request["task"], checkpointer=self.store, thread=row.thread, **running)
            progressed = bool(lineage) and lineage[-1].seq > row.start_seq  # an earlier try took the answer
            if request.get("update") and not progressed:
                self.store.update(row.thread, vars=request["update"])
            answer = None if progressed else request.get("resume")
            return await flow.resume(row.thread, checkpointer=self.store, input=answer, **running)

    # ---- waiting and streaming ---------------------------------------------------------------
    async def wait(self, run_id: str) -> tuple[RunRow, Any]:
        """The run once it is done, and what it answered (the thread's values or its error)."""
        live = self.live.get(run_id) or self.recent.get(run_id)
        if live is not None:
            await live.done.wait()
            if live.row.status not in ACTIVE:
                return live.row, live.answer
        while True:  # run by another worker, or handed back: watch the store
            row = self.db.run(run_id)
            if row is None:
                raise Problem(404, f"run {run_id!r} is gone")
            if row.status not in ACTIVE:
                return row, self._answer_of(row)
            local = self.live.get(run_id)
            if local is not None:
                await local.done.wait()
                continue
            await asyncio.sleep(0.05)

    def _answer_of(self, row: RunRow) -> Any:
        if row.status == "error":
            return {"__error__": {"error": "RunError", "message": row.error}}
        now = now_of(self.store, row.thread)
        return now.values() if now is not None else None

    async def events(self, run_id: str, *, after: int = 0) -> AsyncIterator[tuple[int, str, Any]]:
        """The run's events after number ``after``, as they come, until its ``end``."""
        live = self.live.get(run_id) or self.recent.get(run_id)
        if live is not None:
            queue: asyncio.Queue[tuple[int, str, Any]] = asyncio.Queue()
            live.listeners.add(queue)
            try:
                for item in list(live.events):
                    if item[0] > after:
                        after = item[0]
                        yield item
                        if item[1] == "end":
                            return
                while not (live.done.is_set() and queue.empty()):
                    getter = asyncio.ensure_future(queue.get())
                    finished = asyncio.ensure_future(live.done.wait())
                    await asyncio.wait({getter, finished}, return_when=asyncio.FIRST_COMPLETED)
                    finished.cancel()
                    if not getter.done():
                        getter.cancel()
                        continue
                    item = getter.result()
                    if item[0] > after:
                        after = item[0]
                        yield item
                        if item[1] == "end":
                            return
            finally:
                live.listeners.discard(queue)
            if live.row.status not in ACTIVE:
                return
        while True:  # another worker's run (or one handed back): read its stored events
            for item in self.db.events_after(run_id, after):
                after = item[0]
                yield item[0], item[1], orjson.loads(item[2])
                if item[1] == "end":
                    return
            row = self.db.run(run_id)
            if row is None or (row.status not in ACTIVE and not self.db.events_after(run_id, after)):
                return
            local = self.live.get(run_id)
            if local is not None:
                async for item in self.events(run_id, after=after):
                    yield item
                return
            await asyncio.sleep(0.05)

