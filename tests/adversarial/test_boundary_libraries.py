"""What a repository's tests hand the target and get back crosses the boundary as the
repository's own callers would see it (cleanlab's create_knn_graph_and_index).

- A function the test module defines (a metric) is a handle to the judge's function; the
  candidate may test its truth (`metric or default`) and call it.
- A value of a library the test files import (scipy's csr_matrix) is rebuilt by the judge
  from scipy's own class, and a fitted scikit-learn NearestNeighbors (its tree and
  distance metric, rebuilt by scikit-learn's own reconstructors) crosses back whole.
- A message the judge could only decode by calling a function of the solution process is
  refused as a value that cannot cross (an error), never a tampered run of the reference.
"""

from __future__ import annotations

import os
import textwrap

import pytest
from execution_support import engine_fixture, repo_job, run_one, write_repo
from execution_support import job as self_contained_job

# What crosses and how does not depend on the sandbox around the two processes: the
# default (strong) one only. Both levels: tests/adversarial/test_boundary.py, _repos.py.
engine = engine_fixture(("strong",))


def in_order(engine, jobs):
    """The engine's results of these jobs, in the jobs' order."""
    results = {r.job_id: r for r in engine.run(jobs)}
    return [results[j.job_id] for j in jobs]


def reference_passes_and_wrong_fails(engine, jobs):
    """jobs: the reference's, then a wrong candidate's."""
    reference, wrong = in_order(engine, jobs)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert wrong.outcome == "failed", (wrong.reason, wrong.stdout[-3000:])
    return reference, wrong

KNN = textwrap.dedent("""\
    import numpy as np
    from scipy.sparse import csr_matrix
    from sklearn.neighbors import NearestNeighbors


    def knn_graph(features, n_neighbors=2, metric=None):
        metric = metric or "euclidean"
        index = NearestNeighbors(n_neighbors=n_neighbors, metric=metric).fit(features)
        distances, indices = index.kneighbors()
        n = features.shape[0]
        graph = csr_matrix((distances.ravel(), indices.ravel(),
                            np.arange(0, n * n_neighbors + 1, n_neighbors)), shape=(n, n))
        return graph, index
    """)
KNN_TESTS = textwrap.dedent("""\
    import numpy as np
    from scipy.sparse import csr_matrix
    from sklearn.neighbors import NearestNeighbors

    from pkg.knn import knn_graph

    POINTS = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 0.0], [3.0, 2.0]])


    def manhattan(a, b):
        return float(np.abs(a - b).sum())


    def test_graph_and_index():
        graph, index = knn_graph(POINTS, n_neighbors=1)
        assert isinstance(graph, csr_matrix)
        assert isinstance(index, NearestNeighbors)
        np.testing.assert_allclose(graph.toarray()[0], [0.0, 1.0, 0.0, 0.0])
        assert index.kneighbors(POINTS[:1], n_neighbors=1)[1][0, 0] == 0


    def test_the_tests_own_metric():
        graph, _ = knn_graph(POINTS, n_neighbors=1, metric=manhattan)
        np.testing.assert_allclose(graph.data, [1.0, 1.0, 2.0, 2.0])
    """)


def one_module_repo(root, module, text, test_file, tests):
    """A generated repository: package `pkg` holding one module, and one test file (or
    `shared_repo`, which holds them already)."""
    return put(root, {"pkg/__init__.py": "", f"pkg/{module}.py": text,
                      f"tests/{test_file}": tests})


SHARED_MARK = ".shared-by-tests"


def put(root, files):
    """`files` written into the generated repository `root`; in `shared_repo` they must be
    there already (its checkout never changes under its warm worker)."""
    if (root / SHARED_MARK).exists():
        for path, text in files.items():
            assert (root / path).read_text() == text, f"{path}: not shared_files'"
        return root
    return write_repo(root, files)


@pytest.fixture(scope="module")
def shared_repo(tmp_path_factory):
    """One generated repository, every file of `shared_files` written before its first
    run, for the tests whose module and test file no other test gives other text: a warm
    worker is one checkout's, and each test's own repository started one (a fresh
    interpreter importing torch and pytest's plugins, about 12 s of a test on the loaded
    2-core machine). A test whose files differ has its own."""
    repo = write_repo(tmp_path_factory.mktemp("shared") / "repo", shared_files())
    (repo / SHARED_MARK).write_text("")
    return repo


def module_job(repo, module, test_file, text, symbol, reference=False):
    """A run of `text` as pkg/MODULE.py, judged by tests/TEST_FILE, target `symbol`."""
    return repo_job(repo, f"pkg/{module}.py", text, f"tests/{test_file}", symbol, reference,
                    problem_id=module)


def make_repo(root):
    return one_module_repo(root, "knn", KNN, "test_knn.py", KNN_TESTS)


