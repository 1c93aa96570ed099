"""Tests for bugs that once slipped through the suite: each fails when its bug is back.

A study of hand-made bugs in the core modules found these survivors; every test below
was checked by putting the bug into the code and watching the test fail. Where a test
lives elsewhere (exchange timestamps: tests/review/test_review_exchange.py), it says so.
"""

from __future__ import annotations

import dataclasses
import os
import random
import textwrap

import pytest
from execution_support import needs_bwrap, run_one, shared_engine
from samples_support import add_samples, make_problems, record_run

from curator import problem_files, review
from curator.dlbench import fileformat, label_map
from curator.evaluation import report
from curator.evaluation.extract import FENCED_ENTRY, extract_code
from curator.execution import sandbox, verdict
from curator.mining.testfind import find_tests
from curator.problem import Problem
from curator.pysource.modules import parse_module
from curator.release import similarity
from curator.review.agreement import krippendorff_alpha_nominal, pairwise_kappa
from curator.store import Store
from curator.tui import filtering

# -- the verdict ------------------------------------------------------------------------


def _events(tests, exitstatus=0):
    return verdict.Events(collected=[t for t, _ in tests],
                          tests=[{"id": t, "outcome": o} for t, o in tests],
                          finish={"exitstatus": exitstatus})


def _decide(events, expected, exit_code=0):
    return verdict.decide(events, expected, exit_code=exit_code, exit_signal=None,
                          timed_out=False, timeout_s=10.0)


def test_pytest_exit_status_counts_even_when_every_test_passed():
    events = _events([("test_solution.py::test_a", "passed")], exitstatus=1)
    assert _decide(events, ["test_solution.py::test_a"]).outcome != "passed"
    good = _events([("test_solution.py::test_a", "passed")])
    assert _decide(good, ["test_solution.py::test_a"]).outcome == "passed"


def test_a_test_id_does_not_cover_a_longer_name():
    ran = _events([("t.py::test_ab", "passed")])
    result = _decide(ran, ["t.py::test_a"])
    assert result.outcome == "failed" and "t.py::test_a did not run" in result.reason
    params = _events([("t.py::test_a[1]", "passed"), ("t.py::test_a[2]", "passed")])
    assert _decide(params, ["t.py::test_a"]).outcome == "passed"
    nested = _events([("t.py::TestA::test_x", "passed")])
    assert _decide(nested, ["t.py::TestA"]).outcome == "passed"
    assert _decide(nested, ["t.py::Test"]).outcome == "failed"


# -- the sandbox: its own pid namespace -------------------------------------------------


def test_the_sandbox_unshares_the_pid_namespace():
    argv = sandbox.SandboxSpec().argv(["true"])
    assert "--unshare-pid" in argv


@needs_bwrap
def test_a_strong_run_cannot_see_host_processes():
    """Without its own pid namespace a run sees (and may signal) the host's processes."""
    engine = shared_engine("strong")   # the pytest process's (execution_support)
    tests = f"""\
        import os

        def test_host_pid_invisible():
            assert not os.path.exists("/proc/{os.getpid()}")

        def test_few_processes():
            pids = [p for p in os.listdir("/proc") if p.isdigit()]
            assert len(pids) < 20, pids
        """
    result = run_one(engine, "def add(a, b):\n    return a + b\n", tests)
    assert result.outcome == "passed", (result.reason, result.tests)


# -- problem files ----------------------------------------------------------------------


def test_an_empty_node_id_list_is_written_and_read_back():
    problem = Problem(id="p", entry_point="f", title="P", test_node_ids=[])
    text = problem_files.render_toml(problem)
    assert "[tests]\nnode_ids = []\n" in text
    assert problem_files.parse_toml(text, problem_files.Path("problem.toml")).test_node_ids == []
    none = problem_files.render_toml(dataclasses.replace(problem, test_node_ids=None))
    assert "[tests]" not in none


# -- the Problems filter ----------------------------------------------------------------

ROWS = [{"id": "a", "stage": "model", "status": "draft", "outcome": "passed"},
        {"id": "b", "stage": "training", "status": "ready", "outcome": "failed"},
        {"id": "c", "stage": "", "status": "ready", "outcome": ""}]


def _ids(query):
    return [r["id"] for r in filtering.apply(ROWS, filtering.parse(query))]


def test_two_terms_on_one_key_must_both_hold():
    assert _ids("stage:model stage:training") == []
    assert _ids("stage:model,training stage:training") == ["b"]
    assert _ids("stage:model,training") == ["a", "b"]


def test_bang_negates_like_minus():
    assert _ids("!stage:model") == ["b", "c"]
    assert _ids("-stage:model") == ["b", "c"]
    assert _ids("!status:ready !run:passed") == []
    assert filtering.parse("!stage:model").warnings == []


# -- code extraction --------------------------------------------------------------------


def test_equal_blocks_the_later_wins():
    text = ("First try:\n```python\ndef f(x):\n    return 1\n```\n"
            "Fixed:\n```python\ndef f(x):\n    return 2\n```\n")
    result = extract_code(text, "f")
    assert result.method == FENCED_ENTRY and "return 2" in result.code


def test_a_bare_fence_is_python():
    text = "Here you go:\n```\nimport math\n\ndef f(x):\n    return math.sqrt(x)\n```\nDone."
    result = extract_code(text, "f")
    assert result.method == FENCED_ENTRY
    assert result.code == "import math\n\ndef f(x):\n    return math.sqrt(x)\n"


