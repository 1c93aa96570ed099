"""Environments that build for any DL-Bench repository: every place test requirements are
declared, torch's companions, conflicting extras, missing blobs, recipes, builds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from mining_support import commit, git, write
from repo_support import offline_index  # noqa: F401  (the fixture)
from repo_support import wheel as _wheel

from curator import workspace as workspace_mod
from curator.errors import CuratorError
from curator.repos import environments, importcheck, recipes, requirements, uv
from curator.repos.checkout import pinned_checkout

SETUP_PY_IN_CODE = '''import sys
from setuptools import setup

EXTRAS_REQUIRE = [
    "matplotlib>=1.3",
    "torchvision>=0.15.0",
    "scipy>=1.1",
]
extras = {"extras": EXTRAS_REQUIRE}
extras["test"] = EXTRAS_REQUIRE + ["pytest-xdist", "nbval"]
extras.update({"profile": ["snakeviz"]})
dev_only = dict(dev=["black"])

setup(
    name="probly",
    install_requires=["numpy>=1.7", "opt_einsum>=2.3.2"],
    tests_require=["pytest-benchmark"],
    extras_require=extras,
)
'''


def test_test_requirements_built_in_setup_py_code_are_read(tmp_path):
    (tmp_path / "probly").mkdir()
    (tmp_path / "probly" / "__init__.py").write_text("")
    (tmp_path / "setup.py").write_text(SETUP_PY_IN_CODE)
    found = requirements.declared(tmp_path)
    assert found.runtime == ["numpy>=1.7", "opt_einsum>=2.3.2"]
    # the test extra built as EXTRAS_REQUIRE + [...] and tests_require, not profile/dev
    assert found.test == ["pytest-benchmark", "matplotlib>=1.3", "torchvision>=0.15.0",
                          "scipy>=1.1", "pytest-xdist", "nbval"]


SETUP_PY_CONFIGURATION = '''from setuptools import setup

configuration = {
    "name": "umap-like",
    "install_requires": ["numpy >= 1.17", "scipy >= 1.3.1", "numba >= 0.51.2", "tqdm"],
    "extras_require": {"plot": ["pandas"], "test": ["pytest-mock"]},
    "tests_require": ["pytest"],
}

setup(**configuration)
'''


def test_requirements_in_a_dict_passed_as_setup_keywords_are_read(tmp_path):
    """umap's setup.py: `setup(**configuration)` with the requirements in the dict."""
    (tmp_path / "umap_like").mkdir()
    (tmp_path / "umap_like" / "__init__.py").write_text("")
    (tmp_path / "setup.py").write_text(SETUP_PY_CONFIGURATION)
    found = requirements.declared(tmp_path)
    assert found.runtime == ["numpy >= 1.17", "scipy >= 1.3.1", "numba >= 0.51.2", "tqdm"]
    assert sorted(found.test) == ["pytest", "pytest-mock"]   # not the plot extra
    assert found.project == "umap-like"


SETUP_PY_FUNCTIONS = '''from setuptools import setup

_deps = ["numpy>=1.17.0,<2.0", "pydantic>=2.0.0,<2.8.0"]
_nm_deps = ["zoo>=1.7.0"]
_dev_deps = ["pytest-mock>=3.6.0", "parameterized"]


def _setup_install_requires():
    return _nm_deps + _deps


def _setup_extras():
    return {"dev": _dev_deps, "docs": ["sphinx"]}


def _undecided():
    if _deps:
        return ["a"]
    return ["b"]


setup(name="sparse-like", install_requires=_setup_install_requires(),
      extras_require=_setup_extras(), tests_require=_undecided())
'''

SETUP_PY_READS_IN_A_FUNCTION = '''from setuptools import setup


def requirements():
    with open("requirements/base.txt") as handle:
        return handle.read().splitlines()


setup(name="reader", install_requires=requirements())
'''


def test_requirements_returned_by_setup_py_functions_are_read(tmp_path):
    """sparseml's setup.py passes `install_requires=_setup_install_requires()` and
    `extras_require=_setup_extras()`, module functions returning its lists: none was
    read, so pydantic came unbounded (v1) and `import sparseml` failed on
    `model_validator`. A function with two returns decides nothing; one that reads a
    requirements file names it."""
    (tmp_path / "sparse_like").mkdir()
    (tmp_path / "sparse_like" / "__init__.py").write_text("")
    (tmp_path / "setup.py").write_text(SETUP_PY_FUNCTIONS)
    found = requirements.declared(tmp_path)
    assert found.runtime == ["zoo>=1.7.0", "numpy>=1.17.0,<2.0", "pydantic>=2.0.0,<2.8.0"]
    assert found.test == ["pytest-mock>=3.6.0", "parameterized"]

    reader = tmp_path / "reader"
    (reader / "reader").mkdir(parents=True)
    (reader / "reader" / "__init__.py").write_text("")
    (reader / "requirements").mkdir()
    (reader / "requirements" / "base.txt").write_text("scipy\n")
    (reader / "requirements" / "extra.txt").write_text("rasterio\n")
    (reader / "setup.py").write_text(SETUP_PY_READS_IN_A_FUNCTION)
    found = requirements.declared(reader)
    assert found.runtime == ["scipy"]
    assert found.test == ["rasterio"]

