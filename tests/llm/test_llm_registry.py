"""open_model names and errors, list_models, the embedded backend's pure parts, the CLI table."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from statebound.cli.app import app
from statebound.errors import DefinitionError, ModelUnavailable
from statebound.llm import model_files
from statebound.llm.base import LLM, Message, chat, complete_sync
from statebound.llm.llamacpp import LlamaCppLLM, LlamaOptions, render_transcript
from statebound.llm.registry import list_models, open_model

needs_llama = pytest.mark.skipif(model_files.llama_cpp_missing() is not None,
                                 reason="llama-cpp-python is not installed")


def test_unknown_name_suggests_the_closest() -> None:
    with pytest.raises(ModelUnavailable, match="Did you mean 'smollm2'"):
        open_model("smollm")


def test_unknown_options_are_named() -> None:
    with pytest.raises(DefinitionError, match="temprature"):
        open_model("scripted", temprature=0.5)
    with pytest.raises(DefinitionError, match="n_ctx"):
        open_model("openai:m", base_url="http://127.0.0.1:1/v1", n_ctx=10)


def test_scripted_model_replays() -> None:
    llm = open_model("scripted", replies=["yes"])
    assert isinstance(llm, LLM)
    assert complete_sync(llm, chat(("user", "ok?"))).text == "yes"


def test_default_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEBOUND_MODEL", "scripted")
    assert open_model().model == "scripted"


def test_openai_names_and_options() -> None:
    llm = open_model("openai:my-model", base_url="http://127.0.0.1:9/v1", grammar_field="grammar")
    assert llm.model == "openai:my-model"
    assert llm.capabilities.completion and llm.capabilities.grammar


@needs_llama
def test_gguf_path_must_exist_and_be_gguf(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="no GGUF file"):
        open_model(f"gguf:{tmp_path / 'missing.gguf'}")
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"not a model")
    with pytest.raises(ModelUnavailable, match="magic"):
        open_model(f"gguf:{fake}")


@needs_llama
def test_local_models_open_lazily_with_options() -> None:
    llm = open_model("smollm2", mode="completion", n_ctx=1024)
    assert isinstance(llm, LlamaCppLLM)
    assert (llm.model, llm.mode, llm.options.n_ctx) == ("smollm2", "completion", 1024)
    assert llm.path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and llm.path.is_file()
    with pytest.raises(DefinitionError, match="mode"):
        open_model("smollm2", mode="instruct")


def test_gemma_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_files, "GEMMA_PACKAGE", "statebound_no_such_package")
    model_files.gemma3_270m_path.cache_clear()
    try:
        with pytest.raises(ModelUnavailable, match=r"pip install 'statebound\[gemma\]'"):
            model_files.gemma3_270m_path()
    finally:
        model_files.gemma3_270m_path.cache_clear()


def test_list_models_reports_availability_context_and_price() -> None:
    rows = {m.name: m for m in list_models()}
    assert {"smollm2", "gemma3-270m", "gguf:PATH", "scripted"} <= set(rows)
    assert rows["openai:gpt-3.5-turbo-1106"].price.prompt_per_1k == 0.001
    assert not rows["openai:gpt-4-1106-preview"].available  # no key in the test environment
    assert "OPENAI_API_KEY" in str(rows["openai:gpt-4o"].unavailable_reason)
    assert rows["smollm2"].context == 8192
    assert rows["smollm2"].available == (model_files.llama_cpp_missing() is None)


def test_list_models_shows_the_configured_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    monkeypatch.setenv("STATEBOUND_OPENAI_MODEL", "local-llama")
    row = next(m for m in list_models() if m.name == "openai:local-llama")
    assert row.available and row.description == "http://127.0.0.1:8080/v1" and row.price is None


def test_cli_models_prints_the_table() -> None:
    result = CliRunner().invoke(app, ["models"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "smollm2" in result.output and "gpt-4-1106-preview" in result.output
    assert "$0.01/$0.03" in result.output and "$0.001/$0.002" in result.output
    assert "gemma3-270m" in result.output and "default model: smollm2" in result.output


def test_cli_models_fits_an_80_column_terminal_without_losing_columns() -> None:
    result = CliRunner().invoke(app, ["models"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    assert "openai:gpt-3.5-turbo-instruct" in result.output  # names whole, not cut with an ellipsis
    assert "$0.00015/$0.0006" in result.output and "1,047,576" in result.output
    assert "SmolLM2-135M-Instruct" in result.output  # notes move under the name


def test_cli_models_available_hides_what_cannot_run() -> None:
    result = CliRunner().invoke(app, ["models", "--available"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "scripted" in result.output and "gpt-4o" not in result.output  # no key in tests


def test_bare_openai_takes_its_model_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEBOUND_OPENAI_MODEL", "served-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert open_model("openai").model == "openai:served-model"


def test_transcript_for_base_models() -> None:
    messages = (Message("system", "Be brief."), Message("user", "Hi"), Message("assistant", "Hello"),
                Message("user", "Colour?"))
    assert render_transcript(messages) == (
        "Be brief.\n\nUser: Hi\n\nAssistant: Hello\n\nUser: Colour?\n\nAssistant:")
    partial = (*messages, Message("assistant", "Thought: it is"))
    assert render_transcript(partial).endswith("User: Colour?\n\nAssistant: Thought: it is")


def test_threads_from_option_environment_or_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    assert LlamaOptions(n_threads=3).threads() == 3
    monkeypatch.setenv("STATEBOUND_THREADS", "1")
    assert LlamaOptions().threads() == 1
    monkeypatch.setenv("STATEBOUND_THREADS", "many")
    with pytest.raises(DefinitionError, match="STATEBOUND_THREADS"):
        LlamaOptions().threads()
    monkeypatch.delenv("STATEBOUND_THREADS")
    assert LlamaOptions().threads() >= 1


def test_flash_attention_and_sharing_from_option_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STATEBOUND_LLAMA_FLASH_ATTN", raising=False)
    monkeypatch.delenv("STATEBOUND_LLAMA_SHARING", raising=False)
    assert (LlamaOptions().flashes(), LlamaOptions().shares()) == (False, True)  # as the records were made
    monkeypatch.setenv("STATEBOUND_LLAMA_FLASH_ATTN", "1")
    monkeypatch.setenv("STATEBOUND_LLAMA_SHARING", "0")
    assert (LlamaOptions().flashes(), LlamaOptions().shares()) == (True, False)
    assert LlamaOptions(flash_attn=False, sharing=True).flashes() is False
    monkeypatch.setenv("STATEBOUND_LLAMA_FLASH_ATTN", "yes")
    with pytest.raises(DefinitionError, match="STATEBOUND_LLAMA_FLASH_ATTN"):
        LlamaOptions().flashes()
    with pytest.raises(DefinitionError, match="flash_attn must be true or false, not 'on'"):
        open_model("smollm2", flash_attn="on")
