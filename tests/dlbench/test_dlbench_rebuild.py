"""`curator dlbench rebuild`: resolve, environment and triage per repository, resumable,
with exactly the JSON the command promises."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from repo_support import (
    make_repo,
    offline_index,  # noqa: F401  (fixture)
)
from test_dlbench_resolve import (  # noqa: F401  (fixtures)
    imported,
    imported_once,
    upstream,
    upstream_once,
)

from curator import runs
from curator import workspace as workspace_mod
from curator.cli import main
from curator.repos import recipes
from curator.store import Store

REPO_KEYS = {"name", "problems", "resolved", "env", "green", "green_ids", "triaged",
             "not_green"}
CAUSES = {"needs_gpu", "needs_network", "flaky", "fails_upstream"}


def rebuild(base, *args):
    out = CliRunner().invoke(main, [*base, "dlbench", "rebuild", *args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_an_unregistered_repository_is_reported_not_cloned(imported):  # noqa: F811
    ws, base = imported
    data = rebuild(base)
    assert set(data) == {"repos", "totals"}
    (repo,) = data["repos"]
    assert set(repo) == REPO_KEYS and set(repo["triaged"]) == CAUSES
    assert repo["name"] == "geomlib" and repo["problems"] == 8 and repo["resolved"] == 0
    assert repo["env"].startswith("repository not registered")
    assert {i["id"] for i in repo["not_green"]} and repo["green"] == 0
    assert data["totals"] == {"problems": 8, "resolved": 0, "green": 0}
    bad = CliRunner().invoke(main, [*base, "dlbench", "rebuild", "--only", "nosuch"])
    assert bad.exit_code != 0 and "nosuch: no imported DL-Bench problem" in bad.output


def test_two_spellings_of_one_repository_are_rebuilt_once():
    """DL-Bench names kornia `kornia` (128 problems) and `Kornia` (4); the benchmark
    given both, kornia=SNAPSHOT Kornia=SNAPSHOT, rebuilt the one repository once per
    spelling and counted 264 problems of 132. Given names go to the imported repository
    they name, in any case; a name no repository has stays apart (rebuild refuses it)."""
    from curator.dlbench import rebuild as rebuild_mod

    given = {"kornia": "/snap/kornia", "Kornia": "/snap/kornia", "pyro": "/snap/pyro",
             "nosuch": "/snap/x"}
    assert rebuild_mod.by_repository(given, ["kornia", "pyro", "gpflow"]) == {
        "kornia": {"kornia": "/snap/kornia", "Kornia": "/snap/kornia"},
        "pyro": {"pyro": "/snap/pyro"}, "nosuch": {"nosuch": "/snap/x"}}


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_rebuild_resolves_builds_triages_and_resumes(imported, upstream,  # noqa: F811
                                                     offline_index):  # noqa: F811
    ws, base = imported
    # geomlib declares nothing; its recipe (a maintainer's decision) adds numpy
    recipes.save(ws, recipes.Recipe(repo="https://git.invalid/team/geomlib",
                                    extras=["numpy"]))
    # no --as-of: the local index holds today's pytest, not one as of a past date
    data = rebuild(base, "--repo", f"geomlib={upstream['mirror']}")
    (repo,) = data["repos"]
    assert set(repo) == REPO_KEYS and repo["name"] == "geomlib"
    assert repo["env"] == "ok", repo
    assert repo["problems"] == 8 and 0 < repo["resolved"] < 8
    assert repo["green"] == len(repo["green_ids"]) > 0, repo["not_green"]
    assert repo["green"] + len(repo["not_green"]) == repo["problems"]
    assert data["totals"] == {"problems": 8, "resolved": repo["resolved"],
                              "green": repo["green"]}
    recipe = recipes.load(ws, "https://git.invalid/team/geomlib")
    assert recipe is not None and recipe.extras == ["numpy"]
    with Store(ws.db_path, "tester") as store:
        before = store.one("SELECT COUNT(*) AS n FROM runs")["n"]
    again = rebuild(base, "--only", "geomlib")
    with Store(ws.db_path, "tester") as store:
        assert store.one("SELECT COUNT(*) AS n FROM runs")["n"] == before   # resumed
    assert again["repos"][0]["green_ids"] == repo["green_ids"]


CHECKS_RELEASE = ("stage: Pre-Post processing\ntask: \ndata: Table\n\nprompt:\n"
                  "Write `scale`.\n\n```python\ndef scale(x):\n```\n\n"
                  " ground Truth:pkg/ops.py\n\n repo:checks\n\n function:scale\n\n"
                  " test_cases:tests/test_ops.py\n")


def _rebuilt_green(tmp_path, checks, texts: dict[str, str]):
    """The release `texts` (file name -> text) of the generated repository `checks`
    imported and rebuilt: checksscale1 green (its tests import tinycheck) and tinycheck
    the recipe's one extra. (workspace, url, the CLI's workspace arguments)."""
    release = tmp_path / "release"
    release.mkdir()
    for name, text in texts.items():
        (release / name).write_text(text)
    ws = workspace_mod.init(tmp_path / "ws")
    url = "https://git.invalid/team/checks"
    (ws.root / "curator.toml").write_text(f'[dlbench.repos]\nchecks = "{url}"\n')
    base = ["--workspace", str(ws.root)]
    loaded = CliRunner().invoke(main, [*base, "dlbench", "import", str(release), "--json"])
    assert loaded.exit_code == 0, loaded.output
    data = rebuild(base, "--repo", f"checks={checks}")
    (repo,) = data["repos"]
    assert repo["env"] == "ok" and repo["resolved"] == len(texts), repo
    assert repo["green_ids"] == ["checksscale1"], repo["not_green"]
    recipe = recipes.load(workspace_mod.discover(str(ws.root)), url)
    assert recipe is not None and recipe.extras == ["tinycheck"]
    return ws, url, base

@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_a_module_only_the_tests_import_goes_into_the_recipe(tmp_path,
                                                             offline_index):  # noqa: F811
    """pyod's test_combination.py cannot be collected: combination.py imports `combo`,
    which pyod declares only in docs/requirements.txt. A reference whose tests cannot be
    collected for an undeclared module gets that module's distribution in the recipe's
    extras, the environment is built again, and the reference is triaged again."""
    checks = make_repo(tmp_path / "checks", {
        "pkg/__init__.py": "",
        "pkg/ops.py": 'def scale(x):\n    """Three times x."""\n    return 3 * x\n',
        "tests/test_ops.py": "from tinycheck import close\n\nfrom pkg.ops import scale\n\n\n"
                             "def test_scale():\n    assert close(scale(2), 6)\n"})
    ws, _, base = _rebuilt_green(tmp_path, checks, {"checksscale1.txt": CHECKS_RELEASE})
    # the same command again (after a stop) resumes: the same source is no new one, so
    # nothing is resolved again (the rebuild's own choices of tests would be lost)
    count = "SELECT COUNT(*) AS n FROM {} WHERE {}"
    with Store(ws.db_path, "tester") as store:
        resolves = store.one(count.format("audit", "action = 'resolve'"))["n"]
        runs_before = store.one(count.format("runs", "1"))["n"]
    again = rebuild(base, "--repo", f"checks={checks}")
    assert again["repos"][0]["green_ids"] == ["checksscale1"]
    with Store(ws.db_path, "tester") as store:
        assert store.one(count.format("audit", "action = 'resolve'"))["n"] == resolves
        assert store.one(count.format("runs", "1"))["n"] == runs_before


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_modules_wanted_together_that_do_not_fit_are_tried_one_at_a_time(
        tmp_path, offline_index):  # noqa: F811
    """pytorch3d's tests wanted torchvision and tabulate in one round; torchvision here
    wants a torch the extension does not compile against, so the environment did not
    build with both, and both went out of the recipe: so3_exp_map's added test stayed
    uncollectable for want of tabulate, which fits alone. Wanted together and not
    fitting, each is tried alone and kept when it fits (here tinyunits breaks the
    package's import; tinycheck does not)."""
    checks = make_repo(tmp_path / "checks", {
        "pkg/__init__.py": "try:\n    import tinyunits  # noqa\nexcept ImportError:\n"
                           "    pass\nelse:\n"
                           "    raise ImportError('pkg does not work beside tinyunits')\n",
        "pkg/ops.py": SCALE_AND_SHIFT,
        "tests/test_ops.py": "from tinycheck import close\n\nfrom pkg.ops import scale\n\n\n"
                             "def test_scale():\n    assert close(scale(2), 6)\n",
        "tests/test_shift.py": "import tinyunits\n\nfrom pkg.ops import shift\n\n\n"
                               "def test_shift():\n    assert shift(tinyunits.CM_PER_INCH) > 3\n"})
    shift = CHECKS_RELEASE.replace("`scale`", "`shift`").replace(
        "def scale", "def shift").replace("function:scale", "function:shift").replace(
        "tests/test_ops.py", "tests/test_shift.py")
    _rebuilt_green(tmp_path, checks, {"checksscale1.txt": CHECKS_RELEASE,
                                      "checksshift2.txt": shift})

def test_tests_failing_for_a_plugin_fixture_or_a_module_want_the_environment_fixed(tmp_path):
    """nncf's tests ask for pytest-mock's `mocker`, which only tests/torch/requirements.txt
    lists: "fixture 'mocker' not found" is the environment's failure, not upstream's, so
    the plugin is what the environment must get (and the references are triaged again);
    a fixture no known plugin provides, or a real upstream failure, wants nothing."""
    from curator.dlbench import rebuild as rebuild_mod
    from curator.problem import Problem
    from curator.repos import environments
    from curator.runs import TriageResult, add_excluded
    from curator.store import now
    from curator.store import problems as problem_store

    missing = environments.missing_requirement
    assert missing("fails_upstream: fixture 'mocker' not found") == "pytest-mock"
    assert missing("fails_upstream: fixture 'benchmark' not found") == "pytest-benchmark"
    assert missing("fails_upstream: fixture 'my_own_model' not found") is None
    ws = workspace_mod.init(tmp_path / "ws")
    with Store(ws.db_path, "tester") as store:
        for pid in ("lr", "ddpg", "green", "onnx"):
            problem_store.save(store, Problem(id=pid, title=pid, entry_point="f",
                                              test_node_ids=["tests/test_x.py"]))
        with store.transaction():
            add_excluded(store, "lr", "tests/test_x.py::test_warmup",
                         "fails_upstream: fixture 'mocker' not found", now())
            add_excluded(store, "green", "tests/test_x.py::test_reset",
                         "fails_upstream: fixture 'mocker' not found", now())
            add_excluded(store, "green", "tests/test_x.py::test_cuda",
                         "needs_gpu: fixture 'mocker' not found", now())
            add_excluded(store, "ddpg", "tests/test_x.py::test_policy",
                         "fails_upstream: AssertionError: 1 != 2", now())
        triaged = [TriageResult("lr", False, "no test left: 1 fails_upstream"),
                   TriageResult("ddpg", False, "no test left: 1 fails_upstream"),
                   TriageResult("green", True),
                   TriageResult("onnx", False, "error: tests/test_x.py: ModuleNotFoundError: "
                                               "No module named 'onnx'"),
                   # nncf's tensorflow helper: its torch test excluded as flaky, then the
                   # solution's module did not import in the run without it
                   TriageResult("helper", False, "error with the failing tests excluded: "
                                "tests.tf.helpers: the solution did not import: "
                                "ModuleNotFoundError: No module named 'tensorflow_datasets'")]
        assert rebuild_mod.missing_requirements(store, triaged, "pkg") == {
            "pytest-mock": ["lr", "green"], "onnx": ["onnx"],
            "tensorflow-datasets": ["helper"]}


def test_a_module_the_environment_left_out_is_the_reason_and_not_wanted_again():
    """nncf's tests import torchvision, whose only build for this torch here is a CUDA
    one, so the environment leaves it out: a reference whose tests cannot import it is
    not green for that reason (the lock's), and is not asked for again."""
    from curator.dlbench import rebuild as rebuild_mod
    from curator.repos import environments

    lock = ("# torchvision left out: torchvision 0.28.0 does not import with torch==2.13.0+cpu\n"
            "# left out tinyunits>=1.2: no version fits\n"
            "numpy==1.26.4 \\\n    --hash=sha256:00\n"
            "# torchaudio left out: not a header line\n")
    left = environments.left_out(lock)
    assert set(left) == {"torchvision", "tinyunits"}
    error = ("error: tests/torch/test_algo.py: ModuleNotFoundError: No module named "
             "'torchvision'")
    reason = rebuild_mod._environment_reason(error, left, "nncf")
    assert reason.startswith("environment: torchvision left out: torchvision 0.28.0 does "
                             "not import") and error in reason
    other = "error: tests/test_x.py: ModuleNotFoundError: No module named 'onnx'"
    assert rebuild_mod._environment_reason(other, left, "nncf") == other
    assert not rebuild_mod.may_ask("torchvision", left) and rebuild_mod.may_ask("onnx", left)


def test_a_test_requirement_left_out_for_want_of_a_wheel_is_asked_for_when_tests_need_it():
    """nncf's tests/torch/requirements.txt pins efficientnet_pytorch==0.7.1, an sdist only:
    a test requirement is taken from wheels, so it was left out, and 4 references whose
    test modules import it were not green, never asked for again. A distribution left
    out only for want of a wheel is asked for (the recipe's extras build from source);
    one left out for another reason is not."""
    from curator.dlbench import rebuild as rebuild_mod
    from curator.repos import environments

    lock = ("# left out pytest-dependency: error: No solution found when resolving "
            "dependencies cause: Because all versions of pytest-dependency have no usable "
            "wheels and you require pytest-dependency, we can conclude that your "
            "requirements are unsatisfiable.\n"
            "# left out efficientnet_pytorch==0.7.1: error: No solution found when resolving "
            "dependencies cause: Because efficientnet-pytorch==0.7.1 has no usable wheels "
            "and you require efficientnet-pytorch==0.7.1, we can conclude that your "
            "requirements are unsatisfiable.\n"
            "# left out tinyunits>=1.2: Because tinyunits>=1.2 conflicts with tinycheck\n"
            "numpy==1.26.4 \\\n    --hash=sha256:00\n")
    left = environments.left_out(lock)
    assert rebuild_mod.may_ask("efficientnet-pytorch", left)
    assert rebuild_mod.may_ask("pytest-dependency", left)
    assert not rebuild_mod.may_ask("tinyunits", left)


DEEPCHEM_LIKE_TEST = '''import pytest

try:
    import tensorflow as tf
    has_tensorflow = True
except:
    has_tensorflow = False
try:
    from torch_geometric.data import Data as PygData
except ModuleNotFoundError:
    pass
try:
    import numpy as np
except ValueError:
    pass


@pytest.mark.tensorflow
def test_l2_loss_tf():
    assert tf.constant(1.0) is not None
'''


def test_a_name_error_for_a_module_imported_under_try_wants_that_module(tmp_path):
    """deepchem's tests import tensorflow under try/except and use `tf` unguarded: without
    tensorflow they fail with "NameError: name 'tf' is not defined", the environment's
    failure (an undeclared module), not upstream's."""
    from curator.dlbench import rebuild as rebuild_mod
    from curator.problem import Problem
    from curator.repos import environments
    from curator.runs import TriageResult, add_excluded
    from curator.store import now
    from curator.store import problems as problem_store

    assert environments.guarded_imports(DEEPCHEM_LIKE_TEST) == {
        "tf": "tensorflow", "PygData": "torch_geometric.data"}   # not np: ValueError only
    reason = "fails_upstream: NameError: name 'tf' is not defined"
    assert environments.missing_guarded(reason, DEEPCHEM_LIKE_TEST) == "tensorflow"
    assert environments.missing_guarded(
        "fails_upstream: NameError: name 'PygData' is not defined", DEEPCHEM_LIKE_TEST) == \
        "torch-geometric"
    assert environments.missing_guarded("fails_upstream: NameError: name 'np' is not "
                                        "defined", DEEPCHEM_LIKE_TEST) is None
    ws = workspace_mod.init(tmp_path / "ws")
    with Store(ws.db_path, "tester") as store:
        problem_store.save(store, Problem(id="loss", title="loss", entry_point="f",
                                          test_node_ids=["tests/test_losses.py"]))
        with store.transaction():
            add_excluded(store, "loss", "tests/test_losses.py::test_l2_loss_tf", reason, now())
        seen = []

        def read(pid, path):
            seen.append((pid, path))
            return DEEPCHEM_LIKE_TEST
        nodes: dict = {}
        assert rebuild_mod.missing_requirements(
            store, [TriageResult("loss", False, "the remaining tests pass with a stub")],
            "deepchem", read, nodes) == {"tensorflow": ["loss"]}
        assert seen == [("loss", "tests/test_losses.py")]
        assert nodes == {"tensorflow": {"tests/test_losses.py::test_l2_loss_tf"}}


RECOMMENDERS_LIKE_TEST = """\
import pytest

try:
    from geo.models.rbm import RBM
except ImportError:
    pass  # skip this import if we are in cpu environment


def test_class_init():
    assert RBM(2) is not None
"""
# The repository's module the test imports under try, and what it imports: tensorflow,
# through an own module (relative), after what the lock has and the standard library.
RECOMMENDERS_LIKE_FILES = {
    "geo/__init__.py": "",
    "geo/models/__init__.py": "import geo.version\n",
    "geo/version.py": "VERSION = '1'\n",
    "geo/models/rbm.py": "import os\nimport numpy as np\nfrom .base import Base\n\n\n"
                         "class RBM(Base):\n    pass\n",
    "geo/models/base.py": "from __future__ import annotations\nimport logging\n\n"
                          "try:\n    import pandas\nexcept ImportError:\n    pandas = None\n"
                          "import tensorflow as tf\n\n\nclass Base:\n    pass\n",
}
LOCK = "numpy==1.26.4 \\\n    --hash=sha256:00\npytest==8.3.3\n"


def test_a_name_error_for_an_own_module_imported_under_try_wants_what_it_imports(tmp_path):
    """recommenders' tests import the repository's RBM under try/except (its rbm.py
    imports tensorflow, which the environment lacks) and use `RBM` unguarded: they failed
    with "NameError: name 'RBM' is not defined", were excluded as failing upstream, and
    no test of 14 problems was left. The module the own module (or an own module it
    imports) imports and the lock lacks is asked for: neither numpy (locked), nor
    `os`/`logging`, nor pandas (imported under try, optional)."""
    from curator.dlbench import rebuild as rebuild_mod
    from curator.problem import Problem
    from curator.repos import environments
    from curator.runs import TriageResult, add_excluded
    from curator.store import now
    from curator.store import problems as problem_store

    reason = "fails_upstream: NameError: name 'RBM' is not defined"
    read = lambda path: RECOMMENDERS_LIKE_FILES.get(path, "")  # noqa: E731
    assert environments.missing_guarded(reason, RECOMMENDERS_LIKE_TEST, "geo", read,
                                        LOCK) == "tensorflow"
    # without the repository's files, nothing to say (its own package is never asked for)
    assert environments.missing_guarded(reason, RECOMMENDERS_LIKE_TEST, "geo") is None
    # with tensorflow locked, the import failed for another reason: nothing is asked
    assert environments.missing_guarded(reason, RECOMMENDERS_LIKE_TEST, "geo", read,
                                        LOCK + "tensorflow==2.15.1\n") is None
    ws = workspace_mod.init(tmp_path / "ws")
    with Store(ws.db_path, "tester") as store:
        problem_store.save(store, Problem(id="rbm", title="rbm", entry_point="sample",
                                          test_node_ids=["tests/test_rbm.py"]))
        with store.transaction():
            add_excluded(store, "rbm", "tests/test_rbm.py::test_class_init", reason, now())

        def read_at(pid, path):
            assert pid == "rbm"
            return RECOMMENDERS_LIKE_TEST if path == "tests/test_rbm.py" else read(path)
        nodes: dict = {}
        assert rebuild_mod.missing_requirements(
            store, [TriageResult("rbm", False, "no test left: 1 fails_upstream")],
            "geo", read_at, nodes, lock=LOCK) == {"tensorflow": ["rbm"]}
        assert nodes == {"tensorflow": {"tests/test_rbm.py::test_class_init"}}


def test_what_numpy_2_removed_wants_numpy_1_also_from_a_conftest_that_stops_pytest(tmp_path):
    """emukit's conftest imports GPy, whose paramz imports `numpy.lib.function_base`,
    which numpy 2 removed: pytest stops before it starts (`crashed`), every reference
    fails so, and asking for `numpy` (installed already) builds the same environment.
    What numpy 2 removed wants numpy<2, a crash before pytest started is read like a
    collection error, and what the lock already has is not asked for."""
    from curator.dlbench import rebuild as rebuild_mod
    from curator.problem import Problem
    from curator.repos import environments
    from curator.runs import TriageResult
    from curator.store import problems as problem_store

    missing = environments.missing_requirement
    crash = ("crashed: exited with status 4 before pytest started: E   "
             "ModuleNotFoundError: No module named 'numpy.lib.function_base'")
    assert missing(crash, "emukit") == "numpy<2"
    assert missing("fails_upstream: AttributeError: `np.float_` was removed in the NumPy "
                   "2.0 release. Use `np.float64` instead.") == "numpy<2"
    assert missing("error: A module that was compiled using NumPy 1.x cannot be run in\n"
                   "NumPy 2.1.1 as it may crash.") == "numpy<2"
    assert missing("error: ModuleNotFoundError: No module named 'numpy'") == "numpy"
    assert missing("error: ModuleNotFoundError: No module named 'onnx.helper'") == "onnx"
    numpy2 = "gpy==1.13.1 \\\n    --hash=sha256:00\nnumpy==2.1.1 \\\n    --hash=sha256:11\n"
    numpy1 = numpy2.replace("numpy==2.1.1", "numpy==1.26.4")
    satisfied = environments.locked_satisfies
    assert not satisfied("numpy<2", numpy2) and satisfied("numpy<2", numpy1)
    assert satisfied("numpy", numpy2) and satisfied("GPy", numpy2)
    assert not satisfied("onnx", numpy2) and not satisfied("numpy>=2.2", numpy2)
    ws = workspace_mod.init(tmp_path / "ws")
    with Store(ws.db_path, "tester") as store:
        for pid in ("evaluate", "convert"):
            problem_store.save(store, Problem(id=pid, title=pid, entry_point="f",
                                              test_node_ids=["tests/test_x.py"]))
        triaged = [TriageResult("evaluate", False, crash),
                   TriageResult("convert", False, crash.replace(
                       "'numpy.lib.function_base'", "'tinycheck'"))]
        assert rebuild_mod.missing_requirements(store, triaged, "emukit") == {
            "numpy<2": ["evaluate"], "tinycheck": ["convert"]}


# pkg/ops.py of the generated repositories whose release tests (tests/test_ops.py) call only
# shift, so a stub of scale passes them
SCALE_AND_SHIFT = ('def scale(x):\n    """Three times x."""\n    return 3 * x\n\n\n'
                   "def shift(x):\n    return x + 1\n")


def _triaged_then_given_tests(store, ws, url, engine, first_reason=runs.STUB_PASSES):
    """(first, after): the triage of checksscale1, not green for `first_reason`, then that
    result through the rebuild's search for the tests that use the function."""
    from curator.dlbench import rebuild as rebuild_mod

    (first,) = runs.triage(store, ws, ["checksscale1"], engine=engine)
    assert not first.green and first.reason.startswith(first_reason), first.reason
    rows = rebuild_mod._fresh_rows(store, ["checksscale1"])
    (after,) = rebuild_mod._with_tests_that_call_it(store, ws, url, rows, [first], engine,
                                                    None, dict(keep=frozenset()))
    return first, after


def _checks_workspace(tmp_path, files: dict, release_text: str, extra_conf: str = ""):
    """A workspace with one DL-Bench problem of a generated repository `checks`, resolved
    (runs in weak isolation); returns (workspace, url)."""
    from curator.dlbench import resolve as resolve_mod

    checks = make_repo(tmp_path / "checks", files)
    release = tmp_path / "release"
    release.mkdir()
    (release / "checksscale1.txt").write_text(release_text)
    ws = workspace_mod.init(tmp_path / "ws")
    url = "https://git.invalid/team/checks"
    (ws.root / "curator.toml").write_text(
        f'[dlbench.repos]\nchecks = "{url}"\n\n'
        f'[execution]\nisolation = "weak"\nallow_weak = true\n{extra_conf}')
    ws = workspace_mod.discover(str(ws.root))
    loaded = CliRunner().invoke(main, ["--workspace", str(ws.root), "dlbench", "import",
                                       str(release), "--json"])
    assert loaded.exit_code == 0, loaded.output
    with Store(ws.db_path, "tester") as store:
        resolve_mod.resolve(store, ws, {"checks": str(checks)})
    return ws, url


@pytest.mark.timeout(1200)
def test_a_whole_test_module_that_times_out_is_narrowed_to_the_tests_that_use_it(tmp_path):
    """pyro's whole-file targets (tests/infer/test_inference.py, hundreds of tests) did
    not finish within the first limit. The module is narrowed to its tests that use the
    function, said in the notes, and triaged again."""
    from curator.dlbench import rebuild as rebuild_mod

    tests = ("import time\n\nfrom pkg.ops import scale\n\n\n"
             "def test_scale():\n    assert scale(2) == 6\n\n\n"
             "def test_other_slow_thing():\n    time.sleep(600)\n")
    ws, url = _checks_workspace(tmp_path, {
        "pkg/__init__.py": "", "pkg/ops.py": 'def scale(x):\n    return 3 * x\n',
        "tests/test_ops.py": tests}, CHECKS_RELEASE, "first_timeout_s = 8\n")
    engine = runs._engine_for(ws, runs.TRIAGE_RUNS)
    with Store(ws.db_path, "tester") as store, engine:
        _, after = _triaged_then_given_tests(store, ws, url, engine, "timeout:")
        assert after.green, after.reason
        from curator.store import problems as problem_store

        assert problem_store.get(store, "checksscale1").test_node_ids == \
            ["tests/test_ops.py::test_scale"]
        record = json.loads(rebuild_mod._fresh_rows(store, ["checksscale1"])[0]["resolution"])
        assert record["narrowed_tests"] == ["tests/test_ops.py::test_scale"]
        assert any("tests/test_ops.py narrowed to the 1 tests in it that use scale" in n
                   for n in record["notes"])


@pytest.mark.timeout(1200)
def test_release_tests_that_never_call_the_function_get_the_tests_that_use_it(tmp_path):
    """GPflow's mvnquad comes with the quadrature tests of ndiagquad, which never call it:
    a stub passes them. The repository's tests that use it are added, said in the
    resolution notes, and the problem is triaged again (green: a stub now fails); once per
    resolution, so a rebuild that resumes leaves it as it is."""
    from curator.dlbench import rebuild as rebuild_mod
    from curator.store import problem_imports as import_store
    from curator.store import problems as problem_store

    ws, url = _checks_workspace(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops.py": SCALE_AND_SHIFT,
        "tests/test_ops.py": "from pkg.ops import shift\n\n\n"
                             "def test_shift():\n    assert shift(2) == 3\n",
        "tests/test_scaling.py": "from pkg.ops import scale\n\n\n"
                                 "def test_scale():\n    assert scale(2) == 6\n\n\n"
                                 "def test_unrelated():\n    assert 1 + 1 == 2\n"},
        CHECKS_RELEASE)   # test_cases: tests/test_ops.py
    engine = runs._engine_for(ws, runs.TRIAGE_RUNS)
    with Store(ws.db_path, "tester") as store, engine:
        first, after = _triaged_then_given_tests(store, ws, url, engine)
        assert after.green, after.reason
        problem = problem_store.get(store, "checksscale1")
        assert problem.test_node_ids == ["tests/test_ops.py", "tests/test_scaling.py::test_scale"]
        record = json.loads(rebuild_mod._fresh_rows(store, ["checksscale1"])[0]["resolution"])
        assert record["added_tests"] == ["tests/test_scaling.py::test_scale"]
        assert any("tests/test_scaling.py::test_scale added: the release's tests pass with a "
                   "stub of scale" in note for note in record["notes"])
        assert "test_scaling.py::test_scale" in (ws.problems_dir / "checksscale1" /
                                                  "problem.toml").read_text()
        # once per resolution: a stub-pass result met again adds nothing, runs nothing
        count = store.one("SELECT COUNT(*) AS n FROM runs")["n"]
        rows = rebuild_mod._fresh_rows(store, ["checksscale1"])
        (same,) = rebuild_mod._with_tests_that_call_it(store, ws, url, rows, [first], engine,
                                                       None, dict(keep=frozenset()))
        assert same is first and store.one("SELECT COUNT(*) AS n FROM runs")["n"] == count
        assert import_store.for_problem(store, "checksscale1") is not None