def test_optional_dependency_chains_and_requirement_folders(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\ndependencies = ["numpy"]\n'
        '[project.optional-dependencies]\nextras = ["scipy", "pkg[plot]"]\n'
        'plot = ["matplotlib"]\ndocs = ["sphinx"]\n'
        'test = ["pkg[extras,docs]", "pytest-mock"]\ndev = ["black"]\n')
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "ci").mkdir()
    (tmp_path / "requirements" / "ci" / "tests.txt").write_text("hypothesis\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "requirements.txt").write_text("pytest-timeout\n")
    (tmp_path / "test-requirements.txt").write_text("parameterized\n")
    found = requirements.declared(tmp_path)
    # test = ["pkg[extras]"] follows extras -> plot (docs left alone); dev not needed
    assert found.test[:3] == ["scipy", "matplotlib", "pytest-mock"]
    assert set(found.test[3:]) == {"hypothesis", "pytest-timeout", "parameterized"}
    assert "black" not in found.test and "sphinx" not in found.test
    keyed = {str(p.relative_to(tmp_path)) for p in requirements.dependency_files(tmp_path)}
    assert {"requirements/ci/tests.txt", "tests/requirements.txt",
            "test-requirements.txt"} <= keyed


READ_REQUIREMENTS_SETUP_PY = '''import setuptools


def read_requirements(path):
    if not isinstance(path, list):
        path = [path]
    requirements = []
    for p in path:
        with open(p) as fh:
            requirements.extend([line.strip() for line in fh])
    return requirements


setuptools.setup(
    name="inference",
    install_requires=read_requirements(
        ["requirements/_requirements.txt", "requirements/requirements.cpu.txt"]),
    extras_require={"sam": read_requirements("requirements/requirements.sam.txt")},
)
'''


def test_only_the_requirements_files_the_packaging_names_are_runtime(tmp_path):
    """roboflow inference's setup.py reads install_requires from the files it names in
    code; its other requirements files (requirements.gpu.txt: flash-attn, built from
    source) are test requirements, each taken when it fits. torchgeo declares its
    dependencies in pyproject.toml and pins a CI matrix in requirements/required.txt
    (setuptools==75.1.0, which torch 2.13 cannot have): test requirements too."""
    inference = tmp_path / "inference"
    (inference / "inference").mkdir(parents=True)
    (inference / "inference" / "__init__.py").write_text("")
    (inference / "setup.py").write_text(READ_REQUIREMENTS_SETUP_PY)
    (inference / "requirements").mkdir()
    for name, text in (("_requirements.txt", "numpy\nopencv-python\n"),
                       ("requirements.cpu.txt", "onnxruntime\n"),
                       ("requirements.sam.txt", "rasterio\n"),
                       ("requirements.gpu.txt", "flash-attn\n")):
        (inference / "requirements" / name).write_text(text)
    found = requirements.declared(inference)
    assert found.runtime == ["numpy", "opencv-python", "onnxruntime"]
    assert set(found.test) == {"rasterio", "flash-attn"}

    geo = tmp_path / "geo"
    (geo / "geo").mkdir(parents=True)
    (geo / "geo" / "__init__.py").write_text("")
    (geo / "pyproject.toml").write_text('[project]\nname = "geo"\n'
                                         'dependencies = ["numpy>=1.19", "torch>=1.13"]\n')
    (geo / "requirements").mkdir()
    (geo / "requirements" / "required.txt").write_text("setuptools==75.1.0\nnumpy==2.1.1\n")
    found = requirements.declared(geo)
    assert found.runtime == ["numpy>=1.19", "torch>=1.13"]
    assert found.test == ["setuptools==75.1.0", "numpy==2.1.1"]
    # a repository that declares nothing else keeps its requirements.txt as runtime
    (geo / "pyproject.toml").write_text('[project]\nname = "geo"\n')
    assert requirements.declared(geo).runtime == ["setuptools==75.1.0", "numpy==2.1.1"]


def test_requirements_files_beside_the_problems_tests_are_test_requirements(tmp_path):
    """nncf keeps its test requirements per backend (tests/torch/requirements.txt:
    pytest-mock, torchvision; tests/tensorflow/requirements.txt: tensorflow): the files in
    the folders of the tests the repository's problems run, and the folders above them,
    are read (and key the environment); other backends' are not."""
    from curator.problem import Problem
    from curator.store import Store
    from curator.store import problems as problem_store

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "setup.py").write_text("from setuptools import setup\n"
                                       "setup(name='pkg', install_requires=['numpy'])\n")
    # `-c`: a constraint on a package the file requires goes with it, no other
    (tmp_path / "constraints.txt").write_text("openvino==2024.4.0\ntensorflow==2.15.1\n")
    for backend, wanted in (("torch", "-c ../../constraints.txt\npytest-mock\ntorchvision\n"),
                            ("tensorflow", "-c ../../constraints.txt\ntensorflow\n")):
        (tmp_path / "tests" / backend / "nas").mkdir(parents=True)
        (tmp_path / "tests" / backend / "requirements.txt").write_text(wanted)
    tests = ["tests/torch/nas/test_lr.py", "tests/torch/nas/test_lr.py::test_warmup"]
    found = requirements.declared(tmp_path, tests)
    assert found.test == ["pytest-mock", "torchvision"]
    assert requirements.declared(tmp_path, ["tests/tensorflow/test_tf.py"]).test == \
        ["tensorflow", "tensorflow==2.15.1"]
    assert requirements.declared(tmp_path).test == []
    keyed = {str(p.relative_to(tmp_path))
             for p in requirements.dependency_files(tmp_path, tests)}
    assert "tests/torch/requirements.txt" in keyed
    assert "tests/tensorflow/requirements.txt" not in keyed
    assert "constraints.txt" in keyed   # what its -c names keys it too
    before = environments.env_key("c", tmp_path, "3.11", [], None, None, tests)
    (tmp_path / "constraints.txt").write_text("tensorflow==2.15.0\n")
    assert environments.env_key("c", tmp_path, "3.11", [], None, None, tests) != before
    (tmp_path / "tests" / "torch" / "requirements.txt").write_text("pytest-mock\n")
    assert environments.env_key("c", tmp_path, "3.11", [], None, None, tests) != before

    ws = workspace_mod.init(tmp_path / "ws")
    with Store(ws.db_path, "tester") as store:
        for pid, repo, node in (("a", "https://github.com/o/pkg", tests[1]),
                                ("b", "https://github.com/o/other", "tests/x.py")):
            problem_store.save(store, Problem(
                id=pid, title=pid, entry_point="f", source={"repo": repo, "commit": "0" * 40,
                                                             "path": "pkg/m.py"},
                test_node_ids=[node]))
        assert environments.problem_tests(store, "https://github.com/o/pkg") == \
            ["tests/torch/nas/test_lr.py"]


def _damaged_repo(root: Path) -> tuple[str, str]:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, {"pkg/__init__.py": "", "pkg/ops.py": "def twice(x):\n    return 2 * x\n",
                 "tests/data/big.bin": "pretend this is a large test image\n",
                 "tests/test_ops.py": "def test_twice():\n    assert 1\n"})
    sha = commit(root, "first")
    blob = git(root, "rev-parse", "HEAD:tests/data/big.bin")
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    return sha, blob


def test_a_checkout_with_a_missing_blob_writes_the_rest_and_lists_it(tmp_path):
    sha, _blob = _damaged_repo(tmp_path / "damaged")
    ws = workspace_mod.init(tmp_path / "ws")
    cache, checkout = pinned_checkout(ws, str(tmp_path / "damaged"), sha)
    assert (checkout / "pkg" / "ops.py").read_text().startswith("def twice")
    assert (checkout / "tests" / "test_ops.py").is_file()
    assert not (checkout / "tests" / "data" / "big.bin").exists()
    assert cache.missing_paths(sha) == ["tests/data/big.bin"]
    # it is a git worktree at the commit (tools such as setuptools_scm read it)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True,
                          text=True).stdout.strip()
    assert head == sha
    again = pinned_checkout(ws, str(tmp_path / "damaged"), sha)[1]
    assert again == checkout and cache.missing_paths(sha) == ["tests/data/big.bin"]


def test_a_recipe_is_written_first_then_read(tmp_path):
    ws = workspace_mod.init(tmp_path / "ws")
    url = "https://github.com/pyro-ppl/pyro"
    assert recipes.recipe_path(ws, url) == ws.root / "repos" / "pyro-ppl__pyro.toml"
    recipe = recipes.Recipe(repo=url, python="3.11", extras=["scipy"],
                            overrides={"visdom": ""}, frameworks=["torch"],
                            build=["python setup.py build_ext --inplace"],
                            exclude={"tests/test_a.py::test_gpu": "needs_gpu: CUDA"})
    path = recipes.save(ws, recipe)
    loaded = recipes.load(ws, url)
    assert (loaded.python, loaded.extras, loaded.overrides, loaded.frameworks, loaded.build,
            loaded.exclude) == ("3.11", ["scipy"], {"visdom": ""}, ["torch"],
                                ["python setup.py build_ext --inplace"],
                                {"tests/test_a.py::test_gpu": "needs_gpu: CUDA"})
    path.write_text(path.read_text() + 'frameworks = ["mxnet"]\n')
    with pytest.raises(CuratorError, match=r"pyro-ppl__pyro.toml"):
        recipes.load(ws, url)
    assert recipes.detect_frameworks(["gpflow", "tensorflow-probability", "numpy"],
                                     "gpflow") == ["tensorflow"]
    assert recipes.detect_frameworks(["torch", "torchvision"], "pyro") == ["torch"]


def _compile(tmp_path, wanted, day=None):
    options = uv.pip_options()
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return uv.resolve(sys.executable, wanted, [], uv.torch_pin(), day, options, work)


@pytest.mark.slow
def test_a_companion_pinned_to_an_old_torch_follows_the_pinned_torch(
        tmp_path, offline_index):  # noqa: F811
    # On the local index: a torchvision built for an old torch, as an as-of date picks.
    _wheel(offline_index, "torchvision", "0.1.6", {"torchvision/__init__.py": ""},
           requires=["torch==1.0.0"])
    wanted = requirements.Declared(runtime=["torchvision==0.1.6"])
    resolution = _compile(tmp_path, wanted)
    pinned = uv.torch_pin().split("==")[1]
    assert f"torch=={pinned}" in resolution.lock
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert "torchvision==0.1.6 \\" not in pins
    assert any(line.startswith("torchvision==") for line in pins)
    note = next(line for line in resolution.lock.splitlines() if line.startswith("# torchvision"))
    assert "follows torch==" in note and "torchvision==0.1.6" in note


