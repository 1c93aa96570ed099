"""Repository problems cross the same boundary: in the judge the target symbol is a proxy
(in its module, wherever the repository imported it by name, and in the repository's own
callers), in the solution process it is the candidate. The repository's code, its conftest
and its test dependencies run in the judge and are trusted; the reference crosses too.

Each attack of the self-contained corpus (test_boundary.ATTACKS) is laid over a generated
repository's module as a candidate; beside it runs its control (the same wrong code without
the trick). Neither may pass; the reference and a correct candidate pass.
"""

from __future__ import annotations

import sys
import textwrap

import pytest
from execution_support import engine_fixture
from test_boundary import ATTACKS, REFERENCE, TESTS, WRONG

from curator.execution.job import Job, Limits

engine = engine_fixture(eager=False)   # repository runs only

INIT = "from pkg.ops import scale, Scaler  # noqa: F401\n"
OPS = REFERENCE + textwrap.dedent("""\


    class Scaler:
        def __init__(self, k):
            self.k = k
            self.calls = 0

        def apply(self, x):
            self.calls += 1
            return x * self.k

        @property
        def doubled(self):
            return self.k * 2
    """)
# The repository's own caller of the target, bound by name at import.
UTIL = textwrap.dedent("""\
    from pkg.ops import scale


    def twice_scaled(x):
        return scale(scale(x))
    """)
REPO_TESTS = TESTS.replace("from solution import scale", "from pkg import scale") + \
    textwrap.dedent("""\


    def test_repository_caller():
        from pkg.util import twice_scaled
        assert twice_scaled(3) == 12
    """)
METHOD_TESTS = textwrap.dedent("""\
    import torch

    from pkg.ops import Scaler


    def test_method_and_its_state():
        scaler = Scaler(2)
        assert torch.equal(scaler.apply(torch.ones(2)), torch.full((2,), 2.0))
        assert scaler.calls == 1


    def test_property():
        assert Scaler(3).doubled == 6
    """)
# What pyro and recommenders do at import: trusted code patching what a guard protected.
PATCHING_CONFTEST = textwrap.dedent("""\
    import unittest.mock

    import torch

    _equal = torch.equal


    def equal(a, b):
        return _equal(a, b)


    torch.equal = equal
    torch.Storage = type("Storage", (), {})
    unittest.mock.NonCallableMock.assert_not_called = lambda self: None
    """)
TEST_IDS = ["tests/test_ops.py"]


def make_repo(root, conftest=None):
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text(INIT)
    (root / "pkg" / "ops.py").write_text(OPS)
    (root / "pkg" / "util.py").write_text(UTIL)
    (root / "tests").mkdir()
    (root / "tests" / "test_ops.py").write_text(REPO_TESTS)
    (root / "tests" / "test_method.py").write_text(METHOD_TESTS)
    if conftest:
        (root / "conftest.py").write_text(conftest)
    return root


def repo_job(repo, module_text, symbol="scale", node_ids=TEST_IDS, reference=False,
             path="pkg/ops.py"):
    return Job(problem_id="repo", solution=module_text, repo_dir=str(repo),
               overlay={path: module_text}, node_ids=list(node_ids), symbol=symbol,
               python=sys.executable, reference=reference, limits=Limits(timeout_s=120))


@pytest.fixture(scope="module")
def shared_repo(tmp_path_factory):
    """make_repo's repository with every file of `shared_files` written before its first
    run, for the tests that only add files of their own: one warm worker per engine serves
    them all. A warm worker is one checkout's (its folders and conftests are read once)
    and each new checkout started one, a fresh interpreter importing torch and pytest's
    plugins: about 12 s of each of these tests on the loaded 2-core machine. The tests
    never write into it (`put` checks); a test whose files differ has its own."""
    repo = make_repo(tmp_path_factory.mktemp("shared") / "repo")
    for path, text in shared_files().items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    (repo / SHARED_MARK).write_text("")
    return repo


SHARED_MARK = ".shared-by-tests"


def put(repo, path, text):
    """`text` as the repository's file `path`; in the shared repository it must be there
    already (its checkout never changes under its warm workers)."""
    target = repo / path
    if (repo / SHARED_MARK).exists():
        assert target.is_file() and target.read_text() == text, f"{path}: not shared_files'"
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def reference_and_control(engine, repo, name, text, wrong, tests, symbol):
    """The results of module pkg/NAME.py (text) as the reference and of `wrong` as a
    candidate, judged by tests/test_NAME.py (tests), both written into `repo` (`put`)."""
    path = f"pkg/{name}.py"
    put(repo, path, text)
    put(repo, f"tests/test_{name}.py", tests)
    jobs = [repo_job(repo, text, symbol, [f"tests/test_{name}.py"], True, path),
            repo_job(repo, wrong, symbol, [f"tests/test_{name}.py"], False, path)]
    results = {r.job_id: r for r in engine.run(jobs)}
    return tuple(results[j.job_id] for j in jobs)


def with_scale(text):
    """The repository's module with `scale` replaced by the candidate's definitions."""
    return text + OPS[len(REFERENCE):]


@pytest.mark.timeout(1200)   # 14 repository runs, each a warm fork of its own judge
def test_repository_attacks_and_their_controls_do_not_pass(engine, shared_repo):
    repo = shared_repo
    control_text = with_scale(WRONG + "\n\ndef scale(x):\n    return _wrong(x)\n")
    jobs = {"reference": repo_job(repo, OPS, reference=True),
            "control": repo_job(repo, control_text)}
    for name, trick in ATTACKS.items():
        jobs[name] = repo_job(repo, with_scale(WRONG + trick))
    results = {r.job_id: r for r in engine.run(list(jobs.values()))}
    got = {name: results[job.job_id] for name, job in jobs.items()}
    reference = got.pop("reference")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert reference.env.get("boundary"), reference.env
    control = got.pop("control")
    assert control.outcome == "failed", (control.outcome, control.reason)
    passed = {name: (r.reason, r.stdout[-1500:]) for name, r in got.items()
              if r.outcome == "passed"}
    assert not passed
    for name, result in got.items():
        assert "FOUND THE TESTS" not in result.stdout, name
        outcomes = {t["id"].split("::")[-1]: t["outcome"] for t in result.tests}
        assert outcomes.get("test_equal") != "passed", (name, result.tests)
    rebuilt = " ".join(got["tensor subclass answering torch.equal/allclose"].env.get(
        "rebuilt") or [])
    assert "pkg.ops.Liar rebuilt as Tensor" in rebuilt