def knn_job(repo, text, reference=False):
    return module_job(repo, "knn", "test_knn.py", text, "knn_graph", reference)


def test_library_values_and_the_tests_own_functions_cross(engine, shared_repo):
    repo = make_repo(shared_repo)
    wrong = KNN.replace("distances.ravel()", "distances.ravel() * 2")
    jobs = [knn_job(repo, KNN, reference=True), knn_job(repo, wrong)]
    _, candidate = reference_passes_and_wrong_fails(engine, jobs)
    assert {t["outcome"] for t in candidate.tests} == {"failed"}, candidate.tests


def test_a_value_only_solution_code_can_rebuild_is_an_error_not_tampering(engine,
                                                                          shared_repo):
    """torch.fx's GraphModule pickles through a plain function of torch that is not one of
    the rebuilders: sent as a handle, the judge would have to call into the solution
    process to decode the reply."""
    repo = make_repo(shared_repo)
    traced = KNN.replace("return graph, index", "import torch\n    return graph, "
                         "torch.fx.symbolic_trace(torch.nn.Linear(2, 2))")
    result = next(iter(engine.run([knn_job(repo, traced)])))
    assert result.outcome == "error", (result.outcome, result.reason, result.evidence)
    assert "cannot cross from the solution process" in result.reason, result.reason


RNG = textwrap.dedent("""\
    import numpy as np


    class Device:
        def __init__(self, seed):
            self.rng = np.random.default_rng(seed)
            self.legacy = np.random.RandomState(seed)

        def shots(self, n):
            return self.rng.integers(0, 2, n), self.legacy.rand()


    def sample(device, n):
        return device.shots(n), np.random.default_rng(1)
    """)
RNG_TESTS = textwrap.dedent("""\
    import numpy as np

    from pkg.rng import Device, sample


    def test_generators_cross_with_their_state():
        device = Device(0)
        (bits, drawn), generator = sample(device, 8)
        expected = np.random.default_rng(0)
        assert bits.tolist() == expected.integers(0, 2, 8).tolist()
        assert drawn == np.random.RandomState(0).rand()
        assert isinstance(generator, np.random.Generator)
        assert generator.random() == np.random.default_rng(1).random()
    """)


def test_numpy_random_generators_cross_by_value(engine, shared_repo):
    """numpy's random Generator and RandomState (held by pennylane's devices, crossing with
    TorchLayer.forward's `self`) cross as numpy's own, with their state: before, every such run was an error, "a value of type
    __generator_ctor (rebuilt only by a function of the solution process) cannot cross"."""
    repo = one_module_repo(shared_repo, "rng", RNG, "test_rng.py", RNG_TESTS)
    wrong = RNG.replace("np.random.default_rng(1)", "np.random.default_rng(2)")
    jobs = [module_job(repo, "rng", "test_rng.py", RNG, "sample", reference=True),
            module_job(repo, "rng", "test_rng.py", wrong, "sample")]
    reference_passes_and_wrong_fails(engine, jobs)


NET = textwrap.dedent("""\
    import torch


    class Doubler(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("k", torch.tensor(2.0))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * self.k
    """)
NET_TESTS = textwrap.dedent("""\
    import torch

    from pkg.net import Doubler


    def test_scripted_module():
        scripted = torch.jit.script(Doubler())
        assert torch.equal(scripted(torch.ones(3)), torch.full((3,), 2.0))


    def test_eager_module():
        assert torch.equal(Doubler()(torch.ones(3)), torch.full((3,), 2.0))
    """)


def test_scripting_a_module_whose_method_is_the_target(engine, shared_repo):
    """kornia's `torch.jit.script(Module())` tests where `Module.forward` is the target: the
    judge's module crosses as data and is scripted with the candidate's method."""
    root = one_module_repo(shared_repo, "net", NET, "test_net.py", NET_TESTS)

    def job(text, reference=False):
        return module_job(root, "net", "test_net.py", text, "Doubler.forward", reference)

    jobs = [job(NET, reference=True), job(NET.replace("x * self.k", "x * self.k + 1"))]
    reference, wrong = in_order(engine, jobs)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    outcomes = {t["id"].split("::")[-1]: t["outcome"] for t in wrong.tests}
    assert outcomes == {"test_scripted_module": "failed", "test_eager_module": "failed"}, \
        (wrong.tests, wrong.stdout[-3000:])


PATCHED = textwrap.dedent("""\
    def helper(x):
        return x + 1


    def target(x):
        return helper(x) * 2


    class Model:
        def _inner(self):
            return 1

        def fit(self):
            return self._inner() * 3
    """)
