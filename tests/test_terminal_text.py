"""Text from models, tools, tasks and stores reaches the terminal inert (issue #51): rich markup in
it is printed as written, escape sequences are shown escaped, and one long unbroken word is folded
(rich alone wraps it in quadratic time)."""

from __future__ import annotations

import io
import json
import re
import textwrap
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.cli.app import app
from statebound.contract.result import EpisodeResult
from statebound.report.inert import FOLD, inert
from statebound.report.status import run_progress, status_section
from statebound.report.terminal import print_sections

runner = CliRunner()

# a closing tag rich cannot match, a window title (OSC), a screen clear (CSI), a carriage return
# and a right-to-left override: each would act on the terminal if printed raw
HOSTILE = "[/b] \x1b]0;pwned\x07 \x1b[2J \r \u202e"
RAW = re.compile("[\x1b\x07\r\u202e]")

FLOW = textwrap.dedent('''
    from statebound.flow import AskHuman, CallLLM, Flow, State, always

    flow = Flow(name="asks", initial="Draft", states=[
        State("Draft", outputs=[CallLLM()], transitions=[(always(), "Approve")]),
        State("Approve", outputs=[AskHuman(lambda ctx: "send " + ctx.last_of("llm").content + "?")],
              transitions=[(always(), "End")]),
        State("End", final=True),
    ])
''')


def _flow(tmp_path: Path) -> str:
    path = tmp_path / "asks.py"
    path.write_text(FLOW)
    return f"{path}:flow"


def _run(tmp_path: Path, reply: str, *args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, ["run", _flow(tmp_path), "--task", f"task {HOSTILE}", "-m", "scripted",
                               "--model-option", "replies=" + json.dumps([reply]), *args], env=env)


def test_inert_escapes_controls_cuts_and_folds() -> None:
    assert inert(HOSTILE) == "[/b] \\x1b]0;pwned\\x07 \\x1b[2J \\r \\u202e"
    assert inert("two\nlines\tand a tab") == "two\nlines\tand a tab"
    assert inert("two\nlines\tand a tab", one_line=True) == "two\\nlines\\tand a tab"
    assert inert("x" * 50, limit=20) == "x" * 20 + "… (50 characters)"
    folded = inert("a " + "y" * 250 + " b", fold=100)
    assert folded == "a " + "y" * 100 + "\n" + "y" * 100 + "\n" + "y" * 50 + " b"
    assert inert("word " * 5, fold=4) == "word " * 5  # words no longer than the fold stay whole


def test_run_prints_markup_and_escapes_from_the_model_and_a_pause_as_text(tmp_path: Path) -> None:
    result = _run(tmp_path, f"draft {HOSTILE}", "--store", str(tmp_path / "live.sqlite"), "--thread", "t1")
    assert result.exit_code == 3, result.output  # paused for a person (a MarkupError made it 1)
    assert "MarkupError" not in result.output and not RAW.search(result.output)
    assert "llm: draft [/b] \\x1b]0;pwned\\x07 \\x1b[2J \\r \\u202e" in result.output
    assert "paused: send draft [/b] \\x1b]0;pwned\\x07" in result.output


def test_run_folds_one_long_word(tmp_path: Path) -> None:
    word = "x" * 60_000
    result = _run(tmp_path, word, env={"COLUMNS": "5000"})
    assert result.exit_code == 3, result.output[-500:]
    runs = [len(run) for run in re.findall("x+", result.output)]
    assert sum(runs) >= len(word) and max(runs) == FOLD  # all of it, folded (rich alone: 5000 a line, quadratic)


def test_threads_lists_a_thread_whose_name_and_texts_hold_markup(tmp_path: Path) -> None:
    store, thread = tmp_path / "live.sqlite", f"t{HOSTILE}"
    assert _run(tmp_path, f"draft {HOSTILE}", "--store", str(store), "--thread", thread).exit_code == 3
    for args in ([str(store)], [str(store), thread]):
        listed = runner.invoke(app, ["threads", *args])
        assert listed.exit_code == 0, listed.output
        assert "[/b]" in listed.output and "\\x1b" in listed.output and not RAW.search(listed.output)


def _hostile_episode(task: str, agent: str) -> EpisodeResult:
    choice = {"name": "pick", "method": "score", "candidates": [HOSTILE, "plain"], "scores": [-0.5, -1.5], "picked": 0}
    trajectory = [
        {"state": f"Ask{HOSTILE}", "role": "user", "source": "task", "content": f"task {HOSTILE}"},
        {"state": "Ask", "role": "assistant", "source": "llm", "content": f"reply {HOSTILE}", "choice": choice},
        {"state": "Act", "role": "tool", "source": "tool", "content": f"Observation: {HOSTILE}", "action": HOSTILE},
    ]
    return EpisodeResult(task=task, agent=agent, model=f"m{HOSTILE}", success=False, reward=0.0, turns=1,
                         error=f"RuntimeError: {HOSTILE}", trajectory=trajectory, meta={"answer": HOSTILE})


@pytest.fixture
def hostile_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    agents = (f"a{HOSTILE}", "b")
    config = RunConfig(benchmark="hand", agents=agents, models=(ModelSpec(f"m{HOSTILE}"),), task_ids=("t1",))
    with RunStore(run) as store:
        store.start(config, resume=False)
        for position, agent in enumerate(agents):
            store.save(_hostile_episode("t1", agent), benchmark="hand", position=position)
    return run


def test_show_prints_a_stored_episode_with_markup_and_escapes_as_text(hostile_run: Path) -> None:
    shown = runner.invoke(app, ["show", str(hostile_run), "--task", "t1"])
    assert shown.exit_code == 0, shown.output
    assert not RAW.search(shown.output) and "MarkupError" not in shown.output
    assert shown.output.count("[/b] \\x1b]0;pwned\\x07") >= 8  # task, reply, choice, action, observation, ...


def test_status_and_report_tables_print_stored_names_inert(hostile_run: Path) -> None:
    piped = runner.invoke(app, ["status", str(hostile_run)])
    assert piped.exit_code == 0 and "a[/b] \\x1b]0;pwned" in piped.output and not RAW.search(piped.output)
    report = runner.invoke(app, ["report", str(hostile_run), "--no-plots"])
    assert report.exit_code == 0 and "\\x1b]0;pwned" in report.output and not RAW.search(report.output)
    terminal = io.StringIO()
    section = status_section(run_progress(hostile_run), workers=1, now=0.0)
    print_sections([section], console=Console(file=terminal, force_terminal=True, width=200))
    assert "a[/b] \\x1b]0;pwned\\x07" in terminal.getvalue() and "\x1b]0;pwned" not in terminal.getvalue()


RAISES = '''
def responder(request):
    raise RuntimeError("model broke: ''' + HOSTILE.replace("\x1b", "\\x1b").replace("\x07", "\\x07").replace(
    "\r", "\\r").replace("\u202e", "\\u202e") + '''")
'''


def test_the_crash_summary_of_eval_prints_errors_inert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "raising_model.py").write_text(RAISES)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = runner.invoke(app, ["eval", "toy", "-a", "direct", "-m", "function:raising_model:responder", "--limit", "1",
                                 "--out", str(tmp_path / "run"), "--no-progress", "--no-plots"])
    assert result.exit_code == 1, result.output  # crashed episodes stored
    assert "1 crashed episode stored" in result.output and "model broke: [/b] \\x1b]0;pwned" in result.output
    assert not RAW.search(result.output)
