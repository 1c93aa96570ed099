"""The tests that use a function, down to the parametrized cases that pass it.

pyro's `test_exponential_gamma` is parametrized over eight ELBO classes and three gamma
distributions (24 cases, ~90 s each): narrowed for `ReweightedWakeSleep`, it must be
the 3 cases that pass that class, named as pytest names them, not the whole test.
"""

from __future__ import annotations

import subprocess
import sys

from repo_support import make_repo

from curator.dlbench import upstream
from curator.dlbench.upstream import Snapshot
from curator.repos.gitcache import CachedRepo, run_git

ELBOS = '''class TraceELBO:
    def loss(self, steps):
        return steps


class Reweighted(TraceELBO):
    def loss(self, steps):
        return 2 * steps
'''

INFERENCE = '''import pytest

from pkg import elbos
from pkg.elbos import Reweighted, TraceELBO


def wrapped(value):
    return pytest.param(value, marks=pytest.mark.skip(reason="slow"))


@pytest.mark.parametrize("impl", [wrapped(TraceELBO), TraceELBO, Reweighted])
@pytest.mark.parametrize("dist,steps", [("gamma", 5), ("beta", 6)],
                         ids=["reparam", "nonreparam"])
def test_fit(dist, steps, impl):
    if impl is Reweighted:
        steps = steps * 2
    assert impl().loss(steps) > 0


@pytest.mark.parametrize("n", [1, -2, 0.5, None, True, "cpu"])
@pytest.mark.parametrize("impl", [pytest.param(Reweighted, id="rw"), TraceELBO])
def test_literal_ids(impl, n, tmp_path):
    assert impl().loss(1) > 0


@pytest.mark.parametrize("impl", [TraceELBO, Reweighted])
def test_calls_it_in_every_case(impl):
    assert Reweighted().loss(1) == 2


@pytest.mark.parametrize("impl", [wrapped(Reweighted), TraceELBO])
def test_an_id_only_run_time_knows(impl):
    assert impl().loss(1) > 0


@pytest.mark.parametrize("impl", [Reweighted, TraceELBO])
def test_a_fixture_from_elsewhere(impl, device):
    assert impl().loss(1) > 0


class TestMethods:
    @pytest.mark.parametrize("impl", [TraceELBO, elbos.Reweighted])
    def test_method(self, impl):
        assert impl().loss(3) >= 3
'''

CONFTEST = '''import pytest


@pytest.fixture(params=["cpu", "meta"])
def device(request):
    return request.param
'''


def test_a_parametrized_test_is_narrowed_to_the_cases_that_pass_the_function(tmp_path):
    """Only the cases whose parameters name the class are kept, under pytest's own ids
    (stacked decorators, `ids=`, `pytest.param(id=)`, literals, a class's name); a test
    that calls it in every case, or whose ids only run time knows (a repository's helper
    around pytest.param, a conftest's parametrized fixture), stays whole. pytest, asked
    to collect the ids, finds every one of them."""
    repo = make_repo(tmp_path / "elbo", {
        "pkg/__init__.py": "", "pkg/elbos.py": ELBOS, "tests/conftest.py": CONFTEST,
        "tests/test_inference.py": INFERENCE})
    commit = run_git(["rev-parse", "HEAD"], cwd=repo).strip()
    snapshot = Snapshot(CachedRepo("https://git.invalid/elbo", repo / ".git"), commit)
    found = upstream.tests_calling(snapshot, "Reweighted.loss", "pkg/elbos.py",
                                   within={"tests/test_inference.py"}, limit=None)
    module = "tests/test_inference.py::"
    assert found == [module + n for n in [
        "test_fit[reparam-Reweighted]", "test_fit[nonreparam-Reweighted]",
        "test_literal_ids[rw-1]", "test_literal_ids[rw--2]", "test_literal_ids[rw-0.5]",
        "test_literal_ids[rw-None]", "test_literal_ids[rw-True]",
        "test_literal_ids[rw-cpu]", "test_calls_it_in_every_case",
        "test_an_id_only_run_time_knows", "test_a_fixture_from_elsewhere",
        "TestMethods::test_method[Reweighted]"]]
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         *found], cwd=repo, capture_output=True, text=True, timeout=120)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    listed = [line for line in collected.stdout.splitlines() if "::" in line]
    whole = {"test_calls_it_in_every_case": 2, "test_an_id_only_run_time_knows": 2,
             "test_a_fixture_from_elsewhere": 4}
    assert len(listed) == len(found) - len(whole) + sum(whole.values())
    assert set(found) - {module + n for n in whole} <= set(listed)
