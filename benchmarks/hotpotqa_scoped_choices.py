"""Print what the model adds to the scoped HotpotQA machine, pick by pick, against chance.

    .venv/bin/python benchmarks/hotpotqa_scoped_choices.py [RUN_DIR ...]

Without RUN_DIR it reads the record's ``benchmarks/records/extensions/hotpotqa-scoped/``
``stateflow-scoped`` and ``stateflow-scoped-random``. For each run, from its store:

- exact match on the 50 development questions (the machine's rules were written on them), on the
  50 held out, and on all 100; and per route (yes/no, one of two named things, bridge);
- the ``page`` pick: the episodes where a supporting page (HotpotQA's ``supporting_facts``) was
  offered, where one was picked, and how many picks chance would get right (k/n per episode);
- the ``answer`` pick: the episodes where the gold answer was among the candidates (exact match
  after HotpotQA's normalisation), where it was picked, and chance's expectation.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from statebound.bench.store import RunStore
from statebound.envs.qa.datasets import QAItem, load_hotpotqa
from statebound.envs.qa.scoring import exact_match

RECORD = Path(__file__).resolve().parent / "records" / "extensions" / "hotpotqa-scoped"
_ROUTES = {"yesno": "yes/no", "either": "one of two", "page": "bridge", "answer": "bridge"}


def development_ids(items: Sequence[QAItem]) -> set[str]:
    """The 50 questions the machine was developed on: positions drawn with ``random.Random(2026)``."""
    return {items[i].id for i in random.Random(2026).sample(range(len(items)), 50)}


def choices(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each pick of an episode by name (the machine makes each at most once)."""
    found = {}
    for event in events:
        data = event.get("data")
        if isinstance(data, dict) and isinstance(data.get("choice"), dict):
            found[data["choice"]["name"]] = data["choice"]
    return found


def against_chance(choice: dict[str, Any], right: set[int]) -> tuple[int, int, float]:
    """(1 if right answers were offered, 1 if one was picked, chance of picking one)."""
    if not right:
        return 0, 0, 0.0
    return 1, int(choice["picked"] in right), len(right) / len(choice["candidates"])


def is_right(pick: str, text: str, item: QAItem) -> bool:
    """A right ``page`` is a supporting page; a right ``answer`` matches the gold answer."""
    if pick == "page":
        return text in item.meta["supporting"]
    return exact_match(text, item.answer)


def summarize(run: Path, items: dict[str, QAItem], development: set[str]) -> None:
    with RunStore(run, create=False, read_only=True) as store:
        episodes = list(store.iter_trajectories())
    won: dict[str, list[int]] = {"development": [0, 0], "held out": [0, 0], "all": [0, 0]}
    routes: dict[str, list[int]] = {}
    tally = {name: [0, 0, 0.0] for name in ("page", "answer")}
    for episode in episodes:
        item, success = items[episode.task], int(bool(episode.success))
        for split in ("development" if episode.task in development else "held out", "all"):
            won[split][0] += success
            won[split][1] += 1
        picks = choices(episode.events)
        route = next((_ROUTES[name] for name in ("yesno", "either", "page", "answer") if name in picks), "none")
        routes.setdefault(route, [0, 0])
        routes[route][0] += success
        routes[route][1] += 1
        for name in tally:
            if name in picks and picks[name]["picked"] is not None:
                right = {i for i, text in enumerate(picks[name]["candidates"]) if is_right(name, text, item)}
                for slot, value in enumerate(against_chance(picks[name], right)):
                    tally[name][slot] += value
    print(f"{run} ({len(episodes)} episodes):")
    print("  exact match: " + ", ".join(f"{split} {a}/{n}" for split, (a, n) in won.items()))
    print("  by route: " + ", ".join(f"{route} {a}/{n}" for route, (a, n) in sorted(routes.items())))
    for name, what in (("page", "a supporting page"), ("answer", "the gold answer")):
        offered, picked, chance = tally[name]
        print(f"  {name} pick: {what} offered in {offered}, picked in {picked} ({chance:.1f} expected by chance)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="*", type=Path,
                        default=[RECORD / "stateflow-scoped", RECORD / "stateflow-scoped-random"])
    args = parser.parse_args()
    items = load_hotpotqa()
    development = development_ids(items)
    for run in args.runs:
        summarize(run, {item.id: item for item in items}, development)


if __name__ == "__main__":
    main()