def test_a_correct_candidate_passes_through_the_repositorys_own_callers(engine, shared_repo):
    repo = shared_repo
    correct = with_scale(textwrap.dedent("""\
        import torch


        def _times(x, k):
            return [v * k for v in x] if isinstance(x, list) else x * k


        def scale(x):
            return _times(x, 2)
        """))
    wrong_method = OPS.replace("return x * self.k", "return x * self.k + 1")
    silent_method = OPS.replace("self.calls += 1\n", "")
    jobs = [repo_job(repo, correct),
            repo_job(repo, OPS, symbol="Scaler.apply", node_ids=["tests/test_method.py"],
                     reference=True),
            repo_job(repo, wrong_method, symbol="Scaler.apply",
                     node_ids=["tests/test_method.py"]),
            repo_job(repo, silent_method, symbol="Scaler.apply",
                     node_ids=["tests/test_method.py"])]
    results = {r.job_id: r for r in engine.run(jobs)}
    good, method, wrong, silent = (results[j.job_id] for j in jobs)
    assert good.outcome == "passed", (good.reason, good.stdout[-3000:], good.stderr[-2000:])
    assert "tests/test_ops.py::test_repository_caller" in {t["id"] for t in good.tests}
    assert method.outcome == "passed", (method.reason, method.stdout[-3000:])
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)
    # the candidate's change to `self` comes back to the judge's object (or does not)
    assert silent.outcome == "failed", (silent.outcome, silent.reason)


def test_a_conftest_patching_torch_and_mock_keeps_reference_and_candidate_passed(
        engine, tmp_path):
    repo = make_repo(tmp_path / "repo", conftest=PATCHING_CONFTEST)
    correct = with_scale(REFERENCE.replace("v * 2 for v in x", "2 * v for v in x"))
    jobs = [repo_job(repo, OPS, reference=True), repo_job(repo, correct),
            repo_job(repo, with_scale(WRONG + "\n\ndef scale(x):\n    return _wrong(x)\n"))]
    results = {r.job_id: r for r in engine.run(jobs)}
    reference, candidate, wrong = (results[j.job_id] for j in jobs)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert candidate.outcome == "passed", (candidate.reason, candidate.stdout[-3000:])
    assert not reference.evidence and not candidate.evidence
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)


def test_a_property_target_is_the_candidates_not_the_repositorys(engine, shared_repo):
    # A target that is a property (kornia's PinholeCamera.translation_vector): the judge's
    # class must get the candidate's getter, else any candidate, a stub included, passes.
    repo = shared_repo
    node_ids = ["tests/test_method.py::test_property"]
    wrong = OPS.replace("return self.k * 2", "return self.k * 2 + 1")
    stub = OPS.replace("return self.k * 2", "raise NotImplementedError")
    jobs = [repo_job(repo, text, symbol="Scaler.doubled", node_ids=node_ids,
                     reference=text is OPS) for text in (OPS, wrong, stub)]
    results = {r.job_id: r for r in engine.run(jobs)}
    reference, wrong_run, stub_run = (results[j.job_id] for j in jobs)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert wrong_run.outcome == "failed", (wrong_run.outcome, wrong_run.reason)
    assert stub_run.outcome == "failed", (stub_run.outcome, stub_run.reason)
    assert "NotImplementedError" in stub_run.stdout + stub_run.reason


HELPERS = "def double(x):\n    return x * 2\n"
HELPERS_TESTS = textwrap.dedent("""\
    from tests.helpers import double


    def test_double():
        assert double(2) == 4
    """)