@pytest.mark.slow
def test_pins_that_do_not_resolve_on_this_python_are_relaxed_and_said(
        tmp_path, offline_index):  # noqa: F811
    """DeepReg pins tensorflow==2.3.1, whose wheels stop at cp38: exact pins that cannot
    resolve here become `>=` that release (the pinned torch kept), with a note in the
    lock, rather than no environment."""
    _wheel(offline_index, "tinyold", "1.0", {"tinyold/__init__.py": ""},
           requires=["tinyunits<0.5"])   # nothing here satisfies it, as cp38-only wheels
    _wheel(offline_index, "tinyold", "1.1", {"tinyold/__init__.py": ""})
    assert uv.relax_pins(["tinyold==1.0", "a[x]==2.*; python_version<'4'", "b>=1",
                          "torch==2.13.0+cpu"], "torch==2.13.0+cpu") == \
        ["tinyold>=1.0", "a[x]>=2; python_version<'4'", "b>=1", "torch==2.13.0+cpu"]
    resolution = _compile(tmp_path, requirements.Declared(runtime=[
        "tinyold==1.0", "tinycheck==0.3.0"]))
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert any(line.startswith("tinyold==1.1") for line in pins)
    note = next(line for line in resolution.lock.splitlines() if "relaxed" in line)
    assert "tinyold==1.0" in note and "tinycheck" not in note   # only what uv named


@pytest.mark.slow
def test_a_cap_that_conflicts_with_another_requirement_is_relaxed_and_said(
        tmp_path, offline_index):  # noqa: F811
    """inference caps setuptools<=72.1.0 while the pinned torch needs setuptools>=77: no
    exact pin to relax, so the caps uv names are dropped (the lower bound kept), said in
    the lock, rather than no environment."""
    _wheel(offline_index, "tinyneeds", "1.0", {"tinyneeds/__init__.py": ""},
           requires=["tinyunits>=1.2"])
    assert uv.relax_bounds(["tinyunits>=1.0,<=1.1", "a~=1.2", "b==2.*; python_version<'4'",
                            "c<3", "d>=1,!=1.5,<2", "torch==2.13.0+cpu"],
                           "torch==2.13.0+cpu") == \
        ["tinyunits>=1.0", "a>=1.2", "b>=2; python_version<'4'", "c", "d>=1,!=1.5",
         "torch==2.13.0+cpu"]
    resolution = _compile(tmp_path, requirements.Declared(runtime=[
        "tinyunits>=1.0,<=1.1", "tinyneeds", "tinycheck<=0.3.0"]))
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert any(line.startswith("tinyunits==1.2.0") for line in pins)
    assert any(line.startswith("tinycheck==0.3.0") for line in pins)
    note = next(line for line in resolution.lock.splitlines() if "relaxed" in line)
    assert "tinyunits>=1.0,<=1.1" in note and "tinycheck" not in note   # only what uv named
    # the recipe's extra on the same name (inference: `setuptools<81`, added for
    # pkg_resources) is a decision, never relaxed with the declared cap
    _wheel(offline_index, "tinyunits", "1.3.0", {"tinyunits/__init__.py": ""})
    held = uv.resolve(sys.executable, requirements.Declared(runtime=[
        "tinyunits>=1.0,<=1.1", "tinyneeds"]), ["tinyunits<1.3"], uv.torch_pin(), None,
        uv.pip_options(), tmp_path / "work")
    pins = [line for line in held.lock.splitlines() if not line.startswith("#")]
    assert any(line.startswith("tinyunits==1.2.0") for line in pins), held.lock



@pytest.mark.slow
def test_a_requirements_files_constraint_holds_on_what_other_requirements_bring_in(
        tmp_path, offline_index):  # noqa: F811
    """nncf's tests/tensorflow/requirements.txt says `-c ../../constraints.txt`
    (tensorflow==2.15.1) and requires tensorflow_hub, not tensorflow: tf-keras brought
    tensorflow in, and the as-of resolution took 2.17, which nncf refuses at import. As
    pip does, the constraint holds on what the file's requirements bring in; one that
    does not fit is left out with uv's reason, and a constraint on a package nothing
    brings in installs nothing."""
    _wheel(offline_index, "tinyframe", "1.0", {"tinyframe/__init__.py": ""})
    _wheel(offline_index, "tinyframe", "2.0", {"tinyframe/__init__.py": ""})
    _wheel(offline_index, "tinyhub", "0.5", {"tinyhub/__init__.py": ""},
           requires=["tinyframe"])
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "setup.py").write_text("from setuptools import setup\n"
                                   "setup(name='pkg', install_requires=['tinycheck'])\n")
    (repo / "constraints.txt").write_text("tinyframe==1.0\ntinyabsent==3.0\n")
    (repo / "tests" / "tf").mkdir(parents=True)
    (repo / "tests" / "tf" / "requirements.txt").write_text(
        "-c ../../constraints.txt\ntinyhub\n")
    wanted = requirements.declared(repo, ["tests/tf/test_a.py"])
    assert wanted.test == ["tinyhub"]
    assert wanted.constraints == ["tinyframe==1.0", "tinyabsent==3.0"]
    resolution = _compile(tmp_path, wanted)
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert any(line.startswith("tinyframe==1.0") for line in pins), resolution.lock
    assert not any(line.startswith("tinyabsent") for line in pins)
    note = next(line for line in resolution.lock.splitlines() if "constraint" in line)
    assert "tinyframe==1.0" in note and "tinyframe==2.0" in note, note
    # a constraint nothing can satisfy: the first resolution stands, the constraint named
    wanted.constraints = ["tinyframe==9.0"]
    resolution = _compile(tmp_path, wanted)
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert any(line.startswith("tinyframe==2.0") for line in pins), resolution.lock
    assert [i["requirement"] for i in resolution.left_out] == ["tinyframe==9.0"]


@pytest.mark.slow
def test_wheels_are_taken_over_old_sources_when_the_runtime_has_them(
        tmp_path, offline_index):  # noqa: F811
    """deepchecks' test requirements pin pandas==1.3.5 and scikit-learn==1.0.2, runtime
    packages too: resolved free to build from source, the lock took those sdists (and
    scipy 1.6.1, numba 0.53.1 beside numpy 2), none of which builds on this Python, and
    each failed install cost one more resolution. When the runtime requirements resolve
    from wheels, everything does: a test pin that needs a source is left out, said why.
    A runtime requirement with no wheel in any release (deepchecks' fasttext) is built
    from source, and the rest still comes from wheels."""
    _sdist_that_does_not_build(offline_index, "tinycore", "1.0")
    _wheel(offline_index, "tinycore", "2.0", {"tinycore/__init__.py": ""})
    resolution = _compile(tmp_path, requirements.Declared(
        runtime=["tinycore>=0.5"], test=["tinycore==1.0", "tinycheck"]))
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert any(line.startswith("tinycore==2.0") for line in pins), resolution.lock
    assert any(line.startswith("tinycheck==0.3.0") for line in pins)
    assert [i["requirement"] for i in resolution.left_out] == ["tinycore==1.0"]

    _sdist_that_does_not_build(offline_index, "tinysource", "1.0")   # no wheel at all
    _wheel(offline_index, "tinylater", "0.5", {"tinylater/__init__.py": ""})
    _sdist_that_does_not_build(offline_index, "tinylater", "1.0")   # none since 1.0
    resolution = _compile(tmp_path, requirements.Declared(
        runtime=["tinysource", "tinylater>=1.0", "tinycore>=0.5"],
        test=["tinycore==1.0", "tinycheck"]))
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert any(line.startswith("tinysource==1.0") for line in pins), resolution.lock
    assert any(line.startswith("tinylater==1.0") for line in pins), resolution.lock
    assert any(line.startswith("tinycore==2.0") for line in pins), resolution.lock
    assert any(line.startswith("tinycheck==0.3.0") for line in pins)
    assert [i["requirement"] for i in resolution.left_out] == ["tinycore==1.0"]

