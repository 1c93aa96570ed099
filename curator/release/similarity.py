"""Near-duplicate code: Jaccard similarity of token shingles over a normalised AST.

Normalising makes renamed copies look the same: docstrings are dropped, local names
(variables, arguments, function and class names) become numbered placeholders, while
imported names, builtins and attribute names (the APIs called) are kept. The code is
then a sequence of node-type and name tokens, cut into overlapping shingles.

Comparing every pair is quadratic, so for larger sets MinHash signatures with banded
locality-sensitive hashing pick the candidate pairs and only those get the exact
Jaccard. Hashing is CRC32-based and the permutations use a fixed seed, so the same
input always gives the same pairs.
"""

from __future__ import annotations

import ast
import builtins
import zlib
from dataclasses import dataclass

import numpy as np

SHINGLE = 4
PERMUTATIONS = 128
BANDS = 32          # 32 bands x 4 rows: a pair at Jaccard 0.8 is a candidate with p > 0.9999
EXACT_BELOW = 300   # compare every pair below this many fingerprints
_BUILTINS = frozenset(dir(builtins))


class _Tokens(ast.NodeVisitor):
    def __init__(self, keep: set[str]):
        self.keep = keep
        self.names: dict[str, str] = {}
        self.out: list[str] = []

    def name(self, identifier: str) -> str:
        if identifier in self.keep or identifier in _BUILTINS:
            return identifier
        if identifier not in self.names:
            self.names[identifier] = f"v{len(self.names)}"
        return self.names[identifier]

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
            self.out.append(type(node).__name__)
            self.out.append(self.name(node.name))
        elif isinstance(node, ast.Name):
            self.out.append(self.name(node.id))
            return
        elif isinstance(node, ast.arg):
            self.out.append(self.name(node.arg))
        elif isinstance(node, ast.Attribute):
            self.out.append("." + node.attr)
        elif isinstance(node, ast.Constant):
            value = node.value
            self.out.append(repr(value)[:24] if not isinstance(value, str) else "str")
            return
        elif isinstance(node, (ast.Load, ast.Store, ast.Del)):
            return
        else:
            self.out.append(type(node).__name__)
        super().generic_visit(node)


def tokens(code: str) -> list[str]:
    """The normalised token sequence of some code ([] when it does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    keep = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            keep.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            keep.update(a.asname or a.name for a in node.names)
    visitor = _Tokens(keep)
    visitor.visit(tree)
    return visitor.out


def fingerprint(code: str) -> frozenset[int]:
    """The set of shingle hashes of some code (empty when there is nothing to compare)."""
    seq = tokens(code)
    if not seq:
        return frozenset()
    if len(seq) < SHINGLE:
        return frozenset({zlib.crc32("\x1f".join(seq).encode())})
    return frozenset(zlib.crc32("\x1f".join(seq[i:i + SHINGLE]).encode())
                     for i in range(len(seq) - SHINGLE + 1))


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    similarity: float


def _signatures(prints: list[frozenset[int]]) -> np.ndarray:
    rng = np.random.default_rng(20240920)
    # Multiply-shift hashing: (a*x + b) mod 2^64, high 32 bits; a odd. uint64 arrays wrap.
    a = rng.integers(0, 1 << 63, size=PERMUTATIONS, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    b = rng.integers(0, 1 << 63, size=PERMUTATIONS, dtype=np.uint64)
    signatures = np.empty((len(prints), PERMUTATIONS), dtype=np.uint64)
    for index, fp in enumerate(prints):
        values = np.fromiter(fp, dtype=np.uint64, count=len(fp))
        signatures[index] = ((a[:, None] * values[None, :] + b[:, None])
                             >> np.uint64(32)).min(axis=1)
    return signatures


def _candidates(prints: list[frozenset[int]], threshold: float) -> list[tuple[int, int]]:
    """Pairs that share a band of their MinHash signatures and whose estimate is close."""
    n = len(prints)
    signatures = _signatures(prints)
    rows = PERMUTATIONS // BANDS
    found = []
    for band in range(BANDS):
        keys = np.ascontiguousarray(signatures[:, band * rows:(band + 1) * rows]).view(
            np.dtype((np.void, 8 * rows))).ravel()
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        sizes = np.diff(np.r_[starts, n])
        for start, size in zip(starts[sizes > 1], sizes[sizes > 1]):
            members = np.sort(order[start:start + size])
            i, j = np.triu_indices(size, k=1)
            found.append(members[i].astype(np.int64) * n + members[j])
    if not found:
        return []
    codes = np.unique(np.concatenate(found))
    first, second = codes // n, codes % n
    # The fraction of equal MinHash values estimates the Jaccard similarity; its
    # standard error at 128 permutations is <= 0.045, so 0.15 of slack loses nothing.
    estimate = (signatures[first] == signatures[second]).mean(axis=1)
    keep = estimate >= threshold - 0.15
    return list(zip(first[keep].tolist(), second[keep].tolist()))


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
