"""A model reply is bounded in bytes before anything keeps it (issue #38: a 200 MB reply was stored
whole in the trajectory and run.sqlite)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from llm_fault_server import FaultServer, Reply, completion_body
from typer.testing import CliRunner

from statebound.cli.app import app
from statebound.llm.base import Choice
from statebound.llm.reply_size import MAX_REPLY_BYTES, bound_reply


def test_a_reply_within_the_limit_is_kept_whole() -> None:
    assert Choice("hello").text == "hello"
    assert bound_reply("é" * 10, max_bytes=20) == "é" * 10


def test_a_longer_reply_keeps_its_start_and_says_how_much_was_cut() -> None:
    cut = bound_reply("é" * 10, max_bytes=5)  # 20 bytes; a split character is dropped whole
    assert cut == "éé\n[reply cut: 15 of 20 bytes not kept; the limit is 5]"
    big = Choice("x" * (3 * MAX_REPLY_BYTES))
    assert big.text.startswith("x" * MAX_REPLY_BYTES + "\n[reply cut: 2,097,152 of 3,145,728 bytes")


def test_a_huge_reply_is_stored_cut(fault_server: tuple[FaultServer, str], tmp_path: Path) -> None:
    server, base_url = fault_server
    server.play(Reply(body=completion_body("y" * (5 * MAX_REPLY_BYTES))))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, [
        "eval", "toy", "-a", "direct", "-m", "openai:test-model", "-O", "count=1", "-j", "1",
        "--no-progress", "--no-plots", "--out", str(out), "--model-option", f"base_url={base_url}",
        "--model-option", "api_key=sk-reply-0123456789", "--model-option", "attempts=1"])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(out / "run.sqlite") as db:
        (trajectory,) = db.execute("SELECT trajectory FROM episodes").fetchone()
    assert "[reply cut: 4,194,304 of 5,242,880 bytes not kept" in trajectory
    assert len(trajectory) < 2 * MAX_REPLY_BYTES
    assert (out / "run.sqlite").stat().st_size < 3 * MAX_REPLY_BYTES
