"""The time left of a run: from the first finished episode, per agent, and at once on resume."""

import pytest

from statebound.bench.pace import Pace, format_duration, format_seconds
from statebound.bench.progress import RunProgress
from statebound.contract.result import EpisodeResult


def _done(agent, seconds, *, error=None):
    return EpisodeResult(task="t", agent=agent, model="m", wall_seconds=seconds, error=error)


def test_a_group_without_episodes_borrows_the_pace_of_the_others():
    pace = Pace()
    assert pace.seconds_left({("a", "m"): 3}) is None  # nothing finished: unknown, not zero
    pace.add(("a", "m"), 10.0)
    pace.add(("a", "m"), 30.0)
    pace.add(("b", "m"), 40.0, episodes=1)
    assert pace.own_mean(("c", "m")) is None and pace.mean(("c", "m")) == pytest.approx(80 / 3)
    assert pace.seconds_left({("a", "m"): 2, ("b", "m"): 1}) == pytest.approx(2 * 20 + 40)
    assert pace.seconds_left({("a", "m"): 2, ("b", "m"): 1}, workers=2) == pytest.approx(40)
    assert pace.seconds_left({("a", "m"): 1}, workers=8) == pytest.approx(20)  # one episode: one worker
    assert pace.seconds_left({("a", "m"): 0}) == 0.0


def test_the_estimate_exists_from_the_first_episode_and_ignores_crashes():
    progress = RunProgress(title="t", planned={("a", "m"): 10, ("b", "m"): 10}, workers=2, enabled=False)
    assert progress.seconds_left() is None and progress.time_left() == "?"
    progress.record(_done("a", 99.0, error="boom"))  # a crash says nothing about the pace
    assert progress.seconds_left() is None
    progress.record(_done("a", 12.0))
    assert progress.seconds_left() == pytest.approx(18 * 12 / 2, abs=0.5)  # b borrows a's pace
    assert progress.time_left() in ("0:01:48", "0:01:47")


def test_a_resumed_run_starts_with_the_stored_durations():
    stored = [_done("a", 60.0) for _ in range(5)]
    progress = RunProgress(title="t", planned={("a", "m"): 10}, workers=1, enabled=False, previous=stored)
    assert (progress.done, progress.left[("a", "m")]) == (5, 5)
    assert progress.seconds_left() == pytest.approx(300, abs=0.5)


def test_durations_read_as_a_person_reads_them():
    assert [format_duration(s) for s in (None, 0.4, 42, 425, 11280)] == ["?", "0s", "42s", "7m05s", "3h08m"]
    assert [format_seconds(s) for s in (None, 0.0517, 3.44, 41.4)] == ["?", "0.052", "3.4", "41"]
