"""What a newcomer meets on the command line (issue #41): structured options, resuming from the
store, replays, threads, one flag vocabulary and messages that list what exists."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from statebound.cli.app import app

ORACLE = "function:statebound.benchmarks.toy:oracle"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


# --- 1. structured model options ------------------------------------------------------------
def test_python_style_lists_are_read_as_lists() -> None:
    result = invoke("run", "arithmetic", "-m", "scripted", "--model-option",
                    "replies=['I would guess', 'Expression: 3*12-5']")
    assert result.exit_code == 0, result.output
    assert "llm solver: I would guess" in result.output and "Result: 3*12-5 = 31" in result.output


@pytest.mark.parametrize(("value", "words"), [
    ("replies=[Atlantis]", "neither JSON nor a Python literal"),
    ("replies=Atlantis", "must be a list of strings"),
])
def test_a_structured_option_that_does_not_parse_is_one_line(value: str, words: str) -> None:
    result = invoke("run", "arithmetic", "-m", "scripted", "--model-option", value)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "replies=[" in lines[0], result.stderr