def test_a_test_requirement_whose_dependency_has_no_wheel_is_kept(
        tmp_path, offline_index):  # noqa: F811
    """small-text's test requirements name pytest-approvaltests, whose approvaltests needs
    pyperclip, which has sdists only. Resolved from wheels, the plugin was left out; its
    pytest.ini addopts names the plugin's option, so every run stopped before pytest
    started (status 4). A dependency of a test requirement with no wheel in any release
    is built from source, as a runtime one is, and the test requirement is kept; one
    whose own releases need building is still left out."""
    _sdist_that_does_not_build(offline_index, "tinyclip", "1.0")   # no wheel at all
    # approvaltests: an old release with sources only, the new ones need pyperclip
    _sdist_that_does_not_build(offline_index, "tinyapproval", "0.1")
    _wheel(offline_index, "tinyapproval", "1.0", {"tinyapproval/__init__.py": ""},
           requires=["tinyclip"])
    _wheel(offline_index, "tinyplugin", "1.0", {"tinyplugin/__init__.py": ""},
           requires=["tinyapproval>=1.0"])
    _sdist_that_does_not_build(offline_index, "tinytool", "1.0")   # itself a source
    resolution = _compile(tmp_path, requirements.Declared(
        runtime=["tinycheck"], test=["tinyapproval", "tinyplugin", "tinytool"]))
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert any(line.startswith("tinyplugin==1.0") for line in pins), resolution.lock
    assert any(line.startswith("tinyapproval==1.0") for line in pins), resolution.lock
    assert any(line.startswith("tinyclip==1.0") for line in pins), resolution.lock
    # (tinyapproval, tried before tinyclip was allowed a source, is not said left out)
    assert [i["requirement"] for i in resolution.left_out] == ["tinytool"], resolution.lock
    assert "# tinyclip built from source: no release of it has a wheel" in resolution.lock


@pytest.mark.slow
def test_a_dependency_that_requires_the_repository_itself_is_not_held_back(
        tmp_path, offline_index):  # noqa: F811
    """pyod's test extra names combo, whose releases since 0.1 require pyod, which the
    index has as sdists only. Resolved from wheels, combo fell back to 0.0.5 (no such
    requirement), which imports a module scikit-learn no longer has: every test of the
    module failed to collect. The repository's own distribution is read from its source
    and never locked (the checkout is what gets installed)."""
    _sdist_that_does_not_build(offline_index, "tinyrepo", "1.0")
    _wheel(offline_index, "tinyplugin", "0.1", {"tinyplugin/__init__.py": ""})
    _wheel(offline_index, "tinyplugin", "0.2", {"tinyplugin/__init__.py": ""},
           requires=["tinyrepo"])
    resolution = _compile(tmp_path, requirements.Declared(
        runtime=["tinycheck"], test=["tinyplugin"], project="tinyrepo", package="tinyrepo"))
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert any(line.startswith("tinyplugin==0.2") for line in pins), resolution.lock
    assert not any(line.startswith("tinyrepo") for line in pins), resolution.lock
    assert not resolution.left_out
    # pennylane has wheels only, and its plugin pennylane-lightning requires it: there is
    # no source to read, and its wheel says what it needs
    _wheel(offline_index, "tinywheelrepo", "1.0", {"tinywheelrepo/__init__.py": ""})
    _wheel(offline_index, "tinyplugin", "0.3", {"tinyplugin/__init__.py": ""},
           requires=["tinywheelrepo"])
    resolution = _compile(tmp_path, requirements.Declared(
        runtime=["tinyplugin>=0.3"], project="tinywheelrepo", package="tinywheelrepo"))
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert any(line.startswith("tinyplugin==0.3") for line in pins), resolution.lock
    assert not any(line.startswith("tinywheelrepo") for line in pins), resolution.lock


NMS_MISSING = "raise RuntimeError('operator torchvision::nms does not exist')\n"


@pytest.mark.requires_bwrap
def test_a_companion_built_for_another_torch_is_found_and_left_out(
        tmp_path, offline_index):  # noqa: F811
    """The only torchvision for the pinned CPU torch is a CUDA build: it installs, then
    `import torchvision` fails. The build finds it (in the sandbox) and locks again
    without it, even when another requirement pulls it in, saying why."""
    _wheel(offline_index, "torchvision", "0.28.7", {"torchvision/__init__.py": NMS_MISSING},
           requires=[uv.torch_pin().split("+")[0]])
    _wheel(offline_index, "torchdata", "0.11.0", {"torchdata/__init__.py": ""})
    _wheel(offline_index, "visionuser", "1.0", {"visionuser/__init__.py": ""},
           requires=["torchvision"])
    options = uv.pip_options()
    python = uv.new_venv(tmp_path / "env", "%d.%d" % sys.version_info[:2], options)
    uv.run(["pip", "install", "--quiet", "--no-deps", "--python", python,
            *options.uv_args(), str(offline_index / "torchvision-0.28.7-py3-none-any.whl"),
            str(offline_index / "torchdata-0.11.0-py3-none-any.whl")], options)
    broken = environments.broken_companions(python, options, uv.torch_pin())
    assert set(broken) == {"torchvision"}
    assert "torchvision 0.28.7 does not import" in broken["torchvision"]
    assert "operator torchvision::nms does not exist" in broken["torchvision"]

    wanted = requirements.Declared(runtime=["visionuser", "torchvision>=0.15"])
    work = tmp_path / "work"
    work.mkdir()
    resolution = uv.resolve(sys.executable, wanted, [], uv.torch_pin(), None, options, work,
                            without=broken)
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert any(line.startswith("visionuser==1.0") for line in pins)
    assert not any(line.startswith("torchvision==") for line in pins)
    assert f"# torchvision left out: {broken['torchvision']}" in resolution.lock


@pytest.mark.slow
@pytest.mark.timeout(1200)   # three environment resolutions on a shared 2-core machine
def test_a_companion_that_imports_only_with_another_torch_gets_that_torch(
        tmp_path, offline_index):  # noqa: F811
    """The pinned CPU torch has only a CUDA build of its companion here (it installs, then
    `import` fails: "torchvision::nms does not exist"), while the index has a newer torch
    with a release of the companion that imports (its CUDA build, which runs on the CPU).
    The environment takes that torch, says so in the lock, and is built with the
    companion in it rather than without it."""
    from click.testing import CliRunner
    from repo_support import mine_and_accept

    from curator.cli import main
    from curator.store import Store

    pinned = uv.torch_pin().split("==")[1].split("+")[0]
    major, minor = (int(x) for x in pinned.split(".")[:2])
    other = f"{major}.{minor}.99"   # a torch no index here has, above the pinned one
    # stand-ins: a companion (torchcodec) built for the pinned torch that does not import
    # beside its CPU build, and one built for the other torch that does
    _wheel(offline_index, "torchcodec", "0.28.7", {"torchcodec/__init__.py": NMS_MISSING},
           requires=[f"torch=={pinned}"])
    _wheel(offline_index, "torchcodec", "0.99.0", {
        "torchcodec/__init__.py": f"import torch\nassert torch.__version__ == {other!r}\n"},
        requires=[f"torch=={other}", "tinyunits"])
    _wheel(offline_index, "torch", other, {"torch/__init__.py": f"__version__ = {other!r}\n"})
    # the machine's constraints (its cap on torch) are not this test's
    config = Path(os.environ["PIP_CONFIG_FILE"])
    config.write_text("".join(line + "\n" for line in config.read_text().splitlines()
                              if not line.startswith("constraint")))
    upstream = tmp_path / "clippy"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    write(upstream, {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\n'
                          'build-backend = "setuptools.build_meta"\n'
                          '[project]\nname = "clippy"\nversion = "0.1"\n'
                          'dependencies = ["torch", "torchcodec"]\n',
        "clippy/__init__.py": "import torchcodec\n",
        "clippy/ops.py": 'def scale(x):\n    """Three times x."""\n    return 3 * x\n',
        "tests/test_ops.py": "from clippy.ops import scale\n\n\ndef test_scale():\n"
                             "    assert scale(2) == 6\n"})
    commit(upstream, "first")
    ws, base = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    built = CliRunner().invoke(main, [*base, "repo", "env", "clippy", "--json"])
    assert built.exit_code == 0, built.output
    versions = {p["name"]: p["version"] for p in json.loads(built.stdout)["packages"]}
    assert versions["torch"] == other and versions["torchcodec"] == "0.99.0", versions
    with Store(ws.db_path, "tester") as store:
        (env,) = environments.list_envs(store)
    assert env["status"] == "built", env["reason"]
    assert f"# torch=={other} instead of torch=={uv.torch_pin().split('==')[1]}" in env["lock"]
    assert "operator torchvision::nms does not exist" in env["lock"]
    assert "left out" not in env["lock"]
    # only that torch's own stack is resolved without an as-of date, never what the
    # companion needs besides (numpy, pillow: they stay with the repository's date)
    found = uv.companion_torch(sys.executable, ["torchcodec"], uv.torch_pin(),
                               uv.pip_options(), tmp_path)
    assert found.pin == f"torch=={other}" and found.companions == {"torchcodec": "0.99.0"}
    assert found.stack == ["torch"]


