import math

import pytest
import torch

from solution import recall_ndcg_at_k

L3 = 1.0 / math.log2(3.0)


def test_hand_computed_and_users_without_relevant_items_excluded():
    scores = torch.tensor([[0.9, 0.8, 0.1, 0.5], [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]])
    relevant = torch.tensor([[0, 1, 0, 1], [1, 0, 0, 0], [0, 0, 0, 0]], dtype=torch.bool)
    recall, ndcg = recall_ndcg_at_k(scores, relevant, k=2)
    # user0: top2 = items 0, 1 -> 1 hit at rank 2; recall 1/2; ndcg L3 / (1 + L3)
    # user1: top2 = items 3, 2 -> no hit; user2 excluded
    assert recall == pytest.approx(0.25)
    assert ndcg == pytest.approx((L3 / (1 + L3)) / 2)
    assert isinstance(recall, float) and isinstance(ndcg, float)


def test_recall_denominator_is_all_relevant_items():
    scores = torch.tensor([[0.9, 0.8, 0.7, 0.1]])
    relevant = torch.tensor([[True, True, False, True]])
    recall, ndcg = recall_ndcg_at_k(scores, relevant, k=2)
    assert recall == pytest.approx(2 / 3)
    assert ndcg == pytest.approx(1.0)  # IDCG uses min(k, R) = 2 positions


def test_ties_and_k_larger_than_items():
    scores = torch.tensor([[1.0, 1.0, 1.0]])
    relevant = torch.tensor([[False, False, True]])
    recall, ndcg = recall_ndcg_at_k(scores, relevant, k=1)  # tie -> item 0 first
    assert recall == 0.0 and ndcg == 0.0
    recall, ndcg = recall_ndcg_at_k(scores, relevant, k=10)
    assert recall == pytest.approx(1.0)
    assert ndcg == pytest.approx(1.0 / math.log2(4.0))


def test_errors():
    with pytest.raises(ValueError):
        recall_ndcg_at_k(torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.bool), k=1)
    with pytest.raises(ValueError):
        recall_ndcg_at_k(torch.zeros(2, 3), torch.ones(2, 4, dtype=torch.bool), k=1)
    with pytest.raises(ValueError):
        recall_ndcg_at_k(torch.zeros(2, 3), torch.ones(2, 3, dtype=torch.bool), k=0)
