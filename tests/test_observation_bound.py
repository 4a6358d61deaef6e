"""The one bound every environment puts on its observations (statebound.envs.observation)."""

from __future__ import annotations

import pytest

from statebound.envs.observation import DEFAULT_MAX_OBSERVATION_CHARS, bound_observation
from statebound.envs.qa import QAEnvironment, QAItem
from statebound.envs.qa.corpus import Corpus


def test_short_text_is_kept_whole() -> None:
    assert bound_observation("abc", 3) == "abc"
    assert bound_observation("x" * 10**6, None) == "x" * 10**6


def test_long_text_keeps_its_start_and_says_how_much_was_cut() -> None:
    text = "a" * 1000 + "b" * 29_000
    bounded = bound_observation(text)
    assert bounded.startswith("a" * 1000 + "b" * (DEFAULT_MAX_OBSERVATION_CHARS - 1000))
    assert bounded.endswith(f"[observation cut: 10,000 of 30,000 characters not shown; "
                            f"the limit is {DEFAULT_MAX_OBSERVATION_CHARS:,}]")
    assert len(bounded) < DEFAULT_MAX_OBSERVATION_CHARS + 100


def test_a_negative_limit_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least 0"):
        bound_observation("abc", -1)


def test_qa_tool_observations_are_bounded() -> None:
    page = "Milhouse " * 20_000  # one 180,000-character paragraph
    env = QAEnvironment(items=[QAItem(id="q", question="Who?", answer="x")], tools=("Search",),
                        corpus=Corpus.from_mapping({"Milhouse": [page]}))
    env.reset("q")
    step = env.step("Search[Milhouse]")
    assert step.ok and step.observation.startswith("Milhouse Milhouse")
    assert "[observation cut:" in step.observation
    assert len(step.observation) < DEFAULT_MAX_OBSERVATION_CHARS + 100
