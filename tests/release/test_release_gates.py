"""Release gates: each gate fails for the right problems with a reason, and only then."""

from __future__ import annotations

import json
import random

from click.testing import CliRunner
from release_support import make_releasable, record_reference, write_config

from curator import problem_files
from curator.cli import main
from curator.problem import Problem
from curator.release import gates, similarity
from curator.release.codeinfo import count_tests, imported_libs
from curator.store import problems as problem_store

PIN = "0123456789abcdef0123456789abcdef01234567"


def failing(report, gate: str) -> dict[str, str]:
    return {f.problem_id: f.reason for f in report.failures if f.gate == gate}


def run_check(ws, *args):
    return CliRunner().invoke(main, ["--workspace", str(ws.root), "release", "check", *args])


# -- the whole check -----------------------------------------------------------------------

def test_fresh_seed_fails_reference_and_licence_gates_only(workspace, store):
    report = gates.check(store, workspace)
    ids = {p.id for p in problem_store.all_problems(store)}
    assert set(failing(report, "reference_passes")) == ids
    assert all("never run" in r for r in failing(report, "reference_passes").values())
    # The seed problems are original work; this temporary workspace declares no licence.
    assert set(failing(report, "provenance_known")) == ids
    for gate in ("min_tests", "labels_set", "prompt_present", "code_prompt",
                 "no_near_duplicate"):
        assert failing(report, gate) == {}, gate
    assert not report.ok and report.blocking == sorted(ids)


