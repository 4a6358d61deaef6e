"""Tables fitted to the terminal: nothing cut, nothing wider than the window, on a real pseudo-terminal."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import pytest
from rich.cells import cell_len
from rich.console import Console
from typer.testing import CliRunner

from statebound.cli.app import app
from statebound.report.grid import Column, Section, lift_constant_keys
from statebound.report.terminal import fit, natural_width, print_sections

ORACLE = "function:statebound.benchmarks.toy:oracle"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
LONG_MODEL = "function:statebound.benchmarks.toy:a_model_name_far_too_long_for_a_column"


def _wide_section() -> Section:
    columns = (Column("agent", key=True), Column("model", key=True),
               *(Column(f"measure number {i}", essential=i < 3) for i in range(12)))
    rows = tuple((agent, LONG_MODEL, *(f"{1000 * i + n:.4f}" for i in range(12))) for n, agent in
                 enumerate(("stateflow", "react-refined", "sf-agent-no-verify")))
    return Section("Results", columns, rows)


@pytest.mark.parametrize("width", [80, 120])
def test_every_part_fits_and_keeps_every_cell(width):
    shown, lifted = lift_constant_keys(_wide_section())
    assert lifted == [f"model: {LONG_MODEL}"] and "model" not in shown.header  # one model: in the title
    parts = fit(shown, width=width)
    assert len(parts) > 1 and all(natural_width(part) <= width for part in parts)
    assert all(part.header[0] == "agent" for part in parts)  # the key column in every part
    assert {"measure number 0", "measure number 1", "measure number 2"} <= set(parts[0].header)  # essentials first
    cells = {cell for part in parts for row in part.rows for cell in row}
    assert {cell for row in shown.rows for cell in row} == cells  # every value shown, none cut


def test_pinned_keys_stay_and_a_lone_key_keeps_its_column():
    one = Section("t", (Column("agent", key=True), Column("model", key=True), Column("SR %")), (("a", "m", "1"),))
    shown, lifted = lift_constant_keys(one)
    assert shown.header == ["agent", "SR %"] and lifted == ["model: m"]
    pinned = Section("t", (Column("A", key=True, pinned=True), Column("B", key=True, pinned=True), Column("p")),
                     (("a", "b", "1"),))
    assert lift_constant_keys(pinned)[0].header == ["A", "B", "p"]


def test_printed_tables_never_cut_a_cell():
    out = io.StringIO()
    print_sections([_wide_section()], console=Console(file=out, width=80, force_terminal=True, color_system=None))
    text = out.getvalue()
    assert "…" not in text and max(cell_len(line) for line in text.splitlines()) <= 80
    assert LONG_MODEL in text.replace("\n", "")  # the lifted model, whole (the title may wrap it)
    for value in ("11002.0000", "0.0000", "sf-agent-no-verify"):
        assert value in text


def _in_terminal(args: list[str], *, columns: int) -> str:
    """Run ``args`` with a pseudo-terminal of ``columns`` columns as stdin, stdout and stderr."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")} | {"TERM": "xterm-256color"}
    process = subprocess.Popen(args, stdin=follower, stdout=follower, stderr=follower, env=env, start_new_session=True)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=120) == 0, b"".join(chunks).decode(errors="replace")
    return ANSI.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("toy") / "run"
    made = CliRunner().invoke(app, ["eval", "toy", "-a", "direct", "-a", "verify", "-m", ORACLE, "-O", "count=8",
                                    "--no-progress", "--no-plots", "--out", str(out)])
    assert made.exit_code == 0, made.output
    return out


STATEBOUND = [sys.executable, "-c", "from statebound.cli import main; main()"]


@pytest.mark.parametrize("columns", [80, 120])
def test_report_and_status_fit_a_real_terminal(toy_run, columns):
    report = _in_terminal([*STATEBOUND, "report", str(toy_run), "--no-plots"], columns=columns)
    lines = report.splitlines()
    assert max(cell_len(line) for line in lines) <= columns, report
    assert "…" not in report
    markdown = (toy_run / "report.md").read_text()
    results = markdown.split("## Results")[1].split("##")[0]
    rows = [line for line in results.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == 2
    for row in rows:  # every number of the Results table is on the screen
        for cell in row.strip("| ").split(" | "):
            assert cell in report, (cell, report)
    assert f"(model: {ORACLE})" in report.replace("\n", " ") or ORACLE in report.replace("\n", "")
    status = _in_terminal([*STATEBOUND, "status", str(toy_run)], columns=columns)
    assert max(cell_len(line) for line in status.splitlines()) <= columns and "…" not in status
    assert "direct" in status and "verify" in status and "8/8" in status  # the agent column stays