@pytest.mark.timeout(1200)
def test_a_function_no_test_names_gets_the_tests_of_its_callers(tmp_path):
    """GPflow's ndiag_mc: its release tests never call it (a stub passes them) and no test
    of the repository names it; MonteCarloLikelihood._mc_quadrature calls it, and the
    tests build its subclass Softmax. The tests that use a caller (a function or class of
    the repository that calls it, or a subclass of such a class) are added, said in the
    notes, and the problem is triaged again: green, a stub now fails them."""
    ws, url = _checks_workspace(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops.py": SCALE_AND_SHIFT,
        "pkg/models.py": "from .ops import scale\n\n\n"
                         "class Base:\n    def run(self, x):\n        return scale(x) + 1\n",
        "pkg/zoo.py": "from pkg import models\n\n\n"
                      "class Tripler(models.Base):\n    pass\n",
        "tests/test_ops.py": "from pkg.ops import shift\n\n\n"
                             "def test_shift():\n    assert shift(2) == 3\n",
        "tests/test_zoo.py": "from pkg.zoo import Tripler\n\n\n"
                             "def test_tripler():\n    assert Tripler().run(2) == 7\n\n\n"
                             "def test_unrelated():\n    assert 1 + 1 == 2\n"},
        CHECKS_RELEASE)   # test_cases: tests/test_ops.py
    record = _green_with_tests_added(ws, url, ["tests/test_zoo.py::test_tripler"])
    assert record["added_tests"] == ["tests/test_zoo.py::test_tripler"]
    assert any("found by their use of Tripler, which calls scale" in note
               for note in record["notes"]), record["notes"]


