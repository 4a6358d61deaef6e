"""``import statebound`` and ``statebound --help`` stay light: no model, SDK or numeric stack."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("openai", "llama_cpp", "numpy", "scipy", "sklearn", "matplotlib", "ray", "langgraph",
         "textworld", "opentelemetry")
STATEBOUND = Path(sys.executable).with_name("statebound")


def heavy_modules_after(code: str) -> list[str]:
    probe = f"""
import sys
{code}
heavy = {HEAVY!r}
print("HEAVY:" + ",".join(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
"""
    result = subprocess.run([sys.executable, "-c", probe], check=False, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    line = [row for row in result.stdout.splitlines() if row.startswith("HEAVY:")][-1]
    return [m for m in line.removeprefix("HEAVY:").split(",") if m]


def test_import_statebound_is_light() -> None:
    assert heavy_modules_after("import statebound") == []


def test_llm_registry_and_pricing_are_light() -> None:
    code = "import statebound.llm.registry, statebound.llm.pricing, statebound.llm.usage"
    assert heavy_modules_after(code) == []


def test_cli_help_is_light() -> None:
    code = f"""
sys.argv = [{str(STATEBOUND)!r}, "--help"]
from statebound.cli.app import app
try:
    app()
except SystemExit as done:
    assert done.code == 0, done.code
"""
    assert heavy_modules_after(code) == []


@pytest.mark.skipif(not STATEBOUND.exists(), reason="the statebound script is not installed")
def test_installed_script_help_is_light() -> None:
    """The real console script, with Python's import log (-X importtime) as the witness."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    result = subprocess.run([str(STATEBOUND), "--help"], check=False, capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 0 and "models" in result.stdout
    imported = {row.rsplit("|", 1)[-1].strip() for row in result.stderr.splitlines()
                if row.startswith("import time:")}
    assert "statebound.cli.app" in imported  # the log is really there
    assert sorted(m for m in imported if m.split(".")[0] in HEAVY) == []


def test_runs_without_tracing_import_no_opentelemetry(tmp_path: Path) -> None:
    """Tracing is off unless asked for: a flow run and a benchmark run leave OpenTelemetry unloaded."""
    code = f"""
import os
for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
    os.environ.pop(name, None)
from statebound.examples.arithmetic import EXAMPLE_TASK, flow
from statebound.llm.testing import ScriptedLLM
assert flow.run_sync(EXAMPLE_TASK, llm=ScriptedLLM(["Expression: 3*12-5"])).exit_state == "End"
sys.argv = ["statebound", "eval", "toy", "-a", "direct", "-m", "function:statebound.benchmarks.toy:oracle",
            "--limit", "1", "--no-progress", "--no-plots", "--out", {str(tmp_path / "run")!r}]
from statebound.cli.app import app
try:
    app()
except SystemExit as done:
    assert done.code == 0, done.code
"""
    assert [m for m in heavy_modules_after(code) if m.startswith("opentelemetry")] == []
