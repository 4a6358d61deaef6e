"""ReAct and StateAct loops with scripted replies on a scripted world."""

from dataclasses import dataclass

import pytest
from alfworld_world import play_game

from statebound.chain.loop import ChainPolicy as StateActPolicy
from statebound.chain.loop import ReactPolicy
from statebound.chain.steps import VARIANTS
from statebound.errors import ContextOverflow
from statebound.exits import ExitReason
from statebound.llm.base import Completion, Request
from statebound.llm.testing import ScriptedLLM, count_tokens

HEAT_ACTIONS = [
    "go to countertop 1", "take apple 1 from countertop 1", "go to microwave 1",
    "heat apple 1 with microwave 1", "go to fridge 1", "open fridge 1", "put apple 1 in fridge 1",
]


async def test_react_thinks_get_ok_and_never_reach_the_world(heat_world):
    llm = ScriptedLLM([" think: find an apple first.", *(f" {a}" for a in HEAT_ACTIONS)])
    episode = await play_game(heat_world, llm, ReactPolicy(), max_turns=20)
    assert episode.exit_reason is ExitReason.FINAL and heat_world.won
    assert heat_world.actions[0] == "go to countertop 1"  # the think was not sent
    assert episode.turns[0].observation == "OK." and episode.turns[0].think
    assert heat_world.actions[-1] == "move apple 1 to fridge 1"  # corrected put
    assert episode.turns[-1].rewrite == "correction"
    last_prompt = llm.requests[-1].prompt
    assert last_prompt.endswith("> open fridge 1\nYou open the fridge 1. The fridge 1 is open. In it, you see nothing.\n>")
    assert "> think: find an apple first.\nOK.\n>" in last_prompt
    assert llm.requests[0].stop == ("\n",)


async def test_react_stops_at_the_turn_limit(heat_world):
    llm = ScriptedLLM(["go to sofa 1"] * 3)
    episode = await play_game(heat_world, llm, ReactPolicy(), max_turns=3)
    assert episode.exit_reason is ExitReason.TURN_LIMIT and len(episode.turns) == 3
    assert heat_world.failed_actions == 3


def _stateact_reply(location: str, inventory: str, action: str) -> str:
    return (f"goal: put a hot apple in fridge\ncurrent location: {location}\ncurrent inventory: {inventory}\n"
            f"thought: None\naction: {action}\nAn invented observation.")


async def test_stateact_checks_the_written_state_against_the_tracker(heat_world):
    states = [("starting location", "None"), ("countertop 1", "None"), ("countertop 1", "apple 1"),
              ("microwave 1", "apple 1"), ("microwave 1", "None"),  # forgot the apple here
              ("fridge 1", "apple 1"), ("fridge 1", "apple 1")]
    llm = ScriptedLLM([_stateact_reply(loc, inv, a) for (loc, inv), a in zip(states, HEAT_ACTIONS)])
    episode = await play_game(heat_world, llm, StateActPolicy(style=VARIANTS["stateact"]))
    assert episode.exit_reason is ExitReason.FINAL
    assert len(episode.checks) == 7
    assert [c.inventory_ok for c in episode.checks].count(False) == 1
    assert all(c.location_ok for c in episode.checks)
    prompt = llm.requests[-1].prompt
    assert "An invented observation." not in prompt  # cut at the action line
    assert prompt.endswith("action: open fridge 1\nYou open the fridge 1. The fridge 1 is open. In it, you see nothing.\n>")


@pytest.mark.parametrize(("identical", "repeated"), [(6, True), (5, False)])
async def test_stateact_ends_at_five_repetitions_in_a_row(heat_world, identical, repeated):
    # alfworld_run.py: the fifth reply equal to the one before (the sixth identical) is not sent
    same = _stateact_reply("starting location", "None", "go to sofa 1")
    llm = ScriptedLLM([_stateact_reply("starting location", "None", "look"), *[same] * identical,
                       _stateact_reply("sofa 1", "None", "go to countertop 1")])
    episode = await play_game(heat_world, llm, StateActPolicy(style=VARIANTS["stateact"]), max_turns=identical + 2)
    assert episode.repeated is repeated and episode.exit_reason is ExitReason.TURN_LIMIT
    assert heat_world.actions.count("go to sofa 1") == (5 if repeated else identical)
    assert len(llm.requests) == identical + 1 + (not repeated)


async def test_react_has_no_repetition_stop(heat_world):
    episode = await play_game(heat_world, ScriptedLLM(["go to sofa 1"] * 7), ReactPolicy(), max_turns=7)
    assert not episode.repeated and heat_world.actions.count("go to sofa 1") == 7


async def test_stateact_stops_as_the_authors_run(heat_world):
    json_reply = '{\n  "goal": "g",\n  "current_location": "x",\n  "current_inventory": "",\n  "thought": "",\n  "action": "look"'
    episode = await play_game(heat_world, ScriptedLLM([json_reply]), StateActPolicy(style=VARIANTS["stateact-json"]),
                              max_turns=1)
    assert episode.turns[0].action == "look" and heat_world.actions == ["look"]
    text = await play_game(heat_world, ScriptedLLM(["action: look"]), StateActPolicy(), max_turns=1)
    assert text.turns[0].action == "look"
    assert StateActPolicy().stop == ("\n\n",)
    assert StateActPolicy(style=VARIANTS["stateact-json"]).stop == ("}\n", "\n}")


