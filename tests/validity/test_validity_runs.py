"""`curator validate` through the sandboxed engine: stubs, repeats and mutants."""

from __future__ import annotations

import json

from click.testing import CliRunner
from validity_runs_support import FLAKY, NEVER_CALLED, STRONG, WEAK
from validity_runs_support import workspace_with as _workspace

from curator import workspace as workspace_mod
from curator.cli import main
from curator.release import gates
from curator.store import Store
from curator.store import problems as problem_store
from curator.validity import validate as validity


def test_stub_and_mutants_tell_tests_that_never_call_weak_and_strong_tests_apart(
        empty_workspace):
    ws = _workspace(empty_workspace, never_called=NEVER_CALLED, weak=WEAK, strong=STRONG)
    runner = CliRunner()
    base = ["--workspace", str(ws.root)]
    out = runner.invoke(main, [*base, "validate", "never_called", "weak", "strong",
                               "--mutants", "10", "--workers", "2", "--json"])
    assert out.exit_code == 1, out.output        # never_called does not discriminate
    rows = {row["id"]: row for row in json.loads(out.stdout)["problems"]}
    assert list(rows) == ["never_called", "weak", "strong"]
    for row in rows.values():
        assert list(row) == list(validity.JSON_KEYS)
    never = rows["never_called"]
    assert never["discriminates"] is False and never["stub_failed_share"] == 0.0
    assert never["non_exercising_tests"] == ["test_solution.py::test_arithmetic",
                                             "test_solution.py::test_importable"]
    weak, strong = rows["weak"], rows["strong"]
    assert weak["discriminates"] is True and weak["stub_failed_share"] == 0.5
    assert weak["non_exercising_tests"] == ["test_solution.py::test_importable"]
    assert strong["stub_failed_share"] == 1.0 and strong["non_exercising_tests"] == []
    assert all(r["stable"] is True and r["flaky_tests"] == [] for r in rows.values())
    # The same mutants ran against both: the weak tests let some live, the strong kill all.
    assert weak["mutants"] == strong["mutants"] >= 5
    assert strong["killed"] == strong["mutants"] and strong["survivors"] == []
    assert strong["mutation_score"] == 1.0
    assert weak["killed"] < weak["mutants"] and weak["mutation_score"] < 1.0
    assert weak["mutation_score"] == round(weak["killed"] / weak["mutants"], 4)
    survivors = {(s["operator"], s["line"]) for s in weak["survivors"]}
    assert ("arithmetic", 3) in survivors          # y - 1 still gives an int
    assert never["mutation_score"] == 0.0          # nothing is checked at all

    with Store(ws.db_path, "tester") as store:
        reference_runs = store.one("SELECT COUNT(*) AS n FROM runs")["n"]
        assert reference_runs == 9                 # 3 repeats each; variants are not runs
        stored = validity.stored(store, problem_store.get(store, "weak"))
        assert stored.survivors[0]["original"] == "    return y + 1"
        assert stored.survivors[0]["mutated"] != stored.survivors[0]["original"]
        # An unchanged problem is not validated twice ...
        again = validity.validate(store, ws, ["weak"], mutants=10)
        assert again.problems[0].reused and again.runs == 0
        assert store.one("SELECT COUNT(*) AS n FROM runs")["n"] == reference_runs
        # ... and the gates read what was stored.
        report = gates.check(store, ws)
        failing = {(f.gate, f.problem_id) for f in report.failures
                   if f.gate in ("tests_discriminate", "reference_stable")}
        assert failing == {("tests_discriminate", "never_called")}
        # [release] min_mutation_score is off by default; set, it fails the weak tests only.
        assert not any(f.gate == "min_mutation_score" for f in report.failures)
        (ws.root / "curator.toml").write_text("[release]\nmin_mutation_score = 0.9\n")
        strict = gates.check(store, workspace_mod.discover(ws.root))
        assert {f.problem_id for f in strict.failures if f.gate == "min_mutation_score"} \
            >= {"weak", "never_called"}
        assert "strong" not in {f.problem_id for f in strict.failures
                                if f.gate == "min_mutation_score"}
        # A changed test is a new problem to validate.
        changed = problem_store.get(store, "weak")
        changed.tests = STRONG
        problem_store.save(store, changed)
        assert validity.stored(store, changed) is None
        assert ("tests_discriminate", "weak") in {(f.gate, f.problem_id)
                                                  for f in gates.check(store, ws).failures}


def test_a_flaky_test_is_flagged_and_blocks_the_release(empty_workspace):
    ws = _workspace(empty_workspace, coins=FLAKY)
    with Store(ws.db_path, "tester") as store:
        # A coin over 12 runs: the chance that it never changes is 2 / 4096.
        report = validity.validate(store, ws, ["coins"], mutants=0, repeat=12, workers=2)
        (found,) = report.problems
        assert found.stable is False
        assert found.flaky_tests == ["test_solution.py::test_coin"]
        assert set(found.reference_outcomes) == {"passed", "failed"}
        assert found.discriminates is True and found.mutants == 0
        assert found.mutation_score is None
        check = gates.check(store, ws)
        reasons = {f.gate: f.reason for f in check.failures if f.problem_id == "coins"}
        assert "flaky test(s)" in reasons["reference_stable"]
        assert "coins" in check.blocking
        assert validity.invalid_ids(store, [problem_store.get(store, "coins")]) == {"coins"}


def test_a_reference_that_does_not_pass_has_null_figures_and_a_reason(empty_workspace):
    ws = _workspace(empty_workspace, broken=STRONG.replace("== 7", "== 8"))
    runner = CliRunner()
    out = runner.invoke(main, ["--workspace", str(ws.root), "validate", "broken",
                               "--mutants", "3", "--repeat", "1", "--json"])
    assert out.exit_code == 0, out.output
    (row,) = json.loads(out.stdout)["problems"]
    assert row["discriminates"] is None and row["mutation_score"] is None
    assert row["survivors"] is None and row["non_exercising_tests"] is None
    assert "the reference does not pass (failed" in row["reason"]
    assert list(row) == [*validity.JSON_KEYS, "reason"]
