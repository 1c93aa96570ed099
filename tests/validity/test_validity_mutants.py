"""Stubs and mutants: made from the syntax tree, one exact change each, lines kept."""

from __future__ import annotations

import ast

import pytest

from curator.validity.mutants import OPERATORS, make_mutants
from curator.validity.stub import STUB_BODY, NoEntryPoint, stub_solution

SOLUTION = '''import torch


def _helper(x):
    return x * 2


def pooled(x, weights, mask=None):
    """Weighted mean over the last axis."""
    if mask is not None and x.dim() > 1:
        x = x * mask
    total = torch.sum(x * weights, dim=-1)
    norm = weights.sum() + 1e-6
    scores = total / norm
    if not scores.requires_grad:
        scores = scores.clone()
    first = scores[0]
    return torch.clamp(scores, first, 10).mean()


class Head:
    def forward(self, x):
        return x[1:] - 1
'''


def test_the_stub_keeps_everything_but_the_entry_points_body():
    stubbed = stub_solution(SOLUTION, "pooled")
    tree = ast.parse(stubbed)
    pooled = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "pooled")
    assert ast.unparse(pooled.body[0]) == STUB_BODY and len(pooled.body) == 1
    assert stubbed.startswith(SOLUTION[:SOLUTION.index('    """Weighted')])
    assert "def _helper(x):\n    return x * 2" in stubbed and "class Head:" in stubbed
    method = stub_solution(SOLUTION, "Head.forward")
    assert method.endswith("    def forward(self, x):\n        raise NotImplementedError\n")
    assert "return torch.clamp" in method
    one_line = stub_solution("def f(x): return x + 1\n", "f")
    assert one_line == "def f(x): raise NotImplementedError\n"
    with pytest.raises(NoEntryPoint, match="does not define missing"):
        stub_solution(SOLUTION, "missing")
    with pytest.raises(NoEntryPoint, match="does not parse"):
        stub_solution("def f(:\n", "f")


def _changed_line(mutant) -> tuple[str, str]:
    return mutant.original.strip(), mutant.mutated.strip()


def test_every_operator_makes_the_change_it_names_on_the_line_it_changed():
    made = make_mutants(SOLUTION, "pooled", limit=500)
    lines = SOLUTION.splitlines()
    by_operator: dict[str, list[tuple[str, str]]] = {}
    for mutant in made.mutants:
        assert lines[mutant.line - 1] == mutant.original
        assert mutant.text.splitlines()[mutant.line - 1] == mutant.mutated
        assert mutant.mutated != mutant.original
        ast.parse(mutant.text)
        # only the entry point changes: the helper and the class are as written
        assert "def _helper(x):\n    return x * 2" in mutant.text
        assert "        return x[1:] - 1" in mutant.text
        assert '"""Weighted mean over the last axis."""' in mutant.text
        by_operator.setdefault(mutant.operator, []).append(_changed_line(mutant))
    assert set(by_operator) == set(OPERATORS)
    assert ("total = torch.sum(x * weights, dim=-1)",
            "total = torch.sum(x * weights, dim=0)") in by_operator["dim"]
    assert ("norm = weights.sum() + 1e-6", "norm = weights.mean() + 1e-6") in \
        by_operator["reduction"]
    assert ("scores = total / norm", "scores = (total * norm)") in by_operator["arithmetic"]
    assert ("if mask is not None and x.dim() > 1:", "if (mask is not None or x.dim() > 1):") \
        in by_operator["boolean"]
    assert ("if not scores.requires_grad:", "if scores.requires_grad:") in by_operator["boolean"]
    assert ("if mask is not None and x.dim() > 1:", "if mask is not None and (x.dim() >= 1):") \
        in by_operator["comparison"]
    assert ("first = scores[0]", "first = scores[1]") in by_operator["off_by_one"]
    assert ("return torch.clamp(scores, first, 10).mean()",
            "return torch.clamp(scores, first, 11).mean()") in by_operator["constant"]
    assert ("return torch.clamp(scores, first, 10).mean()", "return None") in \
        by_operator["dropped_return"]
    assert ("scores = total / norm", "pass") in by_operator["dropped_statement"]
    assert ("return torch.clamp(scores, first, 10).mean()",
            "return torch.clamp(first, scores, 10).mean()") in by_operator["swapped_arguments"]
    # the docstring and the index literal are never bumped as plain constants
    assert all("scores[0]" in m.mutated or m.operator != "constant" or "scores[" not in
               m.mutated for m in made.mutants)
    texts = [m.text for m in made.mutants]
    assert len(texts) == len(set(texts)) == made.sites


def test_a_small_budget_covers_every_operator_and_is_the_same_each_time():
    first = make_mutants(SOLUTION, "pooled", limit=len(OPERATORS))
    assert {m.operator for m in first.mutants} == set(OPERATORS)
    again = make_mutants(SOLUTION, "pooled", limit=len(OPERATORS))
    assert [m.text for m in again.mutants] == [m.text for m in first.mutants]
    assert [m.line for m in first.mutants] == sorted(m.line for m in first.mutants)
    assert make_mutants(SOLUTION, "pooled", limit=0).mutants == []


def test_a_change_that_leaves_the_code_as_it_was_is_equivalent_and_not_run():
    # max(a, a) with its arguments swapped is the same call
    made = make_mutants("def f(a):\n    return max(a, a)\n", "f", limit=50)
    assert made.equivalent == 1
    assert all(m.operator != "swapped_arguments" for m in made.mutants)
    assert {m.operator for m in made.mutants} == {"dropped_return", "reduction"}


def test_methods_are_mutated_inside_their_class():
    made = make_mutants(SOLUTION, "Head.forward", limit=50)
    assert {(m.operator, m.mutated.strip()) for m in made.mutants} >= {
        ("arithmetic", "return (x[1:] + 1)"), ("off_by_one", "return x[2:] - 1"),
        ("constant", "return x[1:] - 0")}
