"""``statebound mcp list`` against real servers: by name from a config file, or by command."""

from __future__ import annotations

import json

import pytest
from mcp_helpers import filesystem, time_server
from typer.testing import CliRunner

from statebound.cli.app import app

pytestmark = pytest.mark.integration


def test_mcp_list_prints_each_tool_with_whether_a_call_may_run_twice(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"time": {"command": time_server(), "allow": ["get_current_time"]}}}))
    listed = CliRunner().invoke(app, ["mcp", "list", "time", "--mcp-config", str(config)])
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert lines[0] == "time (MCP 2026-07-28): 2 tools"
    assert "  get_current_time(timezone: string)  [read-only]" in lines
    assert any(line.startswith("  convert_time(") and line.endswith("[read-only, not in its allow list]") for line in lines)


def test_mcp_list_by_command_with_its_arguments(tmp_path):
    listed = CliRunner().invoke(app, ["mcp", "list", filesystem(), str(tmp_path)])
    assert listed.exit_code == 0, listed.output
    assert "  write_file(path: string, content: string)  [not repeatable]" in listed.output.splitlines()
