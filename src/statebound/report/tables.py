"""Reports over one or more run directories: the papers' tables, breakdowns, paired comparisons.

:func:`build_report` computes; :func:`write_report` writes ``report.md``, ``report.csv``,
``comparisons.csv`` and ``report.json`` (plus plots, see :mod:`statebound.report.plots`);
:func:`print_report` shows the same tables in the terminal.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from itertools import combinations
from pathlib import Path
from typing import Any

from statebound.bench.declared_columns import breakdown_orders, report_columns
from statebound.bench.plan import RunConfig
from statebound.bench.registry import did_you_mean
from statebound.bench.run_files import Declared
from statebound.bench.store import RunStore
from statebound.contract.columns import CHOICES, INFORMATIVE_SUCCESS, MetaColumn, merge_columns
from statebound.contract.result import EpisodeResult
from statebound.errors import DefinitionError, StateboundError
from statebound.exits import ExitReason
from statebound.report import grid
from statebound.report.figures import choices_made
from statebound.report.metrics import Summary, group_value, summarize
from statebound.report.repetition import Repetition, summarize_repetition
from statebound.report.sections import comparison_section, sections
from statebound.report.stats import Bootstrap, McNemar, mcnemar_exact, paired_bootstrap

__all__ = [
    "BREAKDOWN_KEYS",
    "Comparison",
    "LoadedRun",
    "Report",
    "build_report",
    "load_runs",
    "on_shared_tasks",
    "print_report",
    "sections",
    "to_markdown",
    "write_report",
]

BREAKDOWN_KEYS = ("hardness", "task_type", "type")  # looked for in result meta
_MAX_BREAKDOWN_VALUES = 12


@dataclass(frozen=True, slots=True)
class LoadedRun:
    label: str
    directory: Path
    config: RunConfig | None
    results: list[EpisodeResult]
    declared: Declared | None = None  # what a user's benchmark declares, stored with the run


def load_runs(directories: Sequence[str | Path], *, with_trajectories: bool = False) -> list[LoadedRun]:
    """Read run stores; each result gets ``meta["run"]`` = the run's label (its directory name),
    and, read from its trajectory when loaded, ``meta["choices"]`` = the choices it made."""
    runs: list[LoadedRun] = []
    used: set[str] = set()
    for directory in map(Path, directories):
        with RunStore(directory, read_only=True) as store:
            config, results = store.config(), store.results(with_trajectories=with_trajectories)
            declared = store.declared()
        label = directory.resolve().name
        while label in used:
            label += "'"
        used.add(label)
        for result in results:
            result.meta["run"] = label
            if with_trajectories:
                result.meta.setdefault(CHOICES.key, choices_made(result.trajectory))
        runs.append(LoadedRun(label, directory, config, results, declared))
    return runs


def on_shared_tasks(runs: Sequence[LoadedRun]) -> list[LoadedRun]:
    """The runs cut down to the (task, seed) pairs that every one of them has: a run on a sample
    beside a full record is then compared on the sample alone, in every table and plot."""
    pairs = [{(r.task, r.seed) for r in run.results} for run in runs]
    shared = set.intersection(*pairs) if pairs else set()
    if not shared:
        labels = ", ".join(run.label for run in runs)
        raise StateboundError(f"the runs {labels} have no task in common to compare on")
    return [replace(run, results=[r for r in run.results if (r.task, r.seed) in shared]) for run in runs]


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two groups (e.g. two agents) on the tasks they share: McNemar on success, bootstrap on
    reward, and mean prompt tokens (the papers' cost comparison, e.g. StateFlow at 0.3x ReAct's).
    ``informative`` is McNemar again over the ``informative_paired`` pairs on informative tasks
    (see :data:`~statebound.contract.columns.INFORMATIVE_SUCCESS`); None when no task is known to be one."""

    a: dict[str, Any]
    b: dict[str, Any]
    paired: int
    sr_a: float
    sr_b: float
    mcnemar: McNemar
    bootstrap: Bootstrap
    prompt_tokens_a: float = 0.0
    prompt_tokens_b: float = 0.0
    informative: McNemar | None = None
    informative_paired: int = 0

    @property
    def prompt_ratio(self) -> float | None:
        """A's mean prompt tokens as a multiple of B's (None when B used none)."""
        return self.prompt_tokens_a / self.prompt_tokens_b if self.prompt_tokens_b else None


