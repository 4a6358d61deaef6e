"""stateflow-scoped-random: the scoped machine with Pick's seeded random draw in place of the model."""

import pytest

pytest.importorskip("alfworld")

from statebound.agents.alfworld.agents import AGENTS
from statebound.bench.evaluate import run_task
from statebound.contract.benchmark import EpisodeLimits
from statebound.llm.testing import ScriptedLLM
from statebound.report.figures import choices_made


def test_the_control_is_registered_beside_the_model_agent_on_the_same_machine():
    control, model = AGENTS["stateflow-scoped-random"], AGENTS["stateflow-scoped"]
    assert not control.uses_model and control.env == model.env == {"admissible": True}


@pytest.mark.integration
async def test_the_control_plays_a_real_game_within_the_scopes_without_the_model():
    silent = ScriptedLLM()  # no replies: a model call would fail the episode
    result = await run_task("alfworld", "stateflow-scoped-random", "clean-042", llm=silent,
                            limits=EpisodeLimits(max_turns=20))
    again = await run_task("alfworld", "stateflow-scoped-random", "clean-042", llm=silent,
                           limits=EpisodeLimits(max_turns=20))
    actions = [e["content"] for e in result.trajectory if e["role"] == "assistant"]
    assert silent.requests == [] and result.error is None and result.prompt_tokens == 0
    assert result.error_rate == 0.0 and 0 < len(actions) <= 20  # every action admissible, within the budget
    assert actions == [e["content"] for e in again.trajectory if e["role"] == "assistant"]
    # every action is a choice among the offered commands, counted as such in reports (Choices/ep)
    choices = [e["choice"] for e in result.trajectory if e["role"] == "assistant"]
    assert [c["candidates"][c["picked"]] for c in choices] == actions
    assert all(c["method"] in ("random", "grammar") and c["asked"] == "random" for c in choices)
    assert any(c["method"] == "random" for c in choices)  # "grammar" only where one command was offered
    assert choices_made(result.trajectory) == len(actions)
    other_seed = await run_task("alfworld", "stateflow-scoped-random", "clean-042", llm=silent,
                                limits=EpisodeLimits(max_turns=20), seed=1)
    assert [e["content"] for e in other_seed.trajectory if e["role"] == "assistant"] != actions
