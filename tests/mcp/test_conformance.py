"""The official MCP conformance suite (@modelcontextprotocol/conformance, on Node 22; installed by
scripts/setup_mcp.sh): its client scenarios against statebound's MCP client, and its server
scenarios against ``statebound mcp FLOW --http``, the 0.1 suite (protocol 2025) and the 0.2 suite's
scenarios that protocol 2026-07-28 requires. The scenarios a flow server cannot pass are listed,
each with why, in the baselines beside this file (docs/mcp.md lists them too); the suite fails on
any other failure, and on a baseline entry that passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_helpers import NODE_BIN, ROOT, installed, node22

pytestmark = [pytest.mark.integration, pytest.mark.slow]
HERE = Path(__file__).parent
SUITES = {"2025": ("@modelcontextprotocol/conformance", []),
          "2026-07-28": ("conformance-next", ["--requirements", "2026-07-28"])}


def conformance(package: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The suite's command line, run on Node 22 (its own node first on the PATH); it prints on stderr
    too, so both are read as one."""
    script = installed(NODE_BIN.parent / package / "dist" / "index.js", f"the conformance suite ({package})")
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([node22(), script, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout, env=env, cwd=HERE)


def summary(output: str) -> str:
    return output[output.find("=== SUMMARY"):] if "=== SUMMARY" in output else output[-3000:]


@pytest.mark.parametrize("scenario", ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"])
def test_client_scenarios(scenario):
    client = f"{sys.executable} {HERE / 'conformance' / 'client.py'}"
    done = conformance("@modelcontextprotocol/conformance", "client", "--command", client, "--scenario", scenario)
    assert done.returncode == 0 and "OVERALL: PASSED" in done.stdout, done.stdout[-3000:]


@pytest.mark.parametrize("era", list(SUITES))
def test_server_scenarios_over_streamable_http(flow_server, era):
    package, requirements = SUITES[era]
    baseline = HERE / "conformance" / f"server-{era.split('-')[0]}.yml"
    done = conformance(package, "server", "--url", flow_server, *requirements, "--expected-failures", str(baseline))
    assert done.returncode == 0, summary(done.stdout)
    assert "Baseline check passed: all failures are expected." in done.stdout
    print(summary(done.stdout))  # what the suite printed (pytest -s shows it; docs/mcp.md quotes it)