def test_a_target_in_a_module_pytest_rewrites_is_the_candidates(engine, tmp_path):
    """A target in a helper module the conftest registers for assertion rewriting
    (nncf's tests/torch/helpers.py: `pytest.register_assert_rewrite`): pytest's rewriting
    import hook, first on sys.meta_path, loaded the module before the judge's own finder
    saw it, the target was never made a proxy, and the tests ran the repository's own
    function whatever the candidate was: a stub passed, and triage called the problem's
    tests ones that do not exercise it."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "helpers.py").write_text(HELPERS)
    (repo / "tests" / "test_use.py").write_text(HELPERS_TESTS)
    (repo / "conftest.py").write_text(
        "import pytest\n\npytest.register_assert_rewrite('tests.helpers')\n")
    texts = (HELPERS, HELPERS.replace("x * 2", "x * 3"),
             HELPERS.replace("return x * 2", "raise NotImplementedError"))
    jobs = [repo_job(repo, text, symbol="double", node_ids=["tests/test_use.py"],
                     reference=text is HELPERS, path="tests/helpers.py") for text in texts]
    results = {r.job_id: r for r in engine.run(jobs)}
    reference, wrong, stub = (results[j.job_id] for j in jobs)
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)
    assert stub.outcome == "failed", (stub.outcome, stub.reason)
    assert "NotImplementedError" in stub.stdout + stub.reason
    if engine.isolation == "weak":
        # without a warm worker a candidate runs in a worker started for it alone
        # (never cold): its judge's finders go ahead of pytest's hook the same way
        from curator.execution.engine import Engine

        with Engine(workers=1, isolation="weak", warm_repos=False, eager=False) as cold:
            results = {r.job_id: r for r in cold.run(jobs[1:])}
        assert {r.env["repo_run"] for r in results.values()} == {"fresh"}
        assert [results[j.job_id].outcome for j in jobs[1:]] == ["failed", "failed"]


# Nothing patched: values that answer every comparison the tests make for themselves.
LIARS = WRONG + textwrap.dedent("""\


    class _Yes(float):
        def __eq__(self, other):
            return True

        __hash__ = float.__hash__


    class _YesList(list):
        def __eq__(self, other):
            return True


    class _Liar(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func in (torch.equal, torch.allclose):
                return True
            out = super().__torch_function__(func, types, args, kwargs or {})
            return _Yes(out) if func is torch.Tensor.item else out


    def scale(x):
        if isinstance(x, list):
            return _YesList(_wrong(x))
        if isinstance(x, torch.Tensor):
            return _wrong(x).as_subclass(_Liar)
        return _Yes(_wrong(x))
    """)


def test_a_candidate_never_runs_in_pytests_process(tmp_path):
    """With no warm worker for the repository (`warm_repos=False`, or one that could not
    start), a run went cold: a fresh `python -m pytest` with the text spliced into the
    checkout, the candidate in pytest's own process under the in-process guard, which
    sees patches, not values. A wrong candidate returning values that answer every
    comparison (a Tensor subclass's `__torch_function__`, float and list subclasses'
    `__eq__`) passed. Only a reference runs cold now (the baseline, trusted like the
    repository); any other text runs across the boundary, in a worker started for it
    alone, and its values come back as plain data. (A reference still runs cold:
    tests/repos/test_repo_warm.py; the strong sandbox's routing:
    test_execution_hostile.py's cold case.)"""
    from curator.execution.engine import Engine

    repo = make_repo(tmp_path / "repo")
    control = with_scale(WRONG + "\n\ndef scale(x):\n    return _wrong(x)\n")
    jobs = [repo_job(repo, text) for text in (control, with_scale(LIARS))]
    with Engine(workers=2, isolation="weak", warm_repos=False, eager=False) as engine:
        results = {r.job_id: r for r in engine.run(jobs)}
    control, attack = (results[j.job_id] for j in jobs)
    # before: passed (cold, in pytest's process, where the liars answered)
    assert attack.outcome == "failed", (attack.outcome, attack.reason)
    assert control.outcome == "failed", (control.outcome, control.reason)
    assert [r.env["repo_run"] for r in (control, attack)] == ["fresh", "fresh"]


@pytest.mark.parametrize("text, why", [
    ("def scale(x):\n    return (\n", "did not import"),
    ("raise SystemExit(0)\n", "did not import"),
])
def test_a_candidate_module_that_does_not_import_fails(engine, shared_repo, text, why):
    repo = shared_repo
    (result,) = engine.run([repo_job(repo, text, node_ids=["tests/test_ops.py::test_float"])])
    assert result.outcome in ("failed", "error"), (result.outcome, result.reason)
    assert why in result.reason or why in result.stdout, (result.reason, result.stdout[-2000:])


# An argument whose state is not all in its `__dict__`: pandas keeps a DataFrame's columns
# in its BlockManager's compiled base (the manager's `__dict__` is empty). cleanlab's
# CleanLearning.fit adds a `sample_weight` column to the label-issues frame the test passes
# (and keeps): the column was lost on the way back, and test_aux_inputs failed the reference.
FRAME = textwrap.dedent("""\
    import collections


    class Columns:
        __slots__ = ("names", "__dict__")   # its state beside its (empty) dict

        def __init__(self, names):
            self.names = list(names)


    class History(collections.deque):   # a compiled base's state, and a dict
        pass


    class Frame:
        def __init__(self, *names):
            self._columns = Columns(names)
            self.history = History()

        def insert(self, name):
            self._columns.names = [*self._columns.names, name]

        def columns(self):
            return list(self._columns.names)


    class Learner:
        def fit(self, frame):
            frame.insert("weight")
            frame.history.append("fit")
            self.frame = frame
            return self
    """)
FRAME_TESTS = textwrap.dedent("""\
    from pkg.frame import Frame, Learner


    def test_the_callers_frame_gets_the_column():
        frame = Frame("label")
        columns = frame._columns
        learner = Learner()
        assert learner.fit(frame) is learner
        assert frame.columns() == ["label", "weight"]
        assert list(frame.history) == ["fit"]
        assert learner.frame is frame and frame._columns is not columns
    """)


def test_an_argument_with_state_beside_its_dict_comes_back_whole(engine, shared_repo):
    wrong = FRAME.replace('        frame.insert("weight")\n', "")
    reference, control = reference_and_control(
        engine, shared_repo, "frame", FRAME, wrong, FRAME_TESTS,
        "Learner.fit")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)


# A class decorator that returns a subclass of the class it decorates (small-text's
# `@constraints`, made with functools.wraps): the module's name holds the subclass, the
# target method is the wrapped class's. The proxy went nowhere and the tests ran the
# repository's own method, so any candidate passed (a stub too).
DECORATED = textwrap.dedent("""\
    import functools


    def constraints(cls):
        @functools.wraps(cls, updated=())
        class Constrained(cls):
            def query(self, values):
                assert values, "nothing to query"
                return super().query(values)
        return Constrained


    @constraints
    class Strategy:
        def query(self, values):
            return self.embed(values)

        def embed(self, values):
            return [v * 2 for v in values]
    """)
DECORATED_TESTS = textwrap.dedent("""\
    from pkg.strategy import Strategy


    def test_query_embeds():
        assert Strategy().query([1, 2]) == [2, 4]
    """)


def test_a_method_of_a_class_a_decorator_wrapped_is_the_candidates(engine, shared_repo):
    wrong = DECORATED.replace("v * 2", "v * 3")
    reference, control = reference_and_control(
        engine, shared_repo, "strategy", DECORATED, wrong, DECORATED_TESTS,
        "Strategy.embed")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert reference.env.get("timing", {}).get("boundary_calls"), reference.env
    assert control.outcome == "failed", (control.outcome, control.reason)


# A repository's test hands the candidate a path into the judge's view of the checkout
# (`Path(__file__).parent / "data"`: imagededup's load_image tests and their images). The
# solution process, under another uid, could not traverse the judge's run folder: every
# such reference failed with "Permission denied" raised in the solution process.
NOTE = "hello\n"
READER = "def read(path):\n    with open(path) as fh:\n        return fh.read().strip()\n"
READER_TESTS = textwrap.dedent("""\
    from pathlib import Path

    from pkg.reader import read


    def test_reads_the_tests_own_data():
        assert read(Path(__file__).parent / "data" / "note.txt") == "hello"
    """)


def test_a_path_into_the_judges_checkout_is_readable_by_the_candidate(engine, shared_repo):
    repo = shared_repo
    put(repo, "tests/data/note.txt", NOTE)
    wrong = READER.replace(".strip()", ".upper()")
    reference, control = reference_and_control(engine, repo, "reader", READER, wrong,
                                               READER_TESTS, "read")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)
    assert "Permission denied" not in control.reason, control.reason


# A repository that registers one of its module's plain functions as a forward hook on
# the test's layer (backpack's `hook_store_io`, which Laplace's BackPackInterface puts on
# every layer of the test's model), then the function under test runs that layer: the
# hook went to the solution process by its name and came back as a handle of the
# solution's function, left in the test's layer, and the test's own forward of it ended
# the run ("solution code the call left ... ran after the call returned"). It comes back
# as the judge's own function of that name; a function the judge never sent stays a
# handle (the candidate's own hook left on the layer does not pass).
HOOKED = textwrap.dedent("""\
    import torch


    def store_io(module, inputs, output):
        module.seen = output.detach()


    def extend(layer):
        layer.register_forward_hook(store_io)
        return layer


    def forward_sum(layer, x):
        return layer(x).sum()
    """)
HOOKED_TESTS = textwrap.dedent("""\
    import torch

    from pkg.hooked import extend, forward_sum


    def test_the_layer_keeps_its_hook():
        torch.manual_seed(0)
        layer = extend(torch.nn.Linear(3, 2))
        x = torch.randn(4, 3)
        total = forward_sum(layer, x)
        assert torch.allclose(layer.seen, layer(x).detach())
        assert torch.allclose(total, layer(x).sum())
    """)


def test_a_repository_function_hooked_on_the_tests_layer_stays_the_judges(engine,
                                                                          shared_repo):
    wrong = HOOKED.replace("return layer(x).sum()", "return layer(x).sum() + 1")
    reference, control = reference_and_control(
        engine, shared_repo, "hooked", HOOKED, wrong, HOOKED_TESTS,
        "forward_sum")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)
    # the candidate's own function left on the layer is still solution code, never the
    # judge's: it does not answer for the test's forward
    own = HOOKED.replace("    return layer(x).sum()\n", "    def mine(module, inputs, output):\n"
                         "        return output * 0\n\n"
                         "    layer.register_forward_hook(mine)\n"
                         "    return layer(x).sum() * 0\n")
    left = reference_and_control(engine, shared_repo, "hooked", HOOKED, own,
                                 HOOKED_TESTS, "forward_sum")[1]
    assert left.outcome not in ("passed", "tampered"), left.reason


