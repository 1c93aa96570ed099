"""`curator dlbench resolve`: imported DL-Bench problems -> pinned repo-backed drafts.

The upstream repository is generated here (two dated commits), served from a bare mirror
whose URL identity is unreachable: resolving must never need the network.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from mining_support import GIT_IDENTITY, write
from repo_support import make_repo

from curator import workspace as workspace_mod
from curator.cli import main
from curator.dlbench.resolve import with_signature
from curator.dlbench.upstream import (
    Snapshot,
    Unresolved,
    close_name,
    locate,
    signature_block,
)
from curator.dlbench.upstream import test_node_ids as node_ids_at
from curator.evaluation.extract import code_prompt, signature_problem
from curator.problem import Problem
from curator.release import gates
from curator.repos import environments, requirements, uv
from curator.repos.gitcache import CachedRepo, run_git
from curator.store import Store
from curator.store import problems as problem_store

SHAPES_V1 = '''"""Shapes."""
import numpy as np
from .common import as_points


def polygon_area(points):
    """Shoelace area of a polygon given as (N, 2) points."""
    pts = as_points(points)
    x, y = pts[:, 0], pts[:, 1]
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def perimeter(points):
    pts = as_points(points)
    return float(np.linalg.norm(pts - np.roll(pts, -1, axis=0), axis=1).sum())


class Polygon:
    """A polygon."""

    def __init__(self, points):
        self.points = as_points(points)

    @property
    def size(self):
        return len(self.points)

    def area(self):
        """Its area."""
        return polygon_area(self.points)


class Square(Polygon):
    def scale(self, k):
        return Square(self.points * k)
'''

# The later commit drops `perimeter` (a release that predates it still has it).
SHAPES_V2 = SHAPES_V1.replace(SHAPES_V1[SHAPES_V1.index("def perimeter"):
                                        SHAPES_V1.index("class Polygon")], "")

COMMON = '''import numpy as np


def as_points(points):
    return np.asarray(points, dtype=float)
'''

TESTS = '''import pytest

from geom.shapes import Polygon, Square, polygon_area


def test_unit_square():
    assert polygon_area([(0, 0), (1, 0), (1, 1), (0, 1)]) == 1.0


def test_triangle():
    assert polygon_area([(0, 0), (4, 0), (0, 3)]) == 6.0


@pytest.mark.parametrize("k", [1, 2])
def test_scaled(k):
    assert polygon_area([(0, 0), (k, 0), (k, k), (0, k)]) == k * k


class TestPolygon:
    def test_area(self):
        assert Polygon([(0, 0), (2, 0), (2, 2), (0, 2)]).area() == 4.0

    def test_size(self):
        assert Polygon([(0, 0), (1, 0), (0, 1)]).size == 3

    def test_scale(self):
        assert Square([(0, 0), (1, 0), (1, 1), (0, 1)]).scale(3).area() == 9.0


class TestSlowOnes:
    def test_quick(self):
        assert polygon_area([(0, 0), (2, 0), (0, 2)]) == 2.0

    def test_other_quick(self):
        assert polygon_area([(0, 0), (3, 0), (0, 2)]) == 3.0

    @pytest.mark.skip(reason="need --runslow option to run")
    def test_slow(self):
        assert polygon_area([(0, 0)] * 10**6) == 0.0

    @pytest.mark.xfail(reason="known upstream bug")
    def test_degenerate(self):
        assert polygon_area([]) == 0.0
'''

TESTS_PERIMETER = '''from geom.shapes import perimeter


def test_perimeter():
    assert perimeter([(0, 0), (1, 0), (1, 1), (0, 1)]) == 4.0
'''

URL = "https://git.invalid/team/geomlib"


def dlbench_file(function: str, path: str, tests: str, cls: str = "",
                 stage: str = "Pre-Post processing", block: bool = True) -> str:
    signature = f"class {cls}:\n    def {function}(self):" if cls else f"def {function}(points):"
    code = f"```python\n{signature}\n```\n\n" if block else ""
    text = (f"stage: {stage}\ntask: \ndata: Table\n\nprompt:\nWrite `{function}`.\n\n"
            f"{code}"
            f" ground Truth:{path}\n\n repo:geomlib\n\n function:{function}\n\n")
    if cls:
        text += f" class:{cls}\n\n"
    return text + f" test_cases:{tests}\n"


RELEASE = {
    "geomlibpolygon_area1.txt": dlbench_file(
        "polygon_area", "geom/shapes.py",
        "tests/test_shapes.py::test_unit_square tests/test_shapes.py::test_triangle "
        "tests/test_shapes.py::test_scaled[2]"),
    # class method; a typo'd test class and a doubled "blob/master/<repo>/" path
    "classes-geomlibarea2.txt": dlbench_file(
        "area", "blob/master/geomlib/geom/shapes.py", "tests/test_shapes.py::TestPolygn",
        cls="Polygon"),
    # only in the older commit
    "geomlibperimeter3.txt": dlbench_file("perimeter", "geom/shapes.py",
                                          "tests/test_perimeter.py"),
    "geomlibgone4.txt": dlbench_file("gone", "geom/missing.py", "tests/test_shapes.py"),
    "geomlibnot_there5.txt": dlbench_file("not_there", "geom/shapes.py",
                                          "tests/test_shapes.py"),
    "geomlibpolygon_area6.txt": dlbench_file("polygon_area", "geom/shapes.py",
                                             "tests/test_nothing.py::test_x"),
    # a "function" that is really a method of one class, at a path that moved
    "geomlibscale7.txt": dlbench_file("scale", "geom/old_shapes.py",
                                      "tests/test_shapes.py::TestPolygon::test_scale"),
    # upstream skips and xfails some of these tests
    "geomlibpolygon_area8.txt": dlbench_file("polygon_area", "geom/shapes.py",
                                             "tests/test_shapes.py::TestSlowOnes"),
}


def dated_commit(repo: Path, message: str, when: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    for args in (["add", "-A"], ["commit", "-q", "-m", message], ["rev-parse", "HEAD"]):
        out = subprocess.run(["git", *GIT_IDENTITY, *args], cwd=repo, env=env, check=True,
                             capture_output=True, text=True)
    return out.stdout.strip()


@pytest.fixture(scope="session")
def upstream_once(tmp_path_factory) -> dict:
    """The geomlib repository (two dated commits) and a bare mirror of it, made once: the
    tests only read them (clone, resolve, mine from them)."""
    root = tmp_path_factory.mktemp("geomlib-upstream")
    repo = root / "geomlib"
    repo.mkdir()
    subprocess.run(["git", *GIT_IDENTITY, "init", "-q", "-b", "main"], cwd=repo, check=True)
    write(repo, {"LICENSE": "MIT License\n\nPermission is hereby granted, free of charge, "
                            "to any person obtaining a copy\n",
                 "conftest.py": "", "geom/__init__.py": "", "geom/common.py": COMMON,
                 "geom/shapes.py": SHAPES_V1, "tests/test_shapes.py": TESTS,
                 "tests/test_perimeter.py": TESTS_PERIMETER})
    first = dated_commit(repo, "first", "2024-05-01T12:00:00+00:00")
    write(repo, {"geom/shapes.py": SHAPES_V2})
    (repo / "tests" / "test_perimeter.py").unlink()
    second = dated_commit(repo, "second", "2024-11-01T12:00:00+00:00")
    mirror = root / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(mirror)], check=True,
                   capture_output=True)
    return {"mirror": mirror, "first": first, "second": second}


@pytest.fixture
def upstream(upstream_once) -> dict:
    return dict(upstream_once)


@pytest.fixture(scope="session")
def imported_once(tmp_path_factory) -> Path:
    """A workspace with the release imported (`dlbench import`), made once; each test
    gets a copy of it (imported)."""
    root = tmp_path_factory.mktemp("geomlib-imported")
    release = root / "release"
    write(release, RELEASE)
    ws = workspace_mod.init(root / "ws")
    (ws.root / "curator.toml").write_text(f'[dlbench.repos]\ngeomlib = "{URL}"\n')
    result = CliRunner().invoke(main, ["--workspace", str(ws.root), "dlbench", "import",
                                       str(release), "--json"])
    assert result.exit_code == 0, result.output
    return ws.root


@pytest.fixture
def imported(tmp_path: Path, imported_once: Path):
    shutil.copytree(imported_once, tmp_path / "ws", symlinks=True)
    ws = workspace_mod.discover(str(tmp_path / "ws"))
    return ws, ["--workspace", str(ws.root)]


def resolve(base, *args):
    result = CliRunner().invoke(main, [*base, "dlbench", "resolve", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_resolve_pins_as_of_a_date_and_gives_reasons(imported, upstream, monkeypatch):
    ws, base = imported
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "file")   # a https clone would be refused
    data = resolve(base, "--repo", f"geomlib={upstream['mirror']}", "--as-of", "2024-09-30")
    resolved = {r["id"]: r for r in data["resolved"]}
    assert set(resolved) == {"geomlibpolygon_area1", "classes-geomlibarea2",
                             "geomlibperimeter3", "geomlibscale7", "geomlibpolygon_area8"}
    assert {r["commit"] for r in resolved.values()} == {upstream["first"]}
    assert {r["repo"] for r in resolved.values()} == {"geomlib"}
    reasons = {u["id"]: u["reason"] for u in data["unresolved"]}
    assert reasons == {
        "geomlibgone4": "file missing at the commit: geom/missing.py",
        "geomlibnot_there5": "symbol missing at the commit: not_there in geom/shapes.py",
        "geomlibpolygon_area6": "test target missing at the commit: tests/test_nothing.py::test_x",
    }
    with Store(ws.db_path, "tester") as store:
        repo = store.one("SELECT * FROM repos WHERE url = ?", (URL,))
        assert (repo["name"], repo["as_of"], repo["source"]) == (
            "geomlib", "2024-09-30", str(upstream["mirror"]))
        area = problem_store.get(store, "geomlibpolygon_area1")
        method = problem_store.get(store, "classes-geomlibarea2")
        scale = problem_store.get(store, "geomlibscale7")
        flags = json.loads(store.one("SELECT flags FROM problem_imports WHERE problem_id = ?",
                                     ("geomlibpolygon_area1",))["flags"])
        unresolved = json.loads(store.one(
            "SELECT flags, resolution FROM problem_imports WHERE problem_id = ?",
            ("geomlibgone4",))["resolution"])
    assert area.source == {"repo": URL, "commit": upstream["first"], "path": "geom/shapes.py",
                           "symbol": "polygon_area", "lines": "6-10", "license": "MIT"}
    assert area.test_node_ids == ["tests/test_shapes.py::test_unit_square",
                                  "tests/test_shapes.py::test_triangle",
                                  "tests/test_shapes.py::test_scaled[2]"]
    assert area.status == "draft" and area.repo_backed
    assert "from geom.common import as_points" in area.solution
    assert "def polygon_area(points):" in area.solution
    assert "commit_unpinned" not in flags and "solution_missing" not in flags
    assert "resolved" in flags and "license_unknown" not in flags
    assert unresolved["reason"] == "file missing at the commit: geom/missing.py"
    assert unresolved["release"]["path"] == "geom/missing.py"
    assert method.entry_point == "Polygon.area" and method.kind == "method"
    assert method.source["path"] == "geom/shapes.py"
    assert method.test_node_ids == ["tests/test_shapes.py::TestPolygon"]
    assert method.solution.startswith("class Polygon:") or "\nclass Polygon:" in method.solution
    assert scale.entry_point == "Square.scale" and scale.source["path"] == "geom/shapes.py"
    # the files on disk say the same
    toml = (ws.problems_dir / "geomlibpolygon_area1" / "problem.toml").read_text()
    assert upstream["first"] in toml and "node_ids" in toml
    assert (ws.problems_dir / "geomlibpolygon_area1" / "solution.py").read_text() == \
        area.solution


def test_rev_pins_another_commit_and_unregistered_repos_are_not_cloned(imported, upstream):
    ws, base = imported
    first = resolve(base)   # nothing registered yet: nothing cloned, a reason for each
    assert first["resolved"] == []
    assert {u["reason"] for u in first["unresolved"]} == {
        f"repository not registered: give --repo NAME=SOURCE for {URL}"}
    pinned_only = resolve(base, "--rev", "geomlib=main")   # a revision is no source
    assert pinned_only["resolved"] == []
    assert not (ws.repos_dir.exists() and any(ws.repos_dir.glob("*.git")))
    data = resolve(base, "--repo", f"geomlib={upstream['mirror']}", "--rev",
                   f"geomlib={upstream['second']}")
    reasons = {u["id"]: u["reason"] for u in data["unresolved"]}
    assert reasons["geomlibperimeter3"] == \
        "symbol missing at the commit: perimeter in geom/shapes.py"
    assert {r["commit"] for r in data["resolved"]} == {upstream["second"]}
    with Store(ws.db_path, "tester") as store:
        assert store.one("SELECT as_of FROM repos WHERE url = ?", (URL,))["as_of"] is None
    # registered now: a second resolve needs no --repo
    again = resolve(base, "--as-of", "2024-09-30")
    assert "geomlibperimeter3" in {r["id"] for r in again["resolved"]}


def test_bad_options_are_one_line_errors(imported, upstream):
    _ws, base = imported
    runner = CliRunner()
    for args, message in (
            (["--repo", "geomlib"], "must be NAME=SOURCE"),
            (["--as-of", "last tuesday", "--repo", f"geomlib={upstream['mirror']}"],
             "must be a date"),
            (["--rev", "nosuch=main"], "no imported problem is from that repository")):
        result = runner.invoke(main, [*base, "dlbench", "resolve", *args])
        assert result.exit_code == 1
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_date_before_the_first_commit_leaves_the_problems_unresolved(imported, upstream):
    _ws, base = imported
    data = resolve(base, "--repo", f"geomlib={upstream['mirror']}", "--as-of", "2020-01-01")
    assert data["resolved"] == []
    assert all("no commit on the default branch before 2020-01-01" in u["reason"]
               for u in data["unresolved"])


@pytest.mark.slow
@pytest.mark.timeout(900)     # runs, a validation with mutants and a build of repo-backed problems
def test_resolved_references_run_and_go_all_the_way_to_a_release(imported, upstream, tmp_path):
    _ws, base = imported
    runner = CliRunner()
    resolve(base, "--repo", f"geomlib={upstream['mirror']}", "--as-of", "2024-09-30")
    ran = runner.invoke(main, [*base, "run", "geomlibpolygon_area1", "classes-geomlibarea2",
                               "--json"])
    outcomes = {r["problem_id"]: r["outcome"] for r in json.loads(ran.stdout)["runs"]}
    assert outcomes == {"geomlibpolygon_area1": "passed", "classes-geomlibarea2": "passed"}
    for pid in outcomes:
        result = runner.invoke(main, [*base, "problems", "set", pid, "--status", "ready"])
        assert result.exit_code == 0, result.output
    # A release needs tests that catch a wrong answer (the release gates ask).
    validated = runner.invoke(main, [*base, "validate", *outcomes, "--mutants", "2",
                                     "--repeat", "1", "--json"])
    assert validated.exit_code == 0, validated.output
    assert all(row["discriminates"] for row in json.loads(validated.stdout)["problems"])
    out = tmp_path / "dist"
    built = runner.invoke(main, [*base, "release", "build", "--version", "1.0.0", "--out",
                                 str(out), "--json"])
    assert built.exit_code == 0, built.output
    bundles = sorted(out.glob("*.tar.gz"))
    assert bundles
    csv_text = next(out.rglob("*.csv")).read_text(encoding="utf-8")
    assert "polygon_area" in csv_text and "geom/shapes.py" in csv_text
    other = workspace_mod.init(tmp_path / "other")
    back = runner.invoke(main, ["--workspace", str(other.root), "import-release",
                                str(bundles[0]), "--json"])
    assert back.exit_code == 0, back.output
    assert sorted(p["id"] for p in json.loads(back.stdout)["problems"]) == sorted(outcomes)



def test_the_as_of_date_reaches_the_environment_resolver(imported, upstream, monkeypatch,
                                                         tmp_path):
    """`repo env` resolves as of the stored date; torch and what torch needs are excepted."""

    ws, base = imported
    resolve(base, "--repo", f"geomlib={upstream['mirror']}", "--as-of", "2024-09-30")
    with Store(ws.db_path, "tester") as store:
        row = store.one("SELECT * FROM repos WHERE url = ?", (URL,))
    assert environments.as_of(row) == "2024-09-30"
    calls = []

    def fake_uv(args, options, cwd=None):
        calls.append(args)
        return "numpy==1.26.4\n"

    monkeypatch.setattr(uv, "run", fake_uv)
    monkeypatch.setattr(uv, "torch_requirements", lambda: ["setuptools", "sympy"])
    wanted = requirements.Declared(runtime=["numpy"])
    uv.resolve("python3", wanted, [], "torch==2.13.0", environments.as_of(row),
                  uv.IndexOptions(), tmp_path, [])
    (args,) = calls
    assert args[args.index("--exclude-newer") + 1] == "2024-09-30"
    excepted = [args[i + 1] for i, a in enumerate(args) if a == "--exclude-newer-package"]
    assert excepted[:3] == ["torch=2100-01-01", "setuptools=2100-01-01", "sympy=2100-01-01"]
    assert "torchvision=2100-01-01" in excepted   # torch's companions follow it


@pytest.mark.parametrize(("name", "choice", "taken"), [
    ("apply_transfrom", "apply_transform", True),          # two letters swapped
    ("test_depth_wrapper.py", "test_depth_warper.py", True),
    ("TestDepthTo3", "TestDepthTo3d", True),
    ("TestPolygn", "TestPolygon", True),
    ("TestRandomCrop3D", "TestRandomCrop", False),          # a qualifier, not a typo
    ("test_augmentation_3d.py", "test_augmentation.py", False),
    ("TestRgbToYuv420", "TestRgbToYuv422", False),          # other digits
    ("rotation", "rotation_matrix", False),
    ("area", "aria", False),                                # too short to guess
])
def test_near_spellings_are_typos_only(name, choice, taken):
    assert (close_name(name, [choice, "something_else"]) == choice) is taken


def test_a_near_spelling_must_be_the_only_one():
    assert close_name("TestPolygn", ["TestPolygon", "TestPolygons"]) is None


def test_resolving_again_starts_from_what_the_release_says(imported, upstream):
    ws, base = imported
    mirror = f"geomlib={upstream['mirror']}"
    first = resolve(base, "--repo", mirror, "--as-of", "2024-09-30")
    assert "geomlibscale7" in {r["id"] for r in first["resolved"]}
    with Store(ws.db_path, "tester") as store:
        assert problem_store.get(store, "geomlibscale7").entry_point == "Square.scale"
    # At the later commit as well: the moved method is found again from the release's
    # own "scale" in geom/old_shapes.py, and perimeter is gone.
    second = resolve(base, "--rev", f"geomlib={upstream['second']}")
    assert {u["id"] for u in second["unresolved"]} >= {"geomlibperimeter3"}
    with Store(ws.db_path, "tester") as store:
        raw = json.loads(store.one("SELECT resolution FROM problem_imports WHERE "
                                   "problem_id = ?", ("geomlibscale7",))["resolution"])
    assert raw["release"] == {"path": "geom/old_shapes.py", "entry_point": "scale",
                              "kind": "function", "test_node_ids": [
                                  "tests/test_shapes.py::TestPolygon::test_scale"]}
    assert raw["commit"] == upstream["second"]


def _gate_failures(ws, ids):
    with Store(ws.db_path, "tester") as store:
        problems = [problem_store.get(store, pid) for pid in ids]
        report = gates.check(store, ws, problems)
        prompts = {p.id: p.prompt for p in problems}
    return {f.problem_id: f.reason for f in report.failures if f.gate == "code_prompt"}, prompts


def test_prose_only_prompts_get_the_reference_signature_and_pass_the_code_prompt_gate(
        tmp_path, upstream):
    release = tmp_path / "prose"
    write(release, {
        "geomlibpolygon_area1.txt": dlbench_file(
            "polygon_area", "geom/shapes.py", "tests/test_shapes.py::test_unit_square",
            block=False),
        "classes-geomlibarea2.txt": dlbench_file(
            "area", "geom/shapes.py", "tests/test_shapes.py::TestPolygon", cls="Polygon",
            block=False)})
    ws = workspace_mod.init(tmp_path / "ws2")
    (ws.root / "curator.toml").write_text(f'[dlbench.repos]\ngeomlib = "{URL}"\n')
    base = ["--workspace", str(ws.root)]
    result = CliRunner().invoke(main, [*base, "dlbench", "import", str(release), "--json"])
    assert result.exit_code == 0, result.output
    ids = ["geomlibpolygon_area1", "classes-geomlibarea2"]
    before, imported_prompts = _gate_failures(ws, ids)
    assert set(before) == set(ids)          # prose only: the gate refuses both
    data = resolve(base, "--repo", f"geomlib={upstream['mirror']}", "--as-of", "2024-09-30")
    assert {r["id"] for r in data["resolved"]} == set(ids)
    after, prompts = _gate_failures(ws, ids)
    assert after == {}
    for pid in ids:   # the prose stays verbatim, the block follows it
        assert prompts[pid].startswith(imported_prompts[pid])
    function = prompts["geomlibpolygon_area1"][len(imported_prompts["geomlibpolygon_area1"]):]
    assert function.lstrip("\n") == "```python\ndef polygon_area(points):\n    ...\n```\n"
    method = prompts["classes-geomlibarea2"][len(imported_prompts["classes-geomlibarea2"]):]
    assert method.lstrip("\n") == \
        "```python\nclass Polygon:\n    def area(self):\n        ...\n```\n"
    assert code_prompt(prompts["classes-geomlibarea2"], "Polygon.area") == \
        "class Polygon:\n    def area(self):\n"
    on_disk = (ws.problems_dir / "geomlibpolygon_area1" / "prompt.md").read_text()
    assert "def polygon_area(points):" in on_disk


def test_a_prompt_that_has_a_signature_is_kept_byte_for_byte(imported, upstream):
    ws, base = imported
    ids = ["geomlibpolygon_area1", "classes-geomlibarea2"]
    with Store(ws.db_path, "tester") as store:
        before = {pid: problem_store.get(store, pid).prompt for pid in ids}
    resolve(base, "--repo", f"geomlib={upstream['mirror']}", "--as-of", "2024-09-30")
    failures, after = _gate_failures(ws, ids)
    assert after == before and failures == {}


def test_the_signature_block_keeps_decorators_and_bases():
    tree = ast.parse("class Net(nn.Module, metaclass=Meta):\n"
                     "    @torch.no_grad()\n"
                     "    @staticmethod\n"
                     "    def forward(x: Tensor, *, k: int = 3) -> Tensor:\n"
                     "        '''Doc.'''\n        return x\n")
    cls = tree.body[0]
    block = signature_block(cls.body[0], cls)
    assert block == ("class Net(nn.Module, metaclass=Meta):\n    @torch.no_grad()\n"
                     "    @staticmethod\n"
                     "    def forward(x: Tensor, *, k: int=3) -> Tensor:\n        ...\n")
    prose = "Implement `forward`.\n\n```python\nnet = Net()\n```"
    prompt = with_signature(prose, "Net.forward", block)
    assert prompt.startswith(prose + "\n\n```python\n")
    assert signature_problem(prompt, "Net.forward") is None
    assert with_signature(prompt, "Net.forward", block) == prompt


def test_a_fence_the_prose_leaves_open_is_closed_before_the_signature():
    prose = '"Write `project`.\n\n```python\nclass Camera:\n    def __init__(self):\n' \
            '        self.k = 1\n```"'
    block = "class Camera:\n    def project(self, p):\n        ...\n"
    assert signature_problem(prose, "Camera.project") is not None
    prompt = with_signature(prose, "Camera.project", block)
    assert prompt.startswith(prose + "\n\n```\n\n```python\nclass Camera:")
    assert signature_problem(prompt, "Camera.project") is None


def test_resolving_at_another_commit_replaces_the_signature_block_it_appended(tmp_path):
    repo = tmp_path / "geomlib"
    repo.mkdir()
    subprocess.run(["git", *GIT_IDENTITY, "init", "-q", "-b", "main"], cwd=repo, check=True)
    write(repo, {"geom/__init__.py": "", "geom/common.py": COMMON,
                 "geom/shapes.py": SHAPES_V1, "tests/test_shapes.py": TESTS})
    first = dated_commit(repo, "first", "2024-05-01T12:00:00+00:00")
    write(repo, {"geom/shapes.py": SHAPES_V1.replace("def polygon_area(points):",
                                                     "def polygon_area(points, closed=True):")})
    second = dated_commit(repo, "second", "2024-11-01T12:00:00+00:00")
    mirror = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(mirror)], check=True,
                   capture_output=True)
    release = tmp_path / "prose"
    write(release, {"geomlibpolygon_area1.txt": dlbench_file(
        "polygon_area", "geom/shapes.py", "tests/test_shapes.py::test_unit_square",
        block=False)})
    ws = workspace_mod.init(tmp_path / "ws")
    (ws.root / "curator.toml").write_text(f'[dlbench.repos]\ngeomlib = "{URL}"\n')
    base = ["--workspace", str(ws.root)]
    assert CliRunner().invoke(main, [*base, "dlbench", "import", str(release)]).exit_code == 0

    def prompt_at(*args) -> str:
        assert resolve(base, *args)["resolved"]
        with Store(ws.db_path, "tester") as store:
            return problem_store.get(store, "geomlibpolygon_area1").prompt

    at_first = prompt_at("--repo", f"geomlib={mirror}", "--rev", f"geomlib={first}")
    assert at_first.endswith("```python\ndef polygon_area(points):\n    ...\n```\n")
    prose = at_first[:at_first.index("```python")]
    at_second = prompt_at("--rev", f"geomlib={second}")
    assert at_second == \
        prose + "```python\ndef polygon_area(points, closed=True):\n    ...\n```\n"
    assert prompt_at("--rev", f"geomlib={first}") == at_first
    # a block someone edited is theirs: kept as it is
    with Store(ws.db_path, "tester") as store:
        problem = problem_store.get(store, "geomlibpolygon_area1")
        problem_store.save(store, dataclasses.replace(
            problem, prompt=problem.prompt.replace("    ...", "    '''Area.'''")))
    edited = prose + "```python\ndef polygon_area(points):\n    '''Area.'''\n```\n"
    assert prompt_at("--rev", f"geomlib={second}") == edited


def test_a_test_file_named_without_pytests_prefix_is_read_as_the_one_with_it(tmp_path):
    """DL-Bench names `tests/networks.py` for neurodiffeq's `tests/test_networks.py`: the
    test module of that name with pytest's prefix (or suffix) in the same folder is
    taken, with a note; a name with neither stays missing."""
    repo = make_repo(tmp_path / "nets", {
        "nets/__init__.py": "", "tests/test_networks.py": "def test_fcnn():\n    pass\n",
        "tests/solvers_test.py": "def test_solve():\n    pass\n"})
    commit = run_git(["rev-parse", "HEAD"], cwd=repo).strip()
    snapshot = Snapshot(CachedRepo("https://git.invalid/nets", repo / ".git"), commit)
    kept, missing, notes = node_ids_at(snapshot, [
        "tests/networks.py", "tests/solvers.py::test_solve", "tests/layers.py"])
    assert kept == ["tests/test_networks.py", "tests/solvers_test.py::test_solve"]
    assert missing == ["tests/layers.py"]
    assert notes[0] == "test file tests/networks.py read as tests/test_networks.py " \
                       "(a near spelling)"


KERNELS = '''class ArcCosine:
    def _J(self, theta):
        return theta

    def K_diag(self, X):
        return self._J(X)


class Polynomial:
    def k(self, X):
        return X

    def K(self, X):
        return X
'''


def test_a_test_module_without_its_extension_and_a_name_in_other_case_resolve(tmp_path):
    """GPflow in DL-Bench: `_j` for `ArcCosine._J` (a name in other letter case, however
    short, when exactly one has it) and `tests/gpflow/kernels/test_kernels` for the
    module test_kernels.py; names that differ in case from two stay missing."""
    repo = make_repo(tmp_path / "kernels", {
        "gp/__init__.py": "", "gp/kernels.py": KERNELS,
        "tests/kernels/test_kernels.py": "def test_arccosine():\n    pass\n"})
    commit = run_git(["rev-parse", "HEAD"], cwd=repo).strip()
    snapshot = Snapshot(CachedRepo("https://git.invalid/kernels", repo / ".git"), commit)
    kept, missing, notes = node_ids_at(snapshot, [" tests/kernels/test_kernels",
                                                  "tests/kernels/test_kernels::test_arccosine"])
    assert kept == ["tests/kernels/test_kernels.py",
                    "tests/kernels/test_kernels.py::test_arccosine"] and not missing
    assert notes[0] == "test file tests/kernels/test_kernels read as " \
                       "tests/kernels/test_kernels.py"

    def problem(entry):
        return Problem(id="p", entry_point=entry, kind="method",
                       source={"path": "gp/kernels.py"})

    path, qualname, node, cls, notes = locate(snapshot, problem("ArcCosine._j"))
    assert (path, qualname, cls.name) == ("gp/kernels.py", "ArcCosine._J", "ArcCosine")
    assert notes == ["symbol ArcCosine._j read as ArcCosine._J (a near spelling)"]
    with pytest.raises(Unresolved, match="symbol missing at the commit: Polynomial.kk"):
        locate(snapshot, problem("Polynomial.kk"))
    _, qualname, *_ = locate(snapshot, problem("Polynomial.K"))
    assert qualname == "Polynomial.K"   # the exact name first


LOSSES = '''class Loss:
    def _create_pytorch_loss(self):
        raise NotImplementedError


class L2Loss(Loss):
    def _compute_tf_loss(self, output, labels):
        return output - labels

    def _create_pytorch_loss(self):
        def loss(output, labels):
            return (output - labels) ** 2
        return loss
'''


def test_a_folder_typo_and_a_name_the_prompt_shows_resolve(tmp_path):
    """deepchem in DL-Bench: tests in `deepchem/model/tests/test_losses.py` (the folder is
    `models`), and the method `L2Loss._compute_pytorch_loss` whose prompt shows `def
    _create_pytorch_loss(self)` in `class L2Loss`: the file of that exact name one typo
    away, and the one method of the class the prompt's signature names."""
    repo = make_repo(tmp_path / "chem", {
        "chem/__init__.py": "", "chem/models/losses.py": LOSSES,
        "chem/models/tests/test_losses.py": "def test_l2():\n    pass\n"})
    commit = run_git(["rev-parse", "HEAD"], cwd=repo).strip()
    snapshot = Snapshot(CachedRepo("https://git.invalid/chem", repo / ".git"), commit)
    kept, missing, notes = node_ids_at(snapshot, ["chem/model/tests/test_losses.py",
                                                  "chem/model/tests/test_lossez.py"])
    assert kept == ["chem/models/tests/test_losses.py"]
    assert missing == ["chem/model/tests/test_lossez.py"]
    assert notes == ["test file chem/model/tests/test_losses.py read as "
                     "chem/models/tests/test_losses.py (a near spelling)"]

    def problem(entry, prompt):
        return Problem(id="p", entry_point=entry, kind="method", prompt=prompt,
                       source={"path": "chem/models/losses.py"})

    shown = ("Generate `_create_pytorch_loss` for `L2Loss`.\n```python\nclass L2Loss(Loss):\n"
             "    def _create_pytorch_loss(self):\n```\n")
    path, qualname, node, cls, notes = locate(snapshot, problem(
        "L2Loss._compute_pytorch_loss", shown))
    assert (qualname, cls.name) == ("L2Loss._create_pytorch_loss", "L2Loss")
    assert notes == ["symbol L2Loss._compute_pytorch_loss read as "
                     "L2Loss._create_pytorch_loss (the prompt's signature)"]
    # a prompt that shows the release's own name (a nested function) stays unresolved
    nested = "```python\nclass L2Loss(Loss):\n    def _compute_pytorch_loss(self, o, l):\n```\n"
    with pytest.raises(Unresolved, match="symbol missing at the commit"):
        locate(snapshot, problem("L2Loss._compute_pytorch_loss", nested))