PATCHING_TESTS = textwrap.dedent("""\
    from unittest import mock

    import pkg.ops
    from pkg.ops import Model, target


    def test_module_function_patched():
        with mock.patch("pkg.ops.helper", return_value=10) as fake:
            assert target(1) == 20
        fake.assert_called_once_with(1)
        assert target(1) == 4      # restored in both processes


    def test_class_method_patched():
        with mock.patch.object(Model, "_inner", return_value=5):
            assert Model().fit() == 15
        assert Model().fit() == 3


    def test_monkeypatched(monkeypatch):
        monkeypatch.setattr(pkg.ops, "helper", lambda x: 100)
        monkeypatch.setattr(Model, "_inner", lambda self: 7)
        assert target(1) == 200
        assert Model().fit() == 21


    def test_monkeypatch_was_undone():
        assert target(1) == 4 and Model().fit() == 3
    """)


def test_a_tests_mock_patch_reaches_the_candidate(engine, shared_repo):
    """A test's mock.patch (or pytest's monkeypatch) of a module function or a class
    method the candidate calls is applied in the solution process too while it lasts;
    the mock stays the judge's."""
    root = one_module_repo(shared_repo, "ops", PATCHED, "test_patch.py",
                           PATCHING_TESTS)

    def job(text, symbol, reference=False):
        return module_job(root, "ops", "test_patch.py", text, symbol, reference)

    jobs = [job(PATCHED, "target", reference=True), job(PATCHED, "Model.fit", reference=True),
            job(PATCHED.replace("return helper(x) * 2", "return (x + 1) * 2"), "target")]
    function_ref, method_ref, inlined = in_order(engine, jobs)
    assert function_ref.outcome == "passed", (function_ref.reason, function_ref.stdout[-3000:])
    assert method_ref.outcome == "passed", (method_ref.reason, method_ref.stdout[-3000:])
    # a candidate that does not call the patched helper fails the patched test, as upstream
    outcomes = {t["id"].split("::")[-1]: t["outcome"] for t in inlined.tests}
    assert outcomes["test_module_function_patched"] == "failed", inlined.tests


TYPED = textwrap.dedent("""\
    import torch


    def target(x: torch.Tensor) -> torch.Tensor:
        return x * 2


    def caller(x: torch.Tensor) -> torch.Tensor:
        return target(x) + 1
    """)
SCRIPTED_CALLER_TESTS = textwrap.dedent("""\
    import torch

    from pkg.ops import caller


    def test_scripted_caller():
        scripted = torch.jit.script(caller)
        assert torch.equal(scripted(torch.ones(2)), torch.full((2,), 3.0))
    """)


def test_scripting_judge_code_that_calls_the_target(engine, tmp_path):
    """TorchScript compiling the repository's own caller of the target: the call to the
    proxy stays a Python call (as @torch.jit.ignore), so the candidate is still judged."""
    root = one_module_repo(tmp_path / "repo", "ops", TYPED, "test_caller.py",
                           SCRIPTED_CALLER_TESTS)

    def job(text, reference=False):
        return module_job(root, "ops", "test_caller.py", text, "target", reference)

    jobs = [job(TYPED, reference=True), job(TYPED.replace("return x * 2", "return x * 3"))]
    reference_passes_and_wrong_fails(engine, jobs)


SCRIPTED_CLASS = textwrap.dedent("""\
    import torch


    def _warn_deprecated() -> None:
        pass


    @torch.jit.script
    class _FunctionalStep:
        def __init__(self, lr: float):
            _warn_deprecated()
            self.lr = lr


    def target(x: torch.Tensor) -> torch.Tensor:
        return x * _FunctionalStep(2.0).lr
    """)
SCRIPTED_CLASS_TESTS = textwrap.dedent("""\
    import torch

    from pkg.optim import target


    def test_target():
        assert torch.equal(target(torch.ones(2)), torch.full((2,), 2.0))
    """)


def test_a_class_the_repository_scripts_at_import_compiles_in_the_judge(engine, shared_repo):
    """torch.distributed.optim scripts classes at import (`@torch.jit.script class
    _FunctionalAdadelta` calls a module function): compiled in the judge, where
    torch.jit.script is wrapped, names resolve in the module's frame, not the wrapper's
    (ignite's conftest imports it: every run failed with "undefined value")."""
    root = one_module_repo(shared_repo, "optim", SCRIPTED_CLASS, "test_optim.py",
                           SCRIPTED_CLASS_TESTS)
    job = module_job(root, "optim", "test_optim.py", SCRIPTED_CLASS, "target",
                     reference=True)
    (result,) = engine.run([job])
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])


READER = textwrap.dedent("""\
    def first_line(path):
        with open(path, encoding="utf-8") as handle:
            return handle.readline().strip()
    """)