def _green_with_tests_added(ws, url, added: list[str], first_reason=runs.STUB_PASSES
                            ) -> dict:
    """checksscale1 triaged (not green for `first_reason`: a stub passes its release test,
    tests/test_ops.py), then given the tests that use it: green, with `added` after its
    own; its resolution record."""
    from curator.dlbench import rebuild as rebuild_mod
    from curator.store import problems as problem_store

    engine = runs._engine_for(ws, runs.TRIAGE_RUNS)
    with Store(ws.db_path, "tester") as store, engine:
        _, after = _triaged_then_given_tests(store, ws, url, engine, first_reason)
        assert after.green, after.reason
        assert problem_store.get(store, "checksscale1").test_node_ids == \
            ["tests/test_ops.py", *added]
        return json.loads(rebuild_mod._fresh_rows(store, ["checksscale1"])[0]["resolution"])


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_tests_added_for_a_stub_that_passes_may_want_the_environment_fixed(
        tmp_path, offline_index):  # noqa: F811
    """small-text's random_text_classification_dataset: its release tests pass with a
    stub, so the tests that use it are added, and 40 of them then failed for numpy 2's
    removals, which asks for numpy<2 — but the environment had been fixed before the
    tests were added, so they were only excluded (fails_upstream) and a stub passed the
    rest. What the added tests want from the environment is asked for too: here a
    module only they import, and the reference is green."""
    checks = make_repo(tmp_path / "checks", {
        "pkg/__init__.py": "",
        "pkg/ops.py": SCALE_AND_SHIFT,
        "tests/test_ops.py": "from pkg.ops import shift\n\n\n"
                             "def test_shift():\n    assert shift(2) == 3\n",
        "tests/test_scaling.py": "from tinycheck import close\n\nfrom pkg.ops import scale\n\n\n"
                                 "def test_scale():\n    assert close(scale(2), 6)\n"})
    release = tmp_path / "release"
    release.mkdir()
    (release / "checksscale1.txt").write_text(CHECKS_RELEASE)   # test_cases: test_ops.py
    ws = workspace_mod.init(tmp_path / "ws")
    url = "https://git.invalid/team/checks"
    (ws.root / "curator.toml").write_text(f'[dlbench.repos]\nchecks = "{url}"\n')
    base = ["--workspace", str(ws.root)]
    loaded = CliRunner().invoke(main, [*base, "dlbench", "import", str(release), "--json"])
    assert loaded.exit_code == 0, loaded.output
    data = rebuild(base, "--repo", f"checks={checks}")
    (repo,) = data["repos"]
    assert repo["env"] == "ok" and repo["resolved"] == 1, repo
    assert repo["green_ids"] == ["checksscale1"], repo["not_green"]
    recipe = recipes.load(workspace_mod.discover(str(ws.root)), url)
    assert recipe is not None and recipe.extras == ["tinycheck"]


