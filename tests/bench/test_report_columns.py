"""Benchmark-declared report columns (MetaColumn) in summaries, Markdown, CSV, JSON and rich tables."""

import csv
import io
import json

import pytest
from rich.console import Console

from statebound.bench.declared_columns import report_columns
from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.contract.columns import MetaColumn, column_value, merge_columns
from statebound.contract.result import EpisodeResult
from statebound.errors import DefinitionError
from statebound.report.finish import finish_run
from statebound.report.tables import build_report, load_runs, print_report

EM = MetaColumn("em", "EM %", scale=100, missing=0.0)
F1 = MetaColumn("f1", "F1 %", scale=100, missing=0.0)
VIOLATIONS = MetaColumn("violations", "Violations/q")
COLUMNS = (EM, F1, VIOLATIONS)


def _result(task, agent, *, success=False, error=None, **meta):
    return EpisodeResult(task=task, agent=agent, model="m", success=success, reward=float(success),
                         error=error, llm_calls=1, meta=meta)


# agent A: em 1, 0, crashed (no meta); violations 2, 1 -> EM 33.33 %, F1 (1 + 0.5 + 0) / 3, 1.5 violations/q
# agent B: em 1, 1, 0;  violations 0, 0, 3
EPISODES = [
    _result("q1", "A", success=True, em=1.0, f1=1.0, violations=2, type="bridge"),
    _result("q2", "A", em=0.0, f1=0.5, violations=1, type="comparison"),
    _result("q3", "A", error="RuntimeError: boom", type="bridge"),
    _result("q1", "B", success=True, em=1.0, f1=1.0, violations=0, type="bridge"),
    _result("q2", "B", success=True, em=1.0, f1=1.0, violations=0, type="comparison"),
    _result("q3", "B", em=0.0, f1=0.25, violations=3, type="bridge"),
]


def _store(directory, benchmark, results):
    config = RunConfig(benchmark=benchmark, agents=tuple(dict.fromkeys(r.agent for r in results)),
                       models=(ModelSpec("m"),), task_ids=tuple(dict.fromkeys(r.task for r in results)))
    with RunStore(directory) as store:
        store.start(config, resume=False)
        for position, result in enumerate(results):
            store.save(result, benchmark=benchmark, position=position)
    return directory


@pytest.fixture
def hotpot_run(tmp_path_factory):
    return _store(tmp_path_factory.mktemp("hotpot"), "hotpotqa", EPISODES)


def test_column_value_aggregates():
    results = EPISODES[:3]
    assert column_value(EM, results) == pytest.approx(100 / 3)  # the crashed episode counts as 0
    assert column_value(VIOLATIONS, results) == 1.5  # mean over the two episodes that have it
    assert column_value(MetaColumn("violations", "V", aggregate="sum"), results) == 3
    assert column_value(MetaColumn("absent", "X"), results) is None
    weighted = [_result("g1", "S", acc=1.0, steps=3), _result("g2", "S", acc=0.0, steps=1)]
    assert column_value(MetaColumn("acc", "Acc %", scale=100, weight="steps"), weighted) == 75.0
    assert column_value(MetaColumn("acc", "Acc %", scale=100), weighted) == 50.0


def test_column_declaration_errors_and_merge():
    with pytest.raises(DefinitionError, match="aggregate must be"):
        MetaColumn("x", "X", aggregate="median")  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match="bad format"):
        MetaColumn("x", "X", format="{:.2q}")
    assert merge_columns([(EM, VIOLATIONS), (VIOLATIONS, F1)]) == (EM, VIOLATIONS, F1)


def test_registry_declares_the_papers_columns():
    assert [c.header for c in report_columns(["hotpotqa"])][:2] == ["EM %", "F1 %"]
    assert {"violations", "corrections"} <= {c.key for c in report_columns(["gsm8k"])}
    assert "state_accuracy" in {c.key for c in report_columns(["alfworld"])}
    # InterCode's two benchmarks share Invalid/ep (merged once); the toy and unknown ones add nothing
    assert [c.header for c in report_columns(["intercode-sql", "intercode-bash", "toy", "unknown"])] == [
        "Invalid/ep", "SR % (informative)", "Changed %"]
    assert report_columns(["toy", "unknown"]) == ()