@pytest.mark.slow
def test_a_test_requirement_that_conflicts_is_left_out_and_named(
        tmp_path, offline_index):  # noqa: F811
    _wheel(offline_index, "tinyunits", "1.0.0", {"tinyunits/__init__.py": ""})
    # a test tool published only as a source archive (it would compile for minutes)
    source = tmp_path / "tinybuild-1.0"
    source.mkdir()
    (source / "setup.py").write_text("from setuptools import setup\n"
                                     "setup(name='tinybuild', version='1.0')\n")
    (source / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: tinybuild\n"
                                     "Version: 1.0\n")
    with tarfile.open(offline_index / "tinybuild-1.0.tar.gz", "w:gz") as archive:
        archive.add(source, arcname="tinybuild-1.0")
    wanted = requirements.Declared(runtime=["tinyunits<1.1"],
                                   test=["tinyunits>=1.2", "tinycheck", "tinybuild"])
    resolution = _compile(tmp_path, wanted)
    assert "tinyunits==1.0.0" in resolution.lock and "tinycheck==0.3.0" in resolution.lock
    left = {item["requirement"]: item["reason"] for item in resolution.left_out}
    assert set(left) == {"tinyunits>=1.2", "tinybuild"} and all(left.values())
    assert "# left out tinyunits>=1.2" in resolution.lock
    pins = [line for line in resolution.lock.splitlines() if not line.startswith("#")]
    assert not any(line.startswith("tinybuild==") for line in pins)
    assert "has no usable wheels" in left["tinybuild"]


def test_the_framework_import_check_names_what_fails(tmp_path):
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("import json\n")
    assert importcheck.check_env(sys.executable, tmp_path, [], "mypkg") == (True, "")
    ok, reason = importcheck.check_env(sys.executable, tmp_path, ["tensorflow_not_here"],
                                       "mypkg")
    assert not ok and reason.startswith("import tensorflow_not_here: ModuleNotFoundError")
    (tmp_path / "mypkg" / "__init__.py").write_text(
        "raise TypeError('Unable to convert function return value to a Python type!')\n")
    ok, reason = importcheck.check_env(sys.executable, tmp_path, [], "mypkg")
    assert (ok, reason) == (False, "import mypkg: TypeError: Unable to convert function "
                                   "return value to a Python type!")


def test_a_module_missing_under_another_import_error_is_named(tmp_path):
    """deepchem catches the ModuleNotFoundError of an undeclared `tqdm` and raises
    "These classes require PyTorch to be installed.": the module not found is what the
    environment lacks, so the reason names it and the recipe can get it."""
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text(
        "try:\n"
        "    import tqdm_not_here_at_all\n"
        "except ImportError:\n"
        "    raise ImportError('These classes require PyTorch to be installed.')\n")
    ok, reason = importcheck.check_env(sys.executable, tmp_path, [], "mypkg")
    assert not ok and reason.startswith(
        "import mypkg: ImportError: These classes require PyTorch to be installed.")
    assert environments.missing_requirement(reason, "mypkg") == "tqdm-not-here-at-all"


@pytest.mark.requires_bwrap
def test_the_import_check_runs_the_repository_code_in_the_sandbox(tmp_path):
    """Importing the package runs mined code: it sees no network and writes nothing that
    stays, as in a run."""
    checkout = tmp_path / "checkout"
    (checkout / "mypkg").mkdir(parents=True)
    outside = tmp_path / "escaped.txt"
    (checkout / "mypkg" / "__init__.py").write_text(
        "import socket\n"
        f"open({str(outside)!r}, 'w').write('written at import')\n"
        "s = socket.socket()\n"
        "s.settimeout(5)\n"
        "try:\n"
        "    s.connect(('127.0.0.1', PORT))\n"
        "except OSError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('reached the host network')\n")
    import socket
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    init = checkout / "mypkg" / "__init__.py"
    init.write_text(init.read_text().replace("PORT", str(port)))
    try:
        assert importcheck.check_env(sys.executable, checkout, [], "mypkg") == (True, "")
    finally:
        server.close()
    assert not outside.exists()


def test_under_weak_isolation_the_import_check_needs_consent(tmp_path):
    from curator.config import ExecutionConfig

    (tmp_path / "mypkg").mkdir()
    marker = tmp_path / "imported.txt"
    (tmp_path / "mypkg" / "__init__.py").write_text(f"open({str(marker)!r}, 'w')\n")
    ok, reason = importcheck.check_env(sys.executable, tmp_path, [], "mypkg",
                                       ExecutionConfig(isolation="weak"))
    assert not ok and "allow_weak" in reason and not marker.exists()
    assert importcheck.check_env(sys.executable, tmp_path, [], "mypkg",
                                 ExecutionConfig(isolation="weak", allow_weak=True)) == \
        (True, "")
    assert marker.exists()


def _fastops(where: Path) -> None:
    """A repository whose setup.py compiles one C extension, fastops."""
    (where / "fastops.c").write_text(
        '#include <Python.h>\nstatic struct PyModuleDef m = {PyModuleDef_HEAD_INIT, '
        '"fastops", NULL, -1, NULL};\nPyMODINIT_FUNC PyInit_fastops(void) '
        '{ return PyModule_Create(&m); }\n')
    (where / "setup.py").write_text(
        "from setuptools import setup, Extension\n"
        "setup(name='fastops', ext_modules=[Extension('fastops', ['fastops.c'])])\n")


def test_build_steps_compile_an_extension_in_the_checkout(tmp_path):
    _fastops(tmp_path)
    steps = recipes.detect_build(tmp_path)
    assert steps == ["python setup.py build_ext --inplace"]
    assert environments.run_build_steps(sys.executable, tmp_path, steps) == ""
    assert list(tmp_path.glob("fastops*.so"))
    done = subprocess.run([sys.executable, "-c", "import fastops"], cwd=tmp_path)
    assert done.returncode == 0
    broken = environments.run_build_steps(sys.executable, tmp_path, ["python -c 'raise "
                                                                     "SystemExit(3)'"])
    assert broken.startswith("build step") and "failed" in broken


def test_an_extension_is_built_without_debug_information(tmp_path, monkeypatch):
    """pytorch3d's extension took 42 min to build here: Python's own flags say `-g`, and
    the debug information of torch's headers made each object 16 MB and a third of its
    compile time. Built by the recipe's steps, an extension has none (the same code);
    flags that ask for it are kept."""
    _fastops(tmp_path)
    monkeypatch.delenv("CPPFLAGS", raising=False)
    monkeypatch.delenv("CFLAGS", raising=False)
    monkeypatch.delenv("CXXFLAGS", raising=False)
    steps = recipes.detect_build(tmp_path)
    assert environments.run_build_steps(sys.executable, tmp_path, steps) == ""
    (built,) = tmp_path.glob("fastops*.so")
    assert b".debug_info" not in built.read_bytes()
    assert subprocess.run([sys.executable, "-c", "import fastops"], cwd=tmp_path).returncode == 0
    from curator.repos import extbuild

    monkeypatch.setenv("CFLAGS", "-O2 -g")
    assert "CPPFLAGS" not in extbuild.build_env(sys.executable)