@pytest.mark.timeout(1200)
def test_tests_the_release_runs_already_are_not_added_again(tmp_path):
    """small-text's get_badge_embeddings: the release gives the class QueryStrategiesTest,
    a stub passed it, and its test_badge methods were added beside it; given `f::C` and
    `f::C::t`, pytest runs only `t`, so the class's other tests no longer ran. A test
    that a release node id runs already (here a skipped one in the release's module) is
    not added; the release's module still runs whole."""
    from curator.store import problems as problem_store

    ws, url = _checks_workspace(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops.py": SCALE_AND_SHIFT,
        "tests/test_ops.py": "import pytest\n\nfrom pkg.ops import scale, shift\n\n\n"
                             "def test_shift():\n    assert shift(2) == 3\n\n\n"
                             "@pytest.mark.skip(reason='slow')\n"
                             "def test_scale_skipped():\n    assert scale(2) == 6\n",
        "tests/test_scaling.py": "from pkg.ops import scale\n\n\n"
                                 "def test_scale():\n    assert scale(2) == 6\n"},
        CHECKS_RELEASE)   # test_cases: tests/test_ops.py
    engine = runs._engine_for(ws, runs.TRIAGE_RUNS)
    with Store(ws.db_path, "tester") as store, engine:
        _, after = _triaged_then_given_tests(store, ws, url, engine)
        assert after.green, after.reason
        assert problem_store.get(store, "checksscale1").test_node_ids == \
            ["tests/test_ops.py", "tests/test_scaling.py::test_scale"]
        baseline = store.one("SELECT tests FROM baselines WHERE problem_id = 'checksscale1'")
        assert "tests/test_ops.py::test_shift" in baseline["tests"]