INHERITED = '''import unittest

from tests.common import SharedChecks


class _Checks:
    def test_cpu(self):
        pass


class TestNonRecurrent(_Checks):
    def test_own(self):
        pass


class TestTwiceRemoved(TestNonRecurrent):
    pass


class TestPlain(unittest.TestCase):
    def test_here(self):
        pass


class TestShared(SharedChecks):
    pass
'''


def test_a_test_method_a_class_inherits_is_a_test_of_that_class(tmp_path):
    """pfrl in DL-Bench: `TestTRPONonRecurrent::test_abc_cpu`, defined on its base class
    `_TestTRPO` in the same module, is a test pytest runs: kept, also two bases away; a
    base defined elsewhere may bring any method; a plain TestCase brings none."""
    repo = make_repo(tmp_path / "agents", {
        "agents/__init__.py": "", "tests/test_agents.py": INHERITED})
    commit = run_git(["rev-parse", "HEAD"], cwd=repo).strip()
    snapshot = Snapshot(CachedRepo("https://git.invalid/agents", repo / ".git"), commit)
    file = "tests/test_agents.py"
    kept, missing, _notes = node_ids_at(snapshot, [
        f"{file}::TestNonRecurrent::test_cpu", f"{file}::TestTwiceRemoved::test_cpu",
        f"{file}::TestTwiceRemoved::test_own", f"{file}::TestShared::test_shared",
        f"{file}::TestPlain::test_cpu", f"{file}::TestNonRecurrent::test_gpu"])
    assert kept == [f"{file}::TestNonRecurrent::test_cpu", f"{file}::TestTwiceRemoved::test_cpu",
                    f"{file}::TestTwiceRemoved::test_own", f"{file}::TestShared::test_shared"]
    assert missing == [f"{file}::TestPlain::test_cpu", f"{file}::TestNonRecurrent::test_gpu"]


