import pytest
import torch

from solution import MFRecommender


def _set_weights(model):
    with torch.no_grad():
        model.user_emb.weight.copy_(torch.tensor([[1.0, 2.0], [0.5, -1.0]]))
        model.item_emb.weight.copy_(torch.tensor([[3.0, 0.0], [1.0, 1.0], [-2.0, 4.0]]))
        model.user_bias.weight.copy_(torch.tensor([[0.1], [0.2]]))
        model.item_bias.weight.copy_(torch.tensor([[1.0], [2.0], [3.0]]))
        model.global_bias.fill_(0.5)


def test_hand_computed_predictions():
    model = MFRecommender(2, 3, 2)
    _set_weights(model)
    pred = model(torch.tensor([0, 1, 0]), torch.tensor([1, 2, 0]))
    # (1*1 + 2*1) + 0.1 + 2 + 0.5 ; (0.5*-2 + -1*4) + 0.2 + 3 + 0.5 ; 3 + 0.1 + 1 + 0.5
    assert pred.shape == (3,)
    assert torch.allclose(pred, torch.tensor([5.6, -1.3, 4.6]))


def test_initialisation():
    torch.manual_seed(0)
    model = MFRecommender(400, 300, 16)
    assert model.global_bias.shape == ()
    assert torch.equal(model.user_bias.weight, torch.zeros(400, 1))
    assert torch.equal(model.item_bias.weight, torch.zeros(300, 1))
    assert 0.009 < model.user_emb.weight.std().item() < 0.011
    assert 0.009 < model.item_emb.weight.std().item() < 0.011


def test_batch_of_one_and_empty_keep_shape():
    model = MFRecommender(2, 3, 2)
    _set_weights(model)
    one = model(torch.tensor([1]), torch.tensor([1]))
    assert one.shape == (1,)
    assert torch.allclose(one, torch.tensor([0.5 - 1.0 + 0.2 + 2.0 + 0.5]))
    empty = model(torch.zeros(0, dtype=torch.long), torch.zeros(0, dtype=torch.long))
    assert empty.shape == (0,)


def test_gradients_only_for_used_rows():
    torch.manual_seed(1)
    model = MFRecommender(4, 5, 3)
    model(torch.tensor([2]), torch.tensor([4])).sum().backward()
    user_grad = model.user_emb.weight.grad
    assert user_grad[2].abs().sum() > 0
    assert user_grad[[0, 1, 3]].abs().sum() == 0
    assert model.item_bias.weight.grad[4, 0] == 1.0
    assert model.global_bias.grad.item() == 1.0


def test_errors():
    with pytest.raises(ValueError):
        MFRecommender(0, 3, 2)
    model = MFRecommender(2, 3, 2)
    with pytest.raises(ValueError):
        model(torch.tensor([0, 1]), torch.tensor([0]))
    with pytest.raises(ValueError):
        model(torch.tensor([[0]]), torch.tensor([[0]]))
