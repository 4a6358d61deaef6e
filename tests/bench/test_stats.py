import pytest

from statebound.errors import DefinitionError
from statebound.report.stats import mcnemar_exact, paired_bootstrap, wilson_interval


def test_wilson_matches_hand_computation():
    # 8 of 10, z = 1.959964: centre 0.647362, half-width 0.226577
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)


def test_wilson_edges():
    low, high = wilson_interval(0, 20)
    assert low == pytest.approx(0.0, abs=1e-12)
    assert high == pytest.approx(3.8415 / (20 + 3.8415), abs=1e-4)  # z^2 / (n + z^2)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(DefinitionError):
        wilson_interval(5, 3)


def test_mcnemar_exact_two_sided():
    # discordant: A-only 1, B-only 6 -> p = 2 * (C(7,0) + C(7,1)) / 2^7 = 16/128
    a = [True] * 3 + [True] + [False] * 6 + [False] * 2
    b = [True] * 3 + [False] + [True] * 6 + [False] * 2
    result = mcnemar_exact(a, b)
    assert (result.only_a, result.only_b) == (1, 6)
    assert result.p_value == pytest.approx(0.125)
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0


def test_mcnemar_rejects_unpaired():
    with pytest.raises(DefinitionError):
        mcnemar_exact([True], [True, False])


def test_paired_bootstrap_constant_difference_has_degenerate_interval():
    result = paired_bootstrap([1.0, 0.5, 0.7], [0.8, 0.3, 0.5], resamples=500)
    assert result.mean_difference == pytest.approx(0.2)
    assert result.low == pytest.approx(0.2) and result.high == pytest.approx(0.2)
    assert result.p_value == 0.0


def test_paired_bootstrap_interval_and_seed():
    a = [1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    b = [0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    first = paired_bootstrap(a, b, seed=3)
    assert first.mean_difference == pytest.approx(3 / 8)
    assert 0.0 <= first.low < 3 / 8 < first.high <= 1.0
    assert first.p_value < 0.5
    assert paired_bootstrap(a, b, seed=3) == first
    assert paired_bootstrap(a, a).p_value == 1.0
