"""How a pick's candidates are cut into batches (no model needed)."""

from __future__ import annotations

from statebound.llm.llama_batch import GROUP, _groups


def test_candidates_are_cut_in_order_within_the_token_budget() -> None:
    assert _groups([0, 1, 2, 3, 4], [10, 10, 70, 5, 5], 20) == [[0, 1], [2], [3, 4]]
    assert _groups([], [], 20) == []


def test_a_batch_holds_at_most_the_free_sequence_ids() -> None:
    many = list(range(GROUP + 5))
    assert [len(g) for g in _groups(many, [1] * len(many), 10_000)] == [GROUP, 5]