# -- which tests exercise which functions -----------------------------------------------

TESTS_MODULE = textwrap.dedent("""\
    import unittest

    from pkg.ops import Resizer, normalise, Blur


    class TestResize(unittest.TestCase):
        def setUp(self):
            self.table = normalise([1, 2])

        def test_shape(self):
            self.assertEqual(len(self.table), 2)


    def test_context_manager():
        with Resizer(3) as resizer:
            resizer.resize([1])


    def test_plain_call():
        with Blur(1):
            pass
    """)


def _refs():
    return {t.node_id: t.refs for t in find_tests(parse_module("tests/test_ops.py", TESTS_MODULE))}


def test_setup_calls_count_for_every_test_of_the_class():
    assert "pkg.ops.normalise" in _refs()["tests/test_ops.py::TestResize::test_shape"]


def test_with_as_binds_an_instance():
    refs = _refs()["tests/test_ops.py::test_context_manager"]
    assert "pkg.ops.Resizer.resize" in refs
    assert not any(r.startswith("pkg.ops.Blur.") for r in refs)


# -- DL-Bench labels --------------------------------------------------------------------


def test_a_tie_between_readings_goes_to_the_swap_in_class_files_only():
    table = label_map.spelling_map()
    fields = {"stage": "Image", "data": "Image", "task": "Classification"}
    klass = label_map.resolve_labels(fileformat.Record("classes-kornia_Foo1.txt", dict(fields)),
                                   table)
    func = label_map.resolve_labels(fileformat.Record("kornia_foo1.txt", dict(fields)), table)
    assert klass.swapped and not func.swapped
    assert klass.unknown == [{"axis": "stage", "value": "Image", "key": "data"}]
    assert func.unknown == [{"axis": "stage", "value": "Image", "key": "stage"}]


# -- near-duplicates --------------------------------------------------------------------


def test_lsh_finds_pairs_right_at_the_threshold():
    """MinHash estimates scatter around the true similarity; pairs exactly at the
    threshold must survive the estimate filter (its slack), not half of them."""
    rng = random.Random(7)
    prints, expected = {}, set()
    for i in range(80):                       # 80 pairs with Jaccard exactly 0.8
        base = rng.sample(range(10**9), 90)
        shared, extra = base[:80], rng.sample(range(10**9, 2 * 10**9), 10)
        prints[f"a{i:03d}"] = frozenset(base)
        prints[f"b{i:03d}"] = frozenset(shared + extra)
        assert similarity.jaccard(prints[f"a{i:03d}"], prints[f"b{i:03d}"]) == 0.8
        expected.add((f"a{i:03d}", f"b{i:03d}"))
    for i in range(similarity.EXACT_BELOW):   # unrelated noise: LSH is used
        prints[f"n{i:03d}"] = frozenset(rng.sample(range(3 * 10**9, 4 * 10**9), 60))
    found = {(p.a, p.b) for p in similarity.near_duplicates(prints, 0.8)}
    assert found == expected


# -- review: assignment and agreement ---------------------------------------------------


@pytest.fixture
def review_db(empty_workspace, tmp_path):
    store = Store(empty_workspace.db_path, "tester")
    make_problems(store)
    record_run(store, "add_one", "passed")
    record_run(store, "counter_bump", "passed")
    ids = add_samples(store, tmp_path, [
        {"task_id": "add_one", "solution": f"def add_one(x):\n    return x + {i}\n"}
        for i in range(2, 12)])
    for sample_id in ids:
        record_run(store, "add_one", "failed", sample_id)
    yield store, ids
    store.close()


@pytest.mark.parametrize("overlap, doubles", [(0.29, 3), (0.21, 2), (0.05, 0), (0.06, 1)])
def test_overlap_rounds_to_the_nearest_item(review_db, overlap, doubles):
    store, ids = review_db
    result = review.assign(store, ["ana", "ben"], overlap=overlap, seed=3)
    assert (result["assigned"], result["double"]) == (len(ids), doubles)


def test_report_ignores_problems_with_only_pending_samples(review_db, tmp_path):
    store, _ = review_db
    add_samples(store, tmp_path, [{"task_id": "counter_bump", "solution": "class Counter: pass"}],
                name="pending.jsonl")
    data = report.build(store)["models"]["m1"]
    assert data["overall"]["problems"] == 1 and data["overall"]["samples"] == 10
    assert set(data["stage"]) == {"prepost"}
    assert data["outcomes"] == {"failed": 10, "pending": 1}


def test_alpha_skips_unpairable_units_wherever_they_are():
    units = [["x", "x"], ["y", "y"], ["x", "y"]]
    expected = krippendorff_alpha_nominal(units)
    assert expected is not None
    assert krippendorff_alpha_nominal([["x"], *units]) == expected
    assert krippendorff_alpha_nominal([*units[:1], [], *units[1:]]) == expected


def test_kappa_keeps_pairs_after_one_without_shared_items():
    labels = {"ana": {1: "x", 2: "y"}, "ben": {3: "x", 4: "y"}, "cy": {1: "x", 2: "y"}}
    assert pairwise_kappa(labels) == [{"annotators": ["ana", "cy"], "items": 2, "kappa": 1.0}]
