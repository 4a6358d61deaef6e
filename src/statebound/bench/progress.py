"""A rich progress display for a run: bar, count, elapsed time, ETA and the running success rate."""

from __future__ import annotations

from collections.abc import Iterable

from statebound.bench.result import EpisodeResult

__all__ = ["RunProgress"]


class RunProgress:
    """``with RunProgress(title=..., total=N) as p: p.record(result)``; silent when not ``enabled``."""

    def __init__(
        self, *, title: str, total: int, enabled: bool = True, previous: Iterable[EpisodeResult] = ()
    ) -> None:
        previous = list(previous)
        self.done = len(previous)
        self.successes = sum(r.success for r in previous)
        self.crashed = sum(r.error is not None for r in previous)
        self._progress = None
        if enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("SR {task.fields[sr]}"),
                TextColumn("crashed {task.fields[crashed]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
            )
            self._task = self._progress.add_task(
                title, total=total, completed=self.done, sr=self._rate(), crashed=self.crashed
            )

    def _rate(self) -> str:
        return f"{100 * self.successes / self.done:.1f}%" if self.done else "-"

    def record(self, result: EpisodeResult) -> None:
        self.done += 1
        self.successes += result.success
        self.crashed += result.error is not None
        if self._progress is not None:
            self._progress.update(self._task, advance=1, sr=self._rate(), crashed=self.crashed)

    def __enter__(self) -> RunProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
