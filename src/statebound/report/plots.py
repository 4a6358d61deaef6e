"""Plots of a report, as PNG and SVG (matplotlib with the Agg backend, imported only here).

- ``success_by_length``: success rate against episode length, as in StateAct's figures 5-6 (SR per
  bin of the number of steps the episode took; bins of ``bin_width`` steps, by default 10 when
  episodes run past 25 steps as in ALFWorld's 50-step horizon, else ``ceil(max/5)``);
- ``cost_vs_success``: total cost (or, when nothing was paid for or some cost is unknown, prompt
  tokens per episode) against SR % per agent and model, with Wilson intervals;
- ``state_usage``: average tokens and visits per episode in each state, per agent (from
  trajectories, see :mod:`statebound.report.figures`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from statebound.contract.result import EpisodeResult
from statebound.report.figures import state_figures, states_in_order
from statebound.report.metrics import Summary, group_label, group_value

__all__ = ["PLOT_CAPTIONS", "LengthBin", "auto_bin_width", "label_keys", "state_usage", "success_by_length",
           "write_plots"]

# What each plot shows (report.html puts it under the plot).
PLOT_CAPTIONS = {
    "success_by_length": "Success rate against episode length: each point is one group's episodes whose length "
                         "(actions taken) falls in the bin, and the number beside it counts them. The groups' "
                         "points in a bin are spread sideways so that none hides another. Episodes stopped at the "
                         "turn limit land in the last bin (StateAct, figures 5-6).",
    "cost_vs_success": "Success rate (with its Wilson 95% interval) against cost: the total price of the model "
                       "calls or, when nothing was paid for (local models), the mean prompt tokens per episode. "
                       "Groups at the same place are drawn a little apart. Up and to the left is better.",
    "state_usage": "Where each group spends its budget: mean tokens (prompt and completion) and mean visits per "
                   "episode in each state.",
}

LengthBin = tuple[str, int, float]  # (label "1-10", episodes, SR %)
_COLOURS = 10  # matplotlib's default colour cycle
MIN_BIN_EPISODES = 3  # a length bin with fewer episodes is drawn apart (its rate is noise)
_MARKERS = "os^Dv"


def auto_bin_width(results: Sequence[EpisodeResult]) -> int:
    longest = max((r.turns for r in results), default=1)
    return 10 if longest > 25 else max(1, math.ceil(longest / 5))


def success_by_length(
    results: Sequence[EpisodeResult], *, keys: Sequence[str], bin_width: int
) -> dict[str, list[LengthBin]]:
    """Per group: (bin label, episodes in the bin, SR %) for bins ``1..w``, ``w+1..2w``, ..."""
    table: dict[str, dict[int, list[bool]]] = {}
    for result in results:
        label = group_label({k: group_value(result, k) for k in keys})
        index = max(0, result.turns - 1) // bin_width
        table.setdefault(label, {}).setdefault(index, []).append(result.success)
    return {
        label: [
            (f"{i * bin_width + 1}-{(i + 1) * bin_width}", len(bins[i]), 100 * sum(bins[i]) / len(bins[i]))
            for i in sorted(bins)
        ]
        for label, bins in table.items()
    }


def state_usage(
    results: Sequence[EpisodeResult], *, keys: Sequence[str]
) -> tuple[list[str], dict[str, dict[str, tuple[float, float]]]]:
    """States in order, and per group per state: (average tokens, average visits) per episode."""
    states = states_in_order(r.trajectory for r in results)
    sums: dict[str, dict[str, list[float]]] = {}
    counts: dict[str, int] = {}
    for result in results:
        label = group_label({k: group_value(result, k) for k in keys})
        counts[label] = counts.get(label, 0) + 1
        figures = state_figures(result.trajectory, result.events)
        for state in states:
            tokens = figures.prompt_tokens.get(state, 0) + figures.completion_tokens.get(state, 0)
            slot = sums.setdefault(label, {}).setdefault(state, [0.0, 0.0])
            slot[0] += tokens
            slot[1] += figures.visits.get(state, 0)
    usage = {
        label: {state: (t / counts[label], v / counts[label]) for state, (t, v) in per_state.items()}
        for label, per_state in sums.items()
    }
    return states, usage


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # keep text as text in SVG files
    matplotlib.rcParams["svg.hashsalt"] = "statebound"  # the same plot gives the same file
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, figure: Any, out_dir: Path, name: str) -> list[Path]:
    paths = [out_dir / f"{name}.png", out_dir / f"{name}.svg"]
    for path in paths:  # no creation date: the same plot gives the same file
        figure.savefig(path, dpi=120, metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(figure)
    return paths


def _plot_length(plt: Any, data: dict[str, list[LengthBin]], bin_width: int, out_dir: Path) -> list[Path]:
    figure, axes = plt.subplots(figsize=(7, 4), layout="constrained")
    labels = sorted({b[0] for bins in data.values() for b in bins}, key=lambda s: int(s.split("-")[0]))
    step = min(0.15, 0.8 / max(1, len(data)))  # groups side by side in a bin: no point hides another
    for index, (group, bins) in enumerate(data.items()):
        shift = (index - (len(data) - 1) / 2) * step
        found = {b[0]: b for b in bins}
        xs = [i for i, lab in enumerate(labels) if lab in found]
        ys = [found[labels[i]][2] for i in xs]
        # a bin of a few episodes swings between 0 and 100 %: a hollow marker, no line through it
        solid = [(x, y) for x, y in zip(xs, ys) if found[labels[x]][1] >= MIN_BIN_EPISODES]
        line = axes.plot([x + shift for x, _ in solid], [y for _, y in solid], marker=_marker(index), label=group)
        sparse = [(x, y) for x, y in zip(xs, ys) if found[labels[x]][1] < MIN_BIN_EPISODES]
        if sparse:
            axes.plot([x + shift for x, _ in sparse], [y for _, y in sparse], linestyle="none", marker=_marker(index),
                      markerfacecolor="none", color=line[0].get_color(), label="_" + group)
        for x, y in zip(xs, ys):
            axes.annotate(str(found[labels[x]][1]), (x + shift, y), textcoords="offset points", xytext=(4, 3),
                          fontsize="x-small", color="#555")
    axes.set_xticks(range(len(labels)), labels)
    axes.set_title(f"Success rate by episode length (hollow: a bin of fewer than {MIN_BIN_EPISODES} episodes)")
    axes.set_xlabel(f"episode length (steps, bins of {bin_width})")
    axes.set_ylabel("success rate %")
    axes.set_ylim(-2, 108)  # room for the counts above 100 %
    _legend_below(figure, axes, len(data))
    return _save(plt, figure, out_dir, "success_by_length")


def _plot_cost(plt: Any, summaries: Sequence[Summary], keys: Sequence[str], out_dir: Path) -> list[Path]:
    """SR against total cost, or against prompt tokens per episode when nothing was paid for
    (local models) or some cost is unknown: the papers' other measure of cost. Labels go in a
    legend below."""
    from matplotlib.transforms import offset_copy

    unknown = any(row.cost is None for row in summaries)
    priced = not unknown and any(row.cost for row in summaries)
    figure, axes = plt.subplots(figsize=(7, 4.5), layout="constrained")
    places = [((row.cost or 0.0) if priced else row.prompt_tokens, row.sr) for row in summaries]
    for index, row in enumerate(summaries):
        error = [[max(0.0, row.sr - row.sr_low)], [max(0.0, row.sr_high - row.sr)]]
        label = group_label({k: row.group[k] for k in keys})
        same = [i for i, place in enumerate(places) if place == places[index]]  # groups on one spot: side by side
        shift = offset_copy(axes.transData, fig=figure, x=6 * (same.index(index) - (len(same) - 1) / 2), units="points")
        axes.errorbar(*places[index], yerr=error, fmt=_marker(index), capsize=3, label=label, transform=shift)
    axes.update_datalim(places)  # the shifted points do not widen the axes themselves
    axes.autoscale_view()
    axes.set_title("Success rate against " + ("cost" if priced else "prompt tokens"))
    axes.set_xlabel("total cost $" if priced else "prompt tokens per episode (cost unknown: a model without a price)"
                    if unknown else "prompt tokens per episode (no cost: local models)")
    tokens = [row.prompt_tokens for row in summaries if row.prompt_tokens > 0]
    if not priced and tokens and max(tokens) > 10 * min(tokens):
        _log_axis(axes.xaxis, axes.set_xscale, smallest=min(tokens), with_zero=len(tokens) < len(summaries))
        axes.set_xlim(-0.5 * min(tokens) if len(tokens) < len(summaries) else min(tokens) / 1.5, max(tokens) * 1.5)
    axes.set_ylabel("success rate % (95% Wilson CI)")
    axes.set_ylim(-2, 102)
    _legend_below(figure, axes, len(summaries))
    return _save(plt, figure, out_dir, "cost_vs_success")


def _plot_states(plt: Any, states: list[str], usage: dict[str, dict[str, tuple[float, float]]], out_dir: Path) -> list[Path]:
    figure, (tokens_axes, visits_axes) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    width = 0.8 / max(1, len(usage))
    for index, (group, per_state) in enumerate(usage.items()):
        xs = [i + index * width for i in range(len(states))]
        tokens_axes.bar(xs, [per_state[s][0] for s in states], width, label=group)
        visits_axes.bar(xs, [per_state[s][1] for s in states], width, label=group)
    tokens = [per_state[s][0] for per_state in usage.values() for s in states if per_state[s][0] > 0]
    logarithmic = bool(tokens) and max(tokens) > 30 * min(tokens)  # one agent's states would dwarf the others'
    if logarithmic:
        _log_axis(tokens_axes.yaxis, tokens_axes.set_yscale, smallest=min(tokens), with_zero=True)
        tokens_axes.set_ylim(0, max(tokens) * 1.5)
    for axes, title in ((tokens_axes, "tokens per episode" + (" (log scale)" if logarithmic else "")),
                        (visits_axes, "visits per episode")):
        axes.set_xticks([i + 0.4 - width / 2 for i in range(len(states))], states, rotation=45, ha="right",
                        rotation_mode="anchor", fontsize="small")
        axes.set_title(title)
    figure.suptitle("Tokens and visits per state")
    _legend_below(figure, visits_axes, len(usage))
    return _save(plt, figure, out_dir, "state_usage")


def _log_axis(axis: Any, set_scale: Any, *, smallest: float, with_zero: bool) -> None:
    """A logarithmic axis labelled in plain numbers at 1, 2 and 5 of each power of ten (no
    overlapping "3x10^2 4x10^2"); ``with_zero``: linear below ``smallest`` so 0 is drawn too."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, SymmetricalLogLocator

    if with_zero:
        set_scale("symlog", linthresh=smallest)
        axis.set_major_locator(SymmetricalLogLocator(linthresh=smallest, base=10, subs=(1.0, 2.0, 5.0)))
    else:
        set_scale("log")
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}" if value >= 1 else f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def _marker(index: int) -> str:
    """The marker of the ``index``-th group: a new one once the colours repeat."""
    return _MARKERS[index // _COLOURS % len(_MARKERS)]


_LEGEND_CHARS = 90  # about what one legend row holds across a 7-inch figure in a small font


def _legend_below(figure: Any, axes: Any, entries: int) -> None:
    """One legend under the plots, where it hides no data; long labels get fewer columns."""
    handles, labels = axes.get_legend_handles_labels()
    widest = max((len(label) for label in labels), default=1) + 6  # the marker and the gap
    columns = max(1, min(4, entries, _LEGEND_CHARS // widest))
    figure.legend(handles, labels, loc="outside lower center", ncols=columns, fontsize="small")


def label_keys(summaries: Sequence[Summary], keys: Sequence[str]) -> list[str]:
    """The keys whose values differ between rows (the model, when there is one, names nothing)."""
    varying = [k for k in keys if len({str(row.group.get(k)) for row in summaries}) > 1]
    return varying or [k for k in keys if k == "agent"] or list(keys)


def write_plots(
    results: Sequence[EpisodeResult],
    summaries: Sequence[Summary],
    *,
    keys: Sequence[str],
    out_dir: str | Path,
    bin_width: int | None = None,
) -> list[Path]:
    """Draw every plot the data supports into ``out_dir``; returns the files written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plt = _pyplot()
    width = bin_width or auto_bin_width(results)
    keys = label_keys(summaries, keys)  # constant keys distinguish no group: labels stay short
    paths = _plot_length(plt, success_by_length(results, keys=keys, bin_width=width), width, out)
    paths += _plot_cost(plt, summaries, keys, out)
    states, usage = state_usage(results, keys=keys)
    if states:
        paths += _plot_states(plt, states, usage, out)
    return paths