async def test_no_state_ablation_records_no_checks(heat_world):
    replies = [f"goal: put a hot apple in fridge\nthought: None\naction: {a}" for a in HEAT_ACTIONS]
    episode = await play_game(heat_world, ScriptedLLM(replies), StateActPolicy(style=VARIANTS["stateact-no-state"]))
    assert episode.exit_reason is ExitReason.FINAL and episode.checks == []


async def test_chat_only_backends_get_the_prompt_as_one_user_message(heat_world):
    from statebound.llm.base import Capabilities

    llm = ScriptedLLM(["go to countertop 1"], capabilities=Capabilities(completion=False, chat=True))
    await play_game(heat_world, llm, ReactPolicy(), max_turns=1)
    request = llm.requests[0]
    assert request.prompt is None and len(request.messages) == 1 and request.messages[0].role == "user"


@dataclass
class SmallContext:
    """A scripted model with a context window of ``limit`` tokens: longer prompts overflow."""

    scripted: ScriptedLLM
    limit: int
    overflows: int = 0

    @property
    def model(self) -> str:
        return self.scripted.model

    @property
    def capabilities(self):
        return self.scripted.capabilities

    async def complete(self, request: Request) -> Completion:
        if count_tokens(request.prompt or "") > self.limit:
            self.overflows += 1
            raise ContextOverflow("prompt too long", provider="test")
        return await self.scripted.complete(request)


async def test_a_prompt_over_the_context_loses_its_oldest_turns(heat_world):
    replies = [" think: find an apple first.", " think: it may be on a countertop.", *(f" {a}" for a in HEAT_ACTIONS)]
    whole = ScriptedLLM(replies)
    await play_game(heat_world, whole, ReactPolicy(), max_turns=20)
    few_shot = count_tokens(whole.requests[0].prompt)
    small = SmallContext(ScriptedLLM(replies), limit=few_shot + 25)

    episode = await play_game(heat_world, small, ReactPolicy(), max_turns=20)
    assert episode.exit_reason is ExitReason.FINAL and len(episode.turns) == len(replies)
    assert 0 < small.overflows <= episode.turns_dropped
    prompts = [r.prompt for r in small.scripted.requests]
    assert all(p.startswith(episode.prompt) and count_tokens(p) <= small.limit for p in prompts)
    assert "find an apple first" not in prompts[-1]  # the oldest turn went first
    assert prompts[-1].endswith("> open fridge 1\nYou open the fridge 1. The fridge 1 is open. In it, you see nothing.\n>")
    full = [r.prompt for r in whole.requests]
    changed = [i for i, (p, q) in enumerate(zip(prompts, full)) if p != q]
    assert changed and changed[0] > 0  # the first prompts fitted and went as they were ...
    assert all(count_tokens(full[i]) > small.limit for i in changed)  # ... the others would not fit


async def test_turns_go_a_quarter_at_a_time_so_the_prompt_start_holds(heat_world):
    thoughts = [f" think: idea number {n}." for n in range(24)]
    whole = ScriptedLLM(thoughts)
    await play_game(heat_world, whole, ReactPolicy(), max_turns=24)
    few_shot = count_tokens(whole.requests[0].prompt)
    small = SmallContext(ScriptedLLM(thoughts), limit=few_shot + 80)  # 13 turns of 6 tokens fit

    episode = await play_game(heat_world, small, ReactPolicy(), max_turns=24)
    assert len(episode.turns) == 24
    # turn 15 finds 14 turns, one too many: 14 // 4 = 3 go, which leaves room for two more turns;
    # so turns 15, 18, 21 and 24 overflow, not every turn from the 15th on
    assert small.overflows == 4 and episode.turns_dropped == 4 * 3
    prompts = [r.prompt for r in small.scripted.requests]
    assert "idea number 11." not in prompts[-1] and "idea number 12." in prompts[-1]
    assert prompts[15].startswith(prompts[14]) and prompts[16].startswith(prompts[15])  # only grows


async def test_a_game_that_fits_is_played_unchanged(heat_world):
    replies = [f" {a}" for a in HEAT_ACTIONS]
    whole, roomy = ScriptedLLM(replies), SmallContext(ScriptedLLM(replies), limit=10**6)
    first = await play_game(heat_world, whole, ReactPolicy())
    second = await play_game(heat_world, roomy, ReactPolicy())
    assert [r.prompt for r in whole.requests] == [r.prompt for r in roomy.scripted.requests]
    assert first.turns_dropped == second.turns_dropped == 0


async def test_examples_and_task_too_long_for_the_context_is_an_error(heat_world):
    small = SmallContext(ScriptedLLM(["go to countertop 1"]), limit=10)
    with pytest.raises(ContextOverflow):
        await play_game(heat_world, small, ReactPolicy())
