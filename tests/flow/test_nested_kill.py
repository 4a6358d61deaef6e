"""kill -9 a stored flow with a sub-machine and three parallel branches (one pausing for a person,
one paying through a tool that must not run twice) at twenty random points, on SQLite and on
PostgreSQL, and resume it: every trial ends with the uninterrupted run's variables, no payment is
made twice or again unasked, and no stored reply is asked for again
(benchmarks/nested_kill_resume.py does the work)."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

HARNESS = Path(__file__).resolve().parents[2] / "benchmarks" / "nested_kill_resume.py"
KILLS = 20


def _harness_module():
    spec = importlib.util.spec_from_file_location("nested_kill_resume", HARNESS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


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
    _every_kill_resumes(_harness_module().NestedHarness(tmp_path), seed=53)


def test_kill_9_of_nested_and_parallel_flow_resumes_on_postgres(tmp_path, postgres_url):
    _every_kill_resumes(_harness_module().NestedHarness(tmp_path, postgres_url), seed=54)