FASTOPS_C = ('#include <Python.h>\nstatic struct PyModuleDef m = {PyModuleDef_HEAD_INIT, '
             '"_fast", NULL, -1, NULL};\nPyMODINIT_FUNC PyInit__fast(void) '
             '{ return PyModule_Create(&m); }\n')


def test_a_build_is_made_once_kept_and_restored_into_a_checkout_written_anew(tmp_path,
                                                                             monkeypatch):
    """extbuild.ensure: the steps run once; what they wrote (the extension, a generated
    version file) is kept in the cache folder, the setuptools scratch folder is not left
    in the checkout, and a second checkout gets the files back without a compile; a
    failure's reason is the compiler's error line, not setup.py's last line."""
    from curator.repos import extbuild

    def checkout(where: Path, source: str = FASTOPS_C) -> Path:
        (where / "fastpkg").mkdir(parents=True)
        (where / "fastpkg" / "__init__.py").write_text("from . import _fast\n")
        (where / "fastpkg" / "fast.c").write_text(source)
        (where / "setup.py").write_text(
            "import os\nfrom setuptools import setup, Extension\n"
            "open('fastpkg/version.py', 'w').write('v = 1\\n')\n"
            "open(os.environ['BUILD_COUNT'], 'a').write('x')\n"
            "setup(name='fastpkg', ext_modules=[Extension('fastpkg._fast', "
            "['fastpkg/fast.c'])])\n")
        return where

    count = tmp_path / "count"
    monkeypatch.setenv("BUILD_COUNT", str(count))
    steps = recipes.detect_build(checkout(tmp_path / "one"))
    cache = tmp_path / "envs" / "builds" / "fast"
    built = extbuild.ensure(sys.executable, tmp_path / "one", steps, cache)
    assert built.reason == "" and not built.reused
    assert [f for f in built.files if not f.endswith(".so")] == ["fastpkg/version.py"]
    assert any(f.startswith("fastpkg/_fast") for f in built.files)
    assert not (tmp_path / "one" / "build").exists()
    again = extbuild.ensure(sys.executable, checkout(tmp_path / "two"), steps, cache)
    assert again.reused and again.files == built.files
    assert count.read_text() == "x"   # compiled once
    done = subprocess.run([sys.executable, "-c", "import fastpkg, fastpkg.version"],
                          cwd=tmp_path / "two")
    assert done.returncode == 0
    # an environment's record: a run's checkout written anew gets the files back
    extbuild.record(tmp_path / "env", "c0ffee", built)
    (tmp_path / "three").mkdir()
    restored = extbuild.restore_for_run(tmp_path / "env", "c0ffee", tmp_path / "three")
    assert sorted(restored) == built.files
    assert extbuild.restore_for_run(tmp_path / "env", "other", tmp_path / "four") == []
    assert extbuild.steps_of(tmp_path / "env", "c0ffee") == steps

    broken = extbuild.ensure(sys.executable, checkout(
        tmp_path / "bad", "#include <vendored_rans.h>\n" + FASTOPS_C), steps,
        tmp_path / "envs" / "builds" / "bad")
    assert "vendored_rans.h" in broken.reason and "error" in broken.reason
    assert "failed with exit" not in broken.reason
    assert (tmp_path / "envs" / "builds" / "bad" / "build.log").is_file()
    assert not extbuild.restore_for_run(tmp_path / "env", "c0ffee", tmp_path / "three")

    # numpy added to the environment (pytorch3d's tests need it; the package declares
    # none): the build made without it is found again, not compiled anew
    def keys(lock):
        return extbuild.build_keys("c0ffee", "3.11", "torch==2.13.0", steps, lock)
    without, (with2, also) = keys("pybind11==2.13.6\n"), keys("numpy==2.1.1 \\\n")
    assert without == [also] and with2 != also
    assert keys("numpy==2.0.2\n")[0] == with2 and keys("numpy==1.26.4\n")[0] != with2
    compiled = count.read_text()
    later = extbuild.ensure(sys.executable, checkout(tmp_path / "five"), steps,
                            tmp_path / "envs" / "builds" / "numpy2", also=[cache])
    assert later.reused and later.folder == cache and count.read_text() == compiled


def test_a_module_the_repository_imports_but_does_not_declare_is_named():
    missing = environments.missing_requirement
    assert missing("import laplace: ModuleNotFoundError: No module named 'pkg_resources'") \
        == "setuptools<81"
    assert missing("import pyro: ModuleNotFoundError: No module named 'scipy'") == "scipy"
    assert missing("import x: ModuleNotFoundError: No module named 'yaml'") == "pyyaml"
    assert missing("import laplace: ModuleNotFoundError: No module named 'laplace.utils'",
                   "laplace") is None
    assert missing("import tensorflow: TypeError: Unable to convert function return") is None
    # a companion left out (no build of it for the pinned CPU torch here) is not asked for
    # again: the reason says why it is not there
    why = environments.with_why_left_out(
        "import compressai: ModuleNotFoundError: No module named 'torchvision'",
        {"torchvision": "torchvision 0.28.0 does not import with torch==2.13.0+cpu"})
    assert why.endswith("'torchvision' (torchvision 0.28.0 does not import with "
                        "torch==2.13.0+cpu)")


FAKE_TENSORFLOW = '''import numpy

if int(numpy.__version__.split(".")[0]) >= 2:   # built for numpy 1, as TensorFlow 2.14
    raise TypeError("Unable to convert function return value to a Python type! The "
                    "signature was\\n\\t() -> handle")
'''


@pytest.mark.slow
@pytest.mark.timeout(1200)   # two environment resolutions on a shared 2-core machine
def test_a_framework_built_for_numpy_1_gets_numpy_below_2(tmp_path, offline_index):  # noqa: F811
    """GPflow as of 2024: TensorFlow 2.14 does not say numpy<2, so numpy 2 is locked and
    `import tensorflow` fails ("() -> handle"). A framework that does not import with
    numpy 2 locked is resolved once more with numpy<2, said in the lock, and stays so
    when a module the repository does not declare is added afterwards (GPflow's
    pkg_resources)."""
    from click.testing import CliRunner
    from repo_support import mine_and_accept, wheel

    from curator.cli import main
    from curator.store import Store

    # a stand-in named as the framework (no real TensorFlow on the local index)
    wheel(offline_index, "tensorflow", "2.14.0", {"tensorflow/__init__.py": FAKE_TENSORFLOW},
          requires=["numpy"])
    upstream = tmp_path / "flowy"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    write(upstream, {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\n'
                          'build-backend = "setuptools.build_meta"\n'
                          '[project]\nname = "flowy"\nversion = "0.1"\n'
                          'dependencies = ["tensorflow==2.14.0"]\n',
        # and a module it does not declare: added after the framework's retry
        "flowy/__init__.py": "import tensorflow\nimport tinyunits\n",
        "flowy/ops.py": 'def scale(x):\n    """Three times x."""\n    return 3 * x\n',
        "tests/test_ops.py": "from flowy.ops import scale\n\n\ndef test_scale():\n"
                             "    assert scale(2) == 6\n"})
    commit(upstream, "first")
    ws, base = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    built = CliRunner().invoke(main, [*base, "repo", "env", "flowy", "--json"])
    assert built.exit_code == 0, built.output
    versions = {p["name"]: p["version"] for p in json.loads(built.stdout)["packages"]}
    assert versions["numpy"].startswith("1."), versions
    with Store(ws.db_path, "tester") as store:
        (env,) = environments.list_envs(store)
    assert env["status"] == "built"
    assert "# tensorflow did not import with numpy 2." in env["lock"]
    assert "resolved again with numpy<2" in env["lock"]
    assert "tinyunits added to the recipe's extras" in env["lock"]
    assert versions["tinyunits"] == "1.2.0"