@dataclass(frozen=True, slots=True)
class Report:
    group_keys: tuple[str, ...]
    main: list[Summary]
    breakdowns: dict[str, list[Summary]] = field(default_factory=dict)
    comparisons: list[Comparison] = field(default_factory=list)
    columns: tuple[MetaColumn, ...] = ()  # the benchmarks' own columns, in Summary.extra
    repetition: list[Repetition] = field(default_factory=list)  # needs loaded trajectories

    def to_json(self) -> dict[str, Any]:
        return {
            "group_keys": list(self.group_keys),
            "columns": [asdict(c) for c in self.columns],
            "main": [s.to_json() for s in self.main],
            "breakdowns": {key: [s.to_json() for s in rows] for key, rows in self.breakdowns.items()},
            "comparisons": [asdict(c) for c in self.comparisons],
            "repetition": [r.to_json() for r in self.repetition],
        }


def _breakdown_keys(results: Sequence[EpisodeResult], requested: Sequence[str] | None) -> list[str]:
    if requested is not None:
        present = {key for r in results for key, value in r.meta.items()
                   if isinstance(value, str | int | bool) and key != CHOICES.key}
        for key in requested:
            if key not in present and key not in EpisodeResult.__dataclass_fields__:
                raise DefinitionError(
                    f"no episode has a meta key {key!r} to break down by.{did_you_mean(key, present)} "
                    f"Keys the episodes have: {', '.join(sorted(present)) or 'none'}")
        return list(requested)
    keys = []
    for key in BREAKDOWN_KEYS:
        values = {str(r.meta.get(key)) for r in results if key in r.meta}
        if 1 < len(values) <= _MAX_BREAKDOWN_VALUES:
            keys.append(key)
    return keys


def _informative_tasks(results: Sequence[EpisodeResult]) -> frozenset[str]:
    """The tasks some episode was graded informative on: the key is a property of the task, missing
    from crashed episodes and from stores written before it, so one graded episode settles it."""
    return frozenset(r.task for r in results if INFORMATIVE_SUCCESS.key in r.meta)


def _compare(
    results: Sequence[EpisodeResult], keys: tuple[str, ...], a: tuple[Any, ...], b: tuple[Any, ...],
    informative: frozenset[str] = frozenset(),
) -> Comparison | None:
    def outcomes(group: tuple[Any, ...]) -> dict[tuple[str, int], EpisodeResult]:
        return {
            (r.task, r.seed): r for r in results if tuple(group_value(r, k) for k in keys) == group
        }

    left, right = outcomes(a), outcomes(b)
    shared = [pair for pair in left if pair in right]
    if not shared:
        return None
    success_a = [left[p].success for p in shared]
    success_b = [right[p].success for p in shared]
    on_informative = [i for i, (task, _) in enumerate(shared) if task in informative]
    return Comparison(
        informative=mcnemar_exact([success_a[i] for i in on_informative], [success_b[i] for i in on_informative])
        if on_informative else None,
        informative_paired=len(on_informative),
        prompt_tokens_a=sum(left[p].prompt_tokens for p in shared) / len(shared),
        prompt_tokens_b=sum(right[p].prompt_tokens for p in shared) / len(shared),
        a=dict(zip(keys, a)),
        b=dict(zip(keys, b)),
        paired=len(shared),
        sr_a=100 * sum(success_a) / len(shared),
        sr_b=100 * sum(success_b) / len(shared),
        mcnemar=mcnemar_exact(success_a, success_b),
        bootstrap=paired_bootstrap([left[p].reward for p in shared], [right[p].reward for p in shared]),
    )


def _run_tells_apart(runs: Sequence[LoadedRun]) -> bool:
    """Whether rows need the run as a key: not when the runs are of one benchmark and each holds
    one agent no other run holds (a record with one run directory per agent)."""
    if len(runs) < 2:
        return False
    if len({run.config.benchmark if run.config else None for run in runs}) > 1:
        return True
    agents = [{r.agent for r in run.results} for run in runs]
    if any(len(held) != 1 for held in agents):
        return True
    names = [next(iter(held)) for held in agents]
    return len(set(names)) < len(names)


def build_report(
    runs: Sequence[LoadedRun],
    *,
    breakdown_keys: Sequence[str] | None = None,
    columns: Sequence[MetaColumn] | None = None,
) -> Report:
    """Tables grouped by (run,) agent and model; groups differing in exactly one key are compared;
    runs loaded with their trajectories also get the repeated-replies table.

    ``columns`` defaults to those the runs' benchmarks declare (their ``report_columns``); Choices/ep
    joins them when some episode made a choice. A ``breakdown_keys`` entry no episode has is an error."""
    results = [r for run in runs for r in run.results]
    benchmarks = [run.config.benchmark for run in runs if run.config is not None]
    stored = [run.declared for run in runs if run.declared is not None]  # user files' benchmarks
    if columns is None:
        columns = merge_columns([report_columns(benchmarks), *(declared.report_columns for declared in stored)])
    columns = _with_choices(columns, results)
    keys: tuple[str, ...] = (("run",) if _run_tells_apart(runs) else ()) + ("agent", "model")
    main = summarize(results, by=keys, columns=columns)
    orders = {**{key: values for declared in reversed(stored) for key, values in declared.breakdown_order.items()},
              **breakdown_orders(benchmarks)}
    breakdowns = {
        key: _in_order(summarize(results, by=keys + (key,), columns=columns), keys, key, orders.get(key, ()))
        for key in _breakdown_keys(results, breakdown_keys)
    }
    comparisons = []
    groups = [tuple(s.group[k] for k in keys) for s in main]
    informative = _informative_tasks(results)
    for a, b in combinations(groups, 2):
        if sum(x != y for x, y in zip(a, b)) == 1 and (found := _compare(results, keys, a, b, informative)):
            comparisons.append(found)
    repetition = summarize_repetition(results, by=keys)
    return Report(keys, main, breakdowns, comparisons, tuple(columns), repetition)


