from __future__ import annotations

from collections import Counter

import pytest

from statebound.envs.sql.reward import informative, shared_in_order, sql_reward


def test_identical_rows_score_one() -> None:
    assert sql_reward([(1,), (2,), (3,)], [(1,), (2,), (3,)]) == 1.0


def test_both_empty_score_one() -> None:
    assert sql_reward([], []) == 1.0


def test_one_side_empty_scores_zero() -> None:
    assert sql_reward([], [(1,)]) == 0.0
    assert sql_reward([(1,)], []) == 0.0


def test_error_or_no_result_scores_zero() -> None:
    assert sql_reward(None, [(1,)]) == 0.0
    assert sql_reward("Error executing query: boom", [(1,)]) == 0.0  # type: ignore[arg-type]


def test_reversed_order_gives_negative_tau() -> None:
    # IoU 1, tau of a full reversal is -1
    assert sql_reward([(3,), (2,), (1,)], [(1,), (2,), (3,)]) == -1.0


def test_partial_overlap_with_order_swap() -> None:
    # agent (1,2), gold (2,1,3): IoU = 2/3; shared in own order: [1,2] vs [2,1] -> tau -1
    assert sql_reward([(1,), (2,)], [(2,), (1,), (3,)]) == -0.67


def test_duplicates_count_as_a_multiset() -> None:
    # agent has (1,) twice, gold once: intersection 1, union 2; a single shared row: tau NaN
    assert sql_reward([(1,), (1,)], [(1,)]) == 0.5


def test_single_shared_row_leaves_iou_unrounded() -> None:
    # IoU 1/3 is not rounded when tau is undefined (one shared row)
    assert sql_reward([(1,)], [(1,), (2,), (3,)]) == pytest.approx(1 / 3)


def test_ties_make_tau_undefined_and_keep_iou() -> None:
    # all shared rows identical: every pair tied, tau is NaN, reward is the IoU 2/3
    assert sql_reward([("a",), ("a",)], [("a",), ("a",), ("b",)]) == pytest.approx(2 / 3)


def test_partial_tau_is_rounded_to_two_decimals() -> None:
    # same rows, one adjacent swap among 4: tau = (5 - 1) / 6 = 0.666.. -> 0.67
    assert sql_reward([(1,), (2,), (4,), (3,)], [(1,), (2,), (3,), (4,)]) == 0.67


def test_rows_compare_as_python_strings() -> None:
    # 1 and 1.0 are different strings, so they do not match
    assert sql_reward([(1,)], [(1.0,)]) == 0.0


def test_shared_in_order_keeps_own_order_and_counts() -> None:
    assert shared_in_order(["b", "a", "b", "c", "b"], Counter({"b": 2, "a": 1})) == ["b", "a", "b"]


def test_a_gold_result_of_nothing_is_not_informative() -> None:
    # what a query that finds nothing returns: no rows, or one row of a count of 0 and NULL aggregates
    assert not informative([]) and not informative(None) and not informative([(0,)]) and not informative([(0, None)])
    assert informative([(0, "Aberdeen")]) and informative([(3,)]) and informative([("",)])
    assert informative([(None,), (None,)])  # two rows: a query that finds nothing returns at most one
    assert sql_reward([(None,)], [(None,), (None,)]) < 1
