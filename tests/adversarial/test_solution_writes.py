"""The solution process writes its own run folder and nothing else (issue 22): not the
judge's run folder, the harness every judge imports, the temporary folder they share or
anything above it. Started by an ordinary user, judge and solution keep one uid inside
the sandbox, and a solution's call wrote `difflib.py` and `pprint.py` into the judge's run
folder and the folders above it; a mount namespace of the solution process's own, every
mount read-only but its folder (`sandbox.confine_writes`), refuses those writes whatever
the uids. As root (CI) the solution's uid already could not write the judge's folder, but
wrote /tmp: these tests fail on code without the confinement either way."""

from __future__ import annotations

import ctypes
import json
import os
import tempfile

import pytest
from execution_support import engine_fixture, run_one

from curator.execution import sandbox

engine = engine_fixture()

# What the solution process tries to write, by where: each attempt's outcome ("written",
# or the error's name), and whether the file is there afterwards.
ATTEMPTS = """
import os, tempfile

def attempt(path):
    try:
        with open(path, "w") as fh:
            fh.write("import sys\\nsys.exit(0)\\n")
        return "written"
    except OSError as exc:
        return type(exc).__name__

def writes():
    own = os.environ["HOME"]          # its run folder (also TMPDIR)
    base = os.path.dirname(own)       # the worker's temporary folder: /tmp in the sandbox
    targets = {
        "judge": os.path.join(base, "run", "difflib.py"),
        "harness": os.path.join(base, ".curator-harness", "pprint.py"),
        "tmp": os.path.join(base, "pprint.py"),
        # outside the worker's folder, under weak isolation the host's: a name nothing
        # imports, so a failure here plants nothing that runs
        "above": os.path.join(os.path.dirname(base), "curator-planted-difflib.py"),
        "root": "/curator-planted-difflib.py",
        "own": os.path.join(own, "mine.py"),
    }
    done = {name: attempt(path) for name, path in targets.items()}
    done["devnull"] = attempt(os.devnull)
    fd, name = tempfile.mkstemp()
    os.write(fd, b"x")
    os.close(fd)
    done["mkstemp"] = os.path.dirname(name) == own
    import multiprocessing
    lock = multiprocessing.Lock()     # a POSIX semaphore: /dev/shm
    with lock:
        done["shm"] = "written"
    return done
"""

PROBE = ATTEMPTS + """
def add(a, b):
    return a + b
"""

PROBE_TESTS = """
import os
from solution import add, writes

REFUSED = ("harness", "tmp", "above", "root")


def test_writes():
    done = writes()
    print("WRITES", done)
    assert {k: done[k] for k in REFUSED} == {k: done[k] for k in REFUSED if done[k] != "written"}
    # the judge's run folder is the call's working folder: what the call writes there
    # lands in a layer of its own (`sandbox.CallMounts`), and the judge never writes a
    # module of it (`call_files`)
    assert not os.path.exists(os.path.join(os.getcwd(), "difflib.py"))
    assert done["own"] == done["devnull"] == done["shm"] == "written"
    assert done["mkstemp"] is True


def test_add():
    assert add(1, 2) == 3
"""


def test_solution_writes_its_own_folder_only(engine):
    result = run_one(engine, PROBE, PROBE_TESTS)
    assert result.outcome == "passed", (result.reason, result.stdout[-2000:])


# A wrong solution that plants modules where the judge looks (its run folder, the harness
# folder, /tmp and above) at import and at each call: its verdict is its control's.
PLANTING = ATTEMPTS + """
writes()

def add(a, b):
    writes()
    return a - b
"""

CONTROL = """
def add(a, b):
    return a - b
"""

JUDGED = """
import difflib
import os
import pprint
from solution import add


def test_add():
    assert add(1, 2) == 3
    assert difflib.SequenceMatcher(None, "ab", "ab").ratio() == 1.0


def test_other():
    assert add(2, 2) == 4
    pprint.pformat({"a": 1})


def test_nothing_planted():
    here = os.getcwd()                 # the judge's run folder
    base = os.path.dirname(here)
    planted = [os.path.join(here, "difflib.py"), os.path.join(base, "pprint.py"),
               os.path.join(base, ".curator-harness", "pprint.py"),
               os.path.join(os.path.dirname(base), "curator-planted-difflib.py"),
               "/curator-planted-difflib.py"]
    assert [p for p in planted if os.path.exists(p)] == []
"""