def _in_order(summaries: list[Summary], keys: tuple[str, ...], key: str, order: Sequence[str]) -> list[Summary]:
    """Breakdown rows grouped as first seen by ``keys``, and within a group by ``key``'s values in
    ``order`` (values it does not name after, as first seen)."""
    groups: dict[tuple[Any, ...], int] = {}
    for summary in summaries:
        groups.setdefault(tuple(summary.group[k] for k in keys), len(groups))
    rank = {value: i for i, value in enumerate(order)}
    return sorted(summaries, key=lambda s: (groups[tuple(s.group[k] for k in keys)],
                                            rank.get(str(s.group[key]), len(order))))


def _with_choices(columns: Sequence[MetaColumn], results: Sequence[EpisodeResult]) -> list[MetaColumn]:
    """``columns`` and, when some episode made a choice, Choices/ep."""
    made = any(r.meta.get(CHOICES.key) for r in results) and all(c.key != CHOICES.key for c in columns)
    return [*columns, CHOICES] if made else list(columns)


# --- rendering ------------------------------------------------------------------------------
def to_markdown(report: Report) -> str:
    """The report's tables as Markdown, with a glossary of their columns."""
    return grid.to_markdown(sections(report))


def _write_summaries_csv(report: Report, path: Path) -> None:
    extra = list(report.breakdowns)
    tables = [("main", report.main), *((f"by_{k}", rows) for k, rows in report.breakdowns.items())]
    exits = [r.value for r in ExitReason if any(r.value in row.exits for _, rows in tables for row in rows)]
    fields = ["table", *report.group_keys, *extra, "episodes", "successes", "sr", "sr_low", "sr_high",
              "reward", "turns", "error", "cost", "prompt_tokens", "completion_tokens", "model_used",
              *(c.key for c in report.columns), "crashed", *(f"ended_{reason}" for reason in exits)]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for table, rows in tables:
            for row in rows:
                data = row.to_json()
                own = {key: "" if value is None else value for key, value in data.pop("extra").items()}
                ended = {f"ended_{reason}": data["exits"].get(reason, 0) for reason in exits}
                del data["exits"]
                writer.writerow({"table": table, **data.pop("group"), **data, **own, **ended})


def write_report(report: Report, out_dir: str | Path) -> list[Path]:
    """Write ``report.md``, ``report.csv``, ``comparisons.csv`` and ``report.json``; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    markdown, summaries, comparisons, document = (
        out / "report.md", out / "report.csv", out / "comparisons.csv", out / "report.json"
    )
    markdown.write_text(to_markdown(report), encoding="utf-8")
    _write_summaries_csv(report, summaries)
    table = comparison_section(report.comparisons)
    with comparisons.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([table.header, *table.rows])
    document.write_text(json.dumps(report.to_json(), indent=1, default=str), encoding="utf-8")
    return [markdown, summaries, comparisons, document]


def print_report(report: Report, *, console: Any = None, wide: bool = False, explain: bool = False,
                 written_to: str | Path | None = None) -> None:
    """Show the report's tables fitted to the terminal (:mod:`statebound.report.terminal`; ``wide``:
    each table whole), or as Markdown when not writing to a terminal; then what each column means
    when ``explain``, else one line saying where it is written (``written_to``: the report's folder)."""
    from rich.console import Console

    from statebound.report.inert import inert
    from statebound.report.terminal import print_glossary, print_sections

    console = console or Console()
    shown = sections(report)
    if not console.is_terminal:
        console.out(inert(grid.to_markdown(shown, with_glossary=explain), fold=None), highlight=False)
    else:
        print_sections(shown, console=console, wide=wide)
        if explain:
            print_glossary(shown, console=console)
    if not explain and written_to is not None and grid.glossary(shown):
        where = Path(written_to)
        line = f"What each column means: {where / 'report.md'} and {where / 'report.html'} (--explain prints it here)"
        if console.is_terminal:
            console.print(line, highlight=False, markup=False)  # wrapped to the terminal
        else:
            console.out(line, highlight=False)
