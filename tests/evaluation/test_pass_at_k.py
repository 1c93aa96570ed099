"""The unbiased pass@k estimator against hand-computed values."""

from __future__ import annotations

from math import comb

import pytest

from curator.evaluation.pass_at_k import mean_pass_at_k, pass_at_k


def test_n10_c3():
    # pass@1 = c/n; pass@5 = 1 - C(7,5)/C(10,5) = 1 - 21/252 = 0.91666...
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(10, 3, 5) == pytest.approx(0.9167, abs=5e-5)
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)
    assert pass_at_k(10, 3, 10) == 1.0


def test_edges():
    assert pass_at_k(10, 0, 1) == 0.0
    assert pass_at_k(10, 0, 10) == 0.0
    assert pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(1, 1, 1) == 1.0
    assert pass_at_k(5, 1, 5) == 1.0  # n - c < k: every draw of 5 contains the pass
    assert pass_at_k(2, 1, 1) == 0.5


@pytest.mark.parametrize("n,c,k", [(20, 7, 3), (15, 2, 10), (10, 9, 2), (6, 0, 6)])
def test_matches_definition(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_rejects_impossible_counts():
    with pytest.raises(ValueError):
        pass_at_k(5, 6, 1)
    with pytest.raises(ValueError):
        pass_at_k(5, 2, 6)
    with pytest.raises(ValueError):
        pass_at_k(5, 2, 0)


def test_mean_uses_only_problems_with_enough_samples():
    counts = [(10, 3), (1, 1), (5, 0)]
    value, used = mean_pass_at_k(counts, 1)
    assert used == 3 and value == pytest.approx((0.3 + 1.0 + 0.0) / 3)
    value, used = mean_pass_at_k(counts, 5)
    assert used == 2 and value == pytest.approx((1 - 21 / 252 + 0.0) / 2)
    value, used = mean_pass_at_k(counts, 10)
    assert used == 1 and value == pytest.approx(1.0)
    assert mean_pass_at_k([(3, 1)], 5) is None


def test_bad_counts_name_the_numbers():
    with pytest.raises(ValueError, match=r"need 0 <= c <= n, got n=3, c=4"):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError, match=r"need 1 <= k <= n, got n=3, k=5"):
        pass_at_k(3, 1, 5)
