"""Report tables, breakdowns, comparisons and plots from hand-made results."""

import csv
import json

import pytest
from harness_doubles import entry

from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.contract.result import EpisodeResult
from statebound.llm.base import Usage
from statebound.report.figures import state_figures
from statebound.report.finish import finish_run
from statebound.report.plots import state_usage, success_by_length
from statebound.report.tables import build_report, load_runs

# (task, hardness, turns, A success, B success); A fails t3 and t4, B fails t4 only
TASKS = [("t1", "easy", 2, True, True), ("t2", "easy", 3, True, True),
         ("t3", "hard", 12, False, True), ("t4", "hard", 14, False, False)]


def _episode(agent, task, hardness, turns, success, index):
    return EpisodeResult(
        task=task, agent=agent, model="m", reward=1.0 if success else 0.25, success=success, turns=turns,
        error_rate=0.5 if task == "t4" else 0.0, prompt_tokens=100 * (index + 1), completion_tokens=10,
        cost_usd=0.01, meta={"hardness": hardness},
        trajectory=[
            entry("Solve", "user", f"solve {task}"),
            entry("Solve", "assistant", "a", usage=Usage(100 * (index + 1), 10, 1)),
            entry("Error", "tool", "error!"),
            entry("Solve", "assistant", "b", usage=Usage(0, 0, 0)),
        ],
    )


@pytest.fixture
def run_dir(tmp_path):
    config = RunConfig(benchmark="hand", agents=("A", "B"), models=(ModelSpec("m"),),
                       task_ids=tuple(t[0] for t in TASKS))
    with RunStore(tmp_path) as store:
        store.start(config, resume=False)
        position = 0
        for agent, column in (("A", 3), ("B", 4)):
            for index, task in enumerate(TASKS):
                store.save(_episode(agent, task[0], task[1], task[2], task[column], index),
                           benchmark="hand", position=position)
                position += 1
    return tmp_path


def test_main_table_numbers(run_dir):
    report = build_report(load_runs([run_dir]))
    a, b = report.main
    assert (a.group, a.episodes, a.successes) == ({"agent": "A", "model": "m"}, 4, 2)
    assert a.sr == 50.0 and b.sr == 75.0
    assert a.reward == pytest.approx((1 + 1 + 0.25 + 0.25) / 4)
    assert a.turns == pytest.approx(31 / 4)
    assert a.error == pytest.approx(12.5)
    assert a.cost == pytest.approx(0.04)
    assert a.prompt_tokens == 250 and a.completion_tokens == 10
    assert (round(a.sr_low, 1), round(a.sr_high, 1)) == (15.0, 85.0)  # Wilson 2/4


def test_breakdown_and_comparison(run_dir):
    report = build_report(load_runs([run_dir]))
    hard = [s for s in report.breakdowns["hardness"] if s.group["hardness"] == "hard"]
    assert [(s.group["agent"], s.sr) for s in hard] == [("A", 0.0), ("B", 50.0)]
    (comparison,) = report.comparisons
    assert comparison.paired == 4
    assert (comparison.mcnemar.only_a, comparison.mcnemar.only_b) == (0, 1)
    assert comparison.mcnemar.p_value == 1.0
    assert comparison.bootstrap.mean_difference == pytest.approx(-0.75 / 4)
    assert comparison.prompt_ratio == 1.0  # both agents used the same prompt tokens per task


def test_breakdown_rows_follow_the_order_the_benchmark_declares(tmp_path):
    # first seen: hard, unrated, extra, easy; intercode-sql declares easy, medium, hard, extra
    levels = {"t1": "hard", "t2": "unrated", "t3": "extra", "t4": "easy"}
    config = RunConfig(benchmark="intercode-sql", agents=("A", "B"), models=(ModelSpec("m"),), task_ids=tuple(levels))
    with RunStore(tmp_path) as store:
        store.start(config, resume=False)
        for position, (agent, task) in enumerate((a, t) for a in ("B", "A") for t in levels):
            result = EpisodeResult(task=task, agent=agent, model="m", reward=0.0, success=False, turns=1,
                                   meta={"hardness": levels[task]})
            store.save(result, benchmark="intercode-sql", position=position)
    rows = build_report(load_runs([tmp_path])).breakdowns["hardness"]
    assert [(s.group["agent"], s.group["hardness"]) for s in rows] == [
        ("B", "easy"), ("B", "hard"), ("B", "extra"), ("B", "unrated"),
        ("A", "easy"), ("A", "hard"), ("A", "extra"), ("A", "unrated")]


