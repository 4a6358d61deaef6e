"""A command's whole output (observation_chars=None) still reaches the agent bounded, with a note."""

from __future__ import annotations

import pytest
from bash_doubles import needs_sandbox

from statebound.envs.bash import BashEnv, load_tasks
from statebound.envs.observation import DEFAULT_MAX_OBSERVATION_CHARS

pytestmark = [pytest.mark.integration, needs_sandbox]


def test_long_output_is_cut_with_a_note_and_the_episode_goes_on() -> None:
    env = BashEnv(observation_chars=None)
    try:
        env.reset(load_tasks()[0].id)
        step = env.step("execute[seq 1 100000]")
        assert step.observation.startswith("1\n2\n3\n")
        assert "[observation cut:" in step.observation
        assert len(step.observation) < DEFAULT_MAX_OBSERVATION_CHARS + 100
        assert env.last_output is not None and len(env.last_output) > 500_000 // 2  # graded whole
        assert env.step("execute[echo ok]").observation == "ok\n"
    finally:
        env.close()
