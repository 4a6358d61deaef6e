"""The README's commands run as written: its two `make` commands are the Makefile's, the demo runs
(here on one of its eight tasks), and what the README does next with the demo's run (view, show)
and with its flow (run from the shell) works."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
STATEBOUND = Path(sys.executable).parent / "statebound"


def _commands() -> list[str]:
    """Every command line of the README's ```bash blocks, comments dropped."""
    blocks = re.findall(r"^```bash\n(.*?)^```", README, flags=re.MULTILINE | re.DOTALL)
    return [line.split("  #", 1)[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


def _demo_command(tasks: str, out: Path) -> list[str]:
    """The command `make demo` runs (read from `make -n demo`), on ``tasks`` into ``out``."""
    dry = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    line = next(part for part in dry.replace("\\\n", " ").splitlines() if "statebound eval" in part)
    args = shlex.split(line)
    args[args.index("--tasks") + 1] = tasks
    args[args.index("--out") + 1] = str(out)
    return [str(STATEBOUND), *[a for a in args[1:] if a != "--resume"]]


def test_the_readme_runs_the_makefiles_two_commands_and_the_demos_run() -> None:
    commands = _commands()
    assert commands[:2] == ["make demo", "make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo: ", makefile, flags=re.M) and re.search(r"^test: ", makefile, flags=re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert set(commands[2:]) == {"statebound view runs/demo", "statebound show runs/demo --task 3 --agent stateflow-scoped"}
    assert "--out runs/demo" in " ".join(_demo_command("3", Path("runs/demo")))


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "120", "PYTHONPATH": os.pathsep.join(sys.path)}


@pytest.mark.integration
@pytest.mark.slow
def test_the_demo_then_view_and_show_on_its_run(tmp_path: Path) -> None:
    from processes import stop

    run = tmp_path / "runs" / "demo"
    demo = subprocess.run(_demo_command("3", run), cwd=tmp_path, capture_output=True, text=True, env=_env(),
                          timeout=900)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "stateflow-scoped-random" in demo.stdout and "3 episodes run" in demo.stdout
    assert f"What each column means: {run / 'report.md'}" in demo.stdout  # one line, not the glossary
    assert "## Columns" not in demo.stdout and "Avg p-token**:" not in demo.stdout
    readme = dict(command.split(" ", 2)[1:] for command in _commands()[2:])
    show = subprocess.run([str(STATEBOUND), "show", *shlex.split(readme["show"])], cwd=tmp_path, capture_output=True,
                          text=True, env=_env(), timeout=120)
    assert show.returncode == 0 and "stateflow-scoped" in show.stdout, show.stdout + show.stderr
    server = subprocess.Popen([str(STATEBOUND), "view", *shlex.split(readme["view"]), "--port", "0"], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    try:
        url = (server.stdout.readline() if server.stdout else "").split()[2]  # statebound view: URL (...)
        page = urllib.request.urlopen(f"{url}run/demo/episode?task=3&agent=stateflow-scoped", timeout=60).read()
    finally:
        stop(server, timeout=30)
    assert b"Way through the machine" in page


@pytest.mark.integration
def test_the_readmes_flow_runs_from_the_shell_on_the_embedded_model(tmp_path: Path) -> None:
    code = re.search(r"^```python\n(.*?)^```", README, flags=re.MULTILINE | re.DOTALL)
    assert code is not None
    (tmp_path / "my_flow.py").write_text(code.group(1), encoding="utf-8")
    said = re.search(r"`(statebound run my_flow\.py:flow [^`]+)`", README)
    assert said is not None
    ran = subprocess.run([str(STATEBOUND), *shlex.split(said.group(1))[1:]], cwd=tmp_path, capture_output=True,
                         text=True, env=_env(), timeout=300)
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr  # 1: the small model's answer was not 4
    assert "Solve" in ran.stdout and "exit:" in ran.stdout
