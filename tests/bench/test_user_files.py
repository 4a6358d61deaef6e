"""A run made with a user's benchmark file (issue #51): reading it (status, show, report, view,
pack) never runs a file, even one its stored configuration was edited to name; what reports need
of the benchmark is stored with the run; the run reads and resumes from any directory, and
``eval --resume`` says which file it loads. A user's file that fails (raising in a factory, an
incomplete benchmark class, ``tasks()`` raising, repeated task ids) is one line naming the file."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from statebound.bench.store import RunStore
from statebound.cli.app import app
from statebound.view.app import build_app
from statebound.view.sources import find_sources

ORACLE = "function:statebound.benchmarks.toy:oracle"
runner = CliRunner()

BENCH = textwrap.dedent('''
    from pathlib import Path

    from statebound.benchmarks.toy import AGENTS, Toy
    from statebound.contract.columns import MetaColumn

    IMPORTS = Path(__file__).with_name("imported")
    IMPORTS.write_text(IMPORTS.read_text() + "x" if IMPORTS.exists() else "x")  # one x per import


    class Mine(Toy):
        name = "mine"
        report_columns = (MetaColumn("answer", "Mean answer", format="{:.1f}"),)


    direct = AGENTS["direct"]
''')

EVIL = textwrap.dedent('''
    from pathlib import Path

    Path(__file__).with_name("evil-ran").write_text("it ran")
    from statebound.benchmarks.toy import Toy as Term
''')


def _eval(*args: str) -> object:
    return runner.invoke(app, ["eval", *args, "-m", ORACLE, "--no-progress", "--no-plots"])


@pytest.fixture
def user_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``work/runs/mine``: 2 tasks of ``work/bench.py:Mine``, made from ``work``."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "bench.py").write_text(BENCH)
    monkeypatch.chdir(work)
    made = _eval("bench.py:Mine", "-a", "bench.py:direct", "--limit", "2", "--out", "runs/mine")
    assert made.exit_code == 0, made.output
    (work / "imported").unlink()
    return work / "runs" / "mine"


def _readers(run: Path) -> None:
    """Every command that only reads the run, each of which must work."""
    for args in (["status", str(run)], ["show", str(run), "--task", "toy-000"], ["report", str(run), "--no-plots"],
                 ["pack", str(run)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
    web = TestClient(build_app(find_sources([run])))
    assert web.get("/").status_code == 200 and web.get(f"/run/{run.name}").status_code == 200


def test_reading_a_run_never_runs_its_benchmark_file(user_run: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # elsewhere: the run reads from any directory
    _readers(user_run)
    assert not (user_run.parents[1] / "imported").exists()
    report = runner.invoke(app, ["report", str(user_run), "--no-plots"])
    assert "Mean answer" in report.output  # the benchmark's own column, stored with the run


def test_a_run_edited_to_name_another_file_runs_nothing(user_run: Path) -> None:
    shared = user_run.parent / "shared"
    shared.mkdir()
    (shared / "evil.py").write_text(EVIL)
    with sqlite3.connect(user_run / "run.sqlite") as db:
        config = json.loads(db.execute("SELECT value FROM run WHERE key = 'config'").fetchone()[0])
        config["benchmark"] = f"{shared / 'evil.py'}:Term"
        db.execute("UPDATE run SET value = ? WHERE key = 'config'", (json.dumps(config),))
    _readers(user_run)
    assert not (shared / "evil-ran").exists()


def test_resume_from_another_directory_says_which_file_it_loads(user_run: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    resumed = _eval("--out", str(user_run), "--resume", "--seed", "1")
    assert resumed.exit_code == 0, resumed.output
    assert f"loading bench.py from {user_run.parents[1] / 'bench.py'} (this run's code)" in resumed.output
    assert "2 episodes run, 2 already stored" in resumed.output
    moved = tmp_path / "elsewhere"  # the run and its file moved together
    shutil.copytree(user_run.parents[1], moved)
    (user_run.parents[1] / "bench.py").unlink()
    again = _eval("--out", str(moved / "runs" / "mine"), "--resume", "--seed", "2")
    assert again.exit_code == 0, again.output
    assert f"loading bench.py from {moved / 'bench.py'}" in again.output
    shutil.rmtree(moved)
    lost = _eval("--out", str(user_run), "--resume", "--seed", "3")
    assert lost.exit_code == 2 and "uses bench.py, which is neither at" in lost.output
    with RunStore(user_run, read_only=True) as store:
        assert len(store.finished()) == 4  # nothing lost


FAILING = {
    "factory raises": ("flow.py", "def build():\n    raise ValueError('no flow today')\n", ["run", "flow.py:build", "--task", "t"],
                       "{dir}/flow.py:2: ValueError: no flow today (building the flow)"),
    "edits sys.path": ("flow.py", "import sys\nsys.path = ['/nowhere']\nfrom statebound.examples.arithmetic import flow\n",
                       ["flow", "check", "flow.py:flow"], None),
    "incomplete benchmark": ("b.py", "from statebound import Benchmark\nclass B(Benchmark):\n    name = 'b'\n",
                             ["eval", "b.py:B", "-a", "x"], "{dir}/b.py:2: b.py:B is an incomplete Benchmark: it does "
                                                            "not define grade, make_env, tasks, summary, Options"),
    "tasks() raises": ("b.py", "from statebound.benchmarks.toy import Toy, AGENTS\ndirect = AGENTS['direct']\n"
                               "class B(Toy):\n    def tasks(self):\n        return 1 / 0\n",
                       ["eval", "b.py:B", "-a", "b.py:direct", "-m", ORACLE],
                       "{dir}/b.py:5: ZeroDivisionError: division by zero (listing its tasks)"),
    "repeated task ids": ("b.py", "from statebound.benchmarks.toy import Toy, AGENTS\ndirect = AGENTS['direct']\n"
                                  "class B(Toy):\n    def tasks(self):\n        return [*super().tasks()[:2], super().tasks()[0]]\n",
                          ["eval", "b.py:B", "-a", "b.py:direct", "-m", ORACLE],
                          "b.py:B lists 1 task id more than once ('toy-000'): each task needs an id of its own"),
}


@pytest.mark.parametrize("case", FAILING)
def test_a_users_file_that_fails_is_one_line_naming_it(case: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    name, source, args, said = FAILING[case]
    monkeypatch.setattr(sys, "path", list(sys.path))  # the process's own, whatever the file does
    before = list(sys.path)
    (tmp_path / name).write_text(source)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, [*args, *(["--out", "run"] if args[0] == "eval" else [])])
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    if said is None:  # loads, and the process can still import what it could (the file's edit stays)
        assert result.exit_code == 0, result.output
        assert "/nowhere" in sys.path and set(before) <= set(sys.path)
        return
    assert result.exit_code == 2, result.output
    line = " ".join(result.output.split())
    assert line.startswith("error: ") and said.format(dir=tmp_path) in line, line
    assert not (tmp_path / "run").exists()  # nothing stored