ENTROPY = '''class EntropyBottleneck:
    def forward(self, x):
        return x

    def _likelihood(self, x):
        return x


class GaussianConditional:
    def forward(self, x, scales):
        return x * scales

    def _likelihood(self, x, scales):
        return x
'''


def test_a_release_without_tests_gets_the_tests_named_for_the_symbol(tmp_path):
    """CompressAI in DL-Bench: class files with no test_cases, two of them without
    `class:` for a method several classes have, whose prompt names the class; pytorch3d:
    a test file that never existed (`test_mesh_laplacian_loss.py`). The class is read
    from the prompt, and the tests are those named for the symbol: `Test<Class>`, or the
    test module named for the function that mentions it; no guess among several."""
    from curator.dlbench.resolve import resolve_problem

    repo = make_repo(tmp_path / "entropy", {
        "ent/__init__.py": "", "ent/models.py": ENTROPY,
        "ent/smoothing.py": "def laplacian_smoothing(m):\n    return m\n",
        "ent/other.py": "def lonely(m):\n    return m\n",
        "tests/test_models.py": "class TestGaussianConditional:\n"
                                "    def test_forward(self):\n        pass\n",
        "tests/test_laplacian_smoothing.py": "from ent.smoothing import laplacian_smoothing"
                                             "\n\n\ndef test_it():\n    pass\n"})
    commit = run_git(["rev-parse", "HEAD"], cwd=repo).strip()
    snapshot = Snapshot(CachedRepo("https://git.invalid/entropy", repo / ".git"), commit)

    def problem(entry, path, prompt="", tests=()):
        return Problem(id="p", entry_point=entry, kind="method" if "smooth" not in path and
                       "other" not in path else "function", prompt=prompt,
                       source={"path": path}, test_node_ids=list(tests))

    prompt = ("Generate a Python method `forward` for the `GaussianConditional` class.\n"
              "```python\nclass GaussianConditional(EntropyModel):\n    def forward(self):"
              "\n```\n")
    resolved, record = resolve_problem(snapshot, problem("forward", "ent/models.py", prompt),
                                       "https://git.invalid/entropy", "MIT")
    assert resolved.entry_point == "GaussianConditional.forward"
    assert resolved.test_node_ids == ["tests/test_models.py::TestGaussianConditional"]
    assert any("GaussianConditional" in n and "prompt" in n for n in record["notes"])
    assert any("found by name (the release gives none)" in n for n in record["notes"])
    # the class named only in prose is enough; naming none leaves it missing
    resolved, _ = resolve_problem(snapshot, problem(
        "_likelihood", "ent/models.py", "A method `_likelihood` for the `GaussianConditional`"
        " class."), "https://git.invalid/entropy", "MIT")
    assert resolved.entry_point == "GaussianConditional._likelihood"
    with pytest.raises(Unresolved, match="class missing: forward is a method of 2"):
        resolve_problem(snapshot, problem("forward", "ent/models.py", "Write forward."),
                        "https://git.invalid/entropy", "MIT")
    resolved, record = resolve_problem(snapshot, problem(
        "laplacian_smoothing", "ent/smoothing.py", tests=["tests/test_laplacian_loss.py"]),
        "https://git.invalid/entropy", "MIT")
    assert resolved.test_node_ids == ["tests/test_laplacian_smoothing.py"]
    assert any("the release gives tests/test_laplacian_loss.py" in n for n in record["notes"])
    with pytest.raises(Unresolved, match="the release gives no test_cases"):
        resolve_problem(snapshot, problem("lonely", "ent/other.py"),
                        "https://git.invalid/entropy", "MIT")