def test_report_uses_the_runs_benchmark_columns(hotpot_run):
    report = build_report(load_runs([hotpot_run]))
    assert report.columns == report_columns(["hotpotqa"])
    a, b = report.main
    assert a.extra["em"] == pytest.approx(100 / 3) and a.extra["f1"] == pytest.approx(50.0)
    assert a.extra["violations"] == 1.5 and b.extra["violations"] == 1.0
    assert a.extra["corrections"] is None  # no episode recorded it
    bridge = [s for s in report.breakdowns["type"] if s.group["type"] == "bridge"]
    assert [(s.group["agent"], s.extra["em"]) for s in bridge] == [("A", 50.0), ("B", 50.0)]


def test_files_show_the_columns_and_blanks_for_other_runs(hotpot_run, tmp_path):
    other = _store(tmp_path / "sql", "hand", [_result("t1", "A", success=True)])
    out = tmp_path / "compare"
    finish_run([hotpot_run, other], out_dir=out, plots=False)

    markdown = (out / "report.md").read_text()
    assert "| Avg c-token | EM % | F1 % | Violations/q | Corrections/q | Tool calls/q | Over context | SR 95% CI |" in markdown
    assert f"| {hotpot_run.name} | A | m | 3 | 33.33 |" in markdown
    assert "| 0 | 0 | 33.33 | 50.00 | 1.50 |  |  |  | 6.1-79.2 | 1 |" in markdown
    assert f"| {other.name} | A | m | 1 | 100.00 |" in markdown
    assert "| 0 | 0 |  |  |  |  |  |  | 20.7-100.0 | 0 |" in markdown  # the other run: blanks
    assert "## By type" in markdown and "| bridge | 2 | 50.00 |" in markdown

    rows = list(csv.DictReader((out / "report.csv").open()))
    main = {(r["run"], r["agent"]): r for r in rows if r["table"] == "main"}
    first = main[(hotpot_run.name, "A")]
    assert float(first["em"]) == pytest.approx(100 / 3) and float(first["violations"]) == 1.5
    assert first["corrections"] == "" and main[(other.name, "A")]["em"] == ""
    assert list(rows[0])[-3:] == ["context_overflow", "crashed", "ended_final"]

    document = json.loads((out / "report.json").read_text())
    assert [c["header"] for c in document["columns"]][:2] == ["EM %", "F1 %"]
    by_run = {(s["group"]["run"], s["group"]["agent"]): s["extra"] for s in document["main"]}
    assert by_run[(hotpot_run.name, "B")]["em"] == pytest.approx(200 / 3)
    assert by_run[(other.name, "A")]["em"] is None
    assert all("em" in s["extra"] for s in document["breakdowns"]["type"])


def test_rich_table_has_the_columns(hotpot_run):
    console = Console(file=io.StringIO(), force_terminal=True, width=400, color_system=None)
    print_report(build_report(load_runs([hotpot_run])), console=console)
    text = console.file.getvalue()
    assert "Violations/q" in text and "EM %" in text and "33.33" in text


@pytest.mark.parametrize("terminal", [True, False])
def test_the_tables_say_where_their_columns_are_explained_and_explain_prints_them(hotpot_run, terminal):
    report = build_report(load_runs([hotpot_run]))
    printed = []
    for explain in (False, True):
        console = Console(file=io.StringIO(), force_terminal=terminal, width=120, color_system=None)
        print_report(report, console=console, explain=explain, written_to=hotpot_run)
        printed.append(console.file.getvalue())
    short, explained = printed
    pointer = f"What each column means: {hotpot_run / 'report.md'} and {hotpot_run / 'report.html'} (--explain prints it here)"
    assert " ".join(short.split()).endswith(pointer)  # the last line (wrapped to a terminal's width)
    assert "Avg p-token: " not in short and "**Avg p-token**" not in short
    assert pointer not in explained
    assert ("**Avg p-token**: " if not terminal else "Avg p-token: mean prompt tokens") in explained


def test_explicit_columns_override_the_registry(hotpot_run):
    report = build_report(load_runs([hotpot_run]), columns=(VIOLATIONS,))
    assert report.columns == (VIOLATIONS,) and set(report.main[0].extra) == {"violations"}
    assert build_report(load_runs([hotpot_run]), columns=()).main[0].extra == {}
