"""A call's files come back to the judge as data (issues 21 and 22): a correct solution
whose job is to write a file the test reads (a checkpoint saved to a relative path,
recommenders' `RBM.save`; an export into tmp_path) failed once the solution process could
write its own folder only. It now writes through overlays of the judge's folders whose
upper layers are its own (`sandbox.CallMounts`), and the judge writes what came back
itself (`call_files.JudgeWrites`): never over a file the test has, never anything
importable, never through a link or `..`, whatever the solution process sends."""

from __future__ import annotations

import json
import os
import sys
import tempfile

import pytest
from execution_support import engine_fixture, run_one

from curator.execution import call_files, sandbox

engine = engine_fixture()


SAVING = """
import os

def save(path):
    with open(path, "w") as fh:
        fh.write("weights")

def save_here(name):
    os.makedirs("ckpt_dir", exist_ok=True)
    with open(os.path.join("ckpt_dir", name), "w") as fh:
        fh.write("here")
    with open(name, "w") as fh:
        fh.write("here")
"""

NOT_SAVING = """
def save(path):
    pass

def save_here(name):
    pass
"""

SAVE_TESTS = """
import os
import sys
import tempfile
from solution import save, save_here


def test_save_into_tmp_path(tmp_path):
    save(str(tmp_path / "model.ckpt"))
    assert (tmp_path / "model.ckpt").read_text() == "weights"


def test_save_into_a_folder_the_test_made(tmp_path):
    folder = tmp_path / "exports"
    folder.mkdir()
    save(folder / "model.onnx")
    assert (folder / "model.onnx").read_text() == "weights"


def test_save_to_a_relative_path():
    save_here("rbm_model.ckpt")
    assert open("rbm_model.ckpt").read() == "here"
    assert open(os.path.join("ckpt_dir", "rbm_model.ckpt")).read() == "here"


def test_save_into_a_temporary_directory():
    with tempfile.TemporaryDirectory() as folder:
        save(os.path.join(folder, "x.bin"))
        assert open(os.path.join(folder, "x.bin")).read() == "weights"


def test_save_twice_replaces_its_own(tmp_path):
    save(str(tmp_path / "again.ckpt"))
    save(str(tmp_path / "again.ckpt"))
    assert (tmp_path / "again.ckpt").read_text() == "weights"
"""


def test_a_correct_solution_saves_where_the_test_reads(engine):
    result = run_one(engine, SAVING, SAVE_TESTS)
    control = run_one(engine, NOT_SAVING, SAVE_TESTS)
    assert control.outcome == "failed", control.reason
    assert result.outcome == "passed", (result.reason, result.env, result.stdout[-2000:])
    assert not result.env.get("files_refused")


# -- wrong solutions: a file the test wrote, a module the judge imports, a way out ---------

WRONG = """
import os

def add(a, b, folder):
    _tamper(folder)
    return a - b
"""

CONTROL = WRONG.replace("    _tamper(folder)\n", "") + "\n"