PROPS_TESTS = '''import pytest

from props.text import utils
from props.text.properties import calculate_properties as calc, other


@pytest.fixture(name="texts")
def texts_fixture():
    return calc(["a"])


def test_length():
    assert calc(["ab"]) == [2]


def test_by_module():
    assert utils.calculate_properties(["a"]) == [1]


def test_fixture(texts):
    assert texts == [1]


def test_unrelated():
    assert other() == 0


def test_same_attribute_elsewhere():
    thing = object()
    assert thing.calculate_properties is None


class PropsTestCase(Base):
    def test_in_unittest(self):
        assert calc(["a"]) == [1]


class TestWithSetup:
    def setup_method(self):
        self.result = calc(["x"])

    def test_one(self):
        assert self.result

    def test_two(self):
        assert self.result
'''


def test_a_release_without_tests_gets_the_tests_that_use_the_symbol(tmp_path):
    """deepchecks' calculate_builtin_properties and sparseml's ConvNet.forward come
    without test_cases and with no test module named for them: the tests that import the
    symbol from the repository and use it (directly, as `module.name`, through a fixture,
    in a unittest class, in a class whose setup uses it; a method: its class) are its
    tests, said in the notes; a name used on another object, or a test that does not
    use it, is not."""
    from curator.dlbench.resolve import resolve_problem

    repo = make_repo(tmp_path / "props", {
        "props/__init__.py": "", "props/text/__init__.py": "",
        "props/text/properties.py": "def calculate_properties(texts):\n"
                                    "    return [len(t) for t in texts]\n\n\n"
                                    "def other():\n    return 0\n",
        "props/text/utils.py": "from props.text.properties import calculate_properties\n",
        "props/nets.py": "class ConvNet:\n    def forward(self, x):\n        return x\n\n"
                         "    def __call__(self, x):\n        return self.forward(x)\n",
        "tests/text/test_props.py": PROPS_TESTS,
        "tests/test_models.py": "from props.nets import ConvNet\n\n\n"
                                "def test_net():\n    assert ConvNet()(1) == 1\n\n\n"
                                "def test_nothing():\n    assert True\n"})
    commit = run_git(["rev-parse", "HEAD"], cwd=repo).strip()
    snapshot = Snapshot(CachedRepo("https://git.invalid/props", repo / ".git"), commit)
    problem = Problem(id="p", entry_point="calculate_properties", kind="function",
                      prompt="Write calculate_properties.",
                      source={"path": "props/text/properties.py"}, test_node_ids=[])
    resolved, record = resolve_problem(snapshot, problem, "https://git.invalid/props", "MIT")
    file = "tests/text/test_props.py"
    assert resolved.test_node_ids == [
        f"{file}::test_length", f"{file}::test_by_module", f"{file}::test_fixture",
        f"{file}::PropsTestCase::test_in_unittest", f"{file}::TestWithSetup::test_one",
        f"{file}::TestWithSetup::test_two"]
    assert any("found by their use of calculate_properties (the release gives none)" in n
               for n in record["notes"])
    method = Problem(id="q", entry_point="forward", kind="method",
                     prompt="Write `forward` for the class `ConvNet`.",
                     source={"path": "props/nets.py"}, test_node_ids=[])
    resolved, _ = resolve_problem(snapshot, method, "https://git.invalid/props", "MIT")
    assert resolved.entry_point == "ConvNet.forward"
    assert resolved.test_node_ids == ["tests/test_models.py::test_net"]


