"""Commands of docs/flow.md run as written: the lint example, saved as a file and checked from the
command line, prints each finding once (the file prints its own findings only when run as a
script); the scripted model plays the replies given on the command line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from statebound.cli.app import app

DOC = Path(__file__).resolve().parents[2] / "docs" / "flow.md"


def _lint_example() -> str:
    blocks = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.M | re.S)
    (block,) = [b for b in blocks if 'name="lint-me"' in b]
    return block


def test_flow_check_prints_each_finding_of_the_docs_example_once(tmp_path):
    path = tmp_path / "lint_me.py"
    path.write_text(_lint_example())
    result = CliRunner().invoke(app, ["flow", "check", f"{path}:flow", "--strict"])
    assert result.exit_code == 1  # --strict: the example has warnings
    lines = result.output.splitlines()
    assert sum("[shadowed-transition]" in line for line in lines) == 1
    assert sum("[static-loop]" in line for line in lines) == 1
    assert lines[-1].startswith("lint-me: 2 warning(s)")
    as_script = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert as_script.returncode == 0 and as_script.stdout.count("[shadowed-transition]") == 1


def test_the_scripted_model_command_of_docs_flow_md_runs_as_written():
    import shlex

    (line,) = [line for line in DOC.read_text(encoding="utf-8").splitlines()
               if line.startswith("statebound run arithmetic -m scripted")]
    result = CliRunner().invoke(app, shlex.split(line)[1:], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "tool calculate failed" in result.output and "Result: 3*12-5 = 31" in result.output
    assert "exit: End (final)" in result.output