def _sdist_that_does_not_build(folder: Path, name: str, version: str) -> Path:
    """An sdist whose metadata uv reads without building (static pyproject), and whose
    build fails, as a release with no wheel for this Python."""
    import io

    target = folder / f"{name}-{version}.tar.gz"
    files = {"pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\n'
                               'build-backend = "setuptools.build_meta"\n'
                               f'[project]\nname = "{name}"\nversion = "{version}"\n'
                               'dependencies = []\n',
             "setup.py": "raise SystemExit('this release does not build here')\n",
             "PKG-INFO": f"Metadata-Version: 2.2\nName: {name}\nVersion: {version}\n"}
    with tarfile.open(target, "w:gz") as archive:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-{version}/{path}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return target


@pytest.mark.slow
@pytest.mark.timeout(1200)   # environment resolutions on a shared 2-core machine
def test_a_dependencys_pin_that_does_not_build_here_is_overridden(
        tmp_path, offline_index):  # noqa: F811
    """emukit needs GPy[plotting], which pins matplotlib==3.3.4: no wheel for Python
    3.11, and its sdist does not build. The install fails on it, so the environment
    resolves again with that pin overridden to >= it (a release with a wheel), and the
    lock says so."""
    from click.testing import CliRunner
    from repo_support import mine_and_accept

    from curator.cli import main
    from curator.store import Store

    _sdist_that_does_not_build(offline_index, "tinyplot", "1.0")
    _wheel(offline_index, "tinyplot", "1.1", {"tinyplot/__init__.py": ""})
    _wheel(offline_index, "tinygp", "1.13", {"tinygp/__init__.py": ""},
           requires=["tinyplot==1.0"])
    upstream = tmp_path / "emu"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    write(upstream, {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\n'
                          'build-backend = "setuptools.build_meta"\n'
                          '[project]\nname = "emu"\nversion = "0.1"\n'
                          'dependencies = ["tinygp"]\n',
        "emu/__init__.py": "import tinygp\n",
        "emu/ops.py": 'def scale(x):\n    """Three times x."""\n    return 3 * x\n',
        "tests/test_ops.py": "from emu.ops import scale\n\n\ndef test_scale():\n"
                             "    assert scale(2) == 6\n"})
    commit(upstream, "first")
    ws, base = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    built = CliRunner().invoke(main, [*base, "repo", "env", "emu", "--json"])
    assert built.exit_code == 0, built.output
    versions = {p["name"]: p["version"] for p in json.loads(built.stdout)["packages"]}
    assert versions["tinyplot"] == "1.1" and versions["tinygp"] == "1.13"
    with Store(ws.db_path, "tester") as store:
        (env,) = environments.list_envs(store)
    assert env["status"] == "built"
    assert "# tinyplot>=1.0: overrides a dependency's exact pin" in env["lock"]


def _contin_workspace(tmp_path):
    """A workspace with `contin` (depends on `tinycv`) mined and its `scale` accepted."""
    from repo_support import mine_and_accept

    upstream = tmp_path / "contin"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    write(upstream, {
        "pyproject.toml": '[project]\nname = "contin"\nversion = "0.1"\n'
                          'dependencies = ["tinycv"]\n',
        "contin/__init__.py": "", "contin/ops.py": "def scale(x):\n    return 3 * x\n",
        "tests/test_ops.py": "from contin.ops import scale\n\n\ndef test_scale():\n"
                             "    assert scale(2) == 6\n"})
    commit(upstream, "first")
    ws, _base = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    return ws


def _stand_in_resolution(monkeypatch, resolve, install, check_env):
    """The resolver, installer and import check replaced; a venv is a folder."""
    def new_venv(target, version, options):
        (Path(target) / ".curator").mkdir(parents=True, exist_ok=True)
        return sys.executable

    monkeypatch.setattr(uv, "resolve", resolve)
    monkeypatch.setattr(uv, "install", install)
    monkeypatch.setattr(uv, "new_venv", new_venv)
    monkeypatch.setattr(uv, "installed", lambda *a, **k: [])
    monkeypatch.setattr(environments, "broken_companions", lambda *a, **k: {})
    monkeypatch.setattr(importcheck, "check_env", check_env)


def test_a_package_that_does_not_import_as_of_the_date_is_resolved_as_of_its_commit(
        tmp_path, monkeypatch):
    """avalanche as of 2024-09-20 is its commit of 2024-06-03, which imports
    `DwsConvBlock` from pytorchcv; pytorchcv 0.0.68, released between the two days, moved
    it, so `import avalanche` fails with the dependencies as of the date. A package that
    does not import so is resolved once more as of its commit's date (said in the lock);
    when that does not import either, the environment is as it was, with the first
    reason. (The resolver and installer are stand-ins: dates on a local index are not
    what this is about.)"""
    from curator.repos import identity
    from curator.store import Store

    ws = _contin_workspace(tmp_path)
    days, installed = [], []

    def resolve(env_python, wanted, extras, torch, day, *args, **kwargs):
        days.append(day)
        return uv.Resolution(f"tinycv=={'0.0.73' if day == '2099-01-01' else '0.0.67'}\n")

    def install(env_python, lock, *args, **kwargs):
        installed.append(lock.splitlines()[-1])
        return ""

    imports_with = {"tinycv==0.0.67"}

    def check_env(python, checkout, frameworks, package, settings=None):
        if installed[-1] in imports_with:
            return True, ""
        return False, (f"import {package}: ImportError: cannot import name 'DwsConvBlock' "
                       "from 'tinycv.models.common'")

    _stand_in_resolution(monkeypatch, resolve, install, check_env)
    with Store(ws.db_path, "tester") as store:
        row = identity.find(store, "contin")
        identity.set_as_of(store, row["id"], "2099-01-01")
        built = environments.build(store, ws, "contin")
        today = environments.commit_day(
            *pinned_checkout(ws, row["url"], environments._pinned_commit(store, row),
                             store)[:1], environments._pinned_commit(store, row))
        assert built.ok, built.reason
        assert days == ["2099-01-01", today] and installed == ["tinycv==0.0.73",
                                                                "tinycv==0.0.67"]
        assert "contin did not import with its dependencies as of 2099-01-01 (import " \
               "contin: ImportError: cannot import name 'DwsConvBlock'" in built.lock
        assert f"resolved as of its commit's date, {today}" in built.lock
        imports_with.clear()
        days.clear()
        installed.clear()
        again = environments.build(store, ws, "contin", force=True)
        assert not again.ok and "cannot import name 'DwsConvBlock'" in again.reason
        assert days == ["2099-01-01", today]
        assert installed == ["tinycv==0.0.73", "tinycv==0.0.67", "tinycv==0.0.73"]
        assert "commit's date" not in again.lock


