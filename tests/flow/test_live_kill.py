"""kill -9 a stored 30-turn flow (``statebound run`` in a child process) at random points and
resume it: no checkpointed reply is asked for again, and the run ends as an uninterrupted one
(benchmarks/kill_resume.py does the work; benchmarks/live_flows.py runs 20 of these)."""

from __future__ import annotations

import random

import pytest
from live_helpers import benchmark_module

pytestmark = pytest.mark.integration


def test_kill_9_then_resume_repeats_no_checkpointed_call(tmp_path):
    kill_resume = benchmark_module("kill_resume")
    harness = kill_resume.Harness(tmp_path)
    assert len(harness.calls("reference")) == kill_resume.TURNS
    rng = random.Random(23)
    for _ in range(3):
        trial = harness.trial(rng)
        assert 0 < trial.killed_after and trial.stored < kill_resume.TURNS, trial  # it died mid-run
        assert trial.reasked == 0, trial
        assert trial.in_flight == trial.killed_after - trial.stored <= 1, trial
        assert trial.same, trial


def test_kill_9_of_a_flow_whose_model_calls_tools_repeats_no_reply_and_no_payment(tmp_path):
    kill_resume = benchmark_module("kill_resume")
    harness = kill_resume.ToolHarness(tmp_path)
    rng = random.Random(5)
    trials = [harness.trial(rng) for _ in range(4)]
    for trial in trials:
        assert (trial.reasked, trial.paid_twice, trial.unasked) == (0, 0, 0), trial
        assert trial.same, trial
