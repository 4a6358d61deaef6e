"""The time a run still needs, from how long its episodes took.

Each (agent, model) keeps the mean wall-clock seconds of its finished episodes (crashed ones are left
out: they end early or hang until a limit, and say nothing about the pace). A group without a finished
episode yet borrows the mean of every finished episode, so an estimate exists from the first episode
on, and a resumed run starts with the durations its store holds.

```python
pace = Pace()
pace.add(("react", "smollm2"), 40.0)
pace.seconds_left({("react", "smollm2"): 9, ("stateflow", "smollm2"): 10}, workers=2)  # 380.0
```
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

__all__ = ["Pace", "format_duration", "format_seconds"]


class Pace:
    """Running means of episode durations per group (any hashable, e.g. ``(agent, model)``)."""

    def __init__(self) -> None:
        self._totals: dict[Hashable, tuple[float, int]] = {}

    def add(self, group: Hashable, seconds: float, *, episodes: int = 1) -> None:
        """``episodes`` finished episodes of ``group`` that took ``seconds`` in all."""
        total, count = self._totals.get(group, (0.0, 0))
        self._totals[group] = (total + seconds, count + episodes)

    def own_mean(self, group: Hashable) -> float | None:
        """The mean of ``group``'s own episodes, or ``None`` before its first."""
        total, count = self._totals.get(group, (0.0, 0))
        return total / count if count else None

    def mean(self, group: Hashable) -> float | None:
        """``group``'s mean, or the mean over all groups when it has none yet (``None``: nothing finished)."""
        own = self.own_mean(group)
        if own is not None:
            return own
        count = sum(count for _, count in self._totals.values())
        return sum(total for total, _ in self._totals.values()) / count if count else None

    def seconds_left(self, left: Mapping[Hashable, int], *, workers: int = 1) -> float | None:
        """Seconds the episodes ``left`` per group need on ``workers`` workers (``None``: no pace yet)."""
        remaining = sum(n for n in left.values() if n > 0)
        if remaining == 0:
            return 0.0
        work = 0.0
        for group, count in left.items():
            if count > 0:
                mean = self.mean(group)
                if mean is None:
                    return None
                work += count * mean
        return work / max(1, min(workers, remaining))


def format_duration(seconds: float | None) -> str:
    """``42s``, ``7m05s``, ``3h08m``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def format_seconds(seconds: float | None) -> str:
    """A mean episode duration with the digits that matter: ``0.052``, ``3.4``, ``41``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    if seconds < 1:
        return f"{seconds:.2g}"
    return f"{seconds:.1f}" if seconds < 10 else f"{seconds:.0f}"
