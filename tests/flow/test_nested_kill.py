"""kill -9 a stored flow with a sub-machine and three parallel branches (one pausing for a person,
one paying through a tool that must not run twice) at twenty random points, on SQLite and on
PostgreSQL, and resume it: every trial ends with the uninterrupted run's variables, no payment is
made twice or again unasked, and no stored reply is asked for again
(benchmarks/nested_kill_resume.py does the work)."""

from __future__ import annotations

import random

import pytest
from live_helpers import benchmark_module

pytestmark = pytest.mark.integration

KILLS = 20


def _every_kill_resumes(harness, seed: int) -> None:
    assert harness.reference["reason"] == "final" and harness.reference["vars"]["approved"] == "yes"
    rng = random.Random(seed)
    trials = [harness.trial(rng) for _ in range(KILLS)]
    for trial in trials:
        assert trial.same, trial
        assert (trial.paid_twice, trial.unasked, trial.reasked) == (0, 0, 0), trial
        assert trial.repeated <= 3, trial  # only calls cut off by the kill, one per branch at most
    assert len({trial.killed_after for trial in trials}) >= 4, trials  # kills landed all along the run


def test_kill_9_of_nested_and_parallel_flow_resumes_on_sqlite(tmp_path):
    _every_kill_resumes(benchmark_module("nested_kill_resume").NestedHarness(tmp_path), seed=53)


def test_kill_9_of_nested_and_parallel_flow_resumes_on_postgres(tmp_path, postgres_url):
    _every_kill_resumes(benchmark_module("nested_kill_resume").NestedHarness(tmp_path, postgres_url), seed=54)