TMP_TESTS = textwrap.dedent("""\
    from pkg.io import first_line


    def test_reads_a_file_the_test_wrote(tmp_path):
        path = tmp_path / "data.txt"
        path.write_text("hello\\nworld\\n", encoding="utf-8")
        assert first_line(str(path)) == "hello"
    """)


def test_the_tests_temporary_files_are_readable(engine, shared_repo):
    """tmp_path is the judge's (pytest makes it 0700): the candidate, under another uid
    where the machine allows one, reads a file a test wrote there and handed it by path
    (kornia's load_image_to_tensor). The folders are opened for reading only."""
    root = one_module_repo(shared_repo, "io", READER, "test_io.py", TMP_TESTS)
    job = module_job(root, "io", "test_io.py", READER, "first_line", reference=True)
    (result,) = list(engine.run([job]))
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])


TEMPDIR_TESTS = textwrap.dedent("""\
    import os
    import tempfile

    from pkg.io import first_line


    def test_reads_a_file_in_a_folder_the_test_made():
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "data.txt")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("hello\\nworld\\n")
            assert first_line(path) == "hello"
    """)


def test_a_folder_the_test_makes_itself_is_readable(engine, tmp_path):
    """stanza's char model tests write their text into `tempfile.TemporaryDirectory()`
    (mkdtemp makes it 0700, the judge's) and hand the candidate its path: the candidate,
    under another uid, reads it, as with tmp_path (before: PermissionError, and the
    problem not green for the boundary)."""
    root = one_module_repo(tmp_path / "repo", "io", READER, "test_io.py", TEMPDIR_TESTS)
    job = module_job(root, "io", "test_io.py", READER, "first_line", reference=True)
    (result,) = list(engine.run([job]))
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])


def test_pytests_temporary_folders_are_opened_for_reading_only(tmp_path_factory,
                                                              monkeypatch):
    """What the judge installs: a test's folder 0755, its parents traversable only."""
    from _pytest.tmpdir import TempPathFactory

    from curator.execution import boundary

    # put back after this test: the judge's patch, here in the suite's own pytest
    for name in ("getbasetemp", "mktemp"):
        monkeypatch.setattr(TempPathFactory, name, getattr(TempPathFactory, name))
    monkeypatch.setattr(TempPathFactory, "__curator_readable__", False, raising=False)
    boundary.install_readable_tmp()
    made = tmp_path_factory.mktemp("opened")
    assert made.stat().st_mode & 0o777 == 0o755
    assert made.parent.stat().st_mode & 0o777 == 0o711
    import tempfile

    monkeypatch.setattr(tempfile, "mkdtemp", tempfile.mkdtemp)
    boundary.install_readable_tmp()
    with tempfile.TemporaryDirectory(dir=made) as own:
        assert os.stat(own).st_mode & 0o777 == 0o755


# A library value that pickles as `functools.partial(ItsClass, **fields)` with no arguments
# (TensorFlow's variables do: GPflow's kernels return them) is rebuilt by the judge from its
# own class; before, the partial crossed as a handle to the solution process and the reply
# could not be decoded.
BOX = textwrap.dedent("""\
    import functools


    class Box:
        def __init__(self, value, name="box"):
            self.value, self.name = value, name

        def __reduce__(self):
            return functools.partial(Box, value=self.value, name=self.name), ()
    """)
MAKE = "from pkg.box import Box\n\n\ndef make_box(v):\n    return Box(v * 2, name='made')\n"
BOX_TESTS = textwrap.dedent("""\
    from pkg.box import Box
    from pkg.make import make_box


    def test_box():
        box = make_box(2.0)
        assert type(box) is Box
        assert (box.value, box.name) == (4.0, "made")
    """)


def test_a_value_that_pickles_as_a_partial_of_its_class_crosses(engine, shared_repo):
    repo = one_module_repo(shared_repo, "box", BOX, "test_box.py", BOX_TESTS)
    put(repo, {"pkg/make.py": MAKE})
    jobs = [module_job(repo, "make", "test_box.py", MAKE, "make_box", reference=True),
            module_job(repo, "make", "test_box.py", MAKE.replace("v * 2", "v * 3"),
                       "make_box")]
    reference, wrong = in_order(engine, jobs)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)


CLONE = textwrap.dedent("""\
    from sklearn.base import clone


    def fit_copy(clf, X, y):
        # cleanlab's cross-validation: a fresh, unfitted copy of the caller's classifier
        copy = clone(clf)
        copy.fit(X, y)
        return copy.predict_proba(X), copy.get_params(deep=False), copy is clf
    """)
