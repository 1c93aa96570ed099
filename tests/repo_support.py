"""A mined repository with one accepted repo-backed problem, for the repo-run tests."""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from mining_support import commit, git, write

from curator import workspace as workspace_mod
from curator.cli import main
from curator.execution import sandbox
from curator.repos import uv
from curator.store import Store
from curator.store import candidates as candidate_store

STRONG_OK, STRONG_WHY = sandbox.probe()
# A machine without a working bwrap fails these tests unless CURATOR_ALLOW_SKIP=1.
needs_strong = pytest.mark.requires_bwrap


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    write(root, files)
    commit(root, "first")
    return root


UNITS_CONVERT = '''from tinyunits import CM_PER_INCH


def inches_to_cm(x):
    """Centimetres in x inches."""
    return x * CM_PER_INCH
'''

UNITS_TEST_CONVERT = '''import sys

from tinycheck import close
from units.convert import inches_to_cm


def test_one_inch():
    assert close(inches_to_cm(1), 2.54)


def test_from_its_own_env():
    assert close(inches_to_cm(2), 5.08)
    assert "/db/envs/" in sys.prefix, sys.prefix
'''


def units_repo(root: Path) -> Path:
    """A small installable repository whose function needs two packages of the local
    index (tinyunits at run time, tinycheck for its tests; see offline_index)."""
    return make_repo(root, {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\n'
                          'build-backend = "setuptools.build_meta"\n'
                          '[project]\nname = "units"\nversion = "0.1"\n'
                          'dependencies = ["tinyunits>=1.0"]\n'
                          '[project.optional-dependencies]\ntest = ["tinycheck"]\n',
        "conftest.py": "", "units/__init__.py": "", "units/convert.py": UNITS_CONVERT,
        "tests/test_convert.py": UNITS_TEST_CONVERT})


def mine_and_accept(tmp_path: Path, upstream: Path, qualname: str, problem_id: str,
                    isolation: str = "strong", exclude: list[str] | None = None):
    """A workspace (runs in `isolation`) with upstream mined and `qualname` accepted.

    Weak isolation also says `allow_weak = true`: mined code is untrusted, and without
    that consent its runs are refused."""
    ws = workspace_mod.init(tmp_path / "ws")
    consent = "allow_weak = true\n" if isolation == "weak" else ""
    (ws.root / "curator.toml").write_text(f'[execution]\nisolation = "{isolation}"\n{consent}',
                                          encoding="utf-8")
    runner = CliRunner()
    base = ["--workspace", str(ws.root)]
    mined = runner.invoke(main, [*base, "mine", str(upstream), "--json"])
    assert mined.exit_code == 0, mined.output
    with Store(ws.db_path, "tester") as store:
        rows = [r for r in candidate_store.list_rows(store) if r["qualname"] == qualname]
    args = [*base, "candidates", "accept", str(rows[0]["id"]), "--id", problem_id]
    for item in exclude or ():
        args += ["--exclude", item]
    if exclude:
        args += ["--exclude-reason", "needs the network"]
    accepted = runner.invoke(main, args)
    assert accepted.exit_code == 0, accepted.output
    return workspace_mod.discover(ws.root), base


def symlinked_venv(folder: Path) -> Path:
    """A plain venv (symlinks to the same base python as the curator's own) that sees the
    curator's site-packages through a .pth file, so it has pytest and numpy."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--symlinks", str(folder)],
                   check=True, capture_output=True)
    python = folder / "bin" / "python"
    assert python.is_symlink()
    own_site = [p for p in sys.path if p.endswith("site-packages")][0]
    (site,) = folder.glob("lib/python*/site-packages")
    (site / "curator_site.pth").write_text(own_site + "\n", encoding="utf-8")
    return python


def pytest_plugin(site: Path, name: str, text: str, modules: dict[str, str] | None = None
                  ) -> None:
    """Install the distribution `name` into `site`: the module `name` (`text`) as a pytest
    plugin (an entry point in group pytest11), and `modules` (name -> text) beside it."""
    files = {name: text, **(modules or {})}
    for module, source in files.items():
        (site / f"{module}.py").write_text(source)
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[pytest11]\n{name} = {name}\n")
    (info / "top_level.txt").write_text("".join(f"{m}\n" for m in files))
    (info / "RECORD").write_text("".join(f"{m}.py,,\n" for m in files))


def run_json(base: list[str], *ids: str) -> tuple[int, dict]:
    import json

    out = CliRunner().invoke(main, [*base, "run", *ids, "--json"])
    try:
        return out.exit_code, json.loads(out.stdout)
    except ValueError:
        raise AssertionError(out.output) from None


def wheel(folder: Path, name: str, version: str, files: dict[str, str],
           requires: list[str] = ()) -> Path:
    """A minimal pure-Python wheel, built by hand."""
    dist = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires)
    entries = {**files, f"{dist}/METADATA": meta,
               f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                "Tag: py3-none-any\n"}
    record = []
    for path, text in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest())
        record.append(f"{path},sha256={digest.rstrip(b'=').decode()},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    entries[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    target = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w") as archive:
        for path, text in entries.items():
            archive.writestr(path, text)
    return target


@pytest.fixture
def offline_index(tmp_path, monkeypatch):
    """pip configured as on this machine (its local indexes and find-links) plus a folder
    of wheels this test builds; uv offline, so nothing reaches the network."""
    return use_offline_index(tmp_path, monkeypatch)


@functools.cache
def machine_pip_options() -> uv.IndexOptions:
    """pip's sources as configured on this machine, asked once per pytest process: each
    `pip config list` starts pip (0.5 s idle, about 3 s on the loaded 2-core machine), and
    the 64 tests using an offline index asked it in their set-up. What the tests' own
    monkeypatching changes (PIP_CONFIG_FILE) is undone after each test, so the answer is
    the same every time."""
    return uv.pip_options()


def use_offline_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """What `offline_index` does, for a fixture of another scope (its own MonkeyPatch)."""
    machine = machine_pip_options()
    local = [u for u in [machine.index_url, *machine.extra_index_urls] if u and
             u.startswith("file:")]
    if not (machine.find_links and local):
        if os.environ.get("CI"):
            pytest.fail("pip has no local index or find-links configured on this machine")
        pytest.skip("pip has no local index or find-links configured here")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel(wheels, "tinyunits", "1.2.0", {"tinyunits/__init__.py": "CM_PER_INCH = 2.54\n"})
    wheel(wheels, "tinycheck", "0.3.0",
           {"tinycheck/__init__.py": "def close(a, b):\n    return abs(a - b) < 1e-9\n"})
    config = tmp_path / "pip.conf"
    config.write_text("[global]\nindex-url = " + local[0] + "\n" +
                      ("extra-index-url = " + " ".join(local[1:]) + "\n" if local[1:] else "") +
                      "find-links = " + " ".join([*machine.find_links, str(wheels)]) + "\n" +
                      "".join(f"constraint = {c}\n" for c in machine.constraints[:1]))
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    for name in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("UV_OFFLINE", "1")
    return wheels