@pytest.mark.timeout(1200)
def test_a_function_whose_callers_no_test_names_gets_the_tests_of_their_callers(tmp_path):
    """pytorch3d's _safe_det_3x3: its release tests need a GPU, no other test names it,
    and its one caller, _check_valid_rotation_matrix, is named by no test either; Rotate
    calls that, and the transform tests build Rotate. With no caller's test found, the
    tests of the callers' callers are added, said in the notes."""
    ws, url = _checks_workspace(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops.py": SCALE_AND_SHIFT,
        "pkg/models.py": "from .ops import scale\n\n\n"
                         "def _checked(x):\n    return scale(x)\n\n\n"
                         "class Base:\n    def run(self, x):\n        return _checked(x) + 1\n",
        "tests/test_ops.py": "from pkg.ops import shift\n\n\n"
                             "def test_shift():\n    assert shift(2) == 3\n",
        "tests/test_models.py": "from pkg.models import Base\n\n\n"
                                "def test_base():\n    assert Base().run(2) == 7\n"},
        CHECKS_RELEASE)   # test_cases: tests/test_ops.py
    record = _green_with_tests_added(ws, url, ["tests/test_models.py::test_base"])
    assert any("found by their use of Base (through _checked), which calls scale" in note
               for note in record["notes"]), record["notes"]

