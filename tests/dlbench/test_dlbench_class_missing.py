"""DL-Bench class files without `class:`: method problems flagged `class_missing`, whose
class `dlbench resolve` finds in the ground-truth file (a method of that name in exactly
one class) or says why not. The upstream repository is a bare mirror made here."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from mining_support import GIT_IDENTITY, write
from tui_support import *  # noqa: F403  (fixtures: app_for, no_blink, synth_workspace)
from tui_support import open_problem

from curator import workspace as workspace_mod
from curator.cli import main
from curator.problem import Problem, validate
from curator.store import Store
from curator.store import problems as problem_store

URL = "https://git.invalid/team/codecs"

CODECS = '''import torch


def decode(x):
    """A module function with the method's name: not what a class file means."""
    return x


class Codec(torch.nn.Module):
    def decode(self, x):
        return x * 2


class Encoder(torch.nn.Module):
    def forward(self, x):
        return x + 1


class Decoder(torch.nn.Module):
    def forward(self, x):
        return x - 1


class Trainer:
    def fit(self, loader, override=True, progress_bar=False):
        return "trainer"


class FunctionalTrainer:
    def fit(self, loader):
        return "functional"
'''

TESTS = '''from codecs_lib.codecs import Codec, Decoder, Trainer


def test_decode():
    assert Codec().decode(2) == 4


def test_fit():
    assert Trainer().fit([]) == "trainer"


def test_forward():
    assert Decoder()(3) == 2
