"""Secrets masked by value, whatever surrounds them (issue #38 item 4)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from statebound.cli.app import app
from statebound.errors import CheckpointError
from statebound.flow.live import open_checkpointer
from statebound.flow.live.postgres import redacted
from statebound.llm.model_options import redacted as redacted_options
from statebound.llm.model_options import secret_values
from statebound.llm.secrets import Secret, display_url, redact

KEY = "sk-proj-Q7wErTy9uIoP4aSdF6gHjK2l"


@pytest.mark.parametrize(
    "echo",
    [
        f"Incorrect API key provided: {KEY[3:]}",  # echoed without its sk- prefix
        f"Incorrect API key provided: {KEY[8:]}",  # without sk-proj-
        f"key ending in {KEY[-14:]}",  # a 14-character suffix
        f"key {KEY[10:22]}...",  # a fragment from the middle
        f"Bearer {KEY}",
    ],
)
def test_a_key_and_any_identifying_fragment_of_it_are_masked(echo: str) -> None:
    masked = redact(echo, Secret(KEY))
    secret_part = KEY[8:]
    assert not any(secret_part[i : i + 8] in masked for i in range(len(secret_part) - 7)), masked
    assert "***" in masked


def test_short_fragments_and_the_vendor_prefix_stay_readable() -> None:
    assert redact("keys look like sk-proj-...; Q7wE is short", Secret(KEY)) == (
        "keys look like sk-proj-...; Q7wE is short"
    )


@pytest.mark.parametrize(
    ("url", "hidden"),
    [
        ("https://gw.example/v1?token=t0psecret&mode=x", "t0psecret"),
        ("https://gw.example/v1?api_key=abc123xyz", "abc123xyz"),
        ("https://gw.example/v1?x=1&key=k3y", "k3y"),
        ("postgresql://app:hunter2@db/app", "hunter2"),
        ("postgresql://app@db/app?password=hunter2&sslmode=require", "hunter2"),
    ],
)
def test_tokens_and_passwords_in_urls_are_masked(url: str, hidden: str) -> None:
    for shown in (display_url(url), redact(f"cannot reach {url}: refused"), redacted(url)):
        assert hidden not in shown
    assert hidden not in str(redacted_options({"base_url": url}))
    assert hidden in secret_values({"base_url": url})  # so that errors echoing it are masked


def test_libpq_connection_string_passwords_are_masked() -> None:
    assert redact("connect to host=db user=app password=hunter2 dbname=app failed") == (
        "connect to host=db user=app password=*** dbname=app failed"
    )
    assert "s3 cr" not in redact("host=db password='s3 cret'")


def test_a_connection_string_is_never_taken_for_a_sqlite_path(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    where = "host=db user=app password=hunter2 dbname=app"
    with pytest.raises(CheckpointError, match="connection string") as caught:
        open_checkpointer(where)
    assert "hunter2" not in str(caught.value)
    result = CliRunner().invoke(app, ["threads", where])
    assert result.exit_code == 2 and "connection string" in result.output
    assert "hunter2" not in result.output
    assert list(tmp_path.iterdir()) == []  # no file named after the password


def test_an_echoed_key_fragment_and_a_url_token_stay_out_of_the_run_and_its_output(
    fault_server, tmp_path
) -> None:
    """A server echoing the key without its prefix and a 14-character suffix of it, and a base_url
    with a ?token=: neither reaches run.sqlite, results.jsonl, stdout or stderr (issue #38)."""
    from llm_fault_server import status

    server, base_url = fault_server
    key, token = "sk-Zt4rQ9mW2xV7bN1cK8pL5hJ3", "tok3nQ8wE2rT6yU"
    echo = f'{{"error": {{"message": "bad key {key[3:]} (ends {key[-14:]})"}}}}'
    server.play(*[status(500, body=echo)] * 4)
    out = tmp_path / "run"
    args = ["eval", "toy", "-a", "direct", "-m", "openai:test-model", "-O", "count=4", "-j", "1",
            "--no-progress", "--no-plots", "--out", str(out),
            "--model-option", f"base_url={base_url}?token={token}",
            "--model-option", f"api_key={key}", "--model-option", "attempts=1"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "bad key ***" in result.output  # the echo arrived, masked
    for secret in (key[3:], key[-14:], token):
        assert secret not in result.output, secret
        assert [p for p in out.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()] == []
