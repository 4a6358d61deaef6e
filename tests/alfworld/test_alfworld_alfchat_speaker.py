"""ALFChat with the speaker after the executor left to the model (``-O speaker=``): AutoGen's free
answer (``text``) falls back to the next role in order (the grounding agent) when it names none; a
chooser always names one; on a real game."""

import pytest

pytest.importorskip("alfworld")

from statebound.bench.evaluate import run_task
from statebound.bench.registry import load_benchmark
from statebound.contract.benchmark import EpisodeLimits
from statebound.llm.base import Capabilities, Request
from statebound.llm.testing import FunctionLLM

pytestmark = pytest.mark.integration


def player(request: Request) -> str:
    """Plays "ACTION: look"; asked who speaks next, answers something that is no role (free text)
    or, held to a choice grammar, the assistant (the player) again."""
    if request.grammar is not None:
        return "assistant"
    last = (request.messages or ())[-1].content
    return "someone else" if "Who should speak next?" in last else "ACTION: look"


def speakers(result) -> list[tuple[str, str]]:
    return [(e["role"], e["how"]) for e in result.events if e.get("kind") == "speaker_selected"]


@pytest.mark.parametrize(("speaker", "how", "role"), [("text", "fallback", "grounding"), ("grammar", "auto", "assistant")])
async def test_the_model_picks_who_speaks_after_the_executor(speaker, how, role):
    loaded = load_benchmark("alfworld", {"speaker": speaker})
    llm = FunctionLLM(player, capabilities=Capabilities(completion=True, chat=True, grammar=True))
    result = await run_task(loaded, "alfchat-3agents", "put-018", llm=llm, limits=EpisodeLimits(max_turns=3))
    after_executor = [pair for pair in speakers(result) if pair[1] in ("auto", "fallback")]
    assert after_executor and all(pair == (role, how) for pair in after_executor)


async def test_the_runners_rules_ask_the_model_nothing_about_speakers():
    llm = FunctionLLM(player, capabilities=Capabilities(completion=True, chat=True, grammar=True))
    result = await run_task("alfworld", "alfchat-3agents", "put-018", llm=llm, limits=EpisodeLimits(max_turns=3))
    assert {how for _, how in speakers(result)} == {"function"}
    assert not any("Who should speak next?" in (r.messages or ())[-1].content for r in llm.requests)
