"""A rich progress display for a run: bar, count, running success rate, elapsed time and time left.

The time left comes from the episodes' own durations (:class:`~statebound.bench.pace.Pace`), per
agent and model, so it shows from the first finished episode (at once on a resumed run, from the
durations already stored) and counts down between episodes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from statebound.bench.pace import Pace
from statebound.contract.result import EpisodeResult

__all__ = ["RunProgress"]


class _TimeLeft(ProgressColumn):
    """``left 0:04:10``, read at every refresh (so it counts down between episodes)."""

    def __init__(self, read: Callable[[], str]) -> None:
        super().__init__()
        self._read = read

    def render(self, task: Task) -> Text:
        return Text(f"left {self._read()}", style="progress.remaining")


def _group(result: EpisodeResult) -> tuple[str, str]:
    return result.agent, result.model


class RunProgress:
    """``with RunProgress(title=..., planned=..., workers=N) as p: p.record(result)``; silent when
    not ``enabled``. ``planned`` counts the run's episodes per (agent, model), ``previous`` are
    the episodes stored before (a resumed run), ``workers`` the episodes run at once."""

    def __init__(
        self,
        *,
        title: str,
        planned: Mapping[Hashable, int],
        workers: int = 1,
        enabled: bool = True,
        previous: Iterable[EpisodeResult] = (),
    ) -> None:
        previous = list(previous)
        self.left = Counter(planned)
        self.workers = workers
        self.pace = Pace()
        self.done = self.successes = self.crashed = 0
        for result in previous:
            self._count(result)
        self._deadline: float | None = None
        self._progress: Any = None
        if enabled:
            self._start_display(title, total=sum(planned.values()))
        self._estimate()

    def _start_display(self, title: str, *, total: int) -> None:
        self._progress = Progress(
            TextColumn("{task.description}", style="bold", markup=False),  # the benchmark, never markup
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("SR {task.fields[sr]}"),
            TextColumn("crashed {task.fields[crashed]}"),
            TimeElapsedColumn(),
            _TimeLeft(self.time_left),
        )
        self._task = self._progress.add_task(title, total=total, completed=self.done, sr=self._rate(),
                                             crashed=self.crashed)

    def _count(self, result: EpisodeResult) -> None:
        self.done += 1
        self.successes += result.success
        self.crashed += result.error is not None
        self.left[_group(result)] -= 1
        if result.error is None:
            self.pace.add(_group(result), result.wall_seconds)

    def _rate(self) -> str:
        return f"{100 * self.successes / self.done:.1f}%" if self.done else "-"

    def _estimate(self) -> None:
        left = self.pace.seconds_left(self.left, workers=self.workers)
        self._deadline = None if left is None else time.monotonic() + left

    def seconds_left(self) -> float | None:
        """The estimate now: it counts down between episodes (``None`` before the first one)."""
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())

    def time_left(self) -> str:
        """:meth:`seconds_left` as ``0:04:10`` (``?`` before the first episode)."""
        seconds = self.seconds_left()
        if seconds is None:
            return "?"
        whole = round(seconds)
        return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"

    def record(self, result: EpisodeResult) -> None:
        self._count(result)
        self._estimate()
        self._refresh(advance=1)

    def _refresh(self, *, advance: int = 0) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=advance, sr=self._rate(), crashed=self.crashed)

    def __enter__(self) -> RunProgress:
        if self._progress is not None:
            self._progress.start()
            self._refresh()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
