"""The runner: every planned episode not yet in the store, with a concurrency limit and progress.

Results are written to the store as episodes finish, by this single event loop, so executors never
touch the database and an interrupted run resumes exactly. Episodes that finish in the same turn of
the event loop share one transaction (a group commit: at high concurrency many finish together).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass

from statebound.bench.executors import Executor
from statebound.bench.plan import EpisodePlan, RunConfig, plan_episodes
from statebound.bench.progress import RunProgress
from statebound.bench.store import RunStore
from statebound.contract.benchmark import Task
from statebound.contract.result import EpisodeResult
from statebound.errors import DefinitionError
from statebound.telemetry import active as active_tracing

__all__ = ["RunOutcome", "run_episodes"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOutcome:
    """What one invocation did: ``planned`` in total, ``skipped`` (already stored), ``ran`` now,
    ``crashed`` of those; ``crash_causes``: every crashed episode in the store afterwards (this
    invocation's and earlier ones), as (error, episodes) most common first; ``transport_changes``:
    how the models are reached now unlike the stored run (``--resume`` with a new URL or key)."""

    planned: int
    skipped: int
    ran: int
    crashed: int
    wall_seconds: float
    crash_causes: tuple[tuple[str, int], ...] = ()
    transport_changes: tuple[str, ...] = ()

    @property
    def crashed_stored(self) -> int:
        """Crashed episodes in the store (``--resume --retry-errors`` runs them again)."""
        return sum(count for _, count in self.crash_causes)

    def crash_summary(self, *, causes: int = 3, width: int = 160) -> str | None:
        """One line: the stored crashed episodes grouped by cause, most common first; ``None``
        when there are none."""
        if not self.crash_causes:
            return None
        shown = []
        for error, count in self.crash_causes[:causes]:
            text = " ".join(error.split())
            shown.append(f"{count} x {text if len(text) <= width else text[: width - 3] + '...'}")
        if len(self.crash_causes) > causes:
            shown.append(f"{len(self.crash_causes) - causes} more causes (results.jsonl has each)")
        total = self.crashed_stored
        return (f"{total} crashed episode{'s' if total != 1 else ''} stored "
                f"(--resume --retry-errors runs them again): {'; '.join(shown)}")


async def run_episodes(
    config: RunConfig,
    tasks: Sequence[Task],
    *,
    store: RunStore,
    executor: Executor,
    concurrency: int = 4,
    resume: bool = False,
    retry_errors: bool = False,
    progress: bool = True,
) -> RunOutcome:
    """Run what is missing from ``store``; ``tasks`` must contain every id in ``config.task_ids``."""
    if concurrency < 1:
        raise DefinitionError(f"--concurrency must be at least 1, got {concurrency}")
    config, changes = store.start(config, resume=resume)
    plans = plan_episodes(config, tasks)
    done = store.finished(include_errors=not retry_errors)
    todo = [plan for plan in plans if plan.key not in done]
    started = time.perf_counter()
    gate = asyncio.Semaphore(concurrency)
    crashed = 0

    previous = [r for r in store.results() if not (retry_errors and r.error is not None)]
    planned: Counter[Hashable] = Counter((plan.key.agent, plan.key.model) for plan in plans)
    with RunProgress(title=config.benchmark, planned=planned, workers=concurrency, enabled=progress,
                     previous=previous) as display:

        def stored(result: EpisodeResult) -> None:
            nonlocal crashed
            crashed += result.error is not None
            display.record(result)

        commits = _GroupCommit(store, benchmark=config.benchmark, on_stored=stored)

        async def run_one(plan: EpisodePlan) -> None:
            async with gate:  # held until stored: at most `concurrency` results wait for a commit
                result = await executor.run(plan, limits=config.limits)
                await commits.add(result, plan.position)

        tracing = active_tracing()
        with (tracing.run(config.benchmark, agents=config.agents, models=[m.name for m in config.models],
                          episodes=len(todo)) if tracing else nullcontext()):  # the episodes' parent span
            running = [asyncio.ensure_future(run_one(plan)) for plan in todo]
            try:
                await asyncio.gather(*running)
            except BaseException:
                # an error that is not an episode's own (see run_episode): stop the other episodes;
                # what finished is stored, so --resume continues once the cause is fixed
                for episode in running:
                    episode.cancel()
                await asyncio.gather(*running, return_exceptions=True)
                raise
            finally:
                commits.flush()
    return RunOutcome(
        planned=len(plans),
        skipped=len(plans) - len(todo),
        ran=len(todo),
        crashed=crashed,
        wall_seconds=time.perf_counter() - started,
        crash_causes=tuple(store.crash_causes()),
        transport_changes=tuple(changes),
    )


class _GroupCommit:
    """Stores finished episodes at the end of the event-loop turn they finish in, one transaction
    per turn, then reports each to ``on_stored``. :meth:`add` returns a future that is done once
    the episode is stored (or carries the store's error, so a failing store stops the run)."""

    def __init__(self, store: RunStore, *, benchmark: str, on_stored: Callable[[EpisodeResult], None]) -> None:
        self._store, self._benchmark, self._on_stored = store, benchmark, on_stored
        self._pending: list[tuple[EpisodeResult, int]] = []
        self._committed: asyncio.Future[None] | None = None

    def add(self, result: EpisodeResult, position: int) -> asyncio.Future[None]:
        if self._committed is None:
            loop = asyncio.get_running_loop()
            self._committed = loop.create_future()
            loop.call_soon(self._commit_turn, self._committed)
        self._pending.append((result, position))
        return self._committed

    def _commit_turn(self, committed: asyncio.Future[None]) -> None:
        self._committed = None
        try:
            self.flush()
        except BaseException as error:  # noqa: BLE001 - handed to every episode waiting on it
            if committed.cancelled():  # the run is being cancelled: nobody waits any more
                raise
            committed.set_exception(error)
        else:
            if not committed.cancelled():
                committed.set_result(None)

    def flush(self) -> None:
        """Store what is pending now."""
        batch, self._pending = self._pending, []
        if batch:
            self._store.save_many(batch, benchmark=self._benchmark)
            for result, _ in batch:
                self._on_stored(result)
