"""Near-duplicate code: Jaccard similarity of token shingles over normalised code.

Normalising makes renamed and reformatted copies look the same: comments go, strings
(docstrings included) become one token, local names (variables, arguments, function and
class names) become numbered placeholders, while keywords, builtins, imported names and
attribute names (the APIs called) are kept. Whitespace is ignored. The token sequence is
cut into overlapping shingles.

Comparing every pair is quadratic, so for larger sets MinHash signatures with banded
locality-sensitive hashing (datasketch's MinHash and MinHashLSH, with bands and rows
chosen here so a pair at the threshold is missed with probability <= MISS) pick the
candidate pairs and only those get the exact Jaccard. Hashing is CRC32-based and the
permutations use a fixed seed, so the same input always gives the same pairs.
"""

from __future__ import annotations

import builtins
import keyword
import re
import zlib
from dataclasses import dataclass

import numpy as np

SHINGLE = 4
PERMUTATIONS = 128
SEED = 20240920    # the MinHash permutations
MISS = 1e-4        # LSH may miss a pair at the threshold with at most this probability
EXACT_BELOW = 300   # compare every pair below this many fingerprints


_STRING = re.compile(r"""(?s)[rRbBuUfF]{0,2}(\"\"\".*?\"\"\"|\'\'\'.*?\'\'\'|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')""")
_COMMENT = re.compile(r"#[^\n]*")
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|==|!=|<=|>=|\*\*|//|->|\S")
_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+)?import\s+(\([^)]*\)|[^\n]+)", re.MULTILINE)
_KEEP = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls"}


def _imported_names(code: str) -> set[str]:
    names = set()
    for module, items in _IMPORT.findall(code):
        if module:
            names.add(module.split(".")[0])
        names.update(word.split(".")[0] for word in re.findall(r"[\w.]+", items)
                     if word != "as")
    return names


def tokens(code: str) -> list[str]:
    """The normalised token sequence of some code.

    Docstrings and comments go, other strings become one `str` token; identifiers
    other than keywords, builtins, imported names and attributes (`x.attr`) become
    numbered placeholders in order of first appearance.
    """
    keep = _KEEP | _imported_names(code)
    text = _COMMENT.sub("", _STRING.sub(" str ", code))
    names: dict[str, str] = {}
    out = []
    previous = ""
    for token in _TOKEN.findall(text):
        if token == "str" and previous in ("", ":"):
            continue  # a docstring (or a string right after a colon: noise either way)
        if (token[0].isalpha() or token[0] == "_") and token not in keep and previous != ".":
            token = names.setdefault(token, f"v{len(names)}")
        out.append(token)
        previous = token
    return out


_TOKEN_HASHES: dict[str, int] = {}


def _token_hash(token: str) -> int:
    value = _TOKEN_HASHES.get(token)
    if value is None:
        value = _TOKEN_HASHES[token] = zlib.crc32(token.encode("utf-8"))
        if len(_TOKEN_HASHES) > 200_000:  # keep the memo bounded (hashes are pure)
            _TOKEN_HASHES.clear()
    return value


def fingerprint(code: str) -> frozenset[int]:
    """The set of shingle hashes of some code (empty when there is nothing to compare).

    A shingle is SHINGLE consecutive tokens; its hash is a polynomial over the tokens'
    CRC32s, folded to 32 bits (deterministic across processes, unlike hash()).
    """
    seq = tokens(code or "")
    if not seq:
        return frozenset()
    ids = np.fromiter((_token_hash(t) for t in seq), dtype=np.uint64, count=len(seq))
    if len(ids) < SHINGLE:
        ids = np.concatenate([ids, np.zeros(SHINGLE - len(ids), dtype=np.uint64)])
    width = len(ids) - SHINGLE + 1
    mixed = np.zeros(width, dtype=np.uint64)
    for offset in range(SHINGLE):
        mixed = mixed * np.uint64(0x100000001B3) + ids[offset:offset + width]
    folded = (mixed ^ (mixed >> np.uint64(32))) & np.uint64(0xFFFFFFFF)
    return frozenset(np.unique(folded).tolist())


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    similarity: float


def _minhashes(prints: list[frozenset[int]]) -> list:
    from datasketch import MinHash  # here: it imports scipy, a quarter second per command

    # The shingle hashes are already 32-bit values: datasketch mixes and permutes them.
    return MinHash.bulk((sorted(fp) for fp in prints), num_perm=PERMUTATIONS, seed=SEED,
                        hashfunc=int)


def _rows_per_band(threshold: float) -> int:
    """The most rows per band (fewest false candidates) that still finds a pair at the
    threshold with probability >= 1 - MISS."""
    for rows in range(16, 0, -1):
        bands = PERMUTATIONS // rows
        if 1 - (1 - max(threshold, 0.0) ** rows) ** bands >= 1 - MISS:
            return rows
    return 1


def _candidates(prints: list[frozenset[int]], threshold: float) -> list[tuple[int, int]]:
    """Pairs that share a band of their MinHash signatures and whose estimate is close."""
    from datasketch import MinHashLSH

    minhashes = _minhashes(prints)
    rows = _rows_per_band(threshold)
    # Our own bands and rows, not datasketch's choice from weights: a pair at the
    # threshold is missed with probability <= MISS.
    lsh = MinHashLSH(num_perm=PERMUTATIONS, params=(PERMUTATIONS // rows, rows))
    with lsh.insertion_session() as session:
        for index, minhash in enumerate(minhashes):
            session.insert(index, minhash, check_duplication=False)
    out = []
    for i, minhash in enumerate(minhashes):
        for j in sorted(lsh.query(minhash)):
            # The share of equal MinHash values estimates the Jaccard similarity; its
            # standard error at 128 permutations is <= 0.045, so 0.15 of slack loses
            # nothing.
            if j > i and minhash.jaccard(minhashes[j]) >= threshold - 0.15:
                out.append((i, j))
    return out


def near_duplicates(prints: dict[str, frozenset[int]], threshold: float) -> list[Pair]:
    """Every pair of keys whose fingerprints have Jaccard similarity >= threshold."""
    keys = sorted(k for k, fp in prints.items() if fp)
    fps = [prints[k] for k in keys]
    if len(keys) < EXACT_BELOW:
        candidates = [(i, j) for i in range(len(keys)) for j in range(i + 1, len(keys))]
    else:
        candidates = _candidates(fps, threshold)
    pairs = []
    for i, j in candidates:
        similarity = jaccard(fps[i], fps[j])
        if similarity >= threshold:
            pairs.append(Pair(keys[i], keys[j], round(similarity, 4)))
    return pairs
