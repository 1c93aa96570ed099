"""`curator repo env`: an isolated environment per mined repository, built with uv."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from repo_support import (
    mine_and_accept,
    needs_strong,
    offline_index,  # noqa: F401  (the fixture)
    run_json,
    units_repo,
)

from curator.cli import main
from curator.repos import environments, requirements, uv
from curator.store import Store

PIP_CONFIG = """global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///a/simple file:///b/simple'
global.find-links='/opt/wheels'
:env:.find-links='/srv/wheels /opt/wheels'
:env:.default-timeout='180'
"""


def test_pip_configuration_becomes_uv_arguments():
    options = uv.pip_options(PIP_CONFIG)
    assert options.find_links == ["/srv/wheels", "/opt/wheels"]   # PIP_* wins
    assert options.extra_index_urls == ["file:///a/simple", "file:///b/simple"]
    assert options.constraints == ["/etc/xdg/pip/constraints.txt"]
    args = options.uv_args()
    assert args[args.index("--find-links") + 1] == "/srv/wheels"
    assert "--index-url" not in args


def test_declared_dependencies_from_every_usual_place(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\ndependencies = ["numpy>=1", "torch>=2"]\n'
        '[project.optional-dependencies]\ndev = ["pytest-timeout", "pkg[docs]"]\n'
        'docs = ["sphinx"]\n[dependency-groups]\ntest = ["hypothesis"]\n')
    (tmp_path / "setup.cfg").write_text(
        "[options]\ninstall_requires =\n    packaging\n[options.extras_require]\n"
        "testing =\n    pillow\n")
    (tmp_path / "requirements-dev.txt").write_text("-r requirements-core.txt\nrich  # ui\n"
                                                   "-e .\n")
    (tmp_path / "requirements-core.txt").write_text("click\n")
    (tmp_path / "tox.ini").write_text("[testenv]\ndeps =\n    attrs\n    -rrequirements-core.txt\n")
    found = requirements.declared(tmp_path)
    # the packaging declares the runtime requirements: requirements files are test ones
    assert found.runtime == ["numpy>=1", "torch>=2", "packaging"]
    assert found.test == ["pytest-timeout", "hypothesis", "pillow", "click", "rich", "attrs"]
    assert found.package == "pkg"


def test_requirements_files_beside_package_metadata_are_added_when_they_fit(tmp_path):
    """pennylane: setup.py says autoray>=0.6.11; requirements.txt pins CI versions
    (typing_extensions~=4.5.0, which torch 2.13 does not accept) and requirements-ci.txt
    an autoray<0.6.10. Neither file is runtime: what the package declares resolves first,
    the files' requirements are added when they fit. Without package metadata a
    requirements.txt is the runtime."""
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n\nrequirements = ['numpy', 'autoray>=0.6.11']\n"
        "setup(name='qml', install_requires=requirements)\n")
    (tmp_path / "requirements.txt").write_text("numpy~=1.23\ntyping_extensions~=4.5.0\n")
    (tmp_path / "requirements-ci.txt").write_text("autoray>=0.6.1,<0.6.10\n")
    found = requirements.declared(tmp_path)
    assert found.runtime == ["numpy", "autoray>=0.6.11"]
    assert {"numpy~=1.23", "typing_extensions~=4.5.0", "autoray>=0.6.1,<0.6.10"} <= \
        set(found.test)
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "requirements.txt").write_text("numpy~=1.23\n")
    (bare / "requirements_ci.txt").write_text("hypothesis\n")
    alone = requirements.declared(bare)
    assert alone.runtime == ["numpy~=1.23"] and alone.test == ["hypothesis"]
    # neupy: requirements/main.txt is the runtime, requirements/travis.txt the pins of its
    # CI service (pandas==0.23.4, whose metadata uv cannot read): a test file
    (bare / "requirements").mkdir()
    (bare / "requirements" / "travis.txt").write_text("pandas==0.23.4\n")
    (bare / "requirements" / "appveyor.txt").write_text("mock==2.0.0\n")
    served = requirements.declared(bare)
    assert served.runtime == ["numpy~=1.23"]
    assert {"pandas==0.23.4", "mock==2.0.0"} <= set(served.test)


@pytest.mark.slow
@pytest.mark.timeout(1200)   # the environment build, on a shared 2-core machine
@needs_strong
def test_repo_env_builds_reuses_and_runs_in_the_strong_sandbox(tmp_path, offline_index):  # noqa: F811
    upstream = units_repo(tmp_path / "units")
    ws, base = mine_and_accept(tmp_path, upstream, "inches_to_cm", "inches_to_cm")
    runner = CliRunner()
    built = runner.invoke(main, [*base, "repo", "env", "units", "--json"])
    assert built.exit_code == 0, built.output
    report = json.loads(built.stdout)
    assert set(report) == {"repo", "python", "seconds", "packages"}
    names = {p["name"]: p["version"] for p in report["packages"]}
    assert names["tinyunits"] == "1.2.0" and names["tinycheck"] == "0.3.0"
    assert "pytest" in names and names["torch"] == uv.torch_pin().split("==")[1]
    assert report["python"].startswith(str(ws.db_dir / "envs"))
    with Store(ws.db_path, "tester") as store:
        (env,) = environments.list_envs(store)
        assert env["registered"] == report["python"]
        assert "tinyunits==1.2.0" in env["lock"] and "--hash=sha256:" in env["lock"]
    again = runner.invoke(main, [*base, "repo", "env", "units"])
    assert again.exit_code == 0 and "reused" in again.output, again.output
    # A build stopped half way (killed at a time limit) leaves a fresh folder, without
    # the packages, under the row of the build that last finished: built again.
    uv.new_venv(Path(env["path"]), "%d.%d" % sys.version_info[:2], uv.pip_options())
    redone = runner.invoke(main, [*base, "repo", "env", "units"])
    assert redone.exit_code == 0 and "reused" not in redone.output, redone.output

    code, runs = run_json(base, "inches_to_cm")
    (run,) = runs["runs"]
    assert run["env"]["isolation"] == "strong"
    assert (run["outcome"], code) == ("passed", 0), run["reason"]
    assert len(run["tests"]) == 2

    # What a cluster node does with the lock alone: the same environment, built once.
    spec = {"url": str(upstream), "commit": env["commit_sha"], "lock": env["lock"],
            "python_version": "%d.%d" % tuple(int(x) for x in
                                              env["python_version"].split(".")[:2])}
    checkout, node_python = environments.materialize(spec, tmp_path / "node")
    assert (Path(checkout) / "units" / "convert.py").is_file()
    assert environments.materialize(spec, tmp_path / "node") == (checkout, node_python)
    import subprocess

    versions = subprocess.run([node_python, "-c", "import tinyunits, tinycheck, torch; "
                               "print(torch.__version__)"], capture_output=True, text=True)
    assert versions.stdout.strip() == uv.torch_pin().split("==")[1], versions.stderr

    doctor = runner.invoke(main, [*base, "doctor", "--json"])
    (listed,) = json.loads(doctor.stdout)["repo_envs"]
    assert listed["imports"] is True and listed["package"] == "units", listed


def test_release_bundles_carry_each_repository_lock(store):
    from curator.problem import Problem
    from curator.release.bundle import env_locks
    from curator.repos import identity

    row = identity.get_or_create(store, "https://github.com/kornia/kornia")
    store.execute("INSERT INTO repo_envs (repo_id, commit_sha, key, path, python, "
                  "python_version, lock, built_at, actor) VALUES (?, 'abc123', 'k', '/e', "
                  "'/e/bin/python', '3.11.7', ?, 'now', 'tester')",
                  (row["id"], "numpy==2.0.0 \\\n    --hash=sha256:00\n"))
    source = {"repo": "https://github.com/kornia/kornia", "commit": "abc123",
              "path": "kornia/x.py"}
    problems = [Problem(id="p1", entry_point="f", source=source, test_node_ids=["t.py::a"]),
                Problem(id="p2", entry_point="g", source=source, test_node_ids=["t.py::b"])]
    files = env_locks(store, problems)
    assert list(files) == ["envs/kornia_kornia.lock.txt"]
    text = files["envs/kornia_kornia.lock.txt"].decode()
    assert text.endswith("numpy==2.0.0 \\\n    --hash=sha256:00\n")
    assert "abc123" in text.splitlines()[0]


def test_an_as_of_date_resolves_everything_but_torch_as_of_that_day(tmp_path):
    options = uv.pip_options(PIP_CONFIG)
    plain = uv.compile_args("/env/bin/python", options, tmp_path / "r.in", None, True)
    assert "--exclude-newer" not in plain
    dated = uv.compile_args("/env/bin/python", options, tmp_path / "r.in", "2024-06-01",
                              True)
    assert dated[dated.index("--exclude-newer") + 1] == "2024-06-01"
    excepted = [dated[i + 1] for i, a in enumerate(dated) if a == "--exclude-newer-package"]
    assert "torch=2100-01-01" in excepted
    assert "pytest=2100-01-01" not in excepted   # the tests' pytest: that of the date
    # and the harness's pytest (pytest>=7: an older date could not give it) with its stack
    old = uv.compile_args("/env/bin/python", options, tmp_path / "r.in", "2019-06-01", True)
    excepted = [old[i + 1] for i, a in enumerate(old) if a == "--exclude-newer-package"]
    assert {"pytest=2100-01-01", "pluggy=2100-01-01", "iniconfig=2100-01-01"} <= set(excepted)
    assert environments.as_of({"as_of": "2024-06-01"}) == "2024-06-01"
    assert environments.as_of({"name": "x"}) is None and environments.as_of({"as_of": None}) is None


def test_a_frozen_requirements_file_beside_package_metadata_is_not_read(tmp_path):
    """CompressAI's requirements.txt is `pip freeze` of a 2021 development environment
    (torch==1.8.1, numpy==1.21.0, sphinx, jupyter, ... and one Jinja2<3.1), while its
    setup.py declares the runtime requirements: as runtime pins nothing resolves on
    today's Python. The freeze is left out, and said so; a short pinned file is read
    (added when it fits), and a freeze where the package declares nothing is the runtime."""
    freeze = [f"pkg{i}=={i}.0" for i in range(30)] + ["Jinja2<3.1"]
    (tmp_path / "codec").mkdir()
    (tmp_path / "codec" / "__init__.py").write_text("")
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='codec', install_requires=['numpy>=1.21'])\n")
    (tmp_path / "requirements.txt").write_text("\n".join(freeze) + "\n")
    found = requirements.declared(tmp_path)
    assert found.runtime == ["numpy>=1.21"]
    assert found.notes == ["requirements.txt not read: a freeze of 31 requirements, nearly "
                           "all exact pins (a development environment of its day), while "
                           "the package declares its own runtime requirements"]
    assert "requirements.txt" in found.files   # still part of the environment's key
    (tmp_path / "requirements.txt").write_text("numpy==1.26.4\nscipy==1.13.1\n")
    short = requirements.declared(tmp_path)   # read: added when it fits, as test ones are
    assert (short.runtime, short.test) == (["numpy>=1.21"], ["numpy==1.26.4", "scipy==1.13.1"])
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='codec')\n")
    (tmp_path / "requirements.txt").write_text("\n".join(freeze) + "\n")
    assert requirements.declared(tmp_path).runtime == freeze


def test_test_requirements_that_do_not_fit_are_found_by_halves(tmp_path, monkeypatch):
    """deepchecks' test requirements are dozens: one resolution each to find the few that
    do not fit took half an hour on a loaded machine. Those left out are the same as one
    by one in order (each against the runtime ones and those kept before it), named
    with uv's reason, found with a few resolutions."""
    compiles = []
    conflicts = {("tinyold", "tinynew")}   # tinynew does not fit once tinyold is kept

    def fake_run(args, options, cwd=None):
        if args[:2] != ["pip", "compile"]:
            return ""
        source = next(a for a in args if a.endswith("requirements.in"))
        names = [line.split(">")[0].split("=")[0].strip()
                 for line in Path(source).read_text().splitlines() if line.strip()]
        compiles.append(names)
        if "broken" in names:
            why = "error: No solution found: broken is gone from the index"
            raise uv.UvError(why, why)
        for a, b in conflicts:
            if a in names and b in names:
                why = f"error: No solution found: {a} and {b} conflict"
                raise uv.UvError(why, why)
        return "".join(f"{n}==1.0\n" for n in names)

    monkeypatch.setattr(uv, "run", fake_run)
    optional = [f"tool{i}" for i in range(20)]
    optional[3], optional[11], optional[16] = "tinyold", "broken", "tinynew"
    wanted = requirements.Declared(runtime=["numpy"], test=optional)
    resolution = uv.resolve(sys.executable, wanted, [], None, None, uv.IndexOptions(),
                            tmp_path)
    assert [i["requirement"] for i in resolution.left_out] == ["broken", "tinynew"]
    assert "gone from the index" in resolution.left_out[0]["reason"]
    assert "tinyold and tinynew conflict" in resolution.left_out[1]["reason"]
    locked = {line.split("==")[0] for line in resolution.lock.splitlines()
              if "==" in line and not line.startswith("#")}
    assert locked == {"numpy", "pytest", *optional} - {"broken", "tinynew"}
    assert len(compiles) <= 16, len(compiles)   # one by one: 2 + 20 + 1