def test_comparison_gives_the_prompt_token_ratio_on_shared_tasks(tmp_path):
    """The papers' cost claim (StateFlow at about 0.3x ReAct's prompt tokens) as a column."""
    from statebound.report.tables import to_markdown

    config = RunConfig(benchmark="hand", agents=("flow", "react"), models=(ModelSpec("m"),),
                       task_ids=("t1", "t2", "t3"))
    tokens = {("flow", "t1"): 100, ("flow", "t2"): 300, ("react", "t1"): 400, ("react", "t2"): 400,
              ("react", "t3"): 4000}  # t3 only ran for react: not part of the paired ratio
    with RunStore(tmp_path) as store:
        store.start(config, resume=False)
        for position, ((agent, task), used) in enumerate(tokens.items()):
            result = EpisodeResult(task=task, agent=agent, model="m", reward=0.0, success=False,
                                   turns=1, prompt_tokens=used)
            store.save(result, benchmark="hand", position=position)
    report = build_report(load_runs([tmp_path]))
    (comparison,) = report.comparisons
    assert comparison.paired == 2 and comparison.prompt_ratio == pytest.approx(200 / 400)
    assert "p-tokens A/B" in to_markdown(report) and "| 0.50x |" in to_markdown(report)


def test_comparison_is_tested_again_on_informative_tasks(tmp_path):
    """Tasks doing nothing solves (no informative_success key) leave the second McNemar test: on all
    six tasks flow and nothing split 1 against 2, on the four informative ones 1 against 0."""
    from statebound.report.tables import to_markdown

    config = RunConfig(benchmark="hand", agents=("flow", "nothing"), models=(ModelSpec("m"),),
                       task_ids=tuple(f"t{i}" for i in range(6)))
    solved = {"flow": {"t0", "t1"}, "nothing": {"t1", "t4", "t5"}}  # t4, t5: doing nothing solves them
    with RunStore(tmp_path) as store:
        store.start(config, resume=False)
        for position, (agent, task) in enumerate((a, f"t{i}") for a in solved for i in range(6)):
            success = task in solved[agent]
            crashed = agent == "flow" and task == "t3"  # a crash leaves no key; the other episode settles it
            meta = {} if task in {"t4", "t5"} or crashed else {"informative_success": success}
            store.save(EpisodeResult(task=task, agent=agent, model="m", success=success, turns=1, meta=meta),
                       benchmark="hand", position=position)
    report = build_report(load_runs([tmp_path]))
    (comparison,) = report.comparisons
    assert (comparison.paired, comparison.mcnemar.only_a, comparison.mcnemar.only_b) == (6, 1, 2)
    assert comparison.informative_paired == 4
    assert comparison.informative is not None
    assert (comparison.informative.only_a, comparison.informative.only_b) == (1, 0)
    assert "inf. McNemar p" in to_markdown(report) and "| 4 | 1 | 0 | 1 |" in to_markdown(report)


def test_comparison_without_informative_tasks_adds_no_columns(run_dir):
    from statebound.report.tables import to_markdown

    (comparison,) = build_report(load_runs([run_dir])).comparisons
    assert comparison.informative is None and comparison.informative_paired == 0
    assert "inf. McNemar p" not in to_markdown(build_report(load_runs([run_dir])))


