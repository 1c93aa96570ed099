"""Closures of the repository's own code cross the judge/solution boundary by value.

Laplace's FeatureExtractor registers `hook`, a closure over itself, as a forward hook of
the model's last layer; `LLLaplace.fit` (the target) runs the model and reads the features
the hook stored. Made in the judge (the test names the last layer), the hook was a judge
handle: it filled the judge's feature dict, and the solution's copy stayed empty
(KeyError). Made in the solution process (fit finds the last layer), it came back as a
handle of the solution's: the judge's forward passes after fit filled the solution's copy,
and the judge's own stayed empty. Now the closure crosses as its name and its cells, made
on the receiving side from that side's own code; the cells pair with the receiving side's
objects. Only in a call and its reply, whose arguments come back: a closure the solution
hands to a judge object in a callback stays a handle, its cells' data where it is.
"""

from __future__ import annotations

import sys
import textwrap

from execution_support import engine_fixture

from curator.execution.job import Job, Limits

# What crosses and how does not depend on the sandbox around the two processes: the
# default (strong) one only. Both levels: tests/adversarial/test_boundary.py, _repos.py.
engine = engine_fixture(("strong",))

FEATURES = textwrap.dedent("""\
    from torch import nn


    class Extractor(nn.Module):
        def __init__(self, model, last=None):
            super().__init__()
            self.model = model
            self.features = {}
            self.last = None
            if last is not None:
                self.set_last(last)

        def set_last(self, name):
            self.last_name = name
            self.last = dict(self.model.named_modules())[name]
            self.last.register_forward_hook(self._hook(name))

        def _hook(self, name):
            def hook(_, inputs, __):
                self.features[name] = inputs[0].detach()

            return hook

        def with_features(self, x):
            out = self.model(x)
            return out, self.features[self.last_name]


    def recorder(seen):
        def hook(_, inputs, __):
            seen["in"] = inputs[0].detach()

        return hook
    """)

FIT = textwrap.dedent("""\
    from pkg.features import Extractor, recorder


    def watch(model, x):
        seen = {}
        model.register_forward_hook(recorder(seen))
        model(x)
        return seen["in"]


    class Fitter:
        def __init__(self, model, last=None):
            self.extractor = Extractor(model, last)
            self.total = None

        def fit(self, x):
            if self.extractor.last is None:
                self.extractor.set_last("1")
            _, features = self.extractor.with_features(x)
            self.total = features.sum()
            return self.total
    """)

TESTS = textwrap.dedent("""\
    import torch
    from torch import nn

    from pkg.fit import Fitter


    def model():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))


    def test_a_hook_the_judge_registered():
        net = model()
        fitter = Fitter(net, last="1")
        x = torch.ones(2, 3)
        assert torch.allclose(fitter.fit(x), net[0](x).sum())
        assert torch.allclose(fitter.total, net[0](x).sum())


    def test_a_hook_the_solution_registered():
        net = model()
        fitter = Fitter(net)
        fitter.fit(torch.ones(2, 3))
        y = torch.full((5, 3), 2.0)
        _, features = fitter.extractor.with_features(y)
        assert features.shape == (5, 4)
        assert torch.allclose(features, net[0](y))
    """)


WATCH_TESTS = textwrap.dedent("""\
    import torch
    from torch import nn

    from pkg.fit import watch


    class Net(nn.Module):   # the test's own class: a judge handle in the solution process
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, x):
            return self.lin(x)


    def test_a_hook_given_to_a_judge_object():
        x = torch.ones(2, 3)
        assert torch.equal(watch(Net(), x), x)
    """)


def make_repo(root):
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "features.py").write_text(FEATURES)
    (root / "pkg" / "fit.py").write_text(FIT)
    (root / "tests").mkdir()
    (root / "tests" / "test_fit.py").write_text(TESTS)
    (root / "tests" / "test_watch.py").write_text(WATCH_TESTS)
    return root


def job(repo, text, reference=False, symbol="Fitter.fit", tests="tests/test_fit.py"):
    return Job(problem_id="fit", solution=text, repo_dir=str(repo),
               overlay={"pkg/fit.py": text}, node_ids=[tests], symbol=symbol,
               python=sys.executable, reference=reference, limits=Limits(timeout_s=120))


def test_a_forward_hook_closure_fills_the_features_of_the_side_that_runs_it(
        engine, tmp_path):
    repo = make_repo(tmp_path / "repo")
    wrong = FIT.replace("features.sum()", "features.sum() + 1")
    jobs = [job(repo, FIT, reference=True), job(repo, wrong),
            job(repo, FIT, reference=True, symbol="watch", tests="tests/test_watch.py")]
    results = {r.job_id: r for r in engine.run(jobs)}
    reference, wrong_run, watched = (results[j.job_id] for j in jobs)
    # a closure the solution hands to a judge object in a callback stays the solution's:
    # what its cells hold (the dict `watch` reads) is there
    assert watched.outcome == "passed", (watched.reason, watched.stdout[-3000:])
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert reference.env.get("boundary"), reference.env
    assert {t["id"].split("::")[-1]: t["outcome"] for t in wrong_run.tests} == {
        "test_a_hook_the_judge_registered": "failed",
        "test_a_hook_the_solution_registered": "passed"}, wrong_run.tests
