"""Library objects a repository's target returns, whose classes the problem's tests never
name: a class of a library only the module under test imports (nncf's `load_model`
returns a torchvision SqueezeNet), and a class a library makes at run time under the name
of another (nncf's NNCFNetwork makes a subclass of the model's class that keeps the
model's class name and module, so no module holds it under its name).
"""

from __future__ import annotations

import textwrap

from execution_support import engine_fixture
from test_boundary_repos import make_repo, reference_and_control

engine = engine_fixture()

# A library in the checkout; the tests never import it, the module under test does.
VISIONKIT = textwrap.dedent("""\
    import torch


    class TinyNet(torch.nn.Module):
        def __init__(self, classes=3):
            super().__init__()
            self.features = torch.nn.Linear(4, 5)
            self.classifier = torch.nn.Linear(5, classes)

        def forward(self, x):
            return self.classifier(torch.relu(self.features(x)))


    def tinynet(classes=3):
        return TinyNet(classes)
    """)
LOADER = textwrap.dedent("""\
    import visionkit.models


    def load_model(name, classes=3):
        return visionkit.models.__dict__[name](classes)
    """)
LOADER_TESTS = textwrap.dedent("""\
    import torch

    from pkg.loader import load_model


    def test_the_model_runs_here():
        model = load_model("tinynet", classes=2)
        assert type(model).__name__ == "TinyNet"
        assert type(model).__module__ == "visionkit.models"
        x = torch.randn(6, 4)
        expected = model.classifier(torch.relu(model.features(x)))
        traced = torch.jit.trace(model, x)   # the judge's own module, traced here
        assert torch.allclose(traced(x), expected)
        assert model(x).shape == (6, 2)
    """)


def test_a_model_of_a_library_the_module_under_test_imports_crosses(engine, tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "visionkit").mkdir()
    (repo / "visionkit" / "__init__.py").write_text("")
    (repo / "visionkit" / "models.py").write_text(VISIONKIT)
    reference, control = reference_and_control(
        engine, repo, "loader", LOADER, LOADER.replace("(classes)", "(classes + 1)"),
        LOADER_TESTS, "load_model")
    assert reference.outcome == "passed", (reference.reason, reference.stdout[-3000:])
    assert control.outcome == "failed", (control.outcome, control.reason)

