"""The repeated-replies measures and their table in reports."""

import pytest
from harness_doubles import entry

from statebound.contract.result import EpisodeResult
from statebound.report.repetition import longest_repeat, replies, summarize_repetition
from statebound.report.tables import build_report, load_runs, sections


def _trajectory(*texts: str) -> list[dict]:
    items = [entry("Solve", "user", "the task")]
    for text in texts:  # each reply is followed by a tool result, which must not break a run
        items += [entry("Solve", "assistant", text), entry("Solve", "tool", "Observation: error")]
    return items


def _episode(agent: str, *texts: str) -> EpisodeResult:
    return EpisodeResult(task=f"t{len(texts)}", agent=agent, model="m", trajectory=_trajectory(*texts))


@pytest.mark.parametrize(
    ("texts", "longest"),
    [((), 0), (("a",), 1), (("a", "b", "a"), 1), (("a", " a\n", "a", "b"), 3), (("a", "b", "b"), 2)],
)
def test_longest_repeat_counts_identical_consecutive_replies(texts, longest):
    assert longest_repeat(_trajectory(*texts)) == longest


def test_replies_are_the_assistant_entries_only():
    assert replies(_trajectory(" x ", "y")) == ["x", "y"]


def test_summary_per_agent_leaves_out_episodes_without_replies():
    results = [
        _episode("A", "a", "a", "a", "b"),  # runs 3, 1: stuck, 2 of 4 replies repeated
        _episode("A", "x", "y"),  # runs 1, 1
        _episode("A"),  # no replies (an oracle): left out
        _episode("B", "z", "z"),
    ]
    a, b = summarize_repetition(results, by=("agent",))
    assert (a.group, a.episodes) == ({"agent": "A"}, 2)
    assert a.stuck == 50.0 and a.longest == 2.0 and a.repeated == pytest.approx(100 * 2 / 6)
    assert (b.episodes, b.stuck, b.longest, b.repeated) == (1, 0.0, 2.0, 50.0)


def test_report_shows_the_table_only_with_trajectories(tmp_path):
    from statebound.bench.models import ModelSpec
    from statebound.bench.plan import RunConfig
    from statebound.bench.store import RunStore

    config = RunConfig(benchmark="hand", agents=("A",), models=(ModelSpec("m"),), task_ids=("t4",))
    with RunStore(tmp_path) as store:
        store.start(config, resume=False)
        store.save(_episode("A", "a", "a", "a", "b"), benchmark="hand", position=0)
    with_trajectories = build_report(load_runs([tmp_path], with_trajectories=True))
    table = sections(with_trajectories)[-1]
    assert table.title.startswith("Repeated replies")
    assert table.header[-4:] == ["episodes", "stuck % (3+ in a row)", "longest run", "replies repeated %"]
    assert table.rows == (("A", "m", "1", "100.0", "3.00", "50.0"),)
    assert with_trajectories.to_json()["repetition"][0]["stuck"] == 100.0
    without = build_report(load_runs([tmp_path]))
    assert not without.repetition
    assert all(not table.title.startswith("Repeated") for table in sections(without))
