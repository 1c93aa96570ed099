"""What the worker empties after a run: everything the run left in its /tmp, never a
mount. A venv or checkout that lives under the host's /tmp is bound into the sandbox's
/tmp at its own path; emptying /tmp walked it whole after every run."""

from __future__ import annotations

from curator.execution.worker import mount_points, remove_unmounted


def test_mount_points_are_read_from_mountinfo_with_their_escapes(tmp_path):
    info = tmp_path / "mountinfo"
    info.write_text(
        "22 1 253:1 / / rw,relatime - ext4 /dev/vda rw\n"
        "40 22 0:45 / /tmp rw - tmpfs tmpfs rw\n"
        "41 40 253:1 /tmp/ci\\0401/.venv /tmp/ci\\0401/.venv ro - ext4 /dev/vda rw\n",
        encoding="utf-8")
    assert mount_points(str(info)) == {"/", "/tmp", "/tmp/ci 1/.venv"}
    assert mount_points(str(tmp_path / "missing")) == frozenset()


def test_a_run_s_leftovers_go_and_a_mount_with_the_folders_above_it_stays(tmp_path):
    tmp = tmp_path / "tmp"
    venv = tmp / "ci" / ".venv"
    (venv / "lib").mkdir(parents=True)
    (venv / "lib" / "torch.py").write_text("x = 1\n", encoding="utf-8")
    (tmp / "ci" / "left-by-a-run.txt").write_text("x", encoding="utf-8")
    (tmp / "ci" / "made").mkdir()
    (tmp / "made" / "deep").mkdir(parents=True)
    (tmp / "made" / "deep" / "f.txt").write_text("x", encoding="utf-8")
    (tmp / "file.txt").write_text("x", encoding="utf-8")
    (tmp / "link").symlink_to(venv)
    mounts = frozenset({str(venv), "/", str(tmp_path)})
    for entry in list(tmp.iterdir()):
        remove_unmounted(entry, mounts)
    assert sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("*")) == [
        "ci", "ci/.venv", "ci/.venv/lib", "ci/.venv/lib/torch.py"]
