"""A real trace backend: Arize Phoenix (from PyPI, started here on loopback with a temporary
working directory) receives `statebound run --otel` and `statebound eval --otel` over OTLP/HTTP;
the spans read back through its REST API keep their names, parents and attributes."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from processes import free_port, stop

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("phoenix") is None,
                       reason="Arize Phoenix is not installed (pip install arize-phoenix; the dev extra has it)"),
]

STATEBOUND = Path(sys.executable).with_name("statebound")


@pytest.fixture(scope="module")
def phoenix() -> Iterator[str]:
    """Phoenix's server on loopback; its URL once /healthz answers; always terminated."""
    port = free_port()
    with tempfile.TemporaryDirectory() as workdir, tempfile.TemporaryFile() as log:
        env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
               "PHOENIX_GRPC_PORT": str(free_port()), "PHOENIX_WORKING_DIR": workdir}
        process = subprocess.Popen([sys.executable, "-m", "phoenix.server.main", "serve"], env=env,
                                   stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while not _healthy(url):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    pytest.fail(f"Phoenix did not start: {log.read().decode(errors='replace')[-2000:]}")
                time.sleep(0.5)
            yield url
        finally:
            stop(process, timeout=20)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _statebound(url: str, *args: str) -> None:
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": url}
    env.pop("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", None)
    done = subprocess.run([str(STATEBOUND), *args], env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def _spans(url: str, trace_root: str, count: int) -> list[dict[str, Any]]:
    """The spans of the traces whose root is named ``trace_root``, once ``count`` have landed."""
    deadline = time.monotonic() + 30
    while True:
        listed = httpx.get(f"{url}/v1/projects/default/spans", params={"limit": 1000}, timeout=10)
        listed.raise_for_status()
        spans = listed.json()["data"]
        roots = {s["context"]["trace_id"] for s in spans if s["name"] == trace_root and s["parent_id"] is None}
        ours = [s for s in spans if s["context"]["trace_id"] in roots]
        if len(ours) >= count or time.monotonic() > deadline:
            return ours
        time.sleep(0.5)


def _children(spans: list[dict[str, Any]], parent: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in spans if s["parent_id"] == parent["context"]["span_id"]]


def test_a_flow_run_lands_in_phoenix_as_a_span_tree(phoenix):
    _statebound(phoenix, "run", "arithmetic", "-m", "scripted", "--no-tokens", "--otel",
                "--model-option", 'replies=["I would guess", "Expression: 3*12-5"]')
    spans = _spans(phoenix, "invoke_agent arithmetic", 1 + 5 + 2 + 2)  # run, states, calls, tools
    (run,) = [s for s in spans if s["name"] == "invoke_agent arithmetic"]
    assert run["attributes"]["statebound.exit_state"] == "End"
    states = _children(spans, run)
    assert [(s["attributes"]["statebound.state"], s["attributes"]["statebound.visit"])
            for s in sorted(states, key=lambda s: s["start_time"])] == [
        ("Solve", 1), ("Calculate", 1), ("Error", 1), ("Calculate", 2), ("End", 1)]
    below = [child for state in states for child in _children(spans, state)]
    calls = [s for s in below if s["name"] == "chat scripted"]
    assert len(calls) == 2
    assert all(c["attributes"]["gen_ai.request.model"] == "scripted" and c["attributes"]["gen_ai.usage.input_tokens"] > 0
               for c in calls)
    tools = [s for s in below if s["name"].startswith("execute_tool")]
    assert sorted(t["attributes"]["statebound.tool.ok"] for t in tools) == [False, True]


def test_an_eval_run_lands_in_phoenix_with_an_episode_span_per_task(phoenix, tmp_path):
    _statebound(phoenix, "eval", "toy", "-a", "direct", "-a", "verify", "-m",
                "function:statebound.benchmarks.toy:oracle", "--limit", "2", "-j", "2", "--otel",
                "--no-progress", "--no-plots", "--out", str(tmp_path / "run"))
    spans = _spans(phoenix, "run toy", 1 + 4 + 6)  # run, 2 tasks x 2 agents, their calls (1 + 2 each)
    (run,) = [s for s in spans if s["name"] == "run toy"]
    assert run["attributes"]["statebound.episodes"] == 4
    episodes = _children(spans, run)
    assert sorted((e["attributes"]["statebound.agent"], e["attributes"]["statebound.task.id"]) for e in episodes) == \
        sorted((agent, task) for agent in ("direct", "verify") for task in {e["attributes"]["statebound.task.id"] for e in episodes})
    assert len(episodes) == 4
    for episode in episodes:
        attributes = episode["attributes"]
        assert attributes["statebound.benchmark"] == "toy" and "statebound.reward" in attributes
        assert isinstance(attributes["statebound.success"], bool)
        calls = _children(spans, episode)
        assert len(calls) == (1 if attributes["statebound.agent"] == "direct" else 2)
        assert all(c["attributes"]["gen_ai.response.finish_reasons"] for c in calls)
