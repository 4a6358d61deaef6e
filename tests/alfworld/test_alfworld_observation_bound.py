"""The real engine's observations pass through the shared bound (statebound.envs.observation)."""

import pytest

pytest.importorskip("alfworld")

from statebound.envs.alfworld import AlfworldEnv  # noqa: E402

pytestmark = pytest.mark.integration


def test_observations_are_bounded_with_a_note() -> None:
    env = AlfworldEnv()
    try:
        env.reset("clean-060")
        env.max_observation_chars = 10
        step = env.step("go to stoveburner 3")  # "On the stoveburner 3, you see a pan 1."
        assert step.observation.startswith("On the sto\n[observation cut: 28 of 38 characters")
    finally:
        env.close()
