"""Finishing a run: its exports (``results.jsonl``, trajectories), its report and plots. Above both
the harness (:mod:`statebound.bench`, which runs episodes into a store) and the report builders,
so the harness never imports the report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from statebound.bench.store import RunStore
from statebound.report.export import export_run
from statebound.report.informative import fill_informative
from statebound.report.tables import Report, build_report, load_runs, on_shared_tasks, write_report

__all__ = ["finish_run"]


def finish_run(
    run_dirs: Sequence[str | Path],
    *,
    out_dir: str | Path,
    breakdown_keys: Sequence[str] | None = None,
    bin_width: int | None = None,
    plots: bool = True,
    shared_tasks: bool = False,
    informative: bool = False,
    informative_progress: Callable[[str, int, int], None] | None = None,
    view_url: str | None = None,
) -> tuple[Report, list[Path]]:
    """Export the run whose directory is ``out_dir`` (``results.jsonl``, trajectories; nothing is
    written into a run's directory when the report goes elsewhere), then write the report and
    plots to ``out_dir``; ``shared_tasks``: report only the tasks every run has (:func:`on_shared_tasks`);
    ``informative``: work out which tasks are informative for runs stored before their benchmark
    marked them (:func:`~statebound.report.informative.fill_informative`, followed by
    ``informative_progress``); ``view_url``: where ``report.html``'s episode links point
    (``statebound view`` on its default port when not given)."""
    files = []
    for run_dir in run_dirs:  # a run's own exports, when the report goes into its directory
        if Path(run_dir).resolve() == Path(out_dir).resolve():
            with RunStore(run_dir, read_only=True) as store:
                files.append(export_run(store))
    runs = load_runs(run_dirs, with_trajectories=True)  # plots and the repeated-replies table
    if shared_tasks:
        runs = on_shared_tasks(runs)
    if informative:
        fill_informative(runs, informative_progress)
    report = build_report(runs, breakdown_keys=breakdown_keys)
    files += write_report(report, out_dir)
    drawn: list[Path] = []
    if plots:
        from statebound.report.plots import write_plots

        drawn = write_plots([r for run in runs for r in run.results], report.main, keys=report.group_keys, out_dir=Path(out_dir) / "plots", bin_width=bin_width)
    from statebound.report.html import DEFAULT_VIEW_URL, write_html

    benchmarks = sorted({run.config.benchmark for run in runs if run.config is not None})
    labels = [run.label for run in runs]
    title = f"{', '.join(benchmarks) or 'statebound'}: " + (", ".join(labels) if len(labels) <= 3 else f"{len(labels)} runs")
    results = [r for run in runs for r in run.results]
    files += [*drawn, write_html(report, out_dir, title=title, plots=drawn, results=results,
                                 view_url=view_url or DEFAULT_VIEW_URL)]
    return report, files