# A repository class that keeps `functools.partial(a module function, name=...)` in its
# state (pyro's Parameterized keeps `partial(_get_sample_fn, name="X")` as each PyroSample
# prior of a GPLVM): the test's object went to the solution process and came back from
# `train` with the partial as a handle of the solution's, left in the test's object, and
# the test's next forward ended the run ("solution code the call left in the test's GPLVM
# (_pyro_samples) ran after the call returned"). A partial of a function that crosses by
# its name crosses by value: the judge's own function again; one of a function the judge
# never sent holds a handle, still found inside the partial.
PRIORS = textwrap.dedent("""\
    from functools import partial


    def _sample_fn(module, name):
        return module.scales[name] * 2


    def _other_fn(module, name):
        return module.scales[name] * 2


    class Model:
        def __init__(self):
            self.scales = {"x": 3.0}
            self.samplers = {"x": partial(_sample_fn, name="x")}

        def value(self, name):
            return self.samplers[name](self)
    """)
FITTING = textwrap.dedent("""\
    def fit(model, steps):
        total = 0.0
        for _ in range(steps):
            total += model.value("x")
            model.scales["x"] += 1.0
        return total
    """)
FITTING_TESTS = textwrap.dedent("""\
    from pkg.fitting import fit
    from pkg.priors import Model


    def test_the_model_samples_after_fitting():
        model = Model()
        assert fit(model, 2) == 6.0 + 8.0
        assert model.scales == {"x": 5.0}
        assert model.value("x") == 10.0
    """)


# A plain function of the repository (its module, not a test's) the solution leaves in
# the test's object crosses by name: the judge puts its own function of that name there
# (nncf's NNCFNetworkInterface keeps `wrap_nncf_model_outputs_with_objwalk` as its
# `_wrap_outputs_fn`). The solution chooses only which trusted function of the repository.
OWN_FUNCTION_TESTS = textwrap.dedent("""\
    from pkg import priors
    from pkg.fitting import fit
    from pkg.priors import Model


    def test_the_model_samples_after_fitting():
        model = Model()
        assert fit(model, 2) == 6.0 + 8.0
        assert model.samplers["x"].func is priors._other_fn
        assert model.value("x") == 10.0
    """)
# What a function of the solution's own would make pass if it ran in the judge.
LEFT_FUNCTION_TESTS = textwrap.dedent("""\
    from pkg.fitting import fit
    from pkg.priors import Model


    def test_the_model_after_fitting():
        model = Model()
        fit(model, 2)
        assert model.value("x") == 10.0
    """)


def left_function(forged=None, rebound=None):
    """A wrong fit (its scale ends at 7, not 5) that leaves a partial of its own function
    in the test's model, answering 10.0: names forged to pkg.priors's `forged`, and
    rebound in its own process as priors.`rebound`."""
    lines = ["    import functools\n\n", "    from pkg import priors\n\n",
             "    def mine(module, name):\n        return 10.0\n\n"]
    if forged:
        lines.append(f"    mine.__module__ = 'pkg.priors'\n"
                     f"    mine.__qualname__ = mine.__name__ = {forged!r}\n")
    if rebound:
        lines.append(f"    setattr(priors, {rebound!r}, mine)\n")
    lines.append("    model.samplers['x'] = functools.partial(mine, name='x')\n"
                 "    return total\n")
    return FITTING.replace("+= 1.0", "+= 2.0").replace("    return total\n", "".join(lines))


def test_a_partial_of_a_repository_function_in_the_tests_object_stays_the_judges(
        engine, tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "pkg" / "priors.py").write_text(PRIORS)
    wrong = FITTING.replace("+= 1.0", "+= 2.0")
    reference, control = reference_and_control(engine, repo, "fitting", FITTING, wrong,
                                               FITTING_TESTS, "fit")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)
    # a partial of a repository function the judge never sent, left in the test's
    # object: the judge's own function (the test checks identity), never the solution's
    own = FITTING.replace("    return total\n", "    import functools\n\n"
                          "    from pkg import priors\n\n"
                          "    model.samplers['x'] = functools.partial(priors._other_fn, "
                          "name='x')\n    return total\n")
    reference, control = reference_and_control(
        engine, repo, "fitting", own, own.replace("+= 1.0", "+= 2.0"), OWN_FUNCTION_TESTS,
        "fit")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert "pkg.priors._other_fn" in str(reference.env.get("rebuilt")), reference.env
    assert control.outcome == "failed", (control.outcome, control.reason)
    # a function of the solution's own never runs in the judge: not its own (a handle,
    # which the test's next call finds), not one forged to a repository name that does
    # not exist or is no function there, and not one it rebinds a repository name to in
    # its own process (other code under that name: a handle too, `boundary.function_print`;
    # the judge's function of that name ran before, 14.0)
    cases = {"own": left_function(),
             "missing": left_function("_missing_fn", "_missing_fn"),
             "class": left_function("partial", "partial"),
             "rebound": left_function("_other_fn", "_other_fn")}
    jobs = {name: repo_job(repo, text, "fit", ["tests/test_left.py"], path="pkg/fitting.py")
            for name, text in cases.items()}
    (repo / "pkg" / "fitting.py").write_text(FITTING)
    (repo / "tests" / "test_left.py").write_text(LEFT_FUNCTION_TESTS)
    results = {r.job_id: r for r in engine.run(list(jobs.values()))}
    for name, job in jobs.items():
        left = results[job.job_id]
        assert left.outcome not in ("passed", "tampered"), (name, left.outcome, left.reason)
        assert "ran after the call returned" in left.reason, (name, left.reason)


# The candidate text may define functions of the target's module beside its target; one
# of those names never crosses by name: the judge's function of that name is the
# reference's. A wrong helper bound to the name of the reference's (forged qualname) and
# left in the test's object would otherwise be replaced by the right one.
HELPED = textwrap.dedent("""\
    from functools import partial


    def _fit_fn(module, name):
        return module.scales[name] * 2


    def fit(model, steps):
        total = 0.0
        for _ in range(steps):
            total += model.value("x")
            model.scales["x"] += 1.0
        model.samplers["x"] = partial(_fit_fn, name="x")
        return total
    """)
HELPED_TESTS = textwrap.dedent("""\
    from pkg.fitting import fit
    from pkg.priors import Model


    def test_the_model_samples_after_fitting():
        model = Model()
        assert fit(model, 2) == 6.0 + 8.0
        assert model.value("x") == 10.0
        model.scales["x"] = 1.0
        assert model.value("x") == 2.0
    """)


def fitting_job(repo, module_text, text, reference=False):
    """pkg/fitting.py's `fit` as a problem's job: the candidate text alone, spliced in
    place of the target (from its `def fit` to the end of `module_text`)."""
    target = module_text[module_text.index("def fit"):]
    return Job(problem_id="repo", solution=text, repo_dir=str(repo),
               overlay={"pkg/fitting.py": module_text.replace(target, text)},
               node_ids=["tests/test_fitting.py"], symbol="fit",
               python=sys.executable, reference=reference,
               limits=Limits(timeout_s=120))


