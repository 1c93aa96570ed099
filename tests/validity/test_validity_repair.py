"""Repair: a problem whose listed tests never call it gets the tests the mining index links
to its symbol (direct, else through its callers), tried on the reference and the stub."""

from __future__ import annotations

import json
import tomllib

import pytest
from click.testing import CliRunner
from repo_support import make_repo, mine_and_accept, needs_strong

from curator.cli import main
from curator.store import Store
from curator.store import candidates as candidate_store
from curator.store import problems as problem_store
from curator.validity import repair

OPS = '''def scale(x, k):
    return x * k + 1


def halve(x):
    return x // 2


def pipeline(x):
    return halve(x) + 1


def offset(x):
    return x + 10
'''
TEST_OPS = '''from pkg.ops import scale


def test_scale_values():
    assert scale(2, 3) == 7


def test_scale_zero():
    assert scale(0, 9) == 1
'''
TEST_PIPELINE = '''from pkg.ops import pipeline


def test_pipeline():
    assert pipeline(8) == 5
'''
TEST_OTHER = '''from pkg.ops import offset


def test_offset():
    assert offset(1) == 11
'''
WRONG = ["tests/test_other.py::test_offset"]


def _validate(base, *args):
    out = CliRunner().invoke(main, [*base, "validate", *args, "--mutants", "0", "--repeat",
                                    "1", "--json"])
    try:
        return out.exit_code, json.loads(out.stdout)
    except ValueError:
        raise AssertionError(out.output) from None


@needs_strong
@pytest.mark.slow
@pytest.mark.timeout(900)    # repo-backed runs start a fresh interpreter per warm worker
def test_tests_that_never_call_the_function_are_flagged_then_repaired(tmp_path):
    upstream = make_repo(tmp_path / "upstream", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": TEST_OPS,
        "tests/test_pipeline.py": TEST_PIPELINE, "tests/test_other.py": TEST_OTHER})
    ws, base = mine_and_accept(tmp_path, upstream, "scale", "ops_scale")
    with Store(ws.db_path, "tester") as store:
        (halve,) = [r for r in candidate_store.list_rows(store) if r["qualname"] == "halve"]
    accepted = CliRunner().invoke(main, [*base, "candidates", "accept", str(halve["id"]),
                                         "--id", "ops_halve"])
    assert accepted.exit_code == 0, accepted.output
    with Store(ws.db_path, "tester") as store:
        # As DL-Bench does for 10% of its problems: the listed tests are another file's.
        for pid in ("ops_scale", "ops_halve"):
            problem_store.update_fields(store, pid, test_node_ids=WRONG)

    code, data = _validate(base, "ops_scale", "ops_halve")
    assert code == 1
    for row in data["problems"]:
        assert row["discriminates"] is False, row
        assert row["non_exercising_tests"] == WRONG and row["stub_failed_share"] == 0.0

    with Store(ws.db_path, "tester") as store:
        problems = [problem_store.get(store, pid) for pid in ("ops_scale", "ops_halve")]
        proposals = {p.id: p for p in repair.propose(store, ws, problems, workers=2)}
        scale, halve_fix = proposals["ops_scale"], proposals["ops_halve"]
        assert scale.link == "direct" and scale.fixes is True and not scale.applied
        assert scale.proposed == ["tests/test_ops.py::test_scale_values",
                                  "tests/test_ops.py::test_scale_zero"]
        assert scale.dropped == WRONG and scale.added == scale.proposed
        assert halve_fix.link == "indirect" and halve_fix.fixes is True
        assert halve_fix.proposed == ["tests/test_pipeline.py::test_pipeline"]
        assert "pipeline" in halve_fix.via[0] and "halve" in halve_fix.via[-1]
        # proposing changes nothing; applying saves the node ids, files included
        assert problem_store.get(store, "ops_scale").test_node_ids == WRONG
        for proposal in proposals.values():
            repair.apply(store, ws, proposal)
        assert problem_store.get(store, "ops_halve").test_node_ids == halve_fix.proposed
    toml = tomllib.loads((ws.problems_dir / "ops_scale" / "problem.toml").read_text())
    assert toml["tests"]["node_ids"] == scale.proposed
    code, data = _validate(base, "ops_scale", "ops_halve")
    assert code == 0, data
    assert all(r["discriminates"] and r["stub_failed_share"] == 1.0
               for r in data["problems"])
