"""A server's usage figures are checked: one that is not a sane token count is recorded as unknown
(counted as 0), named once, and never ends the run (issue #38: prompt_tokens=10**30 made saving fail
with 'Integer exceeds 64-bit range', 0 episodes stored)."""

from __future__ import annotations

import json
import sqlite3
import warnings
from pathlib import Path

import pytest
from llm_fault_server import FaultServer, Reply, completion_body
from typer.testing import CliRunner

from statebound.cli.app import app
from statebound.llm import usage as usage_module
from statebound.llm.usage import checked_count


def _body(**usage: object) -> bytes:
    reply = json.loads(completion_body())
    reply["usage"] = usage
    return json.dumps(reply).encode()


@pytest.fixture(autouse=True)
def _forget_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usage_module, "_named", set())


def test_sane_counts_pass_and_others_are_unknown_named_once() -> None:
    assert checked_count(12, field="prompt_tokens", source="s") == 12
    assert checked_count(None, field="prompt_tokens", source="s") is None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for bad in (10**30, -5, "12", 3.5, True, 10**12):
            assert checked_count(bad, field="prompt_tokens", source="s") is None
    assert len(caught) == 1
    assert "s reported usage prompt_tokens=1000000000000000000000000000000" in str(caught[0].message)
    assert "recorded as unknown" in str(caught[0].message)


def test_a_huge_usage_figure_does_not_stop_the_run(fault_server: tuple[FaultServer, str],
                                                  tmp_path: Path) -> None:
    server, base_url = fault_server
    server.play(*[Reply(body=_body(prompt_tokens=10**30, completion_tokens=-1))] * 4)
    out = tmp_path / "run"
    args = ["eval", "toy", "-a", "direct", "-m", "openai:test-model", "-O", "count=4", "-j", "1",
            "--no-progress", "--no-plots", "--out", str(out), "--model-option", f"base_url={base_url}",
            "--model-option", "api_key=sk-usage-0123456789", "--model-option", "attempts=1"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "4 episodes run, 0 already stored, 0 crashed" in result.stdout
    with sqlite3.connect(out / "run.sqlite") as db:
        rows = [json.loads(row) for (row,) in db.execute("SELECT row FROM episodes")]
    assert [(r["prompt_tokens"], r["completion_tokens"], r["llm_calls"]) for r in rows] == [(0, 0, 1)] * 4
    named = [str(w.message) for w in caught if "not a token count" in str(w.message)]
    assert len(named) == 2 and "prompt_tokens=1000000000000000000000000000000" in named[0]