@pytest.mark.timeout(1200)
def test_a_function_whose_release_tests_all_need_a_gpu_gets_the_tests_that_use_it(tmp_path):
    """pytorch3d's mesh_edge_loss: every test of its release module runs on "cuda:0", so
    on this machine each was excluded as needs_gpu and none was left. The repository's
    other tests that use it (here one on the CPU, beside one that needs a GPU too) are
    added as for a stub that passes, said in the notes; the triage excludes the one that
    needs a GPU, keeps the release's marked, and the problem is green."""
    gpu = ("def on(x, device):\n    if device.startswith('cuda'):\n"
           "        raise RuntimeError('Torch not compiled with CUDA enabled')\n"
           "    return x\n\n\n")
    ws, url = _checks_workspace(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops.py": SCALE_AND_SHIFT,
        "tests/test_ops.py": f"from pkg.ops import scale\n\n\n{gpu}"
                             "def test_scale():\n    assert scale(on(2, 'cuda:0')) == 6\n",
        "tests/test_uses.py": f"from pkg.ops import scale\n\n\n{gpu}"
                              "def test_scale_gpu():\n    assert scale(on(1, 'cuda')) == 3\n\n\n"
                              "def test_scale_cpu():\n    assert scale(on(2, 'cpu')) == 6\n"},
        CHECKS_RELEASE)   # test_cases: tests/test_ops.py
    added = ["tests/test_uses.py::test_scale_gpu", "tests/test_uses.py::test_scale_cpu"]
    record = _green_with_tests_added(ws, url, added, first_reason=runs.NOTHING_LEFT)
    assert sorted(record["added_tests"]) == sorted(added)
    assert any("cannot run here (1 needs_gpu)" in note for note in record["notes"]), \
        record["notes"]
    with Store(ws.db_path, "tester") as store:
        excluded = {r["node_id"]: r["reason"] for r in runs.excluded(store, "checksscale1")}
    assert sorted(excluded) == ["tests/test_ops.py::test_scale",
                                "tests/test_uses.py::test_scale_gpu"]
    assert all(r.startswith("needs_gpu:") for r in excluded.values())