CLONE_TESTS = textwrap.dedent("""\
    import numpy as np
    import pytest
    from sklearn.base import BaseEstimator
    from sklearn.linear_model import LogisticRegression

    from solution import fit_copy


    class Reshaping(BaseEstimator):
        # cleanlab's test classifier: no parameters, a library model inside
        def __init__(self):
            self.clf = LogisticRegression()

        def fit(self, X, y):
            self.clf.fit(X.reshape(len(X), -1), np.asarray(y).ravel())
            return self

        def predict_proba(self, X):
            return self.clf.predict_proba(X.reshape(len(X), -1))


    class WithValidation(LogisticRegression):
        def fit(self, X, y, X_val=None):
            return super().fit(X, y)


    def data():
        rng = np.random.default_rng(0)
        return rng.normal(size=(60, 3)), np.arange(60) % 4


    @pytest.mark.parametrize("clf", [Reshaping(), WithValidation(C=0.5)])
    def test_a_clone_of_the_tests_estimator_is_made_in_the_judge(clf):
        X, y = data()
        proba, params, same = fit_copy(clf, X, y)
        assert proba.shape == (60, 4) and not same
        assert params == clf.get_params(deep=False)
        assert not hasattr(clf, "coef_") and not hasattr(getattr(clf, "clf", clf), "coef_")


    def test_a_judge_object_that_is_no_estimator_is_not_cloned():
        with pytest.raises(TypeError):
            fit_copy(len, np.ones((2, 1)), [0, 1])
    """)


def test_sklearn_clone_of_a_tests_estimator(engine):
    # scikit-learn's clone() of a handle rebuilt it from its class, the boundary's own
    # handle class (TypeError: JudgeObject.__init__() got an unexpected keyword argument)
    result = run_one(engine, CLONE, CLONE_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])


TAGGED = textwrap.dedent("""\
    import numpy as np


    class Tagged(np.ndarray):
        \"\"\"An ndarray that knows whether it is trainable (pennylane's numpy.tensor).\"\"\"

        def __new__(cls, values, trainable=True):
            obj = np.asarray(values).view(cls)
            obj.trainable = trainable
            return obj

        def __array_finalize__(self, obj):
            self.trainable = getattr(obj, "trainable", True)

        def __reduce__(self):
            rebuild, args, state = super().__reduce__()
            return rebuild, args, (state, self.trainable)

        def __setstate__(self, state):
            super().__setstate__(state[0])
            self.trainable = state[1]
    """)
TAGGED_OPS = textwrap.dedent("""\
    from pkg.arrays import Tagged


    def trainables(values):
        return [v for v in values if isinstance(v, Tagged) and v.trainable]
    """)
TAGGED_TESTS = textwrap.dedent("""\
    from pkg.arrays import Tagged
    from pkg.ops import trainables


    def test_the_repository_array_class_crosses_whole():
        (found,) = trainables([Tagged([1.0, 2.0]), Tagged([3.0], trainable=False), 4.0])
        assert isinstance(found, Tagged) and found.trainable
        assert found.tolist() == [1.0, 2.0]
    """)


def test_an_ndarray_subclass_of_the_repository_crosses_as_itself(engine, tmp_path):
    """pennylane's `numpy.tensor` (an ndarray subclass with requires_grad) came back from
    extract_tensors as a plain ndarray: "'numpy.ndarray' object has no attribute
    'requires_grad'". A subclass the repository or a library defines is the judge's own
    class again; only a solution's own subclass arrives as its base."""
    repo = one_module_repo(tmp_path / "repo", "ops", TAGGED_OPS, "test_ops.py", TAGGED_TESTS)
    (repo / "pkg" / "arrays.py").write_text(TAGGED)
    wrong = TAGGED_OPS.replace("and v.trainable", "")
    jobs = [module_job(repo, "ops", "test_ops.py", TAGGED_OPS, "trainables", reference=True),
            module_job(repo, "ops", "test_ops.py", wrong, "trainables")]
    reference_passes_and_wrong_fails(engine, jobs)


WORDS = textwrap.dedent("""\
    class Word(dict):
        \"\"\"A mapping that refuses assignment, hashable (pennylane's PauliWord).\"\"\"

        def __reduce__(self):
            return Word, (dict(self),)

        def __hash__(self):
            return hash(frozenset(self.items()))

        def __setitem__(self, key, item):
            raise TypeError("Word object does not support assignment")

        def update(self, *args, **kwargs):
            raise TypeError("Word object does not support assignment")
    """)
WORD_OPS = textwrap.dedent("""\
    from pkg.words import Word


    def weights(word, scale):
        return {Word({0: "X", 1: "Z"}): scale * len(word)}
    """)
WORD_TESTS = textwrap.dedent("""\
    from pkg.ops import weights
    from pkg.words import Word


    def test_mappings_that_refuse_assignment_cross_both_ways():
        word = Word({0: "Y"})
        result = weights(word, 2.0)
        assert result == {Word({0: "X", 1: "Z"}): 2.0}
        assert dict(word) == {0: "Y"}   # the judge's argument is whole afterwards
    """)


