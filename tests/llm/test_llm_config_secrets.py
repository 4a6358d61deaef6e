"""Settings precedence (flag > environment > config file), config errors, secret handling."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from statebound.errors import DefinitionError, ModelUnavailable
from statebound.llm.config import config_path, default_model, load_config, resolve_openai_settings
from statebound.llm.retry import parse_retry_after
from statebound.llm.secrets import Secret, redact


def write_config(text: str) -> Path:
    path = config_path()
    path.write_text(text, encoding="utf-8")
    return path


def test_flag_beats_environment_beats_file(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config('model = "openai:from-file"\n[openai]\nmodel = "file-model"\n'
                 'base_url = "http://file/v1"\napi_key = "file-key"\ntimeout = 7\nattempts = 2\n')
    settings = resolve_openai_settings()
    assert (settings.model, settings.base_url, settings.api_key.reveal()) == (
        "file-model", "http://file/v1", "file-key")
    assert (settings.timeout, settings.attempts) == (7.0, 2)
    assert default_model() == "openai:from-file"

    monkeypatch.setenv("OPENAI_BASE_URL", "http://env/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    monkeypatch.setenv("STATEBOUND_MODEL", "smollm2")
    settings = resolve_openai_settings(model="flag-model")
    assert (settings.model, settings.base_url, settings.api_key.reveal()) == (
        "flag-model", "http://env/v1", "env-key")
    assert default_model() == "smollm2"

    settings = resolve_openai_settings(model="m", base_url="http://flag/v1", api_key="flag-key")
    assert (settings.base_url, settings.api_key.reveal()) == ("http://flag/v1", "flag-key")


def test_openai_needs_a_key_but_local_servers_do_not() -> None:
    with pytest.raises(ModelUnavailable, match="OPENAI_API_KEY"):
        resolve_openai_settings(model="gpt-4o")
    local = resolve_openai_settings(model="m", base_url="http://127.0.0.1:8080/v1")
    assert local.api_key.reveal() and not local.is_openai


def test_missing_model_name_says_how_to_give_one() -> None:
    with pytest.raises(ModelUnavailable, match="openai:MODEL"):
        resolve_openai_settings(base_url="http://127.0.0.1:1/v1")


def test_broken_config_file_names_the_file() -> None:
    path = write_config("model = \n")
    with pytest.raises(DefinitionError, match="not valid TOML") as caught:
        load_config()
    assert str(path) in str(caught.value)


def test_bad_numbers_are_reported_with_their_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEBOUND_TIMEOUT", "soon")
    with pytest.raises(DefinitionError, match="STATEBOUND_TIMEOUT"):
        resolve_openai_settings(model="m", base_url="http://x/v1")
    with pytest.raises(DefinitionError, match="positive"):
        resolve_openai_settings(model="m", base_url="http://x/v1", timeout=5, attempts=0)


def test_secret_hides_itself() -> None:
    secret = Secret("sk-abcdefghijklmnop")
    assert "abc" not in repr(secret) and "abc" not in str(secret) and "abc" not in f"{secret}"
    assert secret.reveal() == "sk-abcdefghijklmnop" and secret == Secret("sk-abcdefghijklmnop")
    with pytest.raises(TypeError):
        pickle.dumps(secret)


def test_redact_masks_whole_keys_and_long_prefixes() -> None:
    key = "sk-abcdefghijklmnop"
    text = f"key {key} echoed as sk-abcdefgh... and short sk-"
    masked = redact(text, Secret(key), None)
    assert key not in masked and "sk-abcdefgh" not in masked
    assert masked.endswith("short sk-")  # too short to give the key away: left alone


@pytest.mark.parametrize(
    "headers, expected",
    [({"retry-after": "2"}, 2.0), ({"retry-after-ms": "1500"}, 1.5), ({"retry-after": "junk"}, None),
     ({}, None), ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0)],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers) == expected


@pytest.mark.parametrize("text, words", [
    ("attemps = 1\n", "unknown key attemps (did you mean attempts under [openai]?)"),
    ("[opneai]\nbase_url = 'http://x/v1'\n", "unknown table [opneai] (did you mean [openai]?)"),
    ("[openai]\nattemps = 1\n", "unknown key 'attemps' in [openai] (did you mean attempts?)"),
    ("modle = 'smollm2'\n", "unknown key modle (did you mean model?)"),
    ("model = 3\n", "model must be a string"),
    ("openai = 'x'\n", "openai must be a table"),
])
def test_config_typos_are_errors_that_name_the_fix(text: str, words: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    path = write_config(text)
    for read in (load_config, default_model, lambda: resolve_openai_settings(model="m")):
        with pytest.raises(DefinitionError) as caught:
            read()
        assert words in str(caught.value) and str(path) in str(caught.value)