'''


def function_file(function: str, prompt: str) -> str:
    # a "function" file whose function is a method of several classes of the file
    return (f"stage: Training\ntask: \ndata: \n\nprompt:\n{prompt}\n\n ground Truth:"
            f"codecs_lib/codecs.py\n\n repo:codecs\n\n function:{function}\n\n "
            "test_cases:tests/test_codecs.py::test_fit\n")


def class_file(function: str, tests: str = "tests/test_codecs.py::test_decode") -> str:
    # the upstream class files swap stage and data; this one has no `class:` key
    return (f"stage: Image\ntask: \ndata: Model Construction\n\nprompt:\nWrite "
            f"`{function}`.\n\n ground Truth:codecs_lib/codecs.py\n\n repo:codecs\n\n "
            f"function:{function}\n\n" + (f" test_cases:{tests}\n" if tests else ""))


RELEASE = {
    "classes-codecsdecode1.txt": class_file("decode"),
    "classes-codecsforward2.txt": class_file("forward"),
    "classes-codecsencode3.txt": class_file("encode"),
    "classes-codecsforward4.txt": class_file("forward", tests=""),
    # the prompt tells the classes apart: by the parameters it names, by the class named
    "codecsfit5.txt": function_file("fit", "Fit on train data from `loader`; raise when "
                                    "override is False; progress_bar shows a bar."),
    "classes-codecsforward6.txt": class_file("forward", "tests/test_codecs.py::test_forward")
    .replace("Write `forward`.", "Write the forward pass of the Decoder: x minus one."),
    "codecsfit7.txt": function_file("fit", "Write `fit`."),
}


@pytest.fixture
def imported(tmp_path: Path):
    repo = tmp_path / "codecs"
    repo.mkdir()
    subprocess.run(["git", *GIT_IDENTITY, "init", "-q", "-b", "main"], cwd=repo, check=True)
    write(repo, {"codecs_lib/__init__.py": "", "codecs_lib/codecs.py": CODECS,
                 "tests/test_codecs.py": TESTS})
    for args in (["add", "-A"], ["commit", "-q", "-m", "first"]):
        subprocess.run(["git", *GIT_IDENTITY, *args], cwd=repo, check=True,
                       capture_output=True)
    mirror = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(mirror)], check=True,
                   capture_output=True)
    write(tmp_path / "release", RELEASE)
    ws = workspace_mod.init(tmp_path / "ws")
    (ws.root / "curator.toml").write_text(f'[dlbench.repos]\ncodecs = "{URL}"\n')
    base = ["--workspace", str(ws.root)]
    result = CliRunner().invoke(main, [*base, "dlbench", "import", str(tmp_path / "release"),
                                       "--json"])
    assert result.exit_code == 0, result.output
    return ws, base, mirror, json.loads(result.stdout)


def test_class_files_without_class_are_method_problems_flagged_class_missing(imported):
    ws, base, _mirror, report = imported
    kinds = {p["id"]: (p["kind"], p["entry_point"], "class_missing" in p["flags"])
             for p in report["problems"]}
    assert kinds == {"classes-codecsdecode1": ("method", "decode", True),
                     "classes-codecsforward2": ("method", "forward", True),
                     "classes-codecsencode3": ("method", "encode", True),
                     "classes-codecsforward4": ("method", "forward", True),
                     "codecsfit5": ("function", "fit", False),
                     "classes-codecsforward6": ("method", "forward", True),
                     "codecsfit7": ("function", "fit", False)}
    assert report["flags"]["class_missing"] == 5
    # the file on disk says so too, and loads back as it was written
    toml = (ws.problems_dir / "classes-codecsdecode1" / "problem.toml").read_text()
    assert 'kind = "method"' in toml and 'entry_point = "decode"' in toml
    shown = CliRunner().invoke(main, [*base, "problems", "show", "classes-codecsdecode1"])
    assert shown.exit_code == 0, shown.output
    assert "class_missing" in shown.output and "classes-codecsdecode1.txt" in shown.output
    as_json = CliRunner().invoke(main, [*base, "problems", "show", "classes-codecsdecode1",
                                        "--json"])
    data = json.loads(as_json.stdout)
    assert data["kind"] == "method" and "class_missing" in data["import"]["flags"]
    assert data["import"]["origin"] == "dlbench-txt"


def test_only_a_draft_may_leave_the_class_of_a_method_unknown():
    draft = Problem(id="m1", entry_point="forward", kind="method", status="draft")
    assert validate(draft) == [] and draft.class_name is None
    ready = Problem(id="m1", entry_point="forward", kind="method", status="ready")
    assert any("only a draft may leave the class unknown" in e for e in validate(ready))
    assert Problem(id="m2", entry_point="Net.forward", kind="method").class_name == "Net"


def test_resolve_finds_the_one_class_or_says_why_not(imported, monkeypatch):
    ws, base, mirror, _report = imported
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "file")
    result = CliRunner().invoke(main, [*base, "dlbench", "resolve", "--repo",
                                       f"codecs={mirror}", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert sorted(r["id"] for r in data["resolved"]) == [
        "classes-codecsdecode1", "classes-codecsforward6", "codecsfit5"]
    reasons = {u["id"]: u["reason"] for u in data["unresolved"]}
    several = ("class missing: {0} is a method of 2 classes in codecs_lib/codecs.py ({1}) "
               "and the prompt does not say which; set entry_point to Class.{0} in "
               "problem.toml")
    assert reasons == {
        "classes-codecsforward2": several.format("forward", "Encoder, Decoder"),
        "classes-codecsencode3": "class missing: no class in codecs_lib/codecs.py has a "
        "method encode; set entry_point to Class.encode in problem.toml",
        "classes-codecsforward4": several.format("forward", "Encoder, Decoder"),
        "codecsfit7": several.format("fit", "Trainer, FunctionalTrainer"),
    }
    with Store(ws.db_path, "tester") as store:
        decode = problem_store.get(store, "classes-codecsdecode1")
        row = store.one("SELECT flags, resolution FROM problem_imports WHERE problem_id = ?",
                        ("classes-codecsdecode1",))
        flags, notes = json.loads(row["flags"]), json.loads(row["resolution"])["notes"]
        still = json.loads(store.one("SELECT flags FROM problem_imports WHERE problem_id = ?",
                                     ("classes-codecsencode3",))["flags"])
    # the method of the class, not the module function of the same name
    assert decode.entry_point == "Codec.decode" and decode.kind == "method"
    assert "return x * 2" in decode.solution and "class Codec(torch.nn.Module):" in decode.solution
    assert "class_missing" not in flags and "resolved" in flags
    assert any("class Codec found in codecs_lib/codecs.py" in n for n in notes)
    assert "class_missing" in still and "unresolved" in still
    toml = (ws.problems_dir / "classes-codecsdecode1" / "problem.toml").read_text()
    assert 'entry_point = "Codec.decode"' in toml
    with Store(ws.db_path, "tester") as store:
        fit = problem_store.get(store, "codecsfit5")
        forward = problem_store.get(store, "classes-codecsforward6")
        fit_notes = json.loads(store.one(
            "SELECT resolution FROM problem_imports WHERE problem_id = ?",
            ("codecsfit5",))["resolution"])["notes"]
    # the method whose parameters the prompt names; the class the prompt names
    assert fit.entry_point == "Trainer.fit" and '"trainer"' in fit.solution
    assert any("of Trainer, FunctionalTrainer, the one the prompt describes" in n
               for n in fit_notes)
    assert forward.entry_point == "Decoder.forward" and "x - 1" in forward.solution


async def test_the_app_shows_class_missing_on_the_problem(imported, app_for):
    ws, _base, _mirror, _report = imported
    app = app_for(ws)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await open_problem(pilot, "classes-codecsforward2")
        heading = str(screen.query_one("#problem-heading").render())
        assert "class_missing" in heading and "forward" in heading