def test_a_dict_subclass_that_refuses_assignment_crosses(engine, tmp_path):
    """pennylane's PauliWord (a dict whose __setitem__ raises) was emptied and refused when
    the judge adopted a reply holding one or copied an argument back: "TypeError: PauliWord
    object does not support assignment" (TorchLayer.forward, _coefficients_no_filter)."""
    repo = one_module_repo(tmp_path / "repo", "ops", WORD_OPS, "test_ops.py", WORD_TESTS)
    (repo / "pkg" / "words.py").write_text(WORDS)
    wrong = WORD_OPS.replace('1: "Z"', '1: "Y"')
    jobs = [module_job(repo, "ops", "test_ops.py", WORD_OPS, "weights", reference=True),
            module_job(repo, "ops", "test_ops.py", wrong, "weights")]
    reference_passes_and_wrong_fails(engine, jobs)


EXACT = textwrap.dedent("""\
    from decimal import Decimal
    from fractions import Fraction


    def ratios(width, height):
        return {"aspect": Fraction(width, height), "price": Decimal("1.10")}
    """)
EXACT_TESTS = textwrap.dedent("""\
    from decimal import Decimal
    from fractions import Fraction

    from pkg.exact import ratios


    def test_exact_values():
        out = ratios(640, 480)
        assert type(out["aspect"]) is Fraction and out["aspect"] == Fraction(4, 3)
        assert type(out["price"]) is Decimal and out["price"] == Decimal("1.10")
    """)


def test_the_standard_librarys_exact_numbers_cross(engine, shared_repo):
    """A Fraction (PIL's image info, which imagededup's preprocess_image returns in its
    values) or a Decimal crosses as the judge's own class: it was `a value of type
    fractions.Fraction cannot cross`, an error of the reference."""
    repo = one_module_repo(shared_repo, "exact", EXACT, "test_exact.py", EXACT_TESTS)
    wrong = EXACT.replace("Fraction(width, height)", "Fraction(height, width)")
    jobs = [module_job(repo, "exact", "test_exact.py", EXACT, "ratios", reference=True),
            module_job(repo, "exact", "test_exact.py", wrong, "ratios")]
    reference_passes_and_wrong_fails(engine, jobs)


KERNELS = textwrap.dedent("""\
    import weakref

    import numba
    import numpy as np


    @numba.njit
    def squared(a, b):
        return ((a - b) ** 2).sum()


    class _Context:
        pass


    # numba's dispatchers hold the compiler's state, weak proxies among it, some dead
    squared.context = weakref.proxy(_Context())


    class Index:
        \"\"\"A search index holding a compiled distance (pynndescent's NNDescent).\"\"\"

        def __init__(self, data, dist):
            self.data, self.dist = data, dist

        def query(self, point):
            return int(np.argmin(np.array([self.dist(point, row) for row in self.data])))
    """)
NEIGHBORS = textwrap.dedent("""\
    import numba
    import numpy as np

    from pkg.kernels import Index, squared


    @numba.njit
    def _closeness(a, b):
        return -((a - b) ** 2).sum()


    def neighbors(data):
        index = Index(data, squared)
        nearest = [min((j for j in range(len(data)) if j != i),
                       key=lambda j: squared(data[i], data[j])) for i in range(len(data))]
        return np.array(nearest), index, _closeness
    """)
NEIGHBORS_TESTS = textwrap.dedent("""\
    import numpy as np

    from pkg.kernels import Index, squared
    from pkg.knn import neighbors

    POINTS = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 0.0], [3.0, 2.0]])


    def test_neighbors_and_their_index():
        neighbors(POINTS)
        nearest, index, closeness = neighbors(POINTS)
        assert nearest.tolist() == [1, 0, 3, 2]
        assert isinstance(index, Index) and index.dist is squared
        assert index.query(np.array([2.9, 1.8])) == 3
        assert closeness(POINTS[0], POINTS[2]) == -9.0
    """)


@pytest.mark.timeout(600)   # numba compiles in both processes
def test_a_librarys_compiled_functions_cross_by_name(engine, tmp_path):
    """umap's nearest_neighbors returns pynndescent's NNDescent, which holds numba
    dispatchers: numba pickles one as cloudpickled code, so every such run was an error
    ("a value of type _unpickle__CustomPickled ... cannot cross"). A dispatcher its
    library's module holds by name is the judge's own of that name, never walked nor
    rewritten when the reply is adopted (a second call was a ReferenceError); the
    candidate's own is a handle, run in the solution process."""
    repo = one_module_repo(tmp_path / "repo", "knn", NEIGHBORS, "test_knn.py",
                           NEIGHBORS_TESTS)
    (repo / "pkg" / "kernels.py").write_text(KERNELS)
    wrong = NEIGHBORS.replace("return np.array(nearest)", "return np.array(nearest[::-1])")
    jobs = [module_job(repo, "knn", "test_knn.py", NEIGHBORS, "neighbors", reference=True),
            module_job(repo, "knn", "test_knn.py", wrong, "neighbors")]
    reference_passes_and_wrong_fails(engine, jobs)


