"""Print what the model adds to the scoped GSM8K machine, step by step, against chance.

    .venv/bin/python benchmarks/gsm8k_scoped_choices.py [RUN_DIR ...]

Without RUN_DIR it reads the record's ``benchmarks/records/extensions/gsm8k-scoped/``
``stateflow-scoped`` and ``stateflow-scoped-random``. For each run, from its store and the
problems' quantities (:func:`statebound.agents.qa.quantities.quantities`):

- successes, and *reach*: the problems whose gold answer some sequence of steps over their
  quantities reaches (no picking can do better);
- chance: the successes a uniform random pick at every step expects (exact, over the tree of
  steps), the yardstick for the random control's own draws;
- each ``step`` pick made while the gold answer was still reachable: how often the step picked
  keeps it reachable, against the share of candidate steps that would (chance).
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

from statebound.agents.qa.quantities import parse_quantity, steps
from statebound.bench.store import RunStore
from statebound.envs.qa.datasets import load_gsm8k

RECORD = Path(__file__).resolve().parent / "records" / "extensions" / "gsm8k-scoped"
LARGEST_POOL = 6  # chance over larger pools takes too long to compute exactly: they are left out
Pool = tuple[Fraction, ...]


@cache
def chance(pool: Pool, gold: Fraction) -> float:
    """The probability that uniform random steps from ``pool`` (sorted) end at ``gold``."""
    if len(pool) <= 1:
        return float(bool(pool) and pool[0] == gold)
    following = steps(pool)
    if not following:
        return 0.0
    return sum(chance(tuple(sorted(step.pool)), gold) for step in following) / len(following)


def reaches(pool: Pool, gold: Fraction) -> bool:
    return chance(tuple(sorted(pool)), gold) > 0


def step_picks(events: list[dict[str, Any]]) -> list[tuple[Pool, str]]:
    """Each ``step`` pick of an episode with the pool it was made on (the latest pool recorded)."""
    found: list[tuple[Pool, str]] = []
    pool: Pool = ()
    for event in events:
        data = event.get("data")
        if not isinstance(data, dict):
            continue
        if "pool" in data:
            pool = tuple(parse_quantity(text) for text in data["pool"])
        choice = data.get("choice")
        if isinstance(choice, dict) and choice.get("name") == "step" and choice.get("picked") is not None:
            found.append((pool, choice["candidates"][choice["picked"]]))
    return found


def _first_pool(events: list[dict[str, Any]]) -> Pool:
    """The quantities ``Read`` found, sorted."""
    for event in events:
        data = event.get("data")
        if isinstance(data, dict) and "pool" in data:
            return tuple(sorted(parse_quantity(text) for text in data["pool"]))
    return ()


def summarize(run: Path, golds: dict[str, Fraction]) -> None:
    with RunStore(run, create=False, read_only=True) as store:
        episodes = list(store.iter_trajectories())
    for agent in sorted({episode.agent for episode in episodes}):
        summarize_agent(f"{run} {agent}", [episode for episode in episodes if episode.agent == agent], golds)


def summarize_agent(name: str, episodes: list[Any], golds: dict[str, Fraction]) -> None:
    won = reach = left_out = 0
    total = sum(bool(episode.success) for episode in episodes)
    expected = 0.0
    kept, offered_alive, picks_alive = 0, 0.0, 0
    for episode in episodes:
        gold = golds[episode.task]
        start = _first_pool(episode.events)
        if len(start) > LARGEST_POOL:
            left_out += 1
            continue
        won += bool(episode.success)
        made = step_picks(episode.events)
        reach += reaches(start, gold)
        expected += chance(start, gold)
        for pool, text in made:
            if not reaches(pool, gold):
                break
            candidates = steps(tuple(sorted(pool)))
            alive = sum(reaches(step.pool, gold) for step in candidates)
            picked = next(step for step in steps(pool) if step.text == text)
            picks_alive += 1
            kept += reaches(picked.pool, gold)
            offered_alive += alive / len(candidates)
    print(f"{name}: {total} successes in {len(episodes)} episodes; below, the {len(episodes) - left_out} "
          f"of at most {LARGEST_POOL} quantities:")
    print(f"  successes {won}; gold reachable from the quantities read in {reach}; "
          f"uniform random picks expect {expected:.1f}")
    print(f"  step picks made while the gold was reachable: {picks_alive}; kept it reachable in {kept} "
          f"({offered_alive:.1f} expected by chance)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="*", type=Path,
                        default=[RECORD / "stateflow-scoped", RECORD / "stateflow-scoped-random"])
    args = parser.parse_args()
    golds = {item.id: Fraction(item.answer) for item in load_gsm8k()}
    for run in args.runs:
        summarize(run, golds)


if __name__ == "__main__":
    main()
