"""A model's price from a model option or the config file's [prices] table, per million tokens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from statebound import CallLLM, Flow, Instruction, State, always, open_model
from statebound.errors import DefinitionError
from statebound.llm.base import Usage
from statebound.llm.pricing import FREE, PRICES, Price, parse_price, price_for
from statebound.llm.registry import check_model


@pytest.fixture(autouse=True)
def _prices_restored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("STATEBOUND_CONFIG", str(tmp_path / "none.toml"))
    saved = dict(PRICES)
    yield
    PRICES.clear()
    PRICES.update(saved)


@pytest.mark.parametrize("given", ["0.15,0.6", " 0.15 , 0.6 ", [0.15, 0.6], {"prompt": 0.15, "completion": 0.6}])
def test_a_price_per_million_tokens_in_every_form(given: object) -> None:
    price = parse_price(given, where="here")
    assert price.of(Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)) == pytest.approx(0.75)


@pytest.mark.parametrize("given", ["free", "FREE", 0, 0.0])
def test_free(given: object) -> None:
    assert parse_price(given, where="here") == FREE


@pytest.mark.parametrize("given", ["0.1", "a,b", "-1,2", "1,inf", [1], True, {"prompt": 1}, None, "1,2,3"])
def test_a_value_that_is_not_a_price_is_refused_naming_where_it_came_from(given: object) -> None:
    with pytest.raises(DefinitionError, match=r"here: .* is not a price; a price is 'free'"):
        parse_price(given, where="here")


def _cost_of_a_run(llm: object) -> float | None:
    flow = Flow(name="priced", initial="Ask", states=[
        State("Ask", outputs=[Instruction("say hi"), CallLLM()], transitions=[(always(), "End")]),
        State("End", final=True)])
    return flow.run_sync("a task", llm=llm).cost  # type: ignore[arg-type]


def test_the_price_option_prices_the_models_calls() -> None:
    llm = open_model("function:statebound.benchmarks.toy:oracle", price="2,4")
    assert price_for(llm.model) == Price.per_million(2, 4)
    result_cost = _cost_of_a_run(llm)
    assert result_cost is not None and result_cost > 0


def test_an_unknown_server_model_is_unpriced_until_declared_free(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert price_for("openai:my-local") is None
    config = tmp_path / "config.toml"
    config.write_text('[prices]\n"openai:my-local" = "free"\n"openai:other" = [1, 2]\n', encoding="utf-8")
    monkeypatch.setenv("STATEBOUND_CONFIG", str(config))
    llm = open_model("openai:my-local", base_url="http://127.0.0.1:9/v1")
    assert llm.model == "openai:my-local" and price_for(llm.model) == FREE


def test_a_bad_price_in_the_config_file_names_the_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[prices]\n"openai:x" = "cheap"\n', encoding="utf-8")
    monkeypatch.setenv("STATEBOUND_CONFIG", str(config))
    with pytest.raises(DefinitionError, match=r"\[prices\] 'openai:x'.*'cheap' is not a price"):
        open_model("scripted")


def test_a_bad_price_option_stops_the_check_before_a_run() -> None:
    with pytest.raises(DefinitionError, match="model option price of scripted: 'x' is not a price"):
        check_model("scripted", price="x")


def test_statebound_eval_costs_episodes_at_the_price_option(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from statebound.bench.store import RunStore
    from statebound.cli.app import app

    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "toy", "-a", "direct", "-m", "function:statebound.benchmarks.toy:oracle",
                                      "--model-option", "price=1000,2000", "--limit", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    with RunStore(out, create=False, read_only=True) as store:
        episodes = store.results()
    assert episodes and all(e.cost_usd == pytest.approx((e.prompt_tokens * 1000 + e.completion_tokens * 2000) / 1e6)
                            for e in episodes)
