import pytest
import torch

from solution import encode_and_pad


def test_hand_computed_batch():
    vocab, ids, mask = encode_and_pad(["the cat sat", "The  dog", ""])
    assert vocab == {"<pad>": 0, "<unk>": 1, "the": 2, "cat": 3, "dog": 4, "sat": 5}
    assert ids.dtype == torch.long and mask.dtype == torch.long
    assert torch.equal(ids, torch.tensor([[2, 3, 5], [2, 4, 0], [0, 0, 0]]))
    assert torch.equal(mask, torch.tensor([[1, 1, 1], [1, 1, 0], [0, 0, 0]]))


def test_frequency_order_and_min_freq():
    texts = ["b a b", "c a b", "d"]
    vocab, ids, mask = encode_and_pad(texts)
    # counts: b=3, a=2, c=1, d=1
    assert [vocab[t] for t in ["b", "a", "c", "d"]] == [2, 3, 4, 5]
    vocab2, ids2, mask2 = encode_and_pad(texts, min_freq=2)
    assert vocab2 == {"<pad>": 0, "<unk>": 1, "b": 2, "a": 3}
    assert torch.equal(ids2, torch.tensor([[2, 3, 2], [1, 3, 2], [1, 0, 0]]))
    assert torch.equal(mask2, torch.tensor([[1, 1, 1], [1, 1, 1], [1, 0, 0]]))


def test_max_len_truncates_but_counts_all_tokens():
    vocab, ids, mask = encode_and_pad(["x z z z", "y"], max_len=2)
    # z is counted three times even though truncation keeps only one of them
    assert vocab == {"<pad>": 0, "<unk>": 1, "z": 2, "x": 3, "y": 4}
    assert ids.shape == (2, 2)
    assert torch.equal(ids, torch.tensor([[3, 2], [4, 0]]))
    assert torch.equal(mask, torch.tensor([[1, 1], [1, 0]]))


def test_empty_inputs():
    vocab, ids, mask = encode_and_pad([])
    assert vocab == {"<pad>": 0, "<unk>": 1}
    assert ids.shape == (0, 0) and mask.shape == (0, 0)
    _, ids, mask = encode_and_pad(["", "   "])
    assert ids.shape == (2, 0) and mask.shape == (2, 0)
    assert ids.dtype == torch.long


def test_errors():
    with pytest.raises(ValueError):
        encode_and_pad(["a"], min_freq=0)
    with pytest.raises(ValueError):
        encode_and_pad(["a"], max_len=0)
