"""Per-task outcomes of two runs of the same agent, side by side: did a change alter any result?

    .venv/bin/python benchmarks/compare_runs.py BEFORE_DIR AFTER_DIR [--agent NAME ...]

For each agent stored in both run directories (or those named), over the tasks both hold: the
successes before and after, the tasks solved only before and only after, the tasks whose choices
differ (what was chosen at each pick, among which candidates: a rewrite that keeps the machine's
behaviour changes none; a seeded random control must change none), and the mean prompt tokens and
model calls per episode before and after (a change that keeps every pick may still call the model
less), the mean reward and turns, and in how many tasks the model's replies differ (a prompt
change shows there first). Used for the scoped machines' rewrites and the #37 re-runs: the
records under benchmarks/records/ are BEFORE, a fresh run of the same command is AFTER.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from statebound.bench.store import RunStore
from statebound.contract.result import EpisodeResult


def by_agent(run_dir: Path) -> dict[str, dict[tuple[str, int], EpisodeResult]]:
    """A run's stored episodes, by agent, then by (task, seed)."""
    found: dict[str, dict[tuple[str, int], EpisodeResult]] = defaultdict(dict)
    with RunStore(run_dir, create=False, read_only=True) as store:
        for result in store.results(with_trajectories=True):
            found[result.agent][(result.task, result.seed)] = result
    return found


def choices_of(result: EpisodeResult) -> list[tuple[object, ...]]:
    """Each pick of an episode: its name, candidates and the index picked."""
    return [(c.get("name"), tuple(c.get("candidates") or ()), c.get("picked"))
            for entry in result.trajectory if isinstance(c := entry.get("choice"), dict)]


def replies_of(result: EpisodeResult) -> list[str]:
    """The model's replies of an episode, in order (flows mark them ``source: llm``; the monitor's
    and the StateAct loop's traces by the ``assistant`` role alone)."""
    return [str(entry.get("content", "")) for entry in result.trajectory
            if entry.get("source", "llm" if entry.get("role") == "assistant" else None) == "llm"]


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def compare(before: Path, after: Path, agents: list[str]) -> None:
    old, new = by_agent(before), by_agent(after)
    for agent in agents or sorted(set(old) & set(new)):
        shared = sorted(set(old.get(agent, {})) & set(new.get(agent, {})))
        if not shared:
            print(f"{agent}: no task in both runs")
            continue
        a, b = old[agent], new[agent]
        only_before = [task for task, seed in shared if a[(task, seed)].success and not b[(task, seed)].success]
        only_after = [task for task, seed in shared if b[(task, seed)].success and not a[(task, seed)].success]
        print(f"{agent}: {len(shared)} tasks in both; solved before {sum(a[k].success for k in shared)}, "
              f"after {sum(b[k].success for k in shared)}")
        print(f"  solved only before: {', '.join(only_before) or 'none'}")
        print(f"  solved only after:  {', '.join(only_after) or 'none'}")
        differ = [task for task, seed in shared if choices_of(a[(task, seed)]) != choices_of(b[(task, seed)])]
        print(f"  choices differ in {len(differ)} tasks{': ' + ', '.join(differ) if differ else ''}")
        rewritten = sum(replies_of(a[k]) != replies_of(b[k]) for k in shared)
        print(f"  replies differ in {rewritten} of {len(shared)} tasks; reward before "
              f"{mean(a[k].reward for k in shared):.4f}, after {mean(b[k].reward for k in shared):.4f}; turns before "
              f"{mean(a[k].turns for k in shared):.2f}, after {mean(b[k].turns for k in shared):.2f}")
        print(f"  prompt tokens per episode: before {mean(a[k].prompt_tokens for k in shared):.0f}, "
              f"after {mean(b[k].prompt_tokens for k in shared):.0f}; model calls per episode: before "
              f"{mean(a[k].llm_calls for k in shared):.2f}, after {mean(b[k].llm_calls for k in shared):.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--agent", action="append", default=[])
    arguments = parser.parse_args()
    compare(arguments.before, arguments.after, arguments.agent)
