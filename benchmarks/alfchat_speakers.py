"""How often ALFChat's speaker choices by the model name no role: AutoGen's free answer against a
chooser, on 20 real ALFWorld games.

ALFChat with 3 agents (``alfchat-3agents``) leaves the speaker after every executor turn (the
assistant again, or the grounding agent's hint) to the group chat's ``auto`` selection
(``-O speaker=``). To measure that decision alone, the assistant's turns are played from each
game's stored walkthrough (``ACTION: <step>``), so every game gives the model the same real
transcripts to decide on, and only the speaker question goes to the embedded model. For
``speaker=text`` (AutoGen's: a free answer, parsed strictly, else the next role in order) and
``speaker=auto`` (the best chooser the model can run: ``score`` here), the script prints the
speaker choices the model made, how many named no role (fell back), and the roles chosen.

    .venv/bin/python benchmarks/alfchat_speakers.py [--games 20]    # about 5 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections import Counter
from dataclasses import dataclass, field

from statebound.bench.evaluate import run_task
from statebound.bench.registry import load_benchmark
from statebound.contract.benchmark import EpisodeLimits
from statebound.envs.alfworld.games import find_game
from statebound.llm.base import LLM, Capabilities, Choice, Completion, Request, Usage
from statebound.llm.registry import open_model

QUESTION = "Who should speak next?"


@dataclass
class WalkthroughPlayer:
    """An LLM whose assistant turns play the game's walkthrough and whose speaker question goes to
    the ``speaker`` model (whose name and capabilities it has)."""

    speaker: LLM
    steps: list[str]
    played: list[str] = field(default_factory=list)

    @property
    def model(self) -> str:
        return self.speaker.model

    @property
    def capabilities(self) -> Capabilities:
        return self.speaker.capabilities

    async def complete(self, request: Request) -> Completion:
        last = (request.messages or ())[-1].content if request.messages else request.prompt or ""
        if QUESTION in last:
            return await self.speaker.complete(request)
        step = self.steps[len(self.played)] if len(self.played) < len(self.steps) else "look"
        self.played.append(step)
        return Completion((Choice(f"ACTION: {step}"),), Usage(calls=1), self.model)


async def measure(speaker: str, games: list[str], model: LLM) -> None:
    loaded = load_benchmark("alfworld", {"speaker": speaker})
    picks: Counter[str] = Counter()
    won = 0
    for game in games:
        steps = [" ".join(step.split()) for step in find_game(game, "valid_unseen").walkthrough()]
        result = await run_task(loaded, "alfchat-3agents", game, llm=WalkthroughPlayer(model, steps),
                                limits=EpisodeLimits(max_turns=len(steps) + 2))
        won += result.success
        picks.update(f"{e['how']}:{e['role']}" for e in result.events
                     if e.get("kind") == "speaker_selected" and e.get("how") in ("auto", "fallback"))
    fell_back = sum(n for key, n in picks.items() if key.startswith("fallback"))
    total = sum(picks.values())
    print(f"| {speaker} | {len(games)} | {total} | {fell_back} ({100 * fell_back / max(total, 1):.1f} %) | "
          f"{dict(sorted(picks.items()))} | {won} |")


async def main(count: int) -> None:
    games = [task.id for task in load_benchmark("alfworld").benchmark.tasks()][:count]
    model = open_model("smollm2")
    print("| speaker | games | speaker choices by the model | named no role | how:role | games won |")
    print("|---|---|---|---|---|---|")
    for speaker in ("text", "auto"):
        await measure(speaker, games, model)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    os.environ.setdefault("STATEBOUND_THREADS", "1")
    asyncio.run(main(parser.parse_args().games))
