import math

import pytest
import torch

from solution import recommend_top_k

USERS = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
ITEMS = torch.tensor([[3.0, 1.0], [1.0, 2.0], [2.0, 2.0], [0.0, 0.5]])
# scores: user0 -> [3, 1, 2, 0], user1 -> [1, 2, 2, 0.5]


def test_hand_computed_without_exclusions():
    idx, scores = recommend_top_k(USERS, ITEMS, k=2)
    assert idx.dtype == torch.long and scores.dtype == torch.float32
    assert idx.tolist() == [[0, 2], [1, 2]]  # user1 tie 2 vs 2 -> lower index first
    assert scores.tolist() == [[3.0, 2.0], [2.0, 2.0]]


def test_seen_items_are_excluded_and_inputs_untouched():
    seen = torch.tensor([[True, False, False, False], [False, True, False, True]])
    before = seen.clone()
    idx, scores = recommend_top_k(USERS, ITEMS, k=3, seen=seen)
    assert idx.tolist() == [[2, 1, 3], [2, 0, -1]]
    assert scores[0].tolist() == [2.0, 1.0, 0.0]
    assert scores[1, :2].tolist() == [2.0, 1.0] and scores[1, 2].item() == -math.inf
    assert torch.equal(seen, before)


def test_k_larger_than_catalogue_pads():
    idx, scores = recommend_top_k(USERS[:1], ITEMS[:2], k=4)
    assert idx.shape == (1, 4)
    assert idx.tolist() == [[0, 1, -1, -1]]
    assert scores[0, 2:].tolist() == [-math.inf, -math.inf]


def test_all_seen_and_no_grad():
    user = torch.tensor([[1.0, 1.0]], requires_grad=True)
    idx, scores = recommend_top_k(user, ITEMS, k=2, seen=torch.ones(1, 4, dtype=torch.bool))
    assert idx.tolist() == [[-1, -1]]
    assert not scores.requires_grad
    assert torch.isinf(scores).all()


def test_errors():
    with pytest.raises(ValueError):
        recommend_top_k(USERS, torch.zeros(4, 3), k=1)
    with pytest.raises(ValueError):
        recommend_top_k(USERS, ITEMS, k=0)
    with pytest.raises(ValueError):
        recommend_top_k(USERS, ITEMS, k=1, seen=torch.zeros(2, 3, dtype=torch.bool))