def test_a_name_the_candidate_defines_never_crosses_by_name(engine, tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "pkg" / "priors.py").write_text(PRIORS)
    (repo / "pkg" / "fitting.py").write_text(HELPED)
    (repo / "tests" / "test_fitting.py").write_text(HELPED_TESTS)
    target = HELPED[HELPED.index("def fit"):]
    helper = textwrap.dedent("""\
        def _wrong(module, name):
            return module.scales[name] * 3


        _wrong.__qualname__ = _wrong.__name__ = "_fit_fn"
        _fit_fn = _wrong


        """)

    jobs = [fitting_job(repo, HELPED, target, True), fitting_job(repo, HELPED, helper + target)]
    reference, helped = (r for r in engine.run(jobs))
    # the reference's own text names no helper: the judge's _fit_fn, by name
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert helped.outcome not in ("passed", "tampered"), (helped.outcome, helped.reason)
    assert "ran after the call returned" in helped.reason, helped.reason


# A bound method of an instance of a library class (not an nn.Module) whose function is
# the class's own crosses by value: the judge rebuilds the owner and binds its class's
# function (nncf's `_wrap_inputs_fn`, InputInfoWrapManager.wrap_inputs of the network's
# own manager).
SCALING = textwrap.dedent("""\
    class Scaler:
        def __init__(self, k):
            self.k = k

        def apply(self, x):
            return x * self.k


    class Holder:
        def run(self, x):
            return self.fn(x)
    """)
ATTACH = textwrap.dedent("""\
    from pkg.scaling import Scaler


    def attach(holder, k):
        holder.fn = Scaler(k).apply
        return holder
    """)
ATTACH_TESTS = textwrap.dedent("""\
    from pkg.attach import attach
    from pkg.scaling import Holder


    def test_the_holder_runs_the_scalers_method():
        holder = Holder()
        assert attach(holder, 3) is holder
        assert holder.run(2) == 6
    """)


def forged_method(rebind, name="apply"):
    """A wrong attach (k + 1) leaving a method of its own (answering 6) bound to a
    Scaler, named as the class's `name`; set on the class in its own process too."""
    return ATTACH.replace("    holder.fn = Scaler(k).apply\n", textwrap.indent(textwrap.dedent(f"""\
        import types

        def mine(self, x):
            return 6

        mine.__module__ = "pkg.scaling"
        mine.__qualname__ = "Scaler.{name}"
        mine.__name__ = "{name}"
        if {rebind!r}:
            setattr(Scaler, "{name}", mine)
        holder.fn = types.MethodType(mine, Scaler(k + 1))
        """), "    "))


def test_a_library_objects_method_left_in_the_tests_object_is_the_judges(engine,
                                                                         shared_repo):
    repo = shared_repo
    put(repo, "pkg/scaling.py", SCALING)
    reference, control = reference_and_control(
        engine, repo, "attach", ATTACH, ATTACH.replace("Scaler(k)", "Scaler(k + 1)"),
        ATTACH_TESTS, "attach")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)
    # a method of the solution's own forged onto a library object never runs in the
    # judge: as a handle it is found in the test's object; set on the class in its own
    # process, too (other code than the judge's class's, `boundary.function_print`; the
    # judge bound its own class's function before, 8); under a name the class does not
    # have, the message is refused
    cases = {"forged": forged_method(False), "rebound": forged_method(True),
             "unknown": forged_method(True, "unknown")}
    jobs = {name: repo_job(repo, text, "attach", ["tests/test_attach.py"],
                           path="pkg/attach.py") for name, text in cases.items()}
    results = {r.job_id: r for r in engine.run(list(jobs.values()))}
    for name, job in jobs.items():
        forged = results[job.job_id]
        assert forged.outcome != "passed", (name, forged.reason)
        if name in ("forged", "rebound"):
            assert "ran after the call returned" in forged.reason, (name, forged.reason)


# emukit's make_non_linear_kernels returns GPy kernels, which hold paramz's
# ParameterIndexOperations: the tests import GPy, never paramz, a library GPy requires.
# Here both are installed in the checkout (a distribution each, as site-packages has them).
LIBRARIES = {
    "gpkit/__init__.py": textwrap.dedent("""\
        from paramkit import Index


        class Kernel:
            def __init__(self, dims):
                self.dims = dims
                self.index = Index(f"x{i}" for i in range(dims))
        """),
    "gpkit-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: gpkit\nVersion: 1.0\n"
                                    "Requires-Dist: paramkit>=1\n"
                                    "Requires-Dist: sphinx ; extra == 'docs'\n",
    "gpkit-1.0.dist-info/top_level.txt": "gpkit\n",
    "paramkit/__init__.py": textwrap.dedent("""\
        class Index:
            def __init__(self, names):
                self.names = list(names)
        """),
    "paramkit-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: paramkit\n"
                                       "Version: 1.0\n",
    "paramkit-1.0.dist-info/RECORD": "paramkit/__init__.py,,\n"
                                     "paramkit-1.0.dist-info/RECORD,,\n",
}
KERNELS = textwrap.dedent("""\
    from gpkit import Kernel


    def make_kernels(n):
        return [Kernel(i + 1) for i in range(n)]
    """)
KERNELS_TESTS = textwrap.dedent("""\
    import gpkit

    from pkg.kernels import make_kernels


    def test_one_kernel_per_level():
        kernels = make_kernels(2)
        assert all(isinstance(k, gpkit.Kernel) for k in kernels)
        assert [k.index.names for k in kernels] == [["x0"], ["x0", "x1"]]
    """)


def test_a_library_objects_made_of_what_it_requires_cross(engine, tmp_path):
    repo = make_repo(tmp_path / "repo")
    for path, text in LIBRARIES.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    reference, control = reference_and_control(
        engine, repo, "kernels", KERNELS, KERNELS.replace("i + 1", "i + 2"), KERNELS_TESTS,
        "make_kernels")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)


# nlp-architect's QuantizedLayer registers its class's static _state_dict_hook on each
# layer it makes; the target is a method of that class. The judge sends the hook by name;
# QuantizedLinear's own hook calls super(), so it is a closure (over __class__), and the
# solution process sent it back as a handle of its function, which the reply put in the
# test's layer: state_dict() then ran solution code.
HOOKED_CLASS = textwrap.dedent("""\
    import torch


    class QuantizedLayer(torch.nn.Linear):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.register_buffer("seen", torch.zeros(1))
            self._register_state_dict_hook(self._state_dict_hook)

        def forward(self, x):
            return self.quantized_forward(x)

        @staticmethod
        def _state_dict_hook(module, state_dict, prefix, local_metadata):
            state_dict[prefix + "bits"] = torch.tensor(8)


    class Quantized(QuantizedLayer):
        def quantized_forward(self, x):
            self.seen += 1   # a buffer the call changes: the layer comes back
            return torch.nn.functional.linear(x, self.weight.round(), self.bias)

        @staticmethod
        def _state_dict_hook(module, state_dict, prefix, local_metadata):
            # zero-argument super(): a closure over __class__
            super()._state_dict_hook(module, state_dict, prefix, local_metadata)
            state_dict[prefix + "signed"] = torch.tensor(True)
    """)