INTEGRANDS = textwrap.dedent("""\
    from collections.abc import Iterable


    def integrate(funcs, xs):
        # GPflow's ndiagquad: one integrand, or an iterable of them
        if isinstance(funcs, Iterable):
            return [integrate(f, xs) for f in funcs]
        if not callable(funcs):
            raise TypeError("not an integrand")
        return sum(funcs(x) for x in xs)
    """)
INTEGRAND_TESTS = textwrap.dedent("""\
    import pytest

    from solution import integrate


    class Weights:
        def __init__(self, w):
            self.w = w


    def test_one_integrand():
        assert integrate(lambda x: x * 2, [1, 2]) == 6


    def test_a_list_and_a_generator_of_integrands():
        assert integrate([lambda x: x, lambda x: 1], [1, 2]) == [3, 2]
        assert integrate((f for f in [lambda x: x * x]), [1, 2]) == [5]


    def test_an_object_that_is_neither():
        with pytest.raises(TypeError):
            integrate(Weights(2), [1])
    """)


def test_a_handle_has_only_the_protocols_of_the_judges_object(engine):
    """A test's function handed to the candidate was iterable in the solution process (the
    handle defined every dunder): GPflow's ndiagquad took one integrand for a list of
    them and iterated it ("'function' object is not iterable", in the judge)."""
    wrong = INTEGRANDS.replace("sum(funcs(x) for x in xs)", "sum(funcs(x) for x in xs[1:])")
    jobs = [self_contained_job(INTEGRANDS, INTEGRAND_TESTS, 60),
            self_contained_job(wrong, INTEGRAND_TESTS, 60)]
    reference_passes_and_wrong_fails(engine, jobs)


# The part of TensorFlow's API the boundary uses for graph tensors, as a generated library
# (the suite's environment has no TensorFlow; GPflow's real one is in the commit message):
# tensors of a tf.function being traced are SymbolicTensors, which do not pickle; the graph
# knows the value of its constants (tensor_util.constant_value); init_scope leaves tracing.
GRAPH_OPS = textwrap.dedent("""\
    import contextlib

    import numpy as np

    _TRACING = []


    class EagerTensor:
        def __init__(self, value):
            self.value = np.asarray(value)

        def numpy(self):
            return self.value

        def __reduce__(self):
            return convert_to_tensor, (self.value,)


    class SymbolicTensor:
        def __init__(self, name, constant=None):
            self.name, self.constant = name, constant

        def __reduce__(self):
            raise TypeError("cannot pickle 'SymbolicTensor' object")


    def convert_to_tensor(value):
        if isinstance(value, (EagerTensor, SymbolicTensor)):
            return value
        if _TRACING:
            return SymbolicTensor("Const:0", np.asarray(value))
        return EagerTensor(value)


    def exp(x):
        x = convert_to_tensor(x)
        if isinstance(x, SymbolicTensor):
            return SymbolicTensor("Exp:0")
        return EagerTensor(np.exp(x.value))


    @contextlib.contextmanager
    def init_scope():
        saved = _TRACING[:]
        _TRACING.clear()
        try:
            yield
        finally:
            _TRACING[:] = saved


    def function(f):
        def traced(*args):
            _TRACING.append(f)
            try:
                return f(*[SymbolicTensor("x:0") for _ in args])
            finally:
                _TRACING.pop()
        return traced
    """)
TENSOR_UTIL = textwrap.dedent("""\
    from tensorflow.python.framework.ops import SymbolicTensor


    def constant_value(tensor):
        return tensor.constant if isinstance(tensor, SymbolicTensor) else None
    """)
QUAD = textwrap.dedent("""\
    import numpy as np
    from tensorflow.python.framework import ops


    def points(n):
        return ops.convert_to_tensor(np.arange(n, dtype=float))


    def integrate(f, xs):
        return ops.convert_to_tensor(np.asarray(f(xs).numpy()).sum())
    """)
QUAD_TESTS = textwrap.dedent("""\
    import numpy as np
    import pytest
    from tensorflow.python.framework import ops, tensor_util

    from pkg.quad import integrate, points

    EXPECTED = float(np.exp([0.0, 1.0, 2.0]).sum())


    def test_eagerly():
        assert integrate(ops.exp, points(3)).numpy() == pytest.approx(EXPECTED)


    def test_under_a_traced_function():
        # GPflow's tests call ndiagquad inside tf.function: its points are constants of
        # the graph, and the test's integrand is called back while the judge traces
        traced = ops.function(lambda: integrate(ops.exp, points(3)))
        assert tensor_util.constant_value(traced()) == pytest.approx(EXPECTED)


    def test_a_tensor_known_only_when_the_graph_runs():
        ops.function(lambda x: integrate(ops.exp, x))(1.0)
    """)