TAMPERING = {
    # the expected answer the test wrote before the call
    "overwrite the test's file": """
def _tamper(folder):
    try:
        with open(os.path.join(folder, "expected.txt"), "w") as fh:
            fh.write("-1")
    except OSError:
        pass
""",
    "remove the test's file and write it anew": """
def _tamper(folder):
    try:
        os.remove(os.path.join(folder, "expected.txt"))
        with open(os.path.join(folder, "expected.txt"), "w") as fh:
            fh.write("-1")
    except OSError:
        pass
""",
    # a module the test imports after the call, in its working folder (the judge's run
    # folder) and in tmp_path; a .pth; bytecode
    "plant modules": """
def _tamper(folder):
    code = "import os\\nos._exit(0)\\n"
    for where in (".", folder):
        for name in ("curator_planted.py", "curator_planted.pth",
                     "__pycache__/curator_planted.cpython-311.pyc", "curator_pkg/__init__.py"):
            path = os.path.join(where, name)
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as fh:
                    fh.write(code)
            except OSError:
                pass
""",
    "link out of the folder": """
def _tamper(folder):
    for target, name in ((os.path.dirname(folder), "up"), ("/", "root")):
        try:
            os.symlink(target, os.path.join(folder, name))
        except OSError:
            pass
    try:
        with open(os.path.join(folder, "up", "escaped.txt"), "w") as fh:
            fh.write("-1")
    except OSError:
        pass
""",
    # what the test's code reads when it is there (a cache the test makes when missing)
    "fill a folder the test has": """
def _tamper(folder):
    try:
        with open(os.path.join(folder, "data", "expected.txt"), "w") as fh:
            fh.write("-1")
    except OSError:
        pass
""",
    # the solution process is the candidate's: it sends what it likes as the call's
    # files (`call_files.harvest` replaced): the judge's rules are the judge's
    "forged entries": """
from curator.execution import call_files as _cf

def _forged(layers):
    bad = []
    for index, *_ in layers:
        bad += [(index, "../escaped.txt", "file", b"-1"),
                (index, "/tmp/escaped.txt", "file", b"-1"),
                (index, "expected.txt", "file", b"-1"),
                (index, "curator_planted.py", "file", b"import os\\nos._exit(0)\\n"),
                (index, "up/escaped.txt", "file", b"-1"),
                (index, "expected.txt", "gone", b""),
                (index, "data/expected.txt", "file", b"-1"),
                (index, "sub/../../escaped.txt", "file", b"-1")]
    return bad

_cf.harvest = _forged

def _tamper(folder):
    pass
""",
}

TAMPER_TESTS = """
import importlib
import os
from solution import add


def _expected(tmp_path):
    # a file of the test's own data folder, when there is one, says what to expect
    cached = tmp_path / "data" / "expected.txt"
    return cached.read_text() if cached.exists() else (tmp_path / "expected.txt").read_text()


def test_add(tmp_path):
    (tmp_path / "expected.txt").write_text("3")
    (tmp_path / "data").mkdir()
    os.symlink(str(tmp_path.parent), str(tmp_path / "up"))
    got = add(1, 2, str(tmp_path))
    assert str(got) == _expected(tmp_path)


def test_untouched(tmp_path):
    (tmp_path / "expected.txt").write_text("3")
    (tmp_path / "data").mkdir()
    add(1, 2, str(tmp_path))
    assert (tmp_path / "expected.txt").read_text() == "3"
    assert os.listdir(tmp_path / "data") == []
    here = os.getcwd()
    planted = [os.path.join(where, name) for where in (here, str(tmp_path))
               for name in ("curator_planted.py", "curator_planted.pth", "__pycache__",
                            os.path.join("curator_pkg", "__init__.py"))]
    escaped = [os.path.join(str(tmp_path.parent), "escaped.txt"), "/tmp/escaped.txt",
               os.path.join(here, "..", "escaped.txt")]
    assert [p for p in planted + escaped if os.path.lexists(p)] == []
    assert [n for n in os.listdir(tmp_path) if not os.path.isdir(tmp_path / n)] == [
        "expected.txt"]


def test_planted_module_not_imported():
    add(1, 2, os.getcwd())
    try:
        importlib.import_module("curator_planted")
    except ImportError:
        pass
    assert add(1, 2, os.getcwd()) == 3
"""


