"""Reference triage: 3 runs of a reference; every failing test gets a cause (needs_gpu,
needs_network, flaky, fails_upstream) and is excluded with it; green when the rest pass
and a stub of the function fails them. Runs are real (the sandboxed engine)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from repo_support import make_repo, mine_and_accept

from curator import runs
from curator.cli import main
from curator.repos import identity
from curator.store import Store, repo_envs
from curator.store import problems as problem_store
from curator.store import triage as triage_store

OPS = '''def scale(x):
    """Three times x."""
    return 3 * x
'''

TESTS = '''import os
import urllib.request

from pkg.ops import scale

COUNTER = {counter!r}


def test_scale():
    assert scale(2) == 6


def test_scale_on_gpu():
    scale(1)
    raise AssertionError("Torch not compiled with CUDA enabled")


def test_scale_downloads_weights():
    scale(1)
    urllib.request.urlopen("http://127.0.0.1:9/weights.pt", timeout=5)


def test_scale_once_in_a_while():
    scale(1)
    # fails on the second run only: a numeric test that fails once in a while
    try:
        with open(COUNTER, "a+") as handle:
            handle.seek(0)
            runs = len(handle.read())
            handle.write("x")
    except OSError:
        runs = len(os.environ.get("PYTEST_XDIST_WORKER", ""))
    assert runs != 1, "rtol 0.1 exceeded"


def test_scale_upstream_is_broken():
    assert scale(1) == 4
'''

GPU_ONLY = '''from pkg.ops import scale


def test_scale_cuda():
    scale(1)
    raise RuntimeError("Found no NVIDIA driver on your system.")
'''


# Each triage is 3 to 5 real runs of a repository in the sandbox.
pytestmark = pytest.mark.timeout(1200)


@pytest.fixture
def counter():
    """A file the runs may write, outside the sandbox: a folder every uid can write
    (weak runs started by root are nobody; the test's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="triage-counter-"))
    folder.chmod(0o777)
    yield folder / "counter"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def triaged_repo(tmp_path, counter):
    upstream = make_repo(tmp_path / "triaged", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS,
        "tests/test_ops.py": TESTS.format(counter=str(counter))})
    ws, base = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    return ws, base, counter


def test_triage_gives_each_failing_test_its_cause_and_the_rest_is_the_baseline(triaged_repo):
    ws, base, counter = triaged_repo
    with Store(ws.db_path, "tester") as store:
        (result,) = runs.triage(store, ws, ["scale"])
        if not counter.exists():
            pytest.fail("the flaky test could not keep its count outside the sandbox")
        short = {k.rpartition("::")[2]: v for k, v in result.causes.items()}
        assert short == {"test_scale_on_gpu": "needs_gpu",
                         "test_scale_downloads_weights": "needs_network",
                         "test_scale_once_in_a_while": "flaky",
                         "test_scale_upstream_is_broken": "fails_upstream"}
        assert result.green, result.reason
        # 3 runs, one of the upstream checkout (fails_upstream confirmed there, not
        # recorded), one with the failing tests excluded, one of a stub (not recorded)
        assert result.runs == 6
        left_out = {r["node_id"].rpartition("::")[2]: r["reason"]
                    for r in runs.excluded(store, "scale")}
        assert left_out["test_scale_on_gpu"].startswith("needs_gpu: ")
        assert "CUDA" in left_out["test_scale_on_gpu"]
        assert left_out["test_scale_once_in_a_while"].startswith("flaky: failed 1 of 3")
        baseline = store.one("SELECT tests FROM baselines WHERE problem_id = 'scale'")
        assert baseline is not None and "test_scale\"" in baseline["tests"]
        saved = triage_store.get(store, "scale")
        assert saved["green"] and saved["causes"] == result.causes
        # resumed: triaged already with this reference, nothing runs again
        (again,) = runs.triage(store, ws, ["scale"])
        assert again.skipped and again.causes == result.causes
        count = store.one("SELECT COUNT(*) AS n FROM runs WHERE problem_id = 'scale'")["n"]
        assert count == 4
        # another environment (built again with another lock): triaged again, not resumed
        record = identity.record_for(store, problem_store.get(store, "scale").source["repo"])
        folder = ws.root / "db" / "envs" / "same-python"
        folder.mkdir(parents=True)
        repo_envs.save(store, {"repo_id": record["id"], "commit_sha": "0" * 40, "key": "k",
                               "path": str(folder), "python": sys.executable,
                               "python_version": "%d.%d.%d" % sys.version_info[:3],
                               "lock": "tinyunits==1.2.0\n", "packages": [], "preload": [],
                               "built_at": "2026-12-03T00:00:00Z", "actor": "tester"},
                       replaced=False)
        (rebuilt,) = runs.triage(store, ws, ["scale"])
        assert not rebuilt.skipped and rebuilt.runs   # (the flaky test passes from now on)
        assert rebuilt.causes == {k: v for k, v in result.causes.items() if v != "flaky"}
        # other tests (the problem resolved again): triaged again, not resumed
        problem = problem_store.get(store, "scale")
        problem.test_node_ids = [n for n in problem.test_node_ids if "gpu" not in n]
        problem_store.save(store, problem)
        (other,) = runs.triage(store, ws, ["scale"])
        assert not other.skipped and "needs_gpu" not in other.causes.values()
    # a sample is now held to the remaining tests only
    out = CliRunner().invoke(main, [*base, "run", "scale", "--json"])
    assert out.exit_code == 0, out.output