def test_planted_modules_change_no_verdict(engine):
    control = run_one(engine, CONTROL, JUDGED)
    planted = run_one(engine, PLANTING, JUDGED)
    assert control.outcome == "failed"
    assert planted.outcome == control.outcome, planted.reason
    assert [t["outcome"] for t in planted.tests] == [t["outcome"] for t in control.tests]


# -- the ordinary user's mechanism, checked as root: a child that drops to nobody first ---


def _in_child_as(uid: int, body) -> dict:
    """Run `body()` in a forked child that dropped to `uid`; its JSON answer."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            answer = body()
            os.write(write_end, json.dumps(answer).encode())
        except BaseException as exc:   # noqa: BLE001 - the parent reports it
            os.write(write_end, json.dumps({"error": repr(exc)}).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    data = b""
    while chunk := os.read(read_end, 65536):
        data += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    return json.loads(data)


def _try_write(path: str) -> str:
    try:
        with open(path, "w") as fh:
            fh.write("x")
        return "written"
    except OSError as exc:
        return type(exc).__name__


def _no_mount_setattr(*args, **kwargs):
    raise OSError(38, "mount_setattr: Function not implemented")


@pytest.mark.skipif(os.geteuid() != 0, reason="drops to another uid: needs root")
@pytest.mark.parametrize("kernel", ["mount_setattr", "before 5.12"])
def test_confinement_of_an_ordinary_user(kernel):
    """Not root, the solution process unshares a user namespace too; whatever it does
    after, nothing but its own folder is writable: the judge's folder (same uid), /tmp,
    remounting, a namespace of its own. A kernel without mount_setattr (before 5.12)
    gets the same by remounting each mount read-only, keeping its locked flags."""
    top = tempfile.mkdtemp(prefix="confine-", dir="/tmp")
    own, judge = os.path.join(top, "srun"), os.path.join(top, "run")
    try:
        for folder in (top, own, judge):
            os.makedirs(folder, exist_ok=True)
            os.chown(folder, sandbox.NOBODY, sandbox.NOBODY)

        # a process of the same uid outside (the judge, the worker): its /proc/<pid>/root
        # leads into its mount namespace, where the judge's folder is writable
        hold_r, hold_w = os.pipe()
        ready_r, ready_w = os.pipe()
        sibling = os.fork()
        if sibling == 0:
            os.close(hold_w)
            os.setgroups([])
            os.setgid(sandbox.NOBODY)
            os.setuid(sandbox.NOBODY)
            ctypes.CDLL(None).prctl(sandbox.PR_SET_DUMPABLE, 1, 0, 0, 0)
            os.write(ready_w, b"r")
            os.read(hold_r, 1)
            os._exit(0)
        os.close(hold_r)
        os.close(ready_w)
        os.read(ready_r, 1)
        os.close(ready_r)
        through = f"/proc/{sibling}/root{judge}"

        def body():
            assert os.geteuid() == sandbox.NOBODY
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(sandbox.PR_SET_DUMPABLE, 1, 0, 0, 0)   # as a process it started
            before = _try_write(os.path.join(judge, "before.py"))
            before_proc = _try_write(os.path.join(through, "before.py"))
            if kernel != "mount_setattr":
                sandbox._mount_setattr = _no_mount_setattr   # this child's alone
            sandbox.confine_writes(own)
            done = {"before": before, "before_proc": before_proc, "uid": os.geteuid(),
                    "proc": _try_write(os.path.join(through, "difflib.py"))}
            for name, path in (("own", os.path.join(own, "mine.py")),
                               ("judge", os.path.join(judge, "difflib.py")),
                               ("top", os.path.join(top, "pprint.py")),
                               ("tmp", f"/tmp/confine-{os.getpid()}.py"),
                               ("devnull", os.devnull),
                               ("shm", f"/dev/shm/confine-{os.getpid()}")):
                done[name] = _try_write(path)
            done["shm_private"] = os.path.exists(os.path.join(own, ".shm",
                                                              f"confine-{os.getpid()}"))
            # writable again: as it is (no capability left), then in a namespace of its own
            attr = sandbox._MountAttr(0, sandbox.MOUNT_ATTR_RDONLY, 0, 0)
            undo = libc.syscall(sandbox.SYS_MOUNT_SETATTR, sandbox.AT_FDCWD, b"/tmp",
                                sandbox.AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr))
            done["undo"] = undo
            # a user and mount namespace of its own, every capability in it (its uid map
            # cannot be written: /proc is read-only too)
            assert libc.unshare(sandbox.CLONE_NEWUSER | sandbox.CLONE_NEWNS) == 0
            done["uid_map"] = _try_write("/proc/self/uid_map")
            undo = libc.syscall(sandbox.SYS_MOUNT_SETATTR, sandbox.AT_FDCWD, b"/tmp",
                                sandbox.AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr))
            remount = libc.mount(None, b"/tmp", None, sandbox.MS_BIND | sandbox.MS_REMOUNT,
                                 None)
            done["nested_undo"], done["nested_remount"] = undo, remount
            done["nested_judge"] = _try_write(os.path.join(judge, "difflib.py"))
            return done

        try:
            done = _in_child_as(sandbox.NOBODY, body)
        finally:
            os.close(hold_w)
            os.waitpid(sibling, 0)
    finally:
        import shutil

        shutil.rmtree(top, ignore_errors=True)
    assert "error" not in done, done
    assert done["before"] == "written"           # one uid: only the mounts stand between
    assert done["before_proc"] == "written"
    # the user namespace it is in keeps it out of every process outside (their /proc
    # entries, ptrace), whatever their uid and dumpability
    assert done["proc"] == "PermissionError"
    assert done["uid"] == sandbox.NOBODY         # the same uid inside its namespace
    assert done["own"] == done["devnull"] == done["shm"] == "written"
    assert done["shm_private"] is True
    for name in ("judge", "top", "tmp", "nested_judge"):
        assert done[name] == "OSError", (name, done)   # EROFS
    assert done["uid_map"] == "OSError"
    assert done["undo"] == done["nested_undo"] == done["nested_remount"] == -1
    assert not os.path.exists(os.path.join(judge, "difflib.py"))


@pytest.mark.skipif(os.geteuid() != 0, reason="drops to another uid: needs root")
def test_a_confinement_that_fails_half_way_keeps_no_capability():
    # the user namespace is made, then the kernel refuses a mount: the process goes on
    # as before (the caller runs it unconfined), with none of that namespace's powers
    own = tempfile.mkdtemp(prefix="confine-", dir="/tmp")
    try:
        os.chown(own, sandbox.NOBODY, sandbox.NOBODY)

        def refused(*args, **kwargs):
            raise OSError(1, "mount: Operation not permitted")

        def body():
            ctypes.CDLL(None).prctl(sandbox.PR_SET_DUMPABLE, 1, 0, 0, 0)
            sandbox._read_only_but = refused
            try:
                sandbox.confine_writes(own)
            except OSError as exc:
                failed = exc.errno
            else:
                failed = None
            with open("/proc/self/status") as fh:
                caps = {k: v.strip() for k, _, v in (line.partition(":") for line in fh)
                        if k in ("CapEff", "CapPrm")}
            libc = ctypes.CDLL(None, use_errno=True)
            remount = libc.mount(None, b"/", None, sandbox.MS_BIND | sandbox.MS_REMOUNT |
                                 sandbox.MS_RDONLY, None)
            return {"failed": failed, "caps": caps, "remount": remount}

        done = _in_child_as(sandbox.NOBODY, body)
    finally:
        import shutil

        shutil.rmtree(own, ignore_errors=True)
    assert done.get("failed") == 1, done
    assert set(done["caps"].values()) == {"0000000000000000"}, done
    assert done["remount"] == -1
