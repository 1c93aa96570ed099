"""Private writable views of a repository run (curator.execution.views), strong isolation:
the checkout a run's tests may write into, and the environment's run cache, filled only
from reference runs, which no solution can write into for the judge or a later run."""

from __future__ import annotations

import os

import pytest
from execution_support import needs_bwrap, repo_job, write_repo
from repo_support import symlinked_venv

from curator.execution.engine import Engine

pytestmark = [needs_bwrap, pytest.mark.skipif(
    os.geteuid() != 0, reason="private views need the privileged (root) sandbox")]

# Like nncf's tests and deepchecks': files written beside the test module, into a folder
# of the checkout (the working directory) and into the package.
WRITING_TESTS = '''import os
from pathlib import Path

from pkg.ops import value


def test_writes_beside_itself():
    out = Path(__file__).parent / "out.txt"
    assert not out.exists(), "an earlier run's file"
    out.write_text("x")
    assert value() == 2


def test_writes_into_cwd():
    assert not Path("data/sub").exists()
    os.makedirs("data/sub")
    Path("data/sub/f").write_text("y")
    Path("written.txt").write_text("x")
    assert Path("data/keep.txt").read_text() == "k"


def test_writes_into_package_and_resolved_path():
    import pkg
    (Path(pkg.__file__).resolve().parent / "gen.txt").write_text("z")
    assert (Path(pkg.__file__).parent / "gen.txt").read_text() == "z"
'''


def test_a_repository_run_writes_into_its_own_view_of_the_checkout(tmp_path):
    """Tests that write into the checkout failed on its read-only mount (EROFS) and triage
    counted them fails_upstream; each run now writes into a view of its own."""
    root = write_repo(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/ops.py": "def value():\n    return 2\n",
        "tests/test_ops.py": WRITING_TESTS, "data/keep.txt": "k"})
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    text = (root / "pkg" / "ops.py").read_text(encoding="utf-8")
    jobs = [repo_job(root, "pkg/ops.py", text, "tests/test_ops.py", "value", reference=True)
            for _ in range(2)]
    with Engine(workers=1, isolation="strong", eager=False) as engine:
        results = list(engine.run(jobs))
    for result in results:   # the second run sees nothing of the first's
        assert result.outcome == "passed", (result.reason, result.tests)
        assert len(result.tests) == 3
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


# A package that compiles something at first use into the user's cache folder (as torch's
# C++ extensions and inductor do) and loads it from there; BUILT: whether this process
# built it.
BUILD = '''import importlib.util
import os
from pathlib import Path

BUILT = False


def artifact() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "pkgbuild" / "v1" / "compiled.py"


def compiled_value():
    path = artifact()
    if not path.exists():
        global BUILT
        BUILT = True
        import subprocess   # a helper that ends soon after the run (a resource tracker)
        subprocess.Popen(["sleep", "1"], start_new_session=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "lock").write_text("")
        path.write_text("VALUE = 2\\n")
        (path.parent / "lock").unlink()
    spec = importlib.util.spec_from_file_location("compiled", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.VALUE
'''

OPS = '''from pkg import build


def value():
    return build.compiled_value(), build.BUILT
'''

CACHE_TESTS = '''import pytest

from pkg import build
from pkg.ops import value


def test_the_candidate_uses_the_compiled_code():
    assert value()[0] == 2


def test_the_judge_uses_the_compiled_code():
    assert build.compiled_value() == 2


def test_who_built():
    pytest.skip(f"built: judge {build.BUILT}, solution {value()[1]}")
'''

# A candidate that poisons every cache folder it can reach: its own (the solution
# process's view), the judge's view of this run, the environment's cache below.
POISON = '''import os
from pathlib import Path

from pkg.build import artifact

BAD = "VALUE = 99\\n"


def _try(path):
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(BAD)
    except OSError:
        pass


def value():
    _try(artifact())
    (artifact().parent / "lock").write_text("")   # a build that never ends
    for base in ("/tmp/run/.cache", "/tmp/.curator-cache/layers/judge",
                 "/tmp/.curator-cache/layers/solution"):
        _try(Path(base) / "pkgbuild" / "v1" / "compiled.py")
    return 2, False
'''


def _builds(result) -> str:
    (test,) = [t for t in result.tests if t["id"].endswith("test_who_built")]
    return test.get("message") or ""


