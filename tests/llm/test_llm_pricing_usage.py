"""Prices, cost arithmetic and the usage meter."""

from __future__ import annotations

import pytest

from statebound.llm.base import Usage, chat
from statebound.llm.pricing import PRICES, cost, is_priced, price_for, register_price
from statebound.llm.testing import ScriptedLLM
from statebound.llm.usage import MeteredLLM, UsageMeter


def test_the_papers_prices() -> None:
    usage = Usage(prompt_tokens=1000, completion_tokens=1000, calls=1)
    assert cost("gpt-3.5-turbo-1106", usage) == pytest.approx(0.001 + 0.002)
    assert cost("gpt-4-1106-preview", usage) == pytest.approx(0.01 + 0.03)
    assert price_for("gpt-4-turbo-1106") == price_for("gpt-4-1106-preview")


def test_cost_scales_with_tokens_and_ignores_prefix_and_snapshot_date() -> None:
    usage = Usage(prompt_tokens=2500, completion_tokens=500)
    expected = 2.5 * 0.00015 + 0.5 * 0.0006
    assert cost("gpt-4o-mini", usage) == pytest.approx(expected)
    assert cost("openai:gpt-4o-mini", usage) == pytest.approx(expected)
    assert cost("openai:gpt-4o-mini-2024-07-18", usage) == pytest.approx(expected)


def test_local_models_are_free_and_known() -> None:
    usage = Usage(prompt_tokens=10_000, completion_tokens=10_000)
    for model in ("smollm2", "gemma3-270m", "gguf:/models/x.gguf", "scripted"):
        assert is_priced(model) and cost(model, usage) == 0.0


def test_unknown_models_cost_zero_and_say_so() -> None:
    assert cost("mystery-model", Usage(1000, 1000)) == 0.0
    assert price_for("mystery-model") is None and not is_priced("openai:mystery-model")


def test_register_price(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PRICES, "placeholder", PRICES["gpt-4o"])  # restored afterwards
    register_price("placeholder", prompt_per_1k=1.0, completion_per_1k=2.0)
    assert cost("placeholder", Usage(500, 250)) == pytest.approx(0.5 + 0.5)
    with pytest.raises(ValueError):
        register_price("placeholder", prompt_per_1k=-1, completion_per_1k=0)


def test_meter_totals_by_label_and_model() -> None:
    meter = UsageMeter()
    meter.record("gpt-3.5-turbo-1106", Usage(1000, 100, 1), label="Solve")
    meter.record("gpt-3.5-turbo-1106", Usage(500, 50, 1), label="Error")
    meter.record("mystery", Usage(10, 10, 1), label="Solve")
    assert meter.total == Usage(1510, 160, 3)
    assert meter.by_label() == {"Solve": Usage(1010, 110, 2), "Error": Usage(500, 50, 1)}
    assert set(meter.by_model()) == {"gpt-3.5-turbo-1106", "mystery"}
    assert meter.cost == pytest.approx(1.5 * 0.001 + 0.15 * 0.002)
    assert meter.cost_by_label()["Error"] == pytest.approx(0.0006)
    assert meter.unpriced == {"mystery"}
    assert meter.known_cost is None  # an unknown price makes the total unknown, not smaller


def test_known_cost_is_the_total_when_every_model_has_a_price() -> None:
    meter = UsageMeter()
    assert meter.known_cost == 0.0  # no call, nothing spent
    meter.record("gpt-4o-mini", Usage(1000, 1000, 1))
    meter.record("smollm2", Usage(5000, 5000, 1))
    assert meter.known_cost == pytest.approx(0.00015 + 0.0006)


async def test_metered_llm_records_every_call_under_its_label() -> None:
    meter = UsageMeter()
    llm = MeteredLLM(ScriptedLLM(["one two", "three"]), meter, label="Init")
    await llm.complete(chat(("user", "a b c")))
    await llm.labelled("Solve").complete(chat(("user", "d")))
    assert [(r.label, r.usage) for r in meter.records] == [
        ("Init", Usage(3, 2, 1)), ("Solve", Usage(1, 1, 1)),
    ]
    assert llm.model == "scripted" and llm.capabilities.logprobs