def test_an_old_pytest_pin_is_left_out_beside_the_pytest_the_harness_needs(tmp_path,
                                                                           monkeypatch):
    """neupy's requirements/travis.txt pins pytest==3.7.2: locked, every run crashed
    before pytest started (no TempPathFactory, then no pkg_resources). The environment's
    pytest is one the harness runs on; the old pin is left out and named."""
    def fake_run(args, options, cwd=None):
        if args[:2] != ["pip", "compile"]:
            return ""
        source = next(a for a in args if a.endswith(".in"))
        lines = [line.strip() for line in Path(source).read_text().splitlines()
                 if line.strip()]
        if "pytest==3.7.2" in lines and any(line.startswith("pytest>=") for line in lines):
            why = "error: No solution found: you require pytest==3.7.2 and pytest>=7"
            raise uv.UvError(why, why)
        pins = {"pytest==3.7.2": "pytest==3.7.2"}
        return "".join(pins.get(line, f"{line.split('>')[0].split('=')[0]}==8.0\n")
                       for line in lines)

    monkeypatch.setattr(uv, "run", fake_run)
    wanted = requirements.Declared(runtime=["numpy"], test=["pytest==3.7.2", "tinycheck"])
    resolution = uv.resolve(sys.executable, wanted, [], None, None, uv.IndexOptions(),
                            tmp_path)
    assert [i["requirement"] for i in resolution.left_out] == ["pytest==3.7.2"]
    assert "pytest==8.0" in resolution.lock.splitlines()