HOOKED_CLASS_TESTS = textwrap.dedent("""\
    import torch

    from pkg.quantized import Quantized


    def test_forward_then_export():
        torch.manual_seed(0)
        layer = Quantized(3, 2)
        x = torch.randn(4, 3)
        expected = x @ layer.weight.round().T + layer.bias
        assert torch.allclose(layer(x), expected)
        exported = layer.state_dict()
        assert int(exported["bits"]) == 8 and bool(exported["signed"])
        assert int(layer.seen) == 1
    """)


def test_the_classes_own_hook_on_the_tests_layer_stays_the_judges(engine, shared_repo):
    wrong = HOOKED_CLASS.replace("self.weight.round()", "self.weight")
    reference, control = reference_and_control(
        engine, shared_repo, "quantized", HOOKED_CLASS, wrong,
        HOOKED_CLASS_TESTS, "Quantized.quantized_forward")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)


# sparseml's ModuleAnalyzer: a test's helper model whose forward is the target, and the
# repository's analyzer hooking each of its layers with bound methods. The forward runs in
# the solution process on a copy of the model, whose layers call the hooks back in the
# judge; the pre-hook sets an attribute on the layer it is handed and the forward hook
# reads it. The judge's callback set it on its own copy of the argument, the solution's
# layer never had it, and the forward hook failed ('NoneType' object has no attribute
# 'input_shape'): what a callback does to its arguments comes back to them.
ANALYZER = textwrap.dedent("""\
    import torch


    class Desc:
        def __init__(self, name):
            self.name = name
            self.shapes = []


    class Analyzer:
        def __init__(self, model):
            self.calls = 0
            for name, layer in model.named_children():
                layer._desc = None
                layer._desc_name = name
                layer.register_forward_pre_hook(self._pre_hook)
                layer.register_forward_hook(self._hook)

        def _pre_hook(self, layer, inputs):
            self.calls += 1
            if layer._desc is None:
                layer._desc = Desc(layer._desc_name)

        def _hook(self, layer, inputs, output):
            layer._desc.shapes.append(tuple(output.shape))


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3)
            self.fc = torch.nn.Linear(4, 2)

        def forward(self, x):
            out = self.conv(x).mean(dim=(2, 3))
            return self.fc(out)
    """)
ANALYZER_TESTS = textwrap.dedent("""\
    import torch

    from pkg.analyzer import Analyzer, Net


    def test_the_analyzer_sees_every_layer():
        model = Net()
        analyzer = Analyzer(model)
        assert model(torch.randn(1, 3, 8, 8)).shape == (1, 2)
        assert analyzer.calls == 2
        assert model.conv._desc.shapes == [(1, 4, 6, 6)]
        assert model.fc._desc.name == "fc" and model.fc._desc.shapes == [(1, 2)]
    """)


def test_what_a_callback_does_to_its_arguments_comes_back(engine, shared_repo):
    # a forward that runs the last layer twice: its hooks count it twice
    wrong = ANALYZER.replace("        return self.fc(out)\n",
                             "        self.fc(out)\n        return self.fc(out)\n")
    reference, control = reference_and_control(
        engine, shared_repo, "analyzer", ANALYZER, wrong, ANALYZER_TESTS,
        "Net.forward")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)


# ignite's create_supervised_trainer with a traced model: the test's model_fn (a judge
# function) calls the test's model, a handle in the solution process, and the call caches a
# torch._C.ScriptMethod in the model's attribute dict. What a callback binds in an argument
# is sent back (test_what_a_callback_does_to_its_arguments_comes_back), and sending that
# failed the call: "cannot pickle 'torch._C.ScriptMethod' object" (igniteupdate117).
STEPPER = textwrap.dedent("""\
    def step(model, model_fn, x):
        return model_fn(model, x) * 2
    """)
STEPPER_TESTS = textwrap.dedent("""\
    import torch

    from pkg.stepper import step


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x)


    def test_a_callback_may_bind_what_cannot_cross_in_a_handle():
        model = torch.jit.trace(Net(), torch.randn(1, 2))
        x = torch.randn(1, 2)
        out = step(model, lambda m, x: m(x), x)
        assert torch.allclose(out, model(x) * 2)
    """)


def test_what_a_callback_binds_in_a_handle_stays_in_the_judge(engine, shared_repo):
    reference, control = reference_and_control(
        engine, shared_repo, "stepper", STEPPER, STEPPER.replace("* 2", "* 3"),
        STEPPER_TESTS, "step")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)


# nncf's NNCFNetwork: the library gives the model a class it makes at run time, of its
# own class and the model's, named and placed as the model's class. No module holds that
# class under its name, so it could not be pickled: "Can't pickle <class
# 'tests.torch.helpers.BasicConvTestModel'>: it's not the same object as ...".
WRAPPING = {
    "pkg/wrapping.py": textwrap.dedent("""\
        import copy
        import types

        import torch


        class Wrapped(torch.nn.Module):
            def extra(self):
                return self.k + 1


        def wrap(model, k):
            made = types.new_class(type(model).__name__, (Wrapped, type(model)))
            made.__module__ = type(model).__module__
            wrapped = copy.copy(model)
            wrapped.__class__ = made
            wrapped.k = k
            return wrapped
        """),
    "pkg/nets.py": textwrap.dedent("""\
        import torch


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(2, 2)

            def forward(self, x):
                return self.lin(x) * 2
        """),
}
WRAP = textwrap.dedent("""\
    from pkg.wrapping import wrap


    def make(model):
        wrapped = wrap(model, 2)
        return wrapped, type(wrapped)
    """)
WRAP_TESTS = textwrap.dedent("""\
    import torch

    from pkg.nets import Net
    from pkg.wrap import make
    from pkg.wrapping import Wrapped


    def test_a_model_of_a_class_made_at_run_time():
        net = Net()
        made, _ = make(net)
        assert isinstance(made, Wrapped) and isinstance(made, torch.nn.Module)
        assert made.extra() == 3 and made.k == 2
        x = torch.ones(1, 2)
        assert torch.allclose(made(x), net.lin(x) * 2)   # the model's own forward
        assert type(made).__name__ == "Net"


    def test_the_class_made_at_run_time():
        _, made_class = make(Net())
        assert isinstance(made_class, type) and made_class.__name__ == "Net"
    """)


def test_an_object_of_a_class_a_library_made_at_run_time_crosses(engine, shared_repo):
    repo = shared_repo
    for path, text in WRAPPING.items():
        put(repo, path, text)
    reference, control = reference_and_control(
        engine, repo, "wrap", WRAP, WRAP.replace("wrap(model, 2)", "wrap(model, 3)"),
        WRAP_TESTS, "make")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)


def test_a_cold_worker_refuses_any_text_but_a_reference(tmp_path):
    """The worker's own check behind the engine's routing: a cold repository worker
    (not a warm one of the repository's environment) runs a reference and nothing else."""
    from curator.execution.worker import Settings, Worker

    repo = make_repo(tmp_path / "repo")
    worker = Worker(Settings(warm=False, tmp_root=str(tmp_path)))
    result = worker.run(repo_job(repo, with_scale(WRONG)))
    assert result.outcome == "infra", (result.outcome, result.reason)
    assert "for a reference only" in result.reason


