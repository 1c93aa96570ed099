"""Per-slot cgroups do not pile up: removal waits for an exiting worker, and the groups of
engines that died without closing their pool are swept by the next one."""

import os
import subprocess
import sys

import pytest

from curator.execution import cgroups


@pytest.fixture
def pids_parent():
    parent = cgroups._parent("pids")
    if parent is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no writable pids cgroup")
        pytest.skip("no writable pids cgroup here")
    return parent


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_group_left_by_a_dead_engine_is_swept(pids_parent):
    stale = pids_parent / f"{cgroups.PREFIX}{_dead_pid()}-0-abc123"
    mine = pids_parent / f"{cgroups.PREFIX}{os.getpid()}-7-abc123"
    other = pids_parent / "curator-not-a-slot"
    for folder in (stale, mine, other):
        folder.mkdir()
    try:
        removed = cgroups.sweep()
        assert stale in removed and not stale.exists()
        assert mine.exists() and other.exists()   # a live engine's and a foreign name stay
    finally:
        for folder in (stale, mine, other):
            if folder.exists():
                folder.rmdir()


def test_removal_waits_for_the_worker_still_exiting(pids_parent):
    group = cgroups.SlotGroup.create(0)
    assert group is not None
    folders = list(group.dirs.values())
    proc = subprocess.Popen(group.wrap([sys.executable, "-c", "import time; time.sleep(0.4)"]))
    try:
        deadline = 50
        while deadline and not (folders[0] / "cgroup.procs").read_text().strip():
            deadline -= 1
            subprocess.run(["sleep", "0.02"])
        assert (folders[0] / "cgroup.procs").read_text().strip()   # the worker is inside
        group.remove(wait_s=5)
        assert not any(f.exists() for f in folders)
    finally:
        proc.wait()
        for folder in folders:
            if folder.exists():
                folder.rmdir()
