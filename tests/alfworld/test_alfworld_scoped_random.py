"""stateflow-scoped-random: the scoped machine with a seeded random chooser in place of the model."""

import pytest

pytest.importorskip("alfworld")

from statebound.agents.alfworld.agents import AGENTS
from statebound.agents.alfworld.scoped import RandomChooser, choice_grammar, offered
from statebound.bench.contract import EpisodeLimits
from statebound.bench.evaluate import run_task
from statebound.llm.base import Usage, chat
from statebound.llm.testing import ScriptedLLM
from statebound.report.figures import choices_made

GRAMMAR = choice_grammar([f"go to drawer {n}" for n in range(1, 9)])


async def test_the_chooser_answers_a_choice_grammar_at_random_with_its_seed_and_no_tokens():
    requests = [chat(("user", f"turn {turn}"), grammar=GRAMMAR) for turn in range(16)]
    first = [await RandomChooser(seed=0).complete(r) for r in requests]
    picks = [c.text for c in first]
    assert all(p in offered(GRAMMAR) for p in picks) and len(set(picks)) > 1
    assert picks == [(await RandomChooser(seed=0).complete(r)).text for r in requests]  # the same draws again
    assert picks != [(await RandomChooser(seed=1).complete(r)).text for r in requests]  # another seed, others
    assert all(c.usage == Usage() for c in first)
    with pytest.raises(ValueError, match="choice grammar"):
        await RandomChooser().complete(chat(("user", "no grammar")))


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
    assert all(c["method"] == "grammar" and len(c["candidates"]) >= 1 for c in choices)
    assert choices_made(result.trajectory) == len(actions)