def test_a_module_the_commit_dates_dependencies_miss_is_added_to_that_resolution(
        tmp_path, monkeypatch):
    """avalanche resolved as of its commit's date (2024-06-03, pytorchcv 0.0.67) still
    did not import: `No module named 'pkg_resources'` (torch's own stack, setuptools
    81 among it, is resolved undated), and the environment stayed broken with the first
    reason only. A module missing then is added to that resolution as the first
    resolution's are (`setuptools<81`, said in the lock); when nothing makes it import,
    the reason says why the older dependencies did not do either. (Stand-ins for the
    resolver and installer, as above.)"""
    from curator.repos import identity
    from curator.store import Store

    ws = _contin_workspace(tmp_path)
    installed: list[str] = []

    def resolve(env_python, wanted, extras, torch, day, *args, **kwargs):
        pin = f"tinycv=={'0.0.73' if day == '2099-01-01' else '0.0.67'}\n"
        return uv.Resolution(pin + "".join(f"{e}\n" for e in extras))

    def install(env_python, lock, *args, **kwargs):
        installed.append(lock)
        return ""

    fixed = {"setuptools<81"}

    def check_env(python, checkout, frameworks, package, settings=None):
        if "tinycv==0.0.73" in installed[-1]:
            return False, (f"import {package}: ImportError: cannot import name "
                           "'DwsConvBlock' from 'tinycv.models.common'")
        if not any(f"{r}\n" in installed[-1] for r in fixed):
            return False, (f"import {package}: ModuleNotFoundError: No module named "
                           "'pkg_resources'")
        return True, ""

    _stand_in_resolution(monkeypatch, resolve, install, check_env)
    with Store(ws.db_path, "tester") as store:
        row = identity.find(store, "contin")
        identity.set_as_of(store, row["id"], "2099-01-01")
        built = environments.build(store, ws, "contin")
        assert built.ok, built.reason
        assert "tinycv==0.0.67\nsetuptools<81\n" in built.lock
        assert "setuptools<81 added: import contin: ModuleNotFoundError: No module named " \
               "'pkg_resources'" in built.lock
        fixed.clear()
        installed.clear()
        again = environments.build(store, ws, "contin", force=True)
        assert not again.ok
        assert "cannot import name 'DwsConvBlock'" in again.reason
        assert "as of its commit's date" in again.reason and \
            "No module named 'pkg_resources'" in again.reason, again.reason
        assert "tinycv==0.0.73" in installed[-1]   # the environment as it was


@pytest.mark.slow
@pytest.mark.timeout(1200)   # environment resolutions on a shared 2-core machine
def test_a_requirement_no_release_of_which_installs_here_is_left_out_and_named(
        tmp_path, offline_index):  # noqa: F811
    """nlp-architect declares dynet==2.1: sdists only, which do not build here, whatever
    the release, so no environment at all, while its package (and the quantization
    tests DL-Bench runs) never import dynet. After the pin is overridden to >= it and
    still nothing installs, the requirement is left out, named in the lock, and the
    import check decides: the environment is built."""
    from click.testing import CliRunner
    from repo_support import mine_and_accept

    from curator.cli import main
    from curator.store import Store

    _sdist_that_does_not_build(offline_index, "tinydyn", "2.1")
    _sdist_that_does_not_build(offline_index, "tinydyn", "2.1.2")
    upstream = tmp_path / "nlpa"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    write(upstream, {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\n'
                          'build-backend = "setuptools.build_meta"\n'
                          '[project]\nname = "nlpa"\nversion = "0.1"\n'
                          'dependencies = ["tinydyn==2.1", "tinyunits"]\n',
        "nlpa/__init__.py": "import tinyunits\n",
        "nlpa/ops.py": 'def scale(x):\n    """Three times x."""\n    return 3 * x\n',
        "tests/test_ops.py": "from nlpa.ops import scale\n\n\ndef test_scale():\n"
                             "    assert scale(2) == 6\n"})
    commit(upstream, "first")
    ws, base = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    built = CliRunner().invoke(main, [*base, "repo", "env", "nlpa", "--json"])
    assert built.exit_code == 0, built.output
    versions = {p["name"]: p["version"] for p in json.loads(built.stdout)["packages"]}
    assert "tinydyn" not in versions and versions["tinyunits"] == "1.2.0"
    with Store(ws.db_path, "tester") as store:
        (env,) = environments.list_envs(store)
    assert env["status"] == "built"
    assert "# tinydyn left out: no release of it installs here" in env["lock"]
    assert environments.left_out(env["lock"])["tinydyn"].startswith("tinydyn left out")


@pytest.mark.slow
@pytest.mark.timeout(1200)   # environment resolutions on a shared 2-core machine
def test_an_exact_pin_whose_release_does_not_import_here_is_relaxed_or_left_out(
        tmp_path, offline_index):  # noqa: F811
    """neupy pins progressbar2==3.34.3, which installs (pure Python) but whose `import
    progressbar` raises AttributeError on Python 3.11 (`collections.Iterable`, gone since
    3.10): the environment was `built` and every test importing it failed. A declared
    exact pin whose release does not import here (AttributeError, ImportError,
    SyntaxError) is relaxed to >= that release, so the newest one comes in, said in the
    lock; one whose newest release does not import either is left out and named. A pin
    whose module fails otherwise (an error of this machine, not of an old Python) stays
    as declared."""
    from click.testing import CliRunner
    from repo_support import mine_and_accept

    from curator.cli import main
    from curator.store import Store

    for version, text in (("1.0", "import collections\nSeq = collections.Iterable\n"),
                          ("1.1", "import collections.abc\nSeq = collections.abc.Iterable\n")):
        _wheel(offline_index, "tinybar", version, {"tinybar/__init__.py": text})
    for version in ("1.0", "2.0"):   # Python 2 syntax in every release
        _wheel(offline_index, "tinyprint", version, {"tinyprint/__init__.py": 'print "x"\n'})
    for version, text in (("1.0", "raise OSError('no display')\n"), ("1.1", "")):
        _wheel(offline_index, "tinydisplay", version, {"tinydisplay/__init__.py": text})
    upstream = tmp_path / "neup"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    write(upstream, {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\n'
                          'build-backend = "setuptools.build_meta"\n'
                          '[project]\nname = "neup"\nversion = "0.1"\n'
                          'dependencies = ["tinybar==1.0", "tinyunits", '
                          '"tinydisplay==1.0"]\n'
                          '[project.optional-dependencies]\ntest = ["tinyprint==1.0"]\n',
        "neup/__init__.py": "import tinyunits\n",
        "neup/ops.py": 'def scale(x):\n    """Three times x."""\n    return 3 * x\n',
        "tests/test_ops.py": "from neup.ops import scale\n\n\ndef test_scale():\n"
                             "    assert scale(2) == 6\n"})
    commit(upstream, "first")
    ws, base = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    built = CliRunner().invoke(main, [*base, "repo", "env", "neup", "--json"])
    assert built.exit_code == 0, built.output
    versions = {p["name"]: p["version"] for p in json.loads(built.stdout)["packages"]}
    assert versions["tinybar"] == "1.1" and "tinyprint" not in versions
    assert versions["tinydisplay"] == "1.0"   # its error is not an old Python's
    with Store(ws.db_path, "tester") as store:
        (env,) = environments.list_envs(store)
    assert env["status"] == "built", env["reason"]
    notes = [line for line in env["lock"].splitlines() if line.startswith("# ")]
    relaxed = next(line for line in notes if "tinybar==1.0" in line)
    assert relaxed.startswith("# pin relaxed to >= (tinybar==1.0): its release does not "
                              "import on Python 3.")
    assert "import tinybar: AttributeError: module 'collections' has no attribute " \
        "'Iterable'" in relaxed
    why = environments.left_out(env["lock"])["tinyprint"]
    assert why.startswith("tinyprint left out: tinyprint==1.0 does not import on Python")
    assert "SyntaxError" in why and "nor does the newest release the as-of date allows " \
        "(tinyprint 2.0: import tinyprint: SyntaxError" in why
    assert not any("tinyprint" in line for line in notes if "pin relaxed" in line)
    assert not any("tinydisplay" in line for line in notes)


def test_which_import_errors_relax_an_exact_pin():
    """What an old release's code meets on a new Python relaxes its pin; a module not
    found (a requirement to add) or a system library this machine lacks does not."""
    assert environments.old_python_error(
        "import progressbar: AttributeError: module 'collections' has no attribute "
        "'Iterable'")
    assert environments.old_python_error("import tinyprint: SyntaxError: invalid syntax")
    assert environments.old_python_error(
        "import old: ImportError: cannot import name 'Mapping' from 'collections'")
    assert not environments.old_python_error("import a: ModuleNotFoundError: No module "
                                             "named 'b'")
    assert not environments.old_python_error(
        "import a: ImportError: needs b (after ModuleNotFoundError: No module named 'b')")
    assert not environments.old_python_error(
        "import cupy: ImportError: libcuda.so.1: cannot open shared object file: No such "
        "file or directory")
    assert not environments.old_python_error("import x: OSError: no display")
    assert not environments.old_python_error("import x: not checked: isolation is weak")
