"""The report's plots: a logarithmic axis labelled in plain numbers that still shows 0 (the random
control reads no prompt tokens), and length bins of a few episodes drawn apart."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from statebound.report.plots import MIN_BIN_EPISODES, _log_axis, _plot_length, _pyplot  # noqa: E402


def test_a_log_axis_with_zero_shows_it_and_labels_plain_numbers() -> None:
    plt = _pyplot()
    figure, axes = plt.subplots()
    axes.plot([0, 40, 550, 12_000], [15, 20, 29, 0], "o")
    _log_axis(axes.xaxis, axes.set_xscale, smallest=40, with_zero=True)
    axes.set_xlim(-20, 18_000)
    figure.canvas.draw()
    labels = [tick.get_text() for tick in axes.get_xticklabels() if tick.get_text()]
    assert axes.get_xscale() == "symlog" and "0" in labels and "10,000" in labels
    assert not any("10^" in label or "times" in label for label in labels)
    plt.close(figure)


def test_bins_of_few_episodes_are_hollow_and_not_joined(tmp_path) -> None:
    plt = _pyplot()
    data = {"agent": [("1-2", 10, 50.0), ("3-4", 1, 100.0), ("5-6", 8, 25.0)]}
    captured = {}
    original = plt.subplots

    def keep(*args, **kwargs):
        figure, axes = original(*args, **kwargs)
        captured["axes"] = axes
        return figure, axes

    plt.subplots = keep
    try:
        _plot_length(plt, data, 2, tmp_path)
    finally:
        plt.subplots = original
    lines = captured["axes"].get_lines()
    joined = [line for line in lines if line.get_linestyle() != "None"]
    apart = [line for line in lines if line.get_linestyle() == "None"]
    assert [len(line.get_xdata()) for line in joined] == [2]  # the 10- and 8-episode bins
    assert [len(line.get_xdata()) for line in apart] == [1] and apart[0].get_markerfacecolor() == "none"
    assert MIN_BIN_EPISODES > 1