@pytest.mark.timeout(1200)
def test_tests_added_leave_out_a_file_that_skips_itself_without_a_module_here(tmp_path):
    """pennylane's allequal: its release tests pass with a stub, and the tests that use it
    were added, some from tests/math/test_functions.py, which skips itself at import
    without jax (`pytest.importorskip`); pytest, given one of its tests by node id, finds
    no collector and runs none of the others either, so every later run of the reference
    ran no test. Such a file's tests are left out, said in the notes."""
    ws, url = _checks_workspace(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops.py": SCALE_AND_SHIFT,
        "tests/test_ops.py": "from pkg.ops import shift\n\n\n"
                             "def test_shift():\n    assert shift(2) == 3\n",
        "tests/test_other_backend.py": "import pytest\n\nfrom pkg.ops import scale\n\n"
                                       "backend = pytest.importorskip('no_such_backend')\n\n\n"
                                       "def test_scale_there():\n    assert scale(1) == 3\n",
        "tests/test_scale.py": "import pytest\n\nfrom pkg.ops import scale\n\n"
                               "np = pytest.importorskip('json')\n\n\n"
                               "def test_scale():\n    assert scale(2) == 6\n"},
        CHECKS_RELEASE)   # test_cases: tests/test_ops.py
    record = _green_with_tests_added(ws, url, ["tests/test_scale.py::test_scale"])
    assert any("tests/test_other_backend.py skips itself without no_such_backend" in note
               for note in record["notes"]), record["notes"]