def graph_repo(root):
    repo = one_module_repo(root, "quad", QUAD, "test_quad.py", QUAD_TESTS)
    framework = repo / "tensorflow" / "python" / "framework"
    framework.mkdir(parents=True)
    for folder in (repo / "tensorflow", repo / "tensorflow" / "python", framework):
        (folder / "__init__.py").write_text("")
    (framework / "ops.py").write_text(GRAPH_OPS)
    (framework / "tensor_util.py").write_text(TENSOR_UTIL)
    return repo


def test_a_tf_function_being_traced_hands_the_candidate_values(engine, tmp_path):
    """GPflow's reshape_Z_dZ and ndiagquad under the test's tf.function: a graph constant
    (the Gauss-Hermite points) crosses as its value and the test's integrand, called back
    while the judge traces, computes eagerly; before, both were "cannot pickle
    'SymbolicTensor'" failures of the reference. A tensor whose value exists only when
    the graph runs ends the run as an error saying it could not be sent."""
    repo = graph_repo(tmp_path / "repo")
    traced = ["tests/test_quad.py::test_eagerly",
              "tests/test_quad.py::test_under_a_traced_function"]
    wrong = QUAD.replace(".sum())", ".sum() + 1)")

    def job(text, node_ids, reference=False):
        made = module_job(repo, "quad", "test_quad.py", text, "integrate", reference)
        made.node_ids = node_ids
        return made

    jobs = [job(QUAD, traced, reference=True), job(wrong, traced),
            job(QUAD, ["tests/test_quad.py::test_a_tensor_known_only_when_the_graph_runs"],
                reference=True)]
    reference, candidate, symbolic = in_order(engine, jobs)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert {t["outcome"] for t in candidate.tests} == {"failed"}, candidate.tests
    assert symbolic.outcome == "error", (symbolic.outcome, symbolic.reason)
    assert "symbolic tensor of a tf.function being traced (x:0" in symbolic.reason
    assert "cannot cross from the judge to the solution process" in symbolic.reason


CACHE_TESTS = textwrap.dedent("""\
    import os

    from pkg.io import first_line


    def test_the_judges_caches_are_its_own(tmp_path):
        # numba saves what it compiles where NUMBA_CACHE_DIR says: a folder of the
        # judge's own run, never one the solution process (another uid) made first
        folder = os.environ["NUMBA_CACHE_DIR"]
        assert os.path.commonpath([folder, os.getcwd()]) == os.path.dirname(os.getcwd())
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "index"), "w") as handle:
            handle.write("compiled")
        (tmp_path / "a.txt").write_text("cached\\n")
        assert first_line(str(tmp_path / "a.txt")) == "cached"
    """)


def test_the_judge_of_a_repository_run_keeps_its_caches_in_its_own_folder(engine,
                                                                          tmp_path):
    """pynndescent's NNDescent.__setstate__ compiles its search functions in the judge when
    umap's index crosses: numba saved them in the worker's cache folder, which the solution
    process had made under its uid ("PermissionError: ... /tmp/.cache/numba/pynndescent_",
    and the run was tampered)."""
    repo = one_module_repo(tmp_path / "repo", "io", READER, "test_io.py", CACHE_TESTS)
    job = module_job(repo, "io", "test_io.py", READER, "first_line", reference=True)
    (result,) = list(engine.run([job]))
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])


def shared_files() -> dict[str, str]:
    """What `shared_repo` holds: each test's module and test file (by one_module_repo's
    arguments), none given twice."""
    files = {"pkg/__init__.py": "", "pkg/make.py": MAKE}
    for module, text, test_file, tests in [
            ("knn", KNN, "test_knn.py", KNN_TESTS), ("rng", RNG, "test_rng.py", RNG_TESTS),
            ("net", NET, "test_net.py", NET_TESTS),
            ("ops", PATCHED, "test_patch.py", PATCHING_TESTS),
            ("optim", SCRIPTED_CLASS, "test_optim.py", SCRIPTED_CLASS_TESTS),
            ("io", READER, "test_io.py", TMP_TESTS), ("box", BOX, "test_box.py", BOX_TESTS),
            ("exact", EXACT, "test_exact.py", EXACT_TESTS)]:
        files[f"pkg/{module}.py"] = text
        files[f"tests/{test_file}"] = tests
    assert len(files) == 2 + 2 * 8
    return files