def test_code_compiled_at_run_time_is_built_once_per_environment(tmp_path):
    """nncf compiled its C++ extension in every run (a fresh cache folder each), three
    triage runs at once on two cores past its own 60 s loader limit. A reference run's
    processes now leave what they compiled to the environment's run cache; a later run
    starts from it in a view of its own, and nothing a sample writes reaches the judge,
    a later run or the cache."""
    python = symlinked_venv(tmp_path / "venv")
    (tmp_path / "venv" / ".curator").mkdir()   # an environment curator built
    root = write_repo(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/build.py": BUILD, "pkg/ops.py": OPS,
        "tests/test_ops.py": CACHE_TESTS})

    def job(text, reference):
        made = repo_job(root, "pkg/ops.py", text, "tests/test_ops.py", "value",
                        reference=reference, python=str(python))
        made.repo = {"url": "https://example.com/pkg", "commit": "c0", "lock": "x==1\n",
                     "python_version": None}
        return made

    with Engine(workers=1, isolation="strong", eager=False) as engine:
        first, second = (next(iter(engine.run([job(OPS, True)]))) for _ in range(2))
        poisoned = next(iter(engine.run([job(POISON, False)])))
        third = next(iter(engine.run([job(OPS, True)])))
        sample = next(iter(engine.run([job(OPS, False)])))
    for result in (first, second, poisoned, third, sample):
        # a sample without a baseline fails for the skipped report alone
        outcomes = {t["id"].rpartition("::")[2]: t["outcome"] for t in result.tests}
        assert outcomes == {"test_the_candidate_uses_the_compiled_code": "passed",
                            "test_the_judge_uses_the_compiled_code": "passed",
                            "test_who_built": "skipped"}, (result.reason, result.tests)
    assert "built: judge True, solution True" in _builds(first)
    for result in (second, third, sample):   # the poison stayed in its run
        assert "built: judge False, solution False" in _builds(result), result.tests
    cache = next((tmp_path / "venv" / ".curator" / "run-cache").iterdir())
    kept = sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())
    assert kept == ["judge/pkgbuild/v1/compiled.py", "solution/pkgbuild/v1/compiled.py"]
    for kind in ("judge", "solution"):
        assert (cache / kind / "pkgbuild/v1/compiled.py").read_text() == "VALUE = 2\n"




# A build that goes on in a process of its own after the tests ended (nncf loads its
# extension in a thread, and the build runs in ninja): what it wrote so far is wrong.
BUILD_LEFT_RUNNING = BUILD.replace('''        path.write_text("VALUE = 2\\n")''', '''        import subprocess
        import sys
        path.write_text("VALUE = 3\\n")   # until the build ends
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])''')


def test_a_build_still_running_when_the_run_ends_is_not_kept(tmp_path):
    python = symlinked_venv(tmp_path / "venv")
    (tmp_path / "venv" / ".curator").mkdir()
    assert "VALUE = 3" in BUILD_LEFT_RUNNING
    root = write_repo(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/build.py": BUILD_LEFT_RUNNING, "pkg/ops.py": OPS,
        "tests/test_ops.py": CACHE_TESTS})
    job = repo_job(root, "pkg/ops.py", OPS, "tests/test_ops.py", "value", reference=True,
                   python=str(python))
    job.repo = {"url": "https://example.com/pkg", "commit": "c0", "lock": "",
                "python_version": None}
    with Engine(workers=1, isolation="strong", eager=False) as engine:
        results = [next(iter(engine.run([job]))) for _ in range(2)]
    for result in results:   # each run builds anew: the first one's half was not kept
        assert result.outcome == "failed", (result.reason, result.tests)
        assert "built: judge True, solution True" in _builds(result), result.tests
    cache = next((tmp_path / "venv" / ".curator" / "run-cache").iterdir())
    assert not [p for p in cache.rglob("*") if p.is_file()]


# Like nncf's extension: the first use starts a build (here `ninja`: sleep) and gives
# up waiting for it (nncf's 60 s limit) while it goes on; the build, once done, is loaded.
SLOW_BUILD = '''import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def artifact() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "pkgbuild" / "compiled.py"


def compiled_value():
    path = artifact()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        ninja = Path(tempfile.gettempdir()) / "ninja"   # a build tool, by its name
        shutil.copy("/bin/sleep", ninja)
        subprocess.Popen(["/bin/sh", "-c", f'"{ninja}" 3 && echo "VALUE = 2" > "{path}.part"'
                          f' && mv "{path}.part" "{path}"'], start_new_session=True)
        raise TimeoutError("the extension load function failed to execute in time")
    spec = importlib.util.spec_from_file_location("compiled", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.VALUE
'''

SLOW_OPS = '''from pkg.build import compiled_value


def value():
    """The compiled value."""
    return compiled_value()
'''

SLOW_TESTS = '''from pkg.build import compiled_value
from pkg.ops import value


def test_the_candidate():
    assert value() == 2


def test_the_judge():
    assert compiled_value() == 2
'''


def test_triage_takes_a_first_run_that_filled_the_run_cache_as_a_warm_up(tmp_path):
    """nncf: the first triage run's build outlived nncf's loader limit, its tests failed
    while the other runs passed, and they were excluded as flaky. A first run that adds to
    the run cache and fails is a warm-up: the triage's first run is the next one."""
    from repo_support import make_repo, mine_and_accept

    from curator import runs
    from curator.repos import identity
    from curator.store import Store

    upstream = make_repo(tmp_path / "slowbuild", {
        "pkg/__init__.py": "", "pkg/build.py": SLOW_BUILD,
        "pkg/ops.py": SLOW_OPS, "tests/test_ops.py": SLOW_TESTS})
    ws, _ = mine_and_accept(tmp_path, upstream, "value", "value", isolation="strong")
    python = symlinked_venv(tmp_path / "venv")
    (tmp_path / "venv" / ".curator").mkdir()
    with Store(ws.db_path, "tester") as store:
        identity.set_python(store, "slowbuild", str(python))
        (result,) = runs.triage(store, ws, ["value"])
        assert result.green, result.reason
        assert not runs.excluded(store, "value")
        kept = [r for r in store.conn.execute(
            "select outcome, env from runs where problem_id = 'value' order by rowid")]
    assert kept[0][0] == "failed" and "run_cache_kept" in kept[0][1]   # the warm-up
    assert {outcome for outcome, _ in kept[1:4]} == {"passed"}