@pytest.mark.parametrize("name", sorted(TAMPERING))
def test_a_wrong_solution_writing_the_judges_files_does_not_pass(engine, name):
    control = run_one(engine, CONTROL, TAMPER_TESTS)
    attack = run_one(engine, WRONG + TAMPERING[name], TAMPER_TESTS)
    assert control.outcome == "failed", control.reason
    assert [t["outcome"] for t in control.tests] == ["failed", "passed", "failed"]
    assert attack.outcome == "failed", (attack.outcome, attack.reason, attack.stdout[-3000:])
    # the judge's files are as the test left them: test_untouched passes
    assert [t["outcome"] for t in attack.tests] == ["failed", "passed", "failed"], (
        attack.tests, attack.stdout[-3000:])
    if name == "forged entries":
        refused = " ".join(attack.env.get("files_refused") or [])
        for why in ("not a plain relative path", "would replace a file",
                    "importable", "would remove a file", "inside a folder the test has"):
            assert why in refused, attack.env


# -- the judge's rules, against every entry a solution process could send -------------------


@pytest.fixture
def judge_folder(tmp_path):
    folder = tmp_path / "judge"
    folder.mkdir()
    (folder / "expected.txt").write_text("3")
    (folder / "existing").mkdir()
    (tmp_path / "outside").mkdir()
    os.symlink(str(tmp_path / "outside"), str(folder / "link"))
    return str(folder)


@pytest.mark.parametrize("rel, kind, why", [
    ("../escaped.txt", "file", "not a plain relative path"),
    ("a/../../escaped.txt", "file", "not a plain relative path"),
    ("/etc/escaped.txt", "file", "not a plain relative path"),
    ("link/escaped.txt", "file", "a link or a file on the way"),
    ("expected.txt/escaped.txt", "file", "a link or a file on the way"),
    ("link", "gone", "would remove a file"),
    ("expected.txt", "file", "would replace a file"),
    ("expected.txt", "gone", "would remove a file"),
    ("existing", "file", "would replace"),
    ("existing/new.bin", "file", "inside a folder the test has"),
    ("existing/deeper", "dir", "inside a folder the test has"),
    ("mod.py", "file", "importable"),
    ("deep/mod.cpython-311-x86_64-linux-gnu.so", "file", "importable"),
    ("libx.so.1", "file", "importable"),
    ("x.pth", "file", "importable"),
    ("__pycache__/x.txt", "file", "bytecode"),
    (".keras/keras.json", "file", "a hidden file or folder"),
    (".numba_config.yaml", "file", "a hidden file or folder"),
    ("matplotlibrc", "file", "a configuration file"),
    ("pkg-1.0.dist-info/entry_points.txt", "file", "package metadata"),
    ("escaped", "other", "a link or special file"),
    ("huge.bin", "big", "larger than the run's file size limit"),
    ("lone\ud800surrogate", "file", "not a plain relative path"),
    ("nul\0byte", "file", "not a plain relative path"),
])
def test_the_judge_refuses(judge_folder, rel, kind, why):
    before = _snapshot(os.path.dirname(judge_folder))
    writes = call_files.JudgeWrites()
    refused = writes.apply([judge_folder], [(0, rel, kind, b"-1")])
    assert len(refused) == 1 and why in refused[0], refused
    assert _snapshot(os.path.dirname(judge_folder)) == before


def test_the_judge_writes_new_files_and_replaces_only_its_own(judge_folder):
    writes = call_files.JudgeWrites()
    assert writes.apply([judge_folder], [(0, "out", "dir", b""),
                                         (0, "out/model.ckpt", "file", b"one"),
                                         (0, "new/deeper/new.bin", "file", b"two"),
                                         (0, "existing", "dir", b"")]) == []
    assert open(os.path.join(judge_folder, "out", "model.ckpt"), "rb").read() == b"one"
    assert open(os.path.join(judge_folder, "new", "deeper", "new.bin"), "rb").read() == b"two"
    # the folders it made take files in a later call
    assert writes.apply([judge_folder], [(0, "new/deeper/later.bin", "file", b"")]) == []
    assert writes.apply([judge_folder], [(0, "out/model.ckpt", "file", b"three")]) == []
    assert open(os.path.join(judge_folder, "out", "model.ckpt"), "rb").read() == b"three"
    # a file of that name the test put there since is the test's
    os.remove(os.path.join(judge_folder, "out", "model.ckpt"))
    with open(os.path.join(judge_folder, "out", "model.ckpt"), "w") as fh:
        fh.write("test's")
    assert writes.apply([judge_folder], [(0, "out/model.ckpt", "file", b"four")])
    assert open(os.path.join(judge_folder, "out", "model.ckpt")).read() == "test's"
    assert writes.apply([judge_folder], [(0, "new/deeper/new.bin", "gone", b"")]) == []
    assert not os.path.exists(os.path.join(judge_folder, "new", "deeper", "new.bin"))
    assert sorted(writes.kept(judge_folder)) == ["new", "new/deeper", "new/deeper/later.bin",
                                                 "out"]