# A release test of scale that runs only where `tinycheck` imports, skipped by the
# conftest as pennylane's skips a jax-marked test ("... only runs with ['torch']
# interfaces(s) but jax interface provided"), beside one that always runs: a stub of
# scale passes them.
SKIPPING_CONFTEST = ("import pytest\n\ntry:\n    import tinycheck\n"
                     "except ImportError:\n    tinycheck = None\n\n\n"
                     "def pytest_runtest_setup(item):\n"
                     "    if item.get_closest_marker('tinycheck') and tinycheck is None:\n"
                     "        pytest.skip(f'Test {item.nodeid} only runs with the tinycheck "
                     "interface')\n")
SKIPPING_TESTS = ("import pytest\n\nfrom pkg.ops import scale\n\n\n"
                  "def test_imports():\n    assert callable(scale)\n\n\n"
                  "@pytest.mark.tinycheck\n"
                  "def test_scale():\n    from tinycheck import close\n\n"
                  "    assert close(scale(2), 6)\n")
SKIPPING_FILES = {"pkg/__init__.py": "", "pkg/ops.py": SCALE_AND_SHIFT,
                  "tests/conftest.py": SKIPPING_CONFTEST,
                  "tests/test_ops.py": SKIPPING_TESTS,
                  "pytest.ini": "[pytest]\nmarkers =\n    tinycheck: needs tinycheck\n"}


def test_skip_reasons_name_the_modules_the_tests_went_without():
    from curator.dlbench import rebuild as rebuild_mod

    guarded = {"tf": "tensorflow", "torch": "torch", "jax": "jax", "jnp": "jax.numpy"}
    node = "tests/torch/test_jax_things.py::TestX::test_y[tf]"
    said = f"Test {node} only runs with ['torch'] interfaces(s) but jax interface provided"
    # the test's own node id, which the reason repeats, is no evidence (tf, torch there)
    assert rebuild_mod.skip_modules(said, node, guarded) == ["torch", "jax"]
    assert rebuild_mod.skip_modules("could not import 'tinycheck': No module named "
                                    "'tinycheck'", "t.py::a", {}) == ["tinycheck"]
    assert rebuild_mod.skip_modules("needs a GPU", "t.py::a", guarded) == []
    assert rebuild_mod.skip_modules("slow: jax.numpy too", "t.py::a", guarded) == \
        ["jax.numpy"]


@pytest.mark.timeout(1200)
def test_tests_that_call_it_skipped_without_a_module_want_that_module(tmp_path):
    """pennylane's _generate_tapes_and_coeffs: the only tests that call it are marked for
    jax, which nothing pennylane declares installs, so its conftest skips them and a stub
    passes the rest. When the tests a stub passed skipped the ones that call the function
    for want of a module the environment does not import (a conftest's skip naming a
    module it imports under try, or importorskip), that module's distribution is what
    the reference wants; a test that does not call it wants nothing."""
    import importlib.util

    from curator.dlbench import rebuild as rebuild_mod

    files = {**SKIPPING_FILES, "tests/test_ops.py": SKIPPING_TESTS + (
        "\n\ndef test_other():\n    from pkg.ops import shift\n\n"
        "    pytest.importorskip('othercheck')\n    assert shift(1) == 2\n")}
    ws, url = _checks_workspace(tmp_path, files, CHECKS_RELEASE)
    engine = runs._engine_for(ws, runs.TRIAGE_RUNS)
    with Store(ws.db_path, "tester") as store, engine:
        (first,) = runs.triage(store, ws, ["checksscale1"], engine=engine)
        assert not first.green and first.reason.startswith(runs.STUB_PASSES), first.reason
        wanted = rebuild_mod.skipped_requirements(
            store, ws, url, [first], "pkg", lambda m: importlib.util.find_spec(m) is not None)
    assert list(wanted) == ["tinycheck"], wanted   # not othercheck: shift's test
    ids, why = wanted["tinycheck"]
    assert ids == ["checksscale1"]
    assert why.startswith("tests/test_ops.py::test_scale, a test that calls scale "
                          "(checksscale1), skipped without tinycheck: Test "
                          "tests/test_ops.py::test_scale only runs with the tinycheck "
                          "interface"), why


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_a_module_the_calling_tests_skipped_without_goes_into_the_recipe(
        tmp_path, offline_index):  # noqa: F811
    """The rebuild adds such a module's distribution to the recipe's extras, why in its
    [extras_why], builds the environment again and triages the reference again: green.
    One that does not fit the environment (no release of it here) goes into [not_added]
    with why, and the reference's reason in the rebuild says so."""
    files = {**SKIPPING_FILES, "tests/test_shift.py": (
        "import pytest\n\nfrom pkg.ops import scale, shift\n\n\n"
        "def test_scale():\n    assert scale(1) == 3\n\n\n"
        "def test_shift():\n    pytest.importorskip('nosuchcheck')\n"
        "    assert shift(1) == 2\n")}
    checks = make_repo(tmp_path / "checks", files)
    shift = CHECKS_RELEASE.replace("`scale`", "`shift`").replace(
        "def scale", "def shift").replace("function:scale", "function:shift").replace(
        "tests/test_ops.py", "tests/test_shift.py")
    ws, url, base = _rebuilt_green(tmp_path, checks, {"checksscale1.txt": CHECKS_RELEASE,
                                                      "checksshift2.txt": shift})
    # said in the reference's reason, also when the rebuild resumes
    (other,) = rebuild(base, "--only", "checks")["repos"][0]["not_green"]
    assert other["id"] == "checksshift2"
    assert "nosuchcheck not added to the environment: " in other["reason"], other
    recipe = recipes.load(ws, url)
    assert recipe is not None and recipe.extras_why["tinycheck"].startswith(
        "tests/test_ops.py::test_scale, a test that calls scale (checksscale1), skipped "
        "without tinycheck"), recipe.extras_why
    assert list(recipe.not_added) == ["nosuchcheck"], recipe.not_added
    assert "skipped without nosuchcheck" in recipe.not_added["nosuchcheck"]
    assert "not added: " in recipe.not_added["nosuchcheck"]