def test_two_runs_side_by_side(run_dir, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    config = RunConfig(benchmark="hand", agents=("A",), models=(ModelSpec("m"),), task_ids=("t1", "t2"))
    with RunStore(other) as store:
        store.start(config, resume=False)
        for index, task in enumerate(TASKS[:2]):
            store.save(_episode("A", task[0], task[1], task[2], False, index), benchmark="hand", position=index)
    report = build_report(load_runs([run_dir, other]))
    assert report.group_keys == ("run", "agent", "model")
    assert [(s.group["run"], s.group["agent"], s.sr) for s in report.main] == [
        (run_dir.name, "A", 50.0), (run_dir.name, "B", 75.0), (other.name, "A", 0.0)]
    across = [c for c in report.comparisons if c.a["run"] != c.b["run"]]
    assert len(across) == 1 and across[0].paired == 2 and across[0].mcnemar.only_a == 2


def test_success_by_length_bins():
    results = [_episode("A", *t[:3], t[3], i) for i, t in enumerate(TASKS)]
    assert success_by_length(results, keys=("agent",), bin_width=10) == {
        "A": [("1-10", 2, 100.0), ("11-20", 2, 0.0)]}
    assert success_by_length(results, keys=("agent",), bin_width=5)["A"][0] == ("1-5", 2, 100.0)


def test_plots_are_byte_for_byte_the_same_when_made_again(run_dir, tmp_path):
    """No dates or random ids in the files: regenerating a committed report changes nothing."""
    first, second = tmp_path / "first", tmp_path / "second"
    finish_run([run_dir], out_dir=first, bin_width=10)
    finish_run([run_dir], out_dir=second, bin_width=10)
    for made in sorted((first / "plots").iterdir()):
        assert made.read_bytes() == (second / "plots" / made.name).read_bytes(), made.name


def test_reports_leave_the_stores_untouched(run_dir, tmp_path):
    """A committed record's store (journal mode DELETE) is the same file after a report."""
    import hashlib
    import sqlite3

    store = run_dir / "run.sqlite"
    db = sqlite3.connect(store)
    db.execute("PRAGMA journal_mode=DELETE")
    db.close()
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    finish_run([run_dir], out_dir=tmp_path / "report", bin_width=10, plots=False)
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before
    assert not (run_dir / "run.sqlite-wal").exists()


def test_state_figures_and_usage():
    episode = _episode("A", "t1", "easy", 2, True, 0)
    figures = state_figures(episode.trajectory)
    assert figures.visits == {"Solve": 2, "Error": 1}
    assert figures.prompt_tokens == {"Solve": 100, "Error": 0}
    states, usage = state_usage([episode, _episode("A", "t2", "easy", 3, True, 1)], keys=("agent",))
    assert states == ["Solve", "Error"]
    assert usage["A"]["Solve"] == (pytest.approx((110 + 210) / 2), 2.0)


def test_files_written(run_dir):
    _, files = finish_run([run_dir], out_dir=run_dir, bin_width=10)
    names = {f.relative_to(run_dir).as_posix() for f in files}
    for stem in ("success_by_length", "cost_vs_success", "state_usage"):
        assert {f"plots/{stem}.png", f"plots/{stem}.svg"} <= names
        assert (run_dir / "plots" / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
    assert "11-20" in (run_dir / "plots" / "success_by_length.svg").read_text()
    markdown = (run_dir / "report.md").read_text()
    assert "| A | m | 4 | 50.00 | 0.6250 | 7.75 | 12.50 | 0.0400 | 250 | 10 | 15.0-85.0 | 0 |" in markdown
    rows = list(csv.DictReader((run_dir / "report.csv").open()))
    assert [(r["table"], r["agent"], r["hardness"], r["sr"]) for r in rows if r["table"] == "by_hardness"][1] == (
        "by_hardness", "A", "hard", "0.0")
    document = json.loads((run_dir / "report.json").read_text())
    assert document["comparisons"][0]["mcnemar"]["only_b"] == 1
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    assert len(lines) == 8 and json.loads(lines[2])["turns"] == 12
    trajectory = json.loads((run_dir / "trajectories" / "B" / "m" / "seed0" / "t3.json").read_text())
    assert trajectory["episode"]["success"] is True and trajectory["trajectory"][2]["state"] == "Error"
    page = (run_dir / "report.html").read_text()
    assert "report.html" in names and page.startswith("<!doctype html>")
    assert '<td class="key">A</td><td>4</td><td>50.00</td>' in page  # the one model is said above the table
    assert '<p class="shared">model: m</p>' in page
    assert page.count("<svg") == 3 and "<?xml" not in page  # the plots inline, without prologues
    assert "<h2>By hardness</h2>" in page and "<h2>Paired comparisons (same tasks and seeds)</h2>" in page
    from statebound.report.html import to_html

    assert "<title>&lt;b&gt; run</title>" in to_html(build_report(load_runs([run_dir])), title="<b> run")


def test_one_run_per_agent_needs_no_run_column_and_plots_name_only_what_differs(tmp_path):
    """A record keeps each agent in a run directory of its own: rows and plot labels say the agent."""
    from statebound.report.plots import label_keys

    dirs = []
    for agent in ("flow", "react"):
        run = tmp_path / f"{agent}-store"
        config = RunConfig(benchmark="hand", agents=(agent,), models=(ModelSpec("m"),), task_ids=("t1",))
        with RunStore(run) as store:
            store.start(config, resume=False)
            store.save(EpisodeResult(task="t1", agent=agent, model="m", turns=1), benchmark="hand", position=0)
        dirs.append(run)
    report = build_report(load_runs(dirs))
    assert report.group_keys == ("agent", "model")
    assert label_keys(report.main, report.group_keys) == ["agent"]  # one model: not in the labels
    both = build_report(load_runs([*dirs, dirs[0]]))  # the same agent in two runs: runs tell apart
    assert both.group_keys == ("run", "agent", "model")


def test_shared_tasks_compares_a_sample_with_a_full_record_on_the_sample(run_dir, tmp_path_factory):
    """`report --shared-tasks`: the record's tasks outside the sample leave every table."""
    sample = tmp_path_factory.mktemp("sample")
    config = RunConfig(benchmark="hand", agents=("A",), models=(ModelSpec("m"),), task_ids=("t3", "t4"))
    with RunStore(sample) as store:
        store.start(config, resume=False)
        for position, task in enumerate(TASKS[2:]):
            store.save(_episode("A", task[0], task[1], task[2], True, position), benchmark="hand", position=position)
    out = tmp_path_factory.mktemp("out")
    report, _ = finish_run([run_dir, sample], out_dir=out, plots=False, shared_tasks=True)
    assert [(s.group["run"], s.group["agent"], s.episodes, s.sr) for s in report.main] == [
        (run_dir.name, "A", 2, 0.0), (run_dir.name, "B", 2, 50.0), (sample.name, "A", 2, 100.0)]
    full, _ = finish_run([run_dir, sample], out_dir=out, plots=False)
    assert [s.episodes for s in full.main] == [4, 4, 2]


def test_shared_tasks_without_a_common_task_is_a_clear_error(run_dir, tmp_path_factory):
    from statebound.errors import StateboundError

    other = tmp_path_factory.mktemp("other")
    config = RunConfig(benchmark="hand", agents=("A",), models=(ModelSpec("m"),), task_ids=("t9",))
    with RunStore(other) as store:
        store.start(config, resume=False)
        store.save(_episode("A", "t9", "easy", 1, True, 0), benchmark="hand", position=0)
    with pytest.raises(StateboundError, match="no task in common"):
        finish_run([run_dir, other], out_dir=tmp_path_factory.mktemp("out"), plots=False, shared_tasks=True)


def test_cost_plot_falls_back_to_prompt_tokens_when_nothing_was_paid_for(run_dir, tmp_path):
    priced_out, free_out = tmp_path / "priced", tmp_path / "free"
    finish_run([run_dir], out_dir=priced_out)
    assert "total cost $" in (priced_out / "plots" / "cost_vs_success.svg").read_text()
    free = tmp_path / "free-run"
    config = RunConfig(benchmark="hand", agents=("A",), models=(ModelSpec("local"),), task_ids=("t1",))
    with RunStore(free) as store:
        store.start(config, resume=False)
        store.save(EpisodeResult(task="t1", agent="A", model="local", success=True, turns=1, prompt_tokens=900),
                   benchmark="hand", position=0)
    finish_run([free], out_dir=free_out)
    drawn = (free_out / "plots" / "cost_vs_success.svg").read_text()
    assert "prompt tokens per episode" in drawn and "total cost $" not in drawn


def test_an_unknown_cost_is_shown_as_unknown_and_explained(run_dir, tmp_path):
    """An episode whose model has no price (cost_usd None) makes its group's total unknown; groups
    priced in full keep their total, and a report without unknown costs reads as before."""
    from statebound.report.tables import to_markdown

    before = to_markdown(build_report(load_runs([run_dir])))
    assert "unknown" not in before
    with RunStore(run_dir) as store:
        unpriced = EpisodeResult(task="t1", agent="A", model="m", success=True, turns=2, prompt_tokens=100,
                                 cost_usd=None, meta={"hardness": "easy"})
        store.save(unpriced, benchmark="hand", position=0)
    report = build_report(load_runs([run_dir]))
    a, b = report.main
    assert a.cost is None and b.cost == pytest.approx(0.04)
    markdown = to_markdown(report)
    cost = markdown.splitlines()[2].split(" | ").index("Cost $")
    rows = [line.split(" | ") for line in markdown.splitlines() if line.startswith(("| A |", "| B |"))]
    assert [row[cost] for row in rows[:2]] == ["unknown", "0.0400"]
    assert "unknown: some episode called a model whose price statebound.llm.pricing does not know" in markdown
    easy_a = next(s for s in report.breakdowns["hardness"] if s.group == {"agent": "A", "model": "m", "hardness": "easy"})
    assert easy_a.cost is None  # the breakdown row holding it says so too
    finish_run([run_dir], out_dir=tmp_path / "out")
    with (tmp_path / "out" / "report.csv").open() as handle:
        main = [row for row in csv.DictReader(handle) if row["table"] == "main"]
    assert [row["cost"] for row in main] == ["", "0.04"]
    assert json.loads((tmp_path / "out" / "report.json").read_text())["main"][0]["cost"] is None
    drawn = (tmp_path / "out" / "plots" / "cost_vs_success.svg").read_text()
    assert "cost unknown" in drawn and "total cost $" not in drawn


def test_a_breakdown_key_no_episode_has_is_an_error_naming_the_keys(run_dir, tmp_path):
    from typer.testing import CliRunner

    from statebound.cli.app import app
    from statebound.errors import DefinitionError

    with pytest.raises(DefinitionError, match=r"no episode has a meta key 'hardnes'.* Did you mean 'hardness'\?"):
        build_report(load_runs([run_dir]), breakdown_keys=["hardnes"])
    result = CliRunner().invoke(app, ["report", str(run_dir), "--by", "nosuch", "--out", str(tmp_path), "--no-plots"])
    assert result.exit_code == 2 and "Keys the episodes have: hardness, run" in result.output
    assert not (tmp_path / "report.md").exists()