def test_a_package_folder_on_the_judges_path_is_refused(judge_folder, monkeypatch):
    monkeypatch.syspath_prepend(judge_folder)
    writes = call_files.JudgeWrites()
    refused = writes.apply([judge_folder], [(0, "torchvision", "dir", b""),
                                            (0, "torchvision/data.bin", "file", b"x"),
                                            (0, "existing/data.bin", "file", b"x"),
                                            (0, "model-1.ckpt", "file", b"x")])
    assert [r.split(": ", 1)[1].split(" (")[0] for r in refused] == [
        "a package folder on the judge's sys.path"] * 2 + ["inside a folder the test has"]
    assert sorted(os.listdir(judge_folder)) == ["existing", "expected.txt", "link",
                                                "model-1.ckpt"]


def _snapshot(top):
    found = {}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(folder, name)
            found[path] = os.readlink(path) if os.path.islink(path) else \
                (open(path).read() if os.path.isfile(path) else "dir")
    return found


# -- the ordinary user's layers, checked as root: a child that drops to nobody first -------


@pytest.mark.skipif(os.geteuid() != 0, reason="drops to another uid: needs root")
def test_layers_of_an_ordinary_user():
    """Judge and solution of one uid: the solution's overlay of the judge's folder takes
    its writes into its own layer, the judge's folder stays as it was, and nothing the
    process does after makes an inherited mount writable."""
    from test_solution_writes import _in_child_as

    top = tempfile.mkdtemp(prefix="layers-", dir="/tmp")
    own, judge = os.path.join(top, "srun"), os.path.join(top, "run")
    try:
        for folder in (top, own, judge):
            os.makedirs(folder, exist_ok=True)
            os.chown(folder, sandbox.NOBODY, sandbox.NOBODY)
        with open(os.path.join(judge, "expected.txt"), "w") as fh:
            fh.write("3")
        os.chown(os.path.join(judge, "expected.txt"), sandbox.NOBODY, sandbox.NOBODY)

        def body():
            import ctypes

            sandbox.confine_writes(own, proc_view=True)
            # the helper runs in an interpreter of its own: this one where nobody may
            # (an ordinary user's own), else the system's (a pyenv Python under /root)
            python = sys.executable if os.access(os.path.realpath(sys.executable),
                                                 os.X_OK) else "/usr/bin/python3"
            mounts = sandbox.CallMounts.start(own, top, python)
            mounted = mounts.mount([judge, "/tmp", own])
            done = {"mounted": [i for i, _ in mounted]}
            with open(os.path.join(judge, "model.ckpt"), "w") as fh:
                fh.write("weights")
            with open(os.path.join(judge, "expected.txt"), "w") as fh:   # its copy
                fh.write("-1")
            done["files"] = sorted((i, r, k, d.decode())
                                   for i, r, k, d in call_files.harvest(
                                       call_files.layered(mounted, [])))
            mounts.unmount()
            mounts.mount([], [])   # answered once the helper has unmounted them
            libc = ctypes.CDLL(None, use_errno=True)
            try:
                sandbox._mount_setattr(libc, top, 0, attr_clr=sandbox.MOUNT_ATTR_RDONLY)
                done["unlocked"] = True
            except OSError:
                done["unlocked"] = False
            try:
                open(os.path.join(judge, "x"), "w").close()
                done["judge"] = "written"
            except OSError as exc:
                done["judge"] = type(exc).__name__
            return done

        done = _in_child_as(sandbox.NOBODY, body)
        assert done.get("mounted") == [0], done      # not /tmp, not its own folder
        assert done["files"] == [[0, "expected.txt", "file", "-1"],
                                 [0, "model.ckpt", "file", "weights"]]
        assert done["unlocked"] is False and done["judge"] != "written", done
        assert sorted(os.listdir(judge)) == ["expected.txt"]
        assert open(os.path.join(judge, "expected.txt")).read() == "3"
        print(json.dumps(done))
    finally:
        import shutil

        shutil.rmtree(top, ignore_errors=True)


