"""Every subcommand the README and docs use is registered on the ``statebound`` command."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from statebound.cli.app import app


@pytest.mark.parametrize(
    "command", ["eval", "report", "show", "run", "models", "flow draw", "flow check", "spec check", "spec draw"]
)
def test_subcommand_is_registered(command: str) -> None:
    result = CliRunner().invoke(app, [*command.split(), "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output
