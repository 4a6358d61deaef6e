"""``format=grammar`` on the ALFWorld agents: each agent's grammar goes with every reply and never
with ``format=free``; a backend without grammars is refused before a game starts; on the real
model every action the machine sends is well formed."""

from __future__ import annotations

import importlib.util
import re

import pytest
from alfworld_world import ROOM, ScriptedWorld, play_game

from statebound.agents.alfworld.grammar import (
    action_grammar,
    names_in,
    react_grammar,
    stateact_grammar,
)
from statebound.agents.alfworld.phases import build_phases
from statebound.bench.evaluate import run_task
from statebound.bench.registry import load_benchmark
from statebound.chain.loop import ChainPolicy as StateActPolicy
from statebound.chain.loop import ReactPolicy
from statebound.chain.steps import VARIANTS
from statebound.contract.benchmark import EpisodeLimits
from statebound.envs.alfworld.goals import parse_goal
from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.llm.base import Capabilities
from statebound.llm.testing import ScriptedLLM

GRAMMAR_LLM = Capabilities(completion=True, chat=True, grammar=True)
PUT_APPLE = ["go to countertop 1", "take apple 1 from countertop 1", "go to sofa 1", "put apple 1 in/on sofa 1"]
WELL_FORMED = re.compile(
    r"^(go to|open|close|use|examine) [a-z]+ \d+$|^take [a-z]+ \d+ from [a-z]+ \d+$"
    r"|^put [a-z]+ \d+ in/on [a-z]+ \d+$|^(clean|heat|cool) [a-z]+ \d+ with [a-z]+ \d+$|^(look|inventory)$"
)


def _put_world() -> ScriptedWorld:
    return ScriptedWorld(
        task=f"{ROOM}\nYour task is to: put some apple on sofa.", task_type="put",
        replies={"go to countertop 1": "On the countertop 1, you see a apple 1.",
                 "take apple 1 from countertop 1": "You pick up the apple 1 from the countertop 1.",
                 "go to sofa 1": "On the sofa 1, you see nothing.",
                 "move apple 1 to sofa 1": "You put the apple 1 in/on the sofa 1."},
        winning="move apple 1 to sofa 1",
    )  # fmt: skip


@pytest.mark.parametrize("grammar", [action_grammar(), None])
async def test_stateflow_sends_its_grammar_from_every_state(grammar):
    world = _put_world()
    llm = ScriptedLLM(PUT_APPLE, capabilities=GRAMMAR_LLM)
    result = await build_phases(parse_goal(world.task), grammar=grammar).run(world.task, llm=llm, deps=world)
    assert list(result.trajectory) == ["Find", "Take", "Put", "Put", "End"] and world.won
    assert [request.grammar for request in llm.requests] == [grammar] * 4


JSON = VARIANTS["stateact-json"]


@pytest.mark.parametrize(("policy", "grammar"), [
    (ReactPolicy(), react_grammar),
    (StateActPolicy(style=JSON), lambda names: stateact_grammar(JSON, names)),
    (ReactPolicy(), None),
])  # fmt: skip
async def test_loop_policies_send_the_grammar_of_the_game(heat_world, policy, grammar):
    llm = ScriptedLLM([" go to countertop 1"] * 3, capabilities=GRAMMAR_LLM)
    of_game = (lambda task: grammar(names_in(task))) if grammar else None
    episode = await play_game(heat_world, llm, policy, max_turns=3, grammar=of_game)
    expected = grammar(names_in(heat_world.task)) if grammar else None
    assert "apple" in names_in(heat_world.task) and episode.grammar == expected
    assert [request.grammar for request in llm.requests] == [expected] * 3


def test_an_unknown_format_is_a_clear_error():
    with pytest.raises(DefinitionError, match="alfworld option format='json': input should be 'free' or 'grammar'"):
        load_benchmark("alfworld", {"format": "json"})


async def test_grammar_on_a_backend_without_grammars_is_refused():
    with pytest.raises(UnsupportedFeature, match="alfworld agent stateflow-phases needs a model whose backend accepts GBNF"):
        await run_task("alfworld", "stateflow-phases", "examine-000", llm=ScriptedLLM([]), options={"format": "grammar"})


@pytest.mark.integration
@pytest.mark.parametrize(("agent", "grammar", "reply"), [
    ("react", react_grammar, " go to desk 2"),
    ("stateact-no-thought", lambda names: stateact_grammar(VARIANTS["stateact-no-thought"], names),
     "goal: examine the alarmclock with the desklamp\ncurrent location: starting location\n"
     "current inventory: None\naction: go to desk 2"),
    ("stateflow-phases", action_grammar, "go to desk 2"),
])  # fmt: skip
async def test_the_benchmark_gives_each_agent_its_games_grammar_on_the_real_engine(agent, grammar, reply):
    pytest.importorskip("alfworld")
    llm = ScriptedLLM([reply], capabilities=GRAMMAR_LLM)
    result = await run_task("alfworld", agent, "examine-000", llm=llm, options={"format": "grammar"},
                            limits=EpisodeLimits(max_turns=1))
    names = names_in(_opening("examine-000"))
    assert {"alarmclock", "desk", "desklamp"} <= set(names)
    assert [request.grammar for request in llm.requests] == [grammar(names)]
    assert result.turns == 1 and result.error_rate == 0.0  # desk 2 is a real place in this game


def _opening(task_id: str) -> str:
    """A game's opening text (room and task) from the real engine."""
    from statebound.envs.alfworld import AlfworldEnv

    env = AlfworldEnv()
    try:
        return env.reset(task_id)
    finally:
        env.close()


@pytest.mark.integration
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs llama_cpp (the 'local' extra)")
async def test_the_real_model_under_the_grammar_sends_only_well_formed_actions():
    """Unconstrained, SmolLM2 copies "Nothing happens." as its action in every game of the record."""
    pytest.importorskip("alfworld")
    from statebound.llm.registry import open_model

    result = await run_task("alfworld", "stateflow-phases", "examine-000", llm=open_model("smollm2"),
                            options={"format": "grammar"}, limits=EpisodeLimits(max_turns=4))
    actions = [entry["content"] for entry in result.trajectory if entry["role"] == "assistant"]
    assert len(actions) == result.turns == 4
    assert all(WELL_FORMED.match(action) for action in actions), actions
    named = {word for action in actions for word in re.findall(r"\b([a-z]+) \d+", action)}
    assert named <= set(names_in(_opening("examine-000"))), actions
