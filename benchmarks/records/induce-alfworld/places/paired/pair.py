"""Pair this run's agents with the first run's (../eval-12) game by game, as a report pairs the
agents of one run (exact McNemar, paired bootstrap of the reward): `statebound report` pairs
agents within a run only; the step limit is the argument (12 or 20). Prints a Markdown table
(paired-12.md, paired-20.md). It lives in a folder of its own: every .py file beside the fold
machines would be read as a machine.

    python benchmarks/records/induce-alfworld/places/paired/pair.py 12 > benchmarks/records/induce-alfworld/places/paired/paired-12.md
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

from statebound.report.stats import mcnemar_exact, paired_bootstrap

PLACES = Path(__file__).resolve().parents[1]


def outcomes(run: str, results: Path) -> dict[str, dict[str, float]]:
    """Per agent (named ``run agent``), each game's reward."""
    found: dict[str, dict[str, float]] = {}
    for line in (results / "results.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        agent = row["agent"].split(":")[0]
        found.setdefault(f"{run} {agent}", {})[row["task"]] = float(row["reward"])
    return found


def main() -> None:
    limit = sys.argv[1] if len(sys.argv) > 1 else "12"
    runs = {"places": PLACES / f"eval-{limit}", "first": PLACES.parent / f"eval-{limit}"}
    agents = {name: games for run, path in runs.items() for name, games in outcomes(run, path).items()}
    out = sys.stdout
    out.write("| A | B | games | SR A % | SR B % | A only | B only | McNemar p | mean reward A-B | 95% CI | bootstrap p |\n")
    out.write("|---|---|---|---|---|---|---|---|---|---|---|\n")
    for a, b in itertools.combinations(agents, 2):
        if not a.startswith("places"):
            continue
        games = sorted(set(agents[a]) & set(agents[b]))
        ra, rb = [agents[a][g] for g in games], [agents[b][g] for g in games]
        test, boot = mcnemar_exact([r > 0 for r in ra], [r > 0 for r in rb]), paired_bootstrap(ra, rb)
        out.write(f"| {a} | {b} | {len(games)} | {100 * sum(ra) / len(games):.1f} | {100 * sum(rb) / len(games):.1f} | "
                  f"{test.only_a} | {test.only_b} | {test.p_value:.3g} | {boot.mean_difference:+.4f} | "
                  f"[{boot.low:+.4f}, {boot.high:+.4f}] | {boot.p_value:.3g} |\n")


if __name__ == "__main__":
    main()