# nncf's create_nncf_network changes the class of the test's own model in place:
# `model.__class__ = ` a class made at run time of NNCFNetwork and the model's class, so
# `model.nncf` exists. The judge may make that class of its own definitions for its
# object (`boundary._class_made_in_place`), and nothing else: a class the solution
# defines, a library class the object's is not a base of, a base outside the
# repository's package, or what the class made at run time holds itself.
IN_PLACE = {
    "pkg/wrapping.py": textwrap.dedent("""\
        import types

        import torch


        class Wrapped(torch.nn.Module):
            def extra(self):
                return self.k + 1

            def forward(self, x):
                return super().forward(x) + self.k


        class Ready(Wrapped):
            def forward(self, x):
                return self.lin(x) * 2 + self.k


        class Passthrough(torch.nn.Module):
            def forward(self, x):
                return x


        def wrap_in_place(model, k, base=Wrapped):
            made = types.new_class(type(model).__name__, (base, type(model)))
            made.__module__ = type(model).__module__
            made.forward = base.forward   # as nncf sets its forward on the class
            model.__class__ = made
            model.k = k
            return model
        """),
    "pkg/nets.py": WRAPPING["pkg/nets.py"],
}
IN_PLACE_MAKE = textwrap.dedent("""\
    from pkg.wrapping import wrap_in_place


    def make(model):
        return wrap_in_place(model, 2)
    """)
IN_PLACE_TESTS = textwrap.dedent("""\
    import torch

    from pkg.inplace import make
    from pkg.nets import Net
    from pkg.wrapping import Wrapped


    def test_the_models_class_changed_in_place():
        net = Net()
        assert make(net) is net
        assert isinstance(net, Wrapped) and isinstance(net, Net)
        assert net.extra() == 3
        x = torch.ones(1, 2)
        assert torch.allclose(net(x), net.lin(x) * 2 + 2)
        assert type(net).__name__ == "Net"
    """)
# Each would pass if the judge's model took the class the solution process holds.
IN_PLACE_ATTACKS = {
    # a class the solution defines
    "solution_class": textwrap.dedent("""\
        from pkg.nets import Net
        from pkg.wrapping import Wrapped


        class Cheat(Wrapped, Net):
            def extra(self):
                return 3

            def forward(self, x):
                return self.lin(x) * 2 + 2


        def make(model):
            model.__class__ = Cheat
            return model
        """),
    # a class made at run time with a base the solution defines
    "solution_base": textwrap.dedent("""\
        import types

        from pkg.wrapping import Wrapped


        class Cheat:
            def extra(self):
                return 3

            def forward(self, x):
                return self.lin(x) * 2 + 2


        def make(model):
            made = types.new_class(type(model).__name__, (Cheat, Wrapped, type(model)))
            made.__module__ = type(model).__module__
            model.__class__ = made
            return model
        """),
    # a library class the model's class is not a base of
    "unrelated_class": textwrap.dedent("""\
        from pkg.wrapping import Ready


        def make(model):
            model.__class__ = Ready
            model.k = 2
            return model
        """),
    # the class made at run time holds methods of the solution's
    "own_methods": textwrap.dedent("""\
        import types

        from pkg.wrapping import Wrapped


        def make(model):
            made = types.new_class(type(model).__name__, (Wrapped, type(model)))
            made.__module__ = type(model).__module__
            made.extra = lambda self: 3
            made.forward = lambda self, x: self.lin(x) * 2 + 2
            model.__class__ = made
            return model
        """),
}
PASSING_MAKE = textwrap.dedent("""\
    from pkg.wrapping import Passthrough, wrap_in_place


    def make(model):
        return wrap_in_place(model, 0, Passthrough)
    """)
PASSING_TESTS = textwrap.dedent("""\
    import torch

    from pkg.nets import Net
    from pkg.passing import make


    def test_the_model_passes_its_input_through():
        net = Net()
        make(net)
        x = torch.ones(1, 2)
        assert torch.equal(net(x), x)
    """)
# a base outside the repository's package, put before the model's own class
OUTSIDE_BASE = textwrap.dedent("""\
    import types

    import torch


    def make(model):
        made = types.new_class(type(model).__name__, (torch.nn.Identity, type(model)))
        made.__module__ = type(model).__module__
        model.__class__ = made
        return model
    """)


@pytest.mark.timeout(900)   # eight repository runs
def test_a_class_made_at_run_time_in_place_is_the_judges_only_of_its_own_classes(
        engine, tmp_path):
    repo = make_repo(tmp_path / "repo")
    for path, text in IN_PLACE.items():
        (repo / path).write_text(text)
    (repo / "pkg" / "inplace.py").write_text(IN_PLACE_MAKE)
    (repo / "pkg" / "passing.py").write_text(PASSING_MAKE)
    (repo / "tests" / "test_inplace.py").write_text(IN_PLACE_TESTS)
    (repo / "tests" / "test_passing.py").write_text(PASSING_TESTS)
    inplace, passing = ["tests/test_inplace.py"], ["tests/test_passing.py"]
    jobs = {"reference": repo_job(repo, IN_PLACE_MAKE, "make", inplace, True,
                                  "pkg/inplace.py"),
            "control": repo_job(repo, IN_PLACE_MAKE.replace("model, 2", "model, 3"), "make",
                                inplace, False, "pkg/inplace.py"),
            "passing": repo_job(repo, PASSING_MAKE, "make", passing, True,
                                "pkg/passing.py"),
            "outside_base": repo_job(repo, OUTSIDE_BASE, "make", passing, False,
                                     "pkg/passing.py")}
    for name, text in IN_PLACE_ATTACKS.items():
        jobs[name] = repo_job(repo, text, "make", inplace, False, "pkg/inplace.py")
    results = {r.job_id: r for r in engine.run(list(jobs.values()))}
    got = {name: results[job.job_id] for name, job in jobs.items()}
    for name in ("reference", "passing"):
        assert got[name].outcome == "passed", (name, got[name].reason,
                                               got[name].stdout[-3000:])
        assert any("changed in place to a class made at run time" in what
                   for what in got[name].env.get("rebuilt", [])), got[name].env
    for name in ("control", "outside_base", *IN_PLACE_ATTACKS):
        assert got[name].outcome == "failed", (name, got[name].outcome, got[name].reason)


