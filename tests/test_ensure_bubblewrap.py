"""scripts/ensure-bubblewrap.sh, the first step of `make test` and `make run`: silent when
bwrap is there; where it cannot be installed, one line saying how, and `make test`'s mode
fails (unless CURATOR_ALLOW_SKIP=1) while `make run`'s goes on. The install itself is
checked on a fresh machine by tests/fresh_machine.sh (it changes the system)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from execution_support import needs_bwrap

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "ensure-bubblewrap.sh"
MAKEFILE = Path(__file__).resolve().parents[1] / "Makefile"


@pytest.fixture
def bare_path():
    """A PATH with the few tools the script uses, and no bwrap, apt-get or sudo (in a
    folder every user can read: the script also runs as nobody)."""
    folder = Path(tempfile.mkdtemp(prefix="curator-bare-path-"))
    try:
        folder.chmod(0o755)
        for tool in ("id", "tail", "rm", "env", "cat"):
            os.symlink(shutil.which(tool), folder / tool)
        yield str(folder)
    finally:
        shutil.rmtree(folder)


def as_user(uid: int):
    def drop() -> None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    return drop


def run(mode: str, path: str, uid: int | None = None, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["/bin/sh", str(SCRIPT), mode], capture_output=True, text=True,
                          timeout=60, check=False, env={"PATH": path, "TMPDIR": "/tmp", **env},
                          preexec_fn=as_user(uid) if uid is not None else None)


@needs_bwrap
def test_silent_when_bwrap_is_there():
    done = run("--required", os.environ["PATH"])
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "")


def test_without_a_way_to_install_test_fails_with_one_line_and_run_goes_on(bare_path):
    path = bare_path
    if os.geteuid() == 0:
        nobody = run("--required", path, uid=65534)
        assert nobody.returncode == 1
        lines = nobody.stderr.splitlines()
        assert len(lines) == 1, lines
        assert "this user cannot install it (not root, no sudo without a password)" in lines[0]
        assert "sudo apt-get install bubblewrap" in lines[0]
        # root without apt-get: says so
        root = run("--required", path)
        assert root.returncode == 1
        assert "no apt-get here" in root.stderr and len(root.stderr.splitlines()) == 1
    else:
        user = run("--required", path)
        assert user.returncode == 1 and "this user cannot install it" in user.stderr
    required = run("--required", path)
    assert required.returncode == 1
    assert required.stderr.startswith("error: bubblewrap (bwrap) is missing and the tests need it")
    assert "CURATOR_ALLOW_SKIP=1" in required.stderr
    optional = run("--optional", path)
    assert optional.returncode == 0 and len(optional.stderr.splitlines()) == 1
    assert optional.stderr.startswith("warning: bubblewrap (bwrap) is missing, so runs get "
                                      "weak isolation")
    skipping = run("--required", path, CURATOR_ALLOW_SKIP="1")
    assert skipping.returncode == 0 and "skipped" in skipping.stderr


def test_make_test_and_make_run_start_with_it():
    """The README's two commands are where a fresh machine gets its sandbox."""
    done = subprocess.run(["make", "-n", "-f", str(MAKEFILE), "test", "run"], cwd=MAKEFILE.parent,
                          capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0 and "not found" in done.stderr:
        pytest.skip("make is not installed")
    # make run inside make (as .ci/run's `make test` does) names the directories it enters
    lines = [line for line in done.stdout.splitlines() if not line.startswith("make[")]
    assert lines[0] == "sh scripts/ensure-bubblewrap.sh --required", lines
    assert "sh scripts/ensure-bubblewrap.sh --optional" in lines
    text = MAKEFILE.read_text()
    assert "pip config" not in text and "index-url" not in text   # the machine's own settings