EXPANDED_TESTS = '''import unittest

from parameterized import parameterized, parameterized_class
from ddt import data, ddt

from props.nets import ConvNet


class TestExpanded(unittest.TestCase):
    @parameterized.expand([[1], [2]])
    def test_forward(self, x):
        assert ConvNet().forward(x) == x

    def test_plain(self):
        assert ConvNet().forward(3) == 3


@ddt
class TestData(unittest.TestCase):
    @data(1, 2)
    def test_data(self, x):
        assert ConvNet().forward(x) == x

    def test_other(self):
        assert ConvNet().forward(3) == 3
'''

EXPANDED_FUNCTIONS = '''import unittest

from parameterized import parameterized, parameterized_class

from props.nets import ConvNet


@parameterized([(1,), (2,)])
def test_module_level(x):
    assert ConvNet().forward(x) == x


@parameterized_class(("x",), [(1,), (2,)])
class TestWholeClass(unittest.TestCase):
    def test_it(self):
        assert ConvNet().forward(self.x) == self.x
'''


def test_tests_a_decorator_expands_are_run_by_what_pytest_collects(tmp_path):
    """sparseml's TestQuantizationOneShot.test_quantization_oneshot is written under
    `@parameterized.expand`, which makes test_quantization_oneshot_0 and _1: pytest has
    no test of the written name, so that node id was "not found" and no test of the
    problem ran at all. Such a test is run as its class (a function or a class so
    expanded, as its file), found by use or given by the release."""
    from curator.dlbench.resolve import resolve_problem

    repo = make_repo(tmp_path / "props", {
        "props/__init__.py": "",
        "props/nets.py": "class ConvNet:\n    def forward(self, x):\n        return x\n",
        "tests/test_nets.py": EXPANDED_TESTS, "tests/test_more_nets.py": EXPANDED_FUNCTIONS})
    commit = run_git(["rev-parse", "HEAD"], cwd=repo).strip()
    snapshot = Snapshot(CachedRepo("https://git.invalid/props", repo / ".git"), commit)
    method = Problem(id="q", entry_point="ConvNet.forward", kind="method",
                     prompt="Write `forward` for the class `ConvNet`.",
                     source={"path": "props/nets.py"}, test_node_ids=[])
    resolved, _ = resolve_problem(snapshot, method, "https://git.invalid/props", "MIT")
    file = "tests/test_nets.py"
    assert resolved.test_node_ids == [f"{file}::TestExpanded", f"{file}::TestData",
                                      "tests/test_more_nets.py"]
    given = Problem(id="g", entry_point="ConvNet.forward", kind="method",
                    prompt="Write `forward` for the class `ConvNet`.",
                    source={"path": "props/nets.py"},
                    test_node_ids=[f"{file}::TestExpanded::test_forward",
                                   f"{file}::TestExpanded::test_plain"])
    resolved, record = resolve_problem(snapshot, given, "https://git.invalid/props", "MIT")
    assert resolved.test_node_ids == [f"{file}::TestExpanded"]
    assert any("generated under other names" in n for n in record["notes"])