def test_a_problem_with_nothing_left_is_not_green_with_the_reason(tmp_path):
    upstream = make_repo(tmp_path / "gpuonly", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_cuda.py": GPU_ONLY})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    with Store(ws.db_path, "tester") as store:
        # a run says which test finished and how many are done, while it runs
        labels = []
        runs.run_problems(store, ws, ["scale"], workers=1,
                          progress=lambda done, total, label: labels.append(label))
        assert any(label.startswith("scale: test 1/1 tests/test_cuda.py::test_scale_cuda")
                   for label in labels), labels
        (result,) = runs.triage(store, ws, ["scale"])
        assert not result.green
        # how many went for which cause, and the first one's message
        assert result.reason.startswith(
            "no test left: 1 needs_gpu (tests/test_cuda.py::test_scale_cuda: "), result.reason
        assert "Found no NVIDIA driver on your system." in result.reason
        (row,) = runs.excluded(store, "scale")
        assert row["reason"].startswith("needs_gpu: ") and "NVIDIA" in row["reason"]
        # a later run collects only the problem's own tests, every one left out: never
        # the rest of the repository's tests
        job = runs.job_for(store, ws, problem_store.get(store, "scale"),
                           OPS, "sample")
        assert job.node_ids == ["tests/test_cuda.py::test_scale_cuda"]
        assert job.deselect == ["tests/test_cuda.py::test_scale_cuda"]


def test_a_stub_that_passes_the_remaining_tests_is_not_green(tmp_path):
    weak_tests = "from pkg.ops import scale\n\n\ndef test_runs():\n    scale(2)\n"
    upstream = make_repo(tmp_path / "weak", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_weak.py": weak_tests})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    # `raise NotImplementedError` fails test_runs: a stub that returns passes it
    assert "raise NotImplementedError" in runs.stub_of(OPS, "scale")
    with Store(ws.db_path, "tester") as store:
        (result,) = runs.triage(store, ws, ["scale"], stub=True)
        assert result.green   # the stub raises, so test_runs fails it


def test_a_value_that_cannot_cross_is_not_an_upstream_failure(tmp_path):
    """A reference whose result has no data form (an open file) fails in this tool, not
    upstream: the problem is not green, with the boundary's reason, and no test is
    excluded as fails_upstream."""
    opener = 'def opener(path):\n    """The file, open."""\n    return open(path)\n'
    tests = ("from pkg.ops import opener\n\n\ndef test_opener():\n"
             "    with opener(__file__) as handle:\n        assert handle.read()\n")
    upstream = make_repo(tmp_path / "files", {
        "pkg/__init__.py": "", "pkg/ops.py": opener, "tests/test_open.py": tests})
    ws, _ = mine_and_accept(tmp_path, upstream, "opener", "opener", isolation="weak")
    with Store(ws.db_path, "tester") as store:
        (result,) = runs.triage(store, ws, ["opener"])
        assert not result.green
        assert result.reason.startswith("boundary: an open file"), result.reason
        assert "cannot cross from the solution process to the judge" in result.reason
        assert result.causes == {} and runs.excluded(store, "opener") == []


def test_a_test_that_fails_only_across_the_boundary_is_not_excluded(tmp_path):
    """A reference whose tests pass upstream but fail with the target served from the
    solution process (a module global the target sets lives in the solution process; the
    test reads the judge's) is this tool's limit, not a fails_upstream test: the problem is
    not green with the boundary's reason, and nothing is excluded for it; a test that
    really fails upstream still is."""
    ops = ('CALLS = 0\n\n\ndef bump(x):\n    """x, counted."""\n    global CALLS\n'
           '    CALLS += 1\n    return x\n')
    tests = ("from pkg import ops\n\n\n"
             "def test_counted():\n    assert ops.bump(3) == 3\n    assert ops.CALLS > 0\n\n\n"
             "def test_broken_upstream():\n    assert ops.bump(1) == 2\n")
    upstream = make_repo(tmp_path / "counts", {
        "pkg/__init__.py": "", "pkg/ops.py": ops, "tests/test_ops.py": tests})
    ws, _ = mine_and_accept(tmp_path, upstream, "bump", "bump", isolation="weak")
    with Store(ws.db_path, "tester") as store:
        (result,) = runs.triage(store, ws, ["bump"])
        assert not result.green
        assert result.reason.startswith(
            "boundary: tests/test_ops.py::test_counted passes in the upstream checkout"), \
            result.reason
        assert result.causes == {"tests/test_ops.py::test_broken_upstream": "fails_upstream",
                                 "tests/test_ops.py::test_counted": "boundary"}
        assert [r["node_id"] for r in runs.excluded(store, "bump")] == \
            ["tests/test_ops.py::test_broken_upstream"]


def test_a_test_the_upstream_run_never_reached_is_not_called_fails_upstream(tmp_path):
    """pyro's RWS tests (~90 s each) fail quickly across the boundary; the upstream run of
    all eleven reached three within its limit, and the eight it never reached were
    excluded as fails_upstream although they pass upstream. A failing test that upstream
    run did not reach is run upstream alone: passing there, it is the boundary's."""
    ops = ('CALLS = 0\n\n\ndef bump(x):\n    """x, counted."""\n    global CALLS\n'
           '    CALLS += 1\n    return x\n')
    slow = ("    assert ops.bump(3) == 3\n    assert ops.CALLS > 0\n"
            "    time.sleep(5)\n")
    tests = ("import time\n\nfrom pkg import ops\n\n\n"
             f"def test_a_counted():\n{slow}\n\ndef test_b_counted():\n{slow}\n\n"
             f"def test_c_counted_slower():\n{slow.replace('(5)', '(30)')}")
    upstream = make_repo(tmp_path / "slowcounts", {
        "pkg/__init__.py": "", "pkg/ops.py": ops, "tests/test_ops.py": tests})
    ws, _ = mine_and_accept(tmp_path, upstream, "bump", "bump", isolation="weak")
    ws = _with_first_timeout(ws, 9)   # one test fits, both do not
    with Store(ws.db_path, "tester") as store:
        (result,) = runs.triage(store, ws, ["bump"])
        assert not result.green
        assert result.reason.startswith("boundary: tests/test_ops.py::test_a_counted "
                                        "passes in the upstream checkout"), result.reason
        assert result.causes == {"tests/test_ops.py::test_a_counted": "boundary",
                                 "tests/test_ops.py::test_b_counted": "boundary",
                                 "tests/test_ops.py::test_c_counted_slower": "fails_upstream"}
        # one that no upstream run finished, even alone, says so: not an upstream failure
        (row,) = runs.excluded(store, "bump")
        assert row["node_id"] == "tests/test_ops.py::test_c_counted_slower"
        assert row["reason"].startswith(
            "fails_upstream: no run in the upstream checkout finished it (limit 9 s); "
            "across the boundary: "), row["reason"]


def test_a_module_the_environment_left_out_is_named_with_why(tmp_path):
    """lightly's tests import torchvision, which its environment left out (its only
    release for the pinned torch does not import here): the reference's reason says so,
    from the lock, not only "No module named 'torchvision'"."""
    tests = "import tinyvision\n\nfrom pkg.ops import scale\n\n\ndef test_scale():\n" \
            "    assert scale(2) == 6\n"
    upstream = make_repo(tmp_path / "vision", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": tests})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    from curator.repos import identity
    from curator.store import repo_envs

    with Store(ws.db_path, "tester") as store:
        problem = runs.problem_store.get(store, "scale")
        record = identity.record_for(store, problem.source["repo"])
        why = "tinyvision 0.28.0 does not import with torch==2.13.0+cpu (CUDA build)"
        repo_envs.save(store, {
            "repo_id": record["id"], "commit_sha": problem.source["commit"], "key": "k",
            "path": str(tmp_path / "env"), "python": str(tmp_path / "env/bin/python"),
            "python_version": "3.11", "package": "pkg", "packages": [], "preload": [],
            "lock": f"# tinyvision left out: {why}\ntinyunits==1.2.0\n", "seconds": 1,
            "built_at": "2024-01-01T00:00:00Z", "actor": "tester"}, replaced=False)
        (result,) = runs.triage(store, ws, ["scale"])
    assert not result.green
    assert "No module named 'tinyvision'" in result.reason
    assert result.reason.endswith(f"(tinyvision left out: {why})")


def _with_first_timeout(ws, seconds: float):
    conf = ws.root / "curator.toml"
    text = conf.read_text(encoding="utf-8")
    conf.write_text(text + f"first_timeout_s = {seconds}\n", encoding="utf-8")
    from curator import workspace as workspace_mod

    return workspace_mod.discover(ws.root)


def test_a_reference_slower_than_the_first_limit_is_run_once_with_the_reason(tmp_path):
    """pyro's whole-file targets (tests/infer/test_inference.py) did not finish in the first
    limit: the two other runs spent it again, and a test each run never reached was
    called flaky. The first run alone now says why, how far it got and its slowest test."""
    tests = ("import time\n\nfrom pkg.ops import scale\n\n\n"
             "def test_a_quick():\n    assert scale(2) == 6\n\n\n"
             "def test_b_slow():\n    scale(1)\n    time.sleep(600)\n")
    upstream = make_repo(tmp_path / "slow", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": tests})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    ws = _with_first_timeout(ws, 8)
    with Store(ws.db_path, "tester") as store:
        (result,) = runs.triage(store, ws, ["scale"])
        assert not result.green
        assert result.reason.startswith("timeout: wall-clock limit of 8 s exceeded in 1 of "
                                        "1 run, after 1 test (0 failed); the slowest, "
                                        "tests/test_ops.py::test_a_quick"), result.reason
        assert result.runs == 1 and result.causes == {}
        assert runs.excluded(store, "scale") == []
        count = store.one("SELECT COUNT(*) AS n FROM runs WHERE problem_id = 'scale'")["n"]
        assert count == 1


def test_a_test_a_timed_out_run_never_reached_is_not_flaky(tmp_path, counter):
    """One of the 3 runs times out (a machine under load) before a test that fails in every
    run that reached it: that test fails upstream, it is not flaky."""
    tests = ("import time\n\nfrom pkg.ops import scale\n\nCOUNTER = {counter!r}\n\n\n"
             "def test_a_slow_once():\n"
             "    with open(COUNTER, 'a+') as handle:\n"
             "        handle.seek(0)\n        runs = len(handle.read())\n"
             "        handle.write('x')\n"
             "    if runs == 1:\n        time.sleep(600)\n"
             "    assert scale(2) == 6\n\n\n"
             "def test_b_broken_upstream():\n    assert scale(1) == 4\n").format(
                 counter=str(counter))
    upstream = make_repo(tmp_path / "once", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": tests})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    ws = _with_first_timeout(ws, 10)
    with Store(ws.db_path, "tester") as store:
        (result,) = runs.triage(store, ws, ["scale"])
        if not counter.exists():
            pytest.fail("the test could not keep its count outside the sandbox")
        assert result.causes == {"tests/test_ops.py::test_b_broken_upstream":
                                 "fails_upstream"}, result.causes
        assert result.green, result.reason


def _triaged_with_tests(tmp_path, tests: str, node_ids: list[str] | None = None):
    """The triage of `scale` mined from a repository whose tests/test_ops.py is `tests`
    (its node ids `node_ids` when given, else those mining found)."""
    upstream = make_repo(tmp_path / "skips", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": tests})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    with Store(ws.db_path, "tester") as store:
        if node_ids is not None:
            problem = problem_store.get(store, "scale")
            problem_store.save(store, replace(problem, test_node_ids=node_ids))
        (result,) = runs.triage(store, ws, ["scale"])
    return result


def _stub_passes(tmp_path, tests: str) -> str:
    """The reason scale (pkg/ops.py: OPS), mined with these tests, is not green; the
    same when triaged again with its exclusions kept (a recipe's: they run deselected)."""
    upstream = make_repo(tmp_path / "upstream", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": tests})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    with Store(ws.db_path, "tester") as store:
        (result,) = runs.triage(store, ws, ["scale"])
        kept = {row["node_id"] for row in runs.excluded(store, "scale")}
        (again,) = runs.triage(store, ws, ["scale"], resume=False, keep=kept)
    assert not result.green
    assert again.reason == result.reason
    return result.reason


def test_a_stub_that_passes_says_which_tests_were_skipped_and_why(tmp_path):
    """pennylane's tests of an interface that is not installed (jax) are skipped, and those
    were the ones calling the function: the reason says so, not only that a stub passes."""
    reason = _stub_passes(tmp_path, "import pytest\n\nfrom pkg.ops import scale\n\n\n"
                          "def test_with_jax():\n"
                          "    pytest.skip('only runs with the jax interface')\n"
                          "    assert scale(2) == 6\n\n\n"
                          "def test_is_there():\n    assert callable(scale)\n")
    assert reason == ("the remaining tests pass with a stub of scale: they do not "
                      "exercise it (1 of 2 tests skipped: only runs with the jax "
                      "interface)"), reason


def test_a_stub_that_passes_says_how_many_tests_were_excluded_and_why(tmp_path):
    """pytorch3d's Rotate._get_matrix_inverse: the only tests that call it run on cuda:0,
    so here they were excluded as needs_gpu and a stub passes the rest (Translate's: its
    one test on the CPU fails upstream). The reason says that the excluded ones may be
    those that exercise it, not only that a stub passes."""
    reason = _stub_passes(tmp_path, "from pkg.ops import scale\n\n\n"
                          "def cuda(x):\n"
                          "    raise RuntimeError('Torch not compiled with CUDA enabled')\n\n\n"
                          "def test_on_gpu():\n    assert scale(cuda(2)) == 6\n\n\n"
                          "def test_too_tight():\n    assert scale(1) == 3.0000001\n\n\n"
                          "def test_is_there():\n    assert callable(scale)\n")
    assert reason == ("the remaining tests pass with a stub of scale: they do not "
                      "exercise it; excluded 1 as fails_upstream, 1 as needs_gpu, which "
                      "may be those that do"), reason


def test_a_reference_whose_every_test_upstream_skips_says_why(tmp_path):
    """kornia's LoFTR.forward: its release tests are marked slow (kornia's conftest skips
    them without --runslow) or skipped for the torch version. The reason says every test
    is skipped and why, per reason, not "failed: no test passed (7 skipped)"."""
    tests = ("import pytest\n\nfrom pkg.ops import scale\n\n\n"
             "@pytest.mark.skip(reason='need --runslow option to run')\n"
             "def test_slow():\n    assert scale(2) == 6\n\n\n"
             "@pytest.mark.skip(reason='need --runslow option to run')\n"
             "def test_slower():\n    assert scale(3) == 9\n\n\n"
             "def test_old_torch():\n    pytest.skip('fails with torch>=1.10')\n")
    result = _triaged_with_tests(tmp_path, tests, ["tests/test_ops.py"])
    assert not result.green
    assert result.reason == ("no test left: upstream skips all 3 (2 need --runslow option "
                             "to run; 1 fails with torch>=1.10)"), result.reason


NETWORK_AT_IMPORT = '''import urllib.request

from pkg.ops import scale

# pretrained weights fetched when the module is imported (imagededup's package does it)
WEIGHTS = urllib.request.urlopen("http://127.0.0.1:9/weights.pt", timeout=5)


def test_scale():
    assert scale(2) == 6
'''


def test_a_test_module_that_needs_the_network_to_import_is_excluded_with_that_cause(
        tmp_path):
    """Collecting the problem's test module fails in every run for want of the network:
    its tests are excluded as needs_network (the triage's record, which a machine with the
    network can run), not green; triaged again with those exclusions kept, nothing runs
    and the reason stays."""
    upstream = make_repo(tmp_path / "weights", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": NETWORK_AT_IMPORT})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    with Store(ws.db_path, "tester") as store:
        (result,) = runs.triage(store, ws, ["scale"])
        assert not result.green
        assert result.reason.startswith("no test left: 1 needs_network (tests/test_ops.py: ")
        assert set(result.causes.values()) == {"needs_network"}
        (row,) = runs.excluded(store, "scale")
        assert row["reason"].startswith("needs_network: ") and "urlopen" in row["reason"]
        (again,) = runs.triage(store, ws, ["scale"], resume=False, keep={row["node_id"]})
        assert (again.green, again.reason, again.runs) == (False, result.reason, 0)
        assert again.causes == {row["node_id"]: "needs_network"}


NETWORK_TESTS = '''import urllib.request

from pkg.ops import scale


def test_scale_downloads_weights():
    scale(1)
    urllib.request.urlopen("http://127.0.0.1:9/weights.pt", timeout=5)


def test_scale_downloads_config():
    scale(1)
    urllib.request.urlopen("http://127.0.0.1:9/config.json", timeout=5)
'''


def test_a_module_whose_every_test_is_excluded_already_has_no_test_left(tmp_path):
    """The problem runs a test module whole and every test in it is excluded already (a
    recipe's [exclude] from an earlier rebuild: stanza's resplit_mwt, both tests of
    tests/mwt/test_utils.py needs_network): no test left, with the causes and the first
    message, not "failed: no test passed (2 deselected)"."""
    upstream = make_repo(tmp_path / "net", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": NETWORK_TESTS})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    nodes = ["tests/test_ops.py::test_scale_downloads_config",
             "tests/test_ops.py::test_scale_downloads_weights"]
    with Store(ws.db_path, "tester") as store:
        problem = problem_store.get(store, "scale")
        problem.test_node_ids = ["tests/test_ops.py"]
        problem_store.save(store, problem)
        with store.transaction():
            for node in nodes:
                runs.add_excluded(store, "scale", node,
                                  "needs_network: urllib.error.URLError: <urlopen error "
                                  "[Errno 111] Connection refused>", "2024-09-20T00:00:00Z")
        (result,) = runs.triage(store, ws, ["scale"], keep=set(nodes))
    assert not result.green
    assert result.reason == (
        "no test left: 2 needs_network (tests/test_ops.py::test_scale_downloads_config: "
        "urllib.error.URLError: <urlopen error [Errno 111] Connection refused>)"), result.reason
    assert result.causes == {node: "needs_network" for node in nodes}


def test_a_reference_timed_in_an_environment_built_before_is_given_the_first_limit(
        tmp_path):
    """The timeout scales with the reference's measured time, but only a time measured in
    the repository's current environment: deepchem's loss references passed in 1.2 s
    before the rebuild added tensorflow (their tf tests failing at once with NameError),
    and with tensorflow their collection alone took 8-10 s, so the next triage timed them
    out at 10-12.5 s, 'after 0 tests'. A run from before the environment was built counts
    for nothing: the first limit again."""
    upstream = make_repo(tmp_path / "timed", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS,
        "tests/test_ops.py": "from pkg.ops import scale\n\n\ndef test_scale():\n"
                             "    assert scale(2) == 6\n"})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    from curator.execution.job import RunResult

    with Store(ws.db_path, "tester") as store:
        problem = problem_store.get(store, "scale")

    def passed(duration):
        return RunResult(job_id="j", problem_id="scale", outcome="passed",
                         tests=[{"id": n, "outcome": "passed", "duration_s": 0.1}
                                for n in problem.test_node_ids],
                         duration_s=duration, env={"isolation": "weak"}, timeout_s=9)

    with Store(ws.db_path, "tester") as store:
        first = runs.default_limits(store, ws, problem).timeout_s
        runs.record(store, passed(0.2), "reference", "h",
                               started_at="2026-12-04T22:19:35.280226+00:00")
        assert runs.default_limits(store, ws, problem).timeout_s == runs.TIMEOUT_FLOOR_S
        record = identity.record_for(store, problem.source["repo"])
        saved = store.one("SELECT * FROM repo_envs WHERE repo_id = ?", (record["id"],))
        repo_envs.save(store, {
            "repo_id": record["id"], "commit_sha": problem.source["commit"], "key": "k2",
            "path": str(tmp_path / "env"), "python": sys.executable,
            "python_version": "3.11", "package": "pkg", "packages": [], "preload": [],
            "lock": "tinyunits==1.2.0\n", "seconds": 1,
            "built_at": "2026-12-04T22:21:36.015396+00:00", "actor": "tester"},
            replaced=saved is not None)
        # timed before this environment was built: the first limit
        assert runs.default_limits(store, ws, problem).timeout_s == first > 30
        runs.record(store, passed(3.0), "reference", "h",
                               started_at="2026-12-04T22:25:10Z")
        assert runs.default_limits(store, ws, problem).timeout_s == 30.0


def test_a_reference_timed_on_other_tests_is_given_the_first_limit(tmp_path):
    """A time counts for the tests it was measured on: Laplace's `laplace` reference was
    timed on the release's 3 tests (2 s), then a stub passed them and 166 tests that use
    the function were added; its next run got 10 x 2 s and timed out after 53 of them.
    A passing run that ran none of one of the problem's node ids (but for those
    excluded) counts for nothing: the first limit again."""
    upstream = make_repo(tmp_path / "timed", {
        "pkg/__init__.py": "", "pkg/ops.py": OPS,
        "tests/test_ops.py": "from pkg.ops import scale\n\n\ndef test_scale():\n"
                             "    assert scale(2) == 6\n\n\ndef test_more():\n"
                             "    assert scale(1) == 3\n"})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    from curator.execution.job import RunResult

    def passed(duration, ids):
        return RunResult(job_id="j", problem_id="scale", outcome="passed",
                         tests=[{"id": i, "outcome": "passed", "duration_s": 0.1}
                                for i in ids], duration_s=duration,
                         env={"isolation": "weak"}, timeout_s=9)

    with Store(ws.db_path, "tester") as store:
        problem = problem_store.get(store, "scale")
        first = runs.default_limits(store, ws, problem).timeout_s
        problem = replace(problem, test_node_ids=["tests/test_ops.py::test_scale"])
        problem_store.save(store, problem)
        runs.record(store, passed(0.2, ["tests/test_ops.py::test_scale"]), "reference", "h")
        assert runs.default_limits(store, ws, problem).timeout_s == runs.TIMEOUT_FLOOR_S
        # tests added: the time was measured on fewer
        problem = replace(problem, test_node_ids=["tests/test_ops.py::test_scale",
                                                  "tests/test_ops.py::test_more"])
        problem_store.save(store, problem)
        assert runs.default_limits(store, ws, problem).timeout_s == first > 30
        # that one excluded: what is left was timed
        runs.add_excluded(store, "scale", "tests/test_ops.py::test_more", "needs_gpu",
                          "2026-12-04")
        assert runs.default_limits(store, ws, problem).timeout_s == runs.TIMEOUT_FLOOR_S
        runs.remove_excluded(store, "scale", "tests/test_ops.py::test_more")
        runs.record(store, passed(3.0, ["tests/test_ops.py::test_scale",
                                        "tests/test_ops.py::test_more"]), "reference", "h")
        assert runs.default_limits(store, ws, problem).timeout_s == 30.0