# nncf wraps torch's operators at import to trace models (`functools.wraps` of
# torch._C._nn.gelu, held as torch.nn.functional.gelu), and transformers' GELUActivation
# holds that function: it went to the solution process as a handle, the model's forward
# there ran it in the judge, and nncf's graph there lacked every GELU (IndexError in
# get_pruning_groups). A library's wrapper of torch's operator crosses as the operator's
# name, each process's own of that name.
TRACED = {
    "pkg/tracing.py": textwrap.dedent("""\
        import functools

        import torch

        CALLS = [0]
        _gelu = torch._C._nn.gelu


        @functools.wraps(_gelu)
        def gelu(*args, **kwargs):
            CALLS[0] += 1
            return _gelu(*args, **kwargs)


        torch.nn.functional.gelu = gelu
        """),
    "pkg/acts.py": textwrap.dedent("""\
        import torch

        import pkg.tracing  # noqa: F401  (its wrapper, as nncf's import does)


        class Act(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.act = torch.nn.functional.gelu
                self.scale = 1.0

            def forward(self, x):
                return self.act(x) * self.scale
        """),
}
TRACE_COUNT = textwrap.dedent("""\
    from pkg.tracing import CALLS


    def count(model, x):
        before = CALLS[0]
        model(x)
        model.scale = 2.0
        return CALLS[0] - before
    """)
TRACE_TESTS = textwrap.dedent("""\
    import torch

    from pkg.acts import Act
    from pkg.count import count


    def test_the_wrapped_operator_runs_where_the_model_runs():
        model = Act()
        x = torch.linspace(-2, 2, 5)
        assert count(model, x) == 1
        assert torch.allclose(model(x), torch._C._nn.gelu(x) * 2)
    """)
# the solution's own wrapper of gelu put in the test's model: the judge's gelu runs
TRACE_PLANTED = textwrap.dedent("""\
    import functools

    import torch

    _gelu = torch._C._nn.gelu


    @functools.wraps(_gelu)
    def gelu(x):
        return _gelu(x) * 2


    def count(model, x):
        torch.nn.functional.gelu = gelu
        model.act = gelu
        return 1
    """)


def test_a_librarys_wrapper_of_a_torch_operator_crosses_by_its_name(engine, shared_repo):
    repo = shared_repo
    for path, text in TRACED.items():
        put(repo, path, text)
    reference, control = reference_and_control(
        engine, repo, "count", TRACE_COUNT, TRACE_PLANTED, TRACE_TESTS, "count")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)


# pyro's PyroModule.__getstate__ walks `self.parameters()`, which calls
# `named_modules(memo, ...)` on each submodule: on the test's own mean function, a judge
# handle, with `memo` holding the module being encoded. Encoding the request encoded the
# module again, whose __getstate__ asked the judge again, without end: `train(gpmodule)`
# ended in "RecursionError ... cannot cross". And pyro's Parameterized asks
# `"_pyro_samples" in module.__dict__` of every submodule, the test's own among them: the
# judge refused every dunder ("'__dict__' of a judge object is not served").
WALKING = textwrap.dedent("""\
    class Tree:
        def __init__(self, children):
            self.children = list(children)
            self.size = 0

        def walk(self, memo):
            if self not in memo:
                memo.add(self)
                yield self
                for child in self.children:
                    yield from child.walk(memo)

        def __getstate__(self):
            state = self.__dict__.copy()
            state["walked"] = sum(1 for _ in self.walk(set()))
            return state

        def __setstate__(self, state):
            self.__dict__.update(state)
    """)
COUNTING = textwrap.dedent("""\
    def count(tree):
        tree.size = sum(1 for node in tree.walk(set())
                        if "weight" in node.__dict__ or "children" in node.__dict__)
        return tree
    """)
COUNTING_TESTS = textwrap.dedent("""\
    from pkg.counting import count
    from pkg.walking import Tree


    class Leaf:   # the test's own class: a judge handle in the solution process
        def __init__(self, weight):
            self.weight = weight

        def walk(self, memo):
            memo.add(self)
            yield self


    def test_a_tree_holding_the_tests_objects_comes_back():
        tree = Tree([Leaf(1.0), Leaf(2.0), Tree([])])
        out = count(tree)
        assert out.size == 4 and tree.size == 4
        assert out.walked == 4
    """)


def test_an_object_whose_getstate_calls_the_judge_with_itself_crosses(engine, shared_repo):
    repo = shared_repo
    put(repo, "pkg/walking.py", WALKING)
    wrong = COUNTING.replace("return tree", "tree.size += 1\n    return tree")
    reference, control = reference_and_control(engine, repo, "counting", COUNTING, wrong,
                                               COUNTING_TESTS, "count")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)
    assert "AssertionError" in control.stdout, control.stdout[-3000:]


LAZY_INDEX = textwrap.dedent("""\
    import os
    import time


    class Index:
        def __init__(self, k):
            self.k = k

        def __getstate__(self):
            # pynndescent's NNDescent compiles its search (numba, which reads the working
            # folder) when it is pickled, after the call
            time.sleep(0.5)
            state = dict(self.__dict__)
            state["where"] = os.path.basename(os.path.abspath("."))
            return state


    def build(k):
        return Index(k)
    """)
LAZY_INDEX_TESTS = textwrap.dedent("""\
    from pkg.lazyindex import build


    def test_build():
        assert build(3).k == 3
    """)


def test_a_reply_encoded_after_the_call_has_a_working_folder(engine, shared_repo):
    """umap's nearest_neighbors returns pynndescent's index, whose __getstate__ compiles
    numba code that calls os.path.abspath: the solution process encodes it after the call,
    while the helper detaches the call's layers of the judge's folders, and the process's
    working folder was inside one (set_ambient entered the judge's): the reference was
    "FileNotFoundError ... cannot cross", on two of three runs. It waits in its own folder."""
    repo = shared_repo
    wrong = LAZY_INDEX.replace("return Index(k)", "return Index(k + 1)")
    reference, control = reference_and_control(engine, repo, "lazyindex", LAZY_INDEX, wrong,
                                               LAZY_INDEX_TESTS, "build")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)


def shared_files() -> dict[str, str]:
    """The files `shared_repo` holds beside make_repo's, each of one test above (by the
    module's name: reference_and_control's pkg/NAME.py and tests/test_NAME.py)."""
    files = {"tests/data/note.txt": NOTE, "pkg/scaling.py": SCALING,
             "pkg/walking.py": WALKING, **WRAPPING, **TRACED}
    for name, text, tests in [("frame", FRAME, FRAME_TESTS),
                              ("strategy", DECORATED, DECORATED_TESTS),
                              ("reader", READER, READER_TESTS),
                              ("hooked", HOOKED, HOOKED_TESTS),
                              ("attach", ATTACH, ATTACH_TESTS),
                              ("quantized", HOOKED_CLASS, HOOKED_CLASS_TESTS),
                              ("analyzer", ANALYZER, ANALYZER_TESTS),
                              ("stepper", STEPPER, STEPPER_TESTS),
                              ("wrap", WRAP, WRAP_TESTS),
                              ("count", TRACE_COUNT, TRACE_TESTS),
                              ("counting", COUNTING, COUNTING_TESTS),
                              ("lazyindex", LAZY_INDEX, LAZY_INDEX_TESTS)]:
        files[f"pkg/{name}.py"] = text
        files[f"tests/test_{name}.py"] = tests
    assert len(files) == 3 + len(WRAPPING) + len(TRACED) + 24   # no path given twice
    return files