def test_check_cli_json_and_exit_status(workspace, store):
    result = run_check(workspace, "--json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert [g["gate"] for g in data["gates"]] == list(gates.GATES)
    assert data["ok"] is False and data["checked"] == len(problem_store.all_problems(store))
    first = data["gates"][0]["failing"][0]
    assert set(first) == {"problem_id", "status", "reason"}

    ws = make_releasable(workspace, store)
    result = run_check(ws, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["ok"] is True and data["blocking"] == []
    assert all(g["failing"] == [] for g in data["gates"])
    text = run_check(ws)
    assert text.exit_code == 0 and "every ready/released problem passes" in text.output


def test_draft_failures_are_listed_but_do_not_fail_the_check(workspace, store):
    ws = make_releasable(workspace, store)
    problem_store.update_fields(store, "soft_dice_loss", status="draft", prompt="  \n")
    result = run_check(ws, "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    prompt_gate = next(g for g in data["gates"] if g["gate"] == "prompt_present")
    assert prompt_gate["failing"] == [{"problem_id": "soft_dice_loss", "status": "draft",
                                       "reason": "prompt is empty"}]


# -- reference_passes ------------------------------------------------------------------------

def test_reference_gate_uses_latest_run_of_current_solution(workspace, store):
    ws = write_config(workspace)
    problem = problem_store.get(store, "soft_dice_loss")
    record_reference(store, problem, "failed")
    assert "latest reference run failed" in failing(gates.check(store, ws), "reference_passes")[
        problem.id]
    record_reference(store, problem, "passed")
    # An earlier failure of the same solution since its last change: flaky.
    reason = failing(gates.check(store, ws), "reference_passes")[problem.id]
    assert reason.startswith("flaky: 1 of 2")


def test_reference_gate_ignores_infra_and_runs_of_old_solutions(workspace, store):
    ws = write_config(workspace)
    problem = problem_store.get(store, "soft_dice_loss")
    record_reference(store, problem, "passed")
    record_reference(store, problem, "infra")
    assert problem.id not in failing(gates.check(store, ws), "reference_passes")
    # Change the solution: the passing run no longer counts.
    problem_store.update_fields(store, problem.id, solution=problem.solution + "\n# edited\n")
    reason = failing(gates.check(store, ws), "reference_passes")[problem.id]
    assert "never run on its current solution" in reason


def test_reference_gate_wants_a_run_after_the_tests_changed(workspace, store):
    ws = write_config(workspace)
    problem = problem_store.get(store, "soft_dice_loss")
    record_reference(store, problem, "failed", started_at="2000-01-01T00:00:00+00:00")
    problem_store.update_fields(store, problem.id, tests=problem.tests + "\n# more\n")
    assert "not run since" in failing(gates.check(store, ws), "reference_passes")[problem.id]
    record_reference(store, problem, "passed")
    # The old failure predates the change of the tests, so it is not flakiness.
    assert problem.id not in failing(gates.check(store, ws), "reference_passes")


# -- min_tests --------------------------------------------------------------------------------

TWO_TESTS = "from solution import f\n\n\ndef test_a():\n    pass\n\n\ndef test_b():\n    pass\n"


def test_min_tests_gate(workspace, store):
    ws = make_releasable(workspace, store)
    problem = problem_store.get(store, "soft_dice_loss")
    problem_store.update_fields(store, problem.id, tests=TWO_TESTS)
    record_reference(store, problem_store.get(store, problem.id), tests=2)
    assert failing(gates.check(store, ws), "min_tests") == {
        problem.id: "2 test(s), need at least 3"}
    write_config(ws, '[release]\nlicense = "MIT"\nmin_tests = 2\n')
    ws = write_config(ws, '[release]\nlicense = "MIT"\nmin_tests = 2\n')
    assert failing(gates.check(store, ws), "min_tests") == {}


def test_min_tests_counts_node_ids_and_reported_tests(workspace, store):
    ws = make_releasable(workspace, store)
    problem = problem_store.get(store, "soft_dice_loss")
    problem_store.update_fields(
        store, problem.id, tests=None, test_node_ids=["tests/test_x.py::TestX"],
        source={"repo": "https://example.org/x", "commit": PIN, "path": "x.py",
                "symbol": "soft_dice_loss", "license": "MIT"})
    problem = problem_store.get(store, problem.id)
    record_reference(store, problem, tests=1)
    assert "1 test(s)" in failing(gates.check(store, ws), "min_tests")[problem.id]
    # The node id is a class: the passing run reported the 4 tests it holds.
    record_reference(store, problem, tests=4)
    assert problem.id not in failing(gates.check(store, ws), "min_tests")


def test_count_tests():
    code = '''
import pytest

@pytest.mark.parametrize("x", [1, 2, 3])
def test_param(x):
    pass

@pytest.mark.parametrize("a", [1, 2])
@pytest.mark.parametrize("b", (1, 2))
def test_grid(a, b):
    pass

def helper():
    pass

class TestGroup:
    def test_one(self):
        pass

    def not_a_test(self):
        pass

class Helper:
    def test_ignored(self):
        pass

async def test_async():
    pass
'''
    assert count_tests(code) == 3 + 4 + 1 + 1
    assert count_tests("class TestX:\n    def test(:\n") is None
    assert count_tests(None) == 0
    assert imported_libs("import torch.nn as nn\nfrom numpy import x\nfrom . import y\n"
                         "from __future__ import annotations\n") == ["numpy", "torch"]


# -- labels, prompt ---------------------------------------------------------------------------

def test_labels_and_prompt_gates(workspace, store):
    ws = make_releasable(workspace, store)
    problem_store.update_fields(store, "soft_dice_loss", task="", data="")
    problem_store.update_fields(store, "pairwise_box_iou", prompt="")
    report = gates.check(store, ws)
    assert failing(report, "labels_set") == {"soft_dice_loss": "unset: task, data"}
    assert failing(report, "prompt_present") == {"pairwise_box_iou": "prompt is empty"}
    assert report.blocking == ["pairwise_box_iou", "soft_dice_loss"]


def test_code_prompt_gate_needs_a_parsable_signature_of_the_entry_point(workspace, store):
    ws = make_releasable(workspace, store)
    problem = problem_store.get(store, "soft_dice_loss")
    no_block = "# Soft Dice\n\nWrite the soft Dice loss.\n"
    problem_store.update_fields(store, "soft_dice_loss", prompt=no_block)
    other = problem_store.get(store, "pairwise_box_iou")
    broken = other.prompt.replace("def box_iou(", "def box_iou(((", 1) \
        if "def box_iou(" in other.prompt else None
    assert broken is not None, other.prompt[:200]
    problem_store.update_fields(store, "pairwise_box_iou", prompt=broken)
    report = gates.check(store, ws)
    reasons = failing(report, "code_prompt")
    assert set(reasons) == {"soft_dice_loss", "pairwise_box_iou"}
    assert "no ```python block" in reasons["soft_dice_loss"]
    assert "does not parse" in reasons["pairwise_box_iou"]
    assert "soft_dice_loss" in report.blocking
    # what the bundle would have shipped without the gate: imports and no signature
    from curator.evaluation.extract import code_prompt

    assert f"def {problem.entry_point}" not in code_prompt(no_block, problem.entry_point,
                                                           problem.solution)


# -- provenance_known --------------------------------------------------------------------------

def test_provenance_gate(workspace, store):
    ws = make_releasable(workspace, store)
    problem_store.update_fields(store, "soft_dice_loss", source={
        "repo": "https://github.com/kornia/kornia", "path": "kornia/losses/dice.py",
        "symbol": "soft_dice_loss"})
    reason = failing(gates.check(store, ws), "provenance_known")["soft_dice_loss"]
    assert reason == "[source] lacks commit (unpinned), license"
    problem_store.update_fields(store, "soft_dice_loss", source={
        "repo": "https://github.com/kornia/kornia", "commit": PIN,
        "path": "kornia/losses/dice.py", "symbol": "soft_dice_loss", "license": "Apache-2.0"})
    assert failing(gates.check(store, ws), "provenance_known") == {}


def test_original_work_takes_the_workspace_licence(workspace, store):
    problem = problem_store.all_problems(store)[0]
    assert gates.workspace_license(workspace) is None
    assert "declares no licence" in failing(gates.check(store, workspace),
                                            "provenance_known")[problem.id]
    (workspace.root / "LICENSE").write_text(
        "MIT License\n\nPermission is hereby granted, free of charge, to any person ...\n")
    assert gates.workspace_license(workspace) == "MIT"
    assert failing(gates.check(store, workspace), "provenance_known") == {}
    ws = write_config(workspace, '[release]\nlicense = "CC-BY-4.0"\n')
    assert gates.settings_for(ws).license == "CC-BY-4.0"


# -- no_near_duplicate -------------------------------------------------------------------------

def _renamed_copy(problem: Problem, new_id: str) -> Problem:
    solution = problem.solution
    for old, new in (("logits", "scores"), ("targets", "truth"), ("eps", "smooth")):
        solution = solution.replace(old, new)
    return Problem(id=new_id, entry_point=problem.entry_point, kind=problem.kind,
                   title="copy", stage=problem.stage, task=problem.task, data=problem.data,
                   status="ready", prompt="A reworded prompt for the same function.\n",
                   solution=solution, tests=problem.tests)


def test_near_duplicate_gate_fails_the_newer_copy(workspace, store):
    ws = make_releasable(workspace, store)
    original = problem_store.get(store, "soft_dice_loss")
    copy = _renamed_copy(original, "zz_dice_copy")
    assert copy.solution != original.solution
    problem_store.save(store, copy)
    record_reference(store, copy)
    report = gates.check(store, ws)
    dup = failing(report, "no_near_duplicate")
    assert list(dup) == ["zz_dice_copy"]
    assert dup["zz_dice_copy"].startswith("near-duplicate of soft_dice_loss (code similarity")
    # The threshold is a setting.
    ws = write_config(ws, '[release]\nlicense = "MIT"\nnear_duplicate_threshold = 1.01\n')
    assert failing(gates.check(store, ws), "no_near_duplicate") == {}


def test_same_upstream_symbol_is_a_duplicate(workspace, store):
    ws = make_releasable(workspace, store)
    source = {"repo": "https://github.com/kornia/kornia", "commit": PIN, "path": "a.py",
              "symbol": "f", "license": "Apache-2.0"}
    problem_store.update_fields(store, "soft_dice_loss", source=source)
    problem_store.update_fields(store, "pairwise_box_iou", source=source, status="released")
    dup = failing(gates.check(store, ws), "no_near_duplicate")
    # The released one is kept; the ready one fails.
    assert dup == {"soft_dice_loss": "near-duplicate of pairwise_box_iou "
                                     "(the same upstream symbol)"}


def test_similarity_normalises_names_and_lsh_matches_exact(monkeypatch):
    a = "import torch\n\ndef f(x, y):\n    '''Doc.'''\n    total = torch.sum(x * y)\n" \
        "    return total / (x.shape[0] + 1)\n"
    b = "import torch\n\ndef g(p, q):\n    s = torch.sum(p * q)\n    return s / (p.shape[0] + 1)\n"
    c = "def h(items):\n    out = []\n    for i in items:\n        if i % 2:\n" \
        "            out.append(i)\n    return sorted(out)\n"
    fa, fb, fc = (similarity.fingerprint(t) for t in (a, b, c))
    assert similarity.jaccard(fa, fb) == 1.0
    assert similarity.jaccard(fa, fc) < 0.2
    assert similarity.fingerprint('"""Only a docstring."""\n# and a comment\n') == frozenset()
    # Formatting and comments do not matter.
    reformatted = a.replace("x * y)", "x*y)  # product").replace("    return", "\n    return")
    assert similarity.jaccard(fa, similarity.fingerprint(reformatted)) == 1.0

    rng = random.Random(7)

    def generated(i: int) -> str:
        body = [f"    v{k} = torch.{rng.choice(['cat', 'stack', 'sum', 'relu', 'exp'])}"
                f"(x {rng.choice('+-*/')} {rng.randint(0, 99)}) {rng.choice('+-*/')} "
                f"y.{rng.choice(['shape', 'T', 'dtype', 'grad', 'device'])}"
                for k in range(rng.randint(4, 12))]
        return "import torch\n\ndef fn(x, y):\n" + "\n".join(body) + "\n    return v0\n"

    sources = {f"p{i:03d}": generated(i) for i in range(360)}
    for i in range(0, 360, 45):
        sources[f"q{i:03d}"] = sources[f"p{i:03d}"].replace("x", "inp")
    prints = {k: similarity.fingerprint(v) for k, v in sources.items()}
    via_lsh = similarity.near_duplicates(prints, 0.8)
    monkeypatch.setattr(similarity, "EXACT_BELOW", 10 ** 6)
    exact = similarity.near_duplicates(prints, 0.8)
    assert set(via_lsh) == set(exact)
    assert {(p.a, p.b) for p in exact} >= {(f"p{i:03d}", f"q{i:03d}") for i in range(0, 360, 45)}


def test_datasketch_lsh_gives_the_exact_pairs_on_the_seed_set(seed_dir, monkeypatch):
    """The gate's LSH (datasketch MinHash + MinHashLSH, our bands and rows) finds exactly
    the pairs an all-pairs comparison finds on the seed benchmark, at the gate's default
    threshold and below it, with a renamed, reformatted copy of every seed solution."""
    solutions = {}
    for folder in sorted(p for p in seed_dir.iterdir() if p.is_dir()):
        problem = problem_files.read_problem(folder)[0]
        solutions[problem.id] = problem.solution
        renamed = problem.solution.replace("(x", "(inp").replace(" x", " inp")
        solutions[f"{problem.id}~copy"] = renamed.replace("\n\n", "\n\n\n")
    prints = {k: similarity.fingerprint(v) for k, v in solutions.items()}
    threshold = gates.Settings().near_duplicate_threshold
    found = {}
    for at in (threshold, 0.5, 0.2, 0.1):
        monkeypatch.setattr(similarity, "EXACT_BELOW", 0)            # LSH for any size
        via_lsh = {(p.a, p.b, p.similarity) for p in similarity.near_duplicates(prints, at)}
        monkeypatch.setattr(similarity, "EXACT_BELOW", 10 ** 6)      # every pair, exactly
        exact = {(p.a, p.b, p.similarity) for p in similarity.near_duplicates(prints, at)}
        assert via_lsh == exact
        found[at] = exact
    copies = {(pid, f"{pid}~copy") for pid in solutions if not pid.endswith("~copy")}
    at_threshold = {(a, b) for a, b, _ in found[threshold]}
    assert at_threshold <= copies and len(at_threshold) >= 20    # the copies, nothing else
    assert len(found[0.1]) > len(found[0.2]) > len(at_threshold)
