"""Agreement statistics against published and hand-computed values."""

from __future__ import annotations

import random

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from curator.review.agreement import (
    agreement,
    cohen_kappa,
    krippendorff_alpha_nominal,
    pairwise_kappa,
)


def test_krippendorff_published_example_with_missing_values():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C:
    # 4 observers, 12 units, nominal data with missing values -> alpha = 0.743.
    a = [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None]
    b = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3]
    c = [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None]
    d = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]
    units = [[v for v in column if v is not None] for column in zip(a, b, c, d)]
    assert krippendorff_alpha_nominal(units) == pytest.approx(0.743, abs=5e-4)


def test_two_annotators_hand_computed():
    # a: 8 8 10 10 2 sc    b: 8 10 10 10 2 bd     (sc/bd: the two verdicts)
    # Values: 8 x3, 10 x5, 2 x2, sc x1, bd x1; n = 12.
    # Observed disagreeing pairs (ordered): units 2 and 6, two each -> 4.
    # Expected: n^2 - sum(n_c^2) = 144 - (9 + 25 + 4 + 1 + 1) = 104.
    # alpha = 1 - (n - 1) * 4 / 104 = 1 - 44/104 = 60/104.
    a = ["8", "8", "10", "10", "2", "sc"]
    b = ["8", "10", "10", "10", "2", "bd"]
    assert krippendorff_alpha_nominal(list(zip(a, b))) == pytest.approx(60 / 104)
    # Kappa: p_o = 4/6; p_e = (2*1 + 2*3 + 1*1) / 36 = 9/36; (2/3 - 1/4) / (3/4) = 5/9.
    assert cohen_kappa(a, b) == pytest.approx(5 / 9)


def test_perfect_and_undefined_cases():
    # n = 8 (x4, y4); 4 disagreeing ordered pairs; expected 64 - 32 = 32.
    assert krippendorff_alpha_nominal([["x", "y"], ["y", "y"], ["x", "x"], ["y", "x"]]) \
        == pytest.approx(1 - 7 * 4 / 32)
    assert krippendorff_alpha_nominal([["a", "a"], ["b", "b"]]) == 1.0
    assert krippendorff_alpha_nominal([["a", "a"], ["a", "a"]]) is None  # nothing to expect
    assert krippendorff_alpha_nominal([["a"], ["b"]]) is None  # nothing pairable
    assert cohen_kappa(["a", "b"], ["a", "b"]) == 1.0
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None
    assert cohen_kappa([], []) is None


def test_pairwise_kappa_uses_shared_items_only():
    labels = {"ann": {1: "8", 2: "10", 3: "2"}, "bob": {1: "8", 2: "8"}, "cy": {9: "1"}}
    pairs = pairwise_kappa(labels)
    assert pairs == [{"annotators": ["ann", "bob"], "items": 2,
                      # p_o = 1/2; p_e = (1*2 + 1*0)/4 = 1/2 -> 0
                      "kappa": 0.0}]


def test_kappa_refuses_lists_of_different_items():
    with pytest.raises(ValueError, match="^both annotators must label the same items$"):
        cohen_kappa(["a"], ["a", "b"])


def test_pairwise_kappa_rounds_and_reports_undefined_pairs():
    # Wikipedia's worked example ("Cohen's kappa"): 50 items; A yes & B yes 20, A yes & B no
    # 5, A no & B yes 10, both no 15. p_o = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5 -> 0.4.
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    a = {f"s{i}": x for i, (x, _) in enumerate(pairs)}
    b = {f"s{i}": y for i, (_, y) in enumerate(pairs)}
    # the 6-item example above: kappa 5/9, reported to four places
    c = dict(enumerate(["8", "8", "10", "10", "2", "sc"]))
    d = dict(enumerate(["8", "10", "10", "10", "2", "bd"]))
    # both gave one value to every item: chance agreement is 1, kappa undefined
    e, f = {1: "8", 2: "8"}, {1: "8", 2: "8"}
    got = {tuple(p["annotators"]): (p["items"], p["kappa"])
           for p in pairwise_kappa({"a": a, "b": b, "c": c, "d": d, "e": e, "f": f})}
    assert got[("a", "b")] == (50, pytest.approx(0.4))
    assert got[("c", "d")] == (6, 0.5556)
    assert got[("e", "f")] == (2, None)


def test_matches_the_krippendorff_package_and_scikit_learn():
    # The same numbers as the reference implementations, on data with missing values and
    # units of different sizes (what the review queue and the label rounds produce).
    rng = random.Random(7)
    for trial in range(20):
        coders, items = rng.randint(2, 5), rng.randint(5, 30)
        data = [[rng.choice("abcd") if rng.random() > 0.25 else None for _ in range(items)]
                for _ in range(coders)]
        units = [[row[i] for row in data if row[i] is not None] for i in range(items)]
        ours = krippendorff_alpha_nominal(units)
        code = {v: n for n, v in enumerate("abcd")}
        matrix = np.array([[np.nan if v is None else code[v] for v in row] for row in data])
        if ours is None:
            continue
        assert ours == pytest.approx(
            krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"),
            abs=1e-9), trial
        a = [rng.choice("xyz") for _ in range(items)]
        b = [rng.choice("xyz") if rng.random() > 0.5 else v for v in a]
        if len(set(a) | set(b)) > 1:
            assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)


def test_agreement_summary_for_every_panel():
    votes = {1: {"ann": "y", "bob": "y", "cy": "n"}, 2: {"ann": "n", "bob": "n"},
             3: {"ann": "y", "cy": "y"}, 4: {"bob": "y"}}
    summary = agreement(votes)
    assert summary["items"] == 3
    assert summary["alpha"] == round(krippendorff_alpha_nominal(
        [["y", "y", "n"], ["n", "n"], ["y", "y"]]), 4)
    # ann/cy share items 1 and 3 (y y vs n y): p_o = p_e = 1/2; bob/cy item 1 only
    assert summary["kappa"] == {"ann|bob": 1.0, "ann|cy": 0.0, "bob|cy": 0.0}
    # pairs of votes on one item: item 1 has y/y, y/n, y/n; item 2 n/n; item 3 y/y
    assert summary["confusion"] == {"n": {"n": 1, "y": 2}, "y": {"n": 2, "y": 2}}
