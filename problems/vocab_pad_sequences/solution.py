from collections import Counter

import torch

PAD, UNK = "<pad>", "<unk>"


def encode_and_pad(texts, min_freq=1, max_len=None):
    if min_freq < 1:
        raise ValueError("min_freq must be at least 1")
    if max_len is not None and max_len < 1:
        raise ValueError("max_len must be at least 1 or None")
    tokenised = [text.lower().split() for text in texts]
    counts = Counter(token for tokens in tokenised for token in tokens)
    kept = sorted((tok for tok, n in counts.items() if n >= min_freq), key=lambda t: (-counts[t], t))
    vocab = {PAD: 0, UNK: 1}
    for token in kept:
        vocab[token] = len(vocab)
    sequences = [[vocab.get(tok, 1) for tok in tokens] for tokens in tokenised]
    if max_len is not None:
        sequences = [seq[:max_len] for seq in sequences]
    length = max((len(seq) for seq in sequences), default=0)
    input_ids = torch.zeros(len(sequences), length, dtype=torch.long)
    attention_mask = torch.zeros(len(sequences), length, dtype=torch.long)
    for row, seq in enumerate(sequences):
        if seq:
            input_ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            attention_mask[row, : len(seq)] = 1
    return vocab, input_ids, attention_mask