def test_the_folders_a_call_is_given(tmp_path, monkeypatch):
    """The judge's working folder, the folders the arguments name (or name a file in),
    the temporary folders it opened that are still there: only under its run folder."""
    import pathlib

    root = tmp_path / "run"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (tmp_path / "outside").mkdir()
    os.symlink(str(tmp_path / "outside"), str(root / "link"))
    monkeypatch.chdir(root)
    monkeypatch.setattr(call_files, "_ROOT", [os.path.realpath(root)])
    monkeypatch.setattr(call_files, "_OPENED", [os.path.realpath(root / "b"),
                                                str(tmp_path / "gone")])
    sent = (None, (str(root / "a" / "model.ckpt"), str(tmp_path / "outside"),
                   str(root / "link" / "x"), pathlib.Path(root / "a"), 3, "text"),
            {"where": [str(root / "b")]})
    real = os.path.realpath
    assert call_files.call_folders(sent) == [real(root), real(root / "a"), real(root / "b")]
    assert call_files._OPENED == [real(root / "b")]


# -- the helper's messages -----------------------------------------------------------------


def test_the_helpers_messages_carry_any_path_and_refuse_anything_else():
    """The helper reads its requests without json (whose import, through re and enum,
    doubled its start): a length, then NUL-separated fields; a path with a newline or
    bytes that are not UTF-8 crosses as it is, and a message that miscounts is refused."""
    from curator.execution import mount_helper as helper

    odd = os.fsdecode(b"/run/a\nb/\xff")
    fields = ["mount", "2", odd, "1", "x\ny", "/run/c", "0"]
    message = helper.pack(fields)
    assert helper.unpack(message + b"7\nunmount") == (fields, b"7\nunmount")
    assert helper._request(fields) == ("mount", [odd, "/run/c"], [["x\ny"], []])
    for cut in (0, 1, 3, len(message) - 1):   # not all there yet
        assert helper.unpack(message[:cut]) == (None, message[:cut])
    assert helper.unpack(helper.pack([])) == ([], b"")
    assert helper._request(["unmount"]) == ("unmount",)
    for bad in (b"x\nmount", b"-1\n", b"123456789\n", b"999999999"):
        with pytest.raises(ValueError):
            helper.unpack(bad)
    for wrong in (["mount", "1", "/run/a"], ["mount", "1", "/run/a", "2", "k"],
                  ["mount", "0", "extra"], ["mount", "x"], ["other"], []):
        assert helper._request(wrong) is None


def test_the_helper_starts_without_json_or_re():
    """Its start is in every run's time (a trivial run's helper took about 20 ms)."""
    import subprocess

    path = os.path.join(os.path.dirname(call_files.__file__), "mount_helper.py")
    done = subprocess.run([sys.executable, "-S", "-I", "-B", "-X", "importtime", path,
                           "-1", "1", "/nonexistent", "/nonexistent", "/nonexistent"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr   # its parent is not pid 1: it ends at once
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "ctypes" in imported
    assert not imported & {"json", "re", "enum"}, sorted(imported & {"json", "re", "enum"})
