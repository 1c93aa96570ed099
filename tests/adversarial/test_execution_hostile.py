"""Hostile solutions: each ends as a recorded non-passing outcome with a visible reason,
leaves no process or file behind, and does not disturb the other runs.

Every case runs with bubblewrap (strong) and, where the protection does not depend on the
sandbox, again with isolation forced to weak.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid

import pytest
from execution_support import (
    ADD_TESTS,
    GOOD_SOLUTION,
    SECRET_VALUE,
    SECRET_VAR,
    engine_fixture,
    job,
    processes_matching,
    run_one,
)

from curator.execution import sandbox

engine = engine_fixture()


@pytest.fixture
def strong_engine(engine):
    if engine.isolation != "strong":
        pytest.skip("a protection of the bubblewrap sandbox only")
    return engine


def _nproc_enforced(engine) -> bool:
    # A pids cgroup per worker slot; else RLIMIT_NPROC, which never applies to root (runs
    # started by root drop to nobody).
    return engine.info().get("slot_cgroups") or os.geteuid() != 0 or \
        sandbox.run_uid() is not None


def test_syntax_error(engine):
    result = run_one(engine, "def add(a, b)\n    return a + b\n")
    assert result.outcome == "error"
    assert "SyntaxError" in result.reason or "invalid syntax" in result.reason


def test_import_error(engine):
    result = run_one(engine, "import no_such_module_xyz\n" + GOOD_SOLUTION)
    assert result.outcome == "error"
    assert "no_such_module_xyz" in result.reason


def test_infinite_loop_times_out(engine):
    result = run_one(engine, "def add(a, b):\n    while True:\n        pass\n", timeout=1.5)
    assert result.outcome == "timeout"
    assert "1.5" in result.reason and result.timeout_s == 1.5
    assert result.duration_s < 10


def test_huge_allocation_is_oom_not_machine_death(engine):
    result = run_one(engine, """\
        import torch

        def add(a, b):
            block = torch.empty(50 * 1024 ** 3, dtype=torch.uint8)
            block.fill_(1)
            return a + b
        """)
    assert result.outcome == "oom", result.reason
    assert "memory" in result.reason


def test_python_allocation_is_oom(engine):
    result = run_one(engine, """\
        def add(a, b):
            data = bytearray(50 * 1024 ** 3)
            return a + b
        """)
    assert result.outcome == "oom", result.reason


def test_fork_bomb_is_bounded(engine):
    if not _nproc_enforced(engine):
        pytest.skip("runs keep root here, so RLIMIT_NPROC cannot bound a fork bomb")
    tag = f"bomb{uuid.uuid4().hex[:8]}"
    result = run_one(engine, f"""\
        import os, sys
        bomb = "import os\\nwhile True:\\n    try:\\n        os.fork()\\n    except OSError:\\n        pass\\n"
        os.execv(sys.executable, [sys.executable, "-c", bomb, "{tag}"])

        def add(a, b):
            return a + b
        """, timeout=3, processes=32)
    assert result.outcome == "timeout"
    assert processes_matching(tag.encode()) == []
    assert run_one(engine, GOOD_SOLUTION).outcome == "passed"


def test_detached_children_do_not_survive(engine):
    tag = f"stray{uuid.uuid4().hex[:8]}"
    seconds = f"{1000 + int(uuid.uuid4().int % 1000)}.{os.getpid()}"
    result = run_one(engine, f"""\
        import os, sys

        def _detach(exec_sleep):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    if exec_sleep:
                        os.execv("/bin/sleep", ["sleep", "{seconds}"])
                    os.execv(sys.executable, [sys.executable, "-c",
                                              "import time\\nwhile True: time.sleep(1)",
                                              "{tag}"])
                os._exit(0)

        _detach(True)
        _detach(False)

        def add(a, b):
            return a + b
        """)
    assert result.outcome == "passed"  # the solution itself is right
    time.sleep(0.2)
    assert processes_matching(tag.encode()) == []
    assert processes_matching(f"sleep\0{seconds}".encode()) == []


@pytest.mark.parametrize("how", ["sys.exit(0)", "os._exit(0)"])
def test_exit_at_import_is_not_a_pass(engine, how):
    result = run_one(engine, f"import os, sys\n{how}\n" + GOOD_SOLUTION)
    assert result.outcome in ("error", "crashed"), result
    assert result.reason


def test_skip_at_import_is_not_a_pass(engine):
    result = run_one(engine, "import pytest\npytest.skip('nope', allow_module_level=True)\n"
                     + GOOD_SOLUTION)
    assert result.outcome != "passed"
    assert result.reason


def test_skip_and_xfail_inside_tests_are_not_a_pass(engine):
    skip = run_one(engine, "import pytest\ndef add(a, b):\n    pytest.skip('later')\n")
    xfail = run_one(engine, "import pytest\ndef add(a, b):\n    pytest.xfail('known')\n")
    # pytest's outcomes raised by the solution stay in the solution's process: the test
    # that called it fails, naming what was raised
    assert skip.outcome == "failed" and "skipped" in skip.reason.lower()
    assert xfail.outcome == "failed" and "xfailed" in xfail.reason.lower()


def test_printing_passed_is_not_a_pass(engine):
    result = run_one(engine, """\
        import os
        print("===================== 5 passed in 0.01s =====================", flush=True)
        os._exit(0)
        """)
    assert result.outcome == "crashed"
    assert "5 passed" in result.stdout


def test_wrong_answer_with_fake_summary_fails(engine):
    result = run_one(engine, "def add(a, b):\n    print('2 passed')\n    return 0\n")
    assert result.outcome == "failed"
    assert "test_small" in result.reason


def test_deleting_the_test_file_changes_nothing(engine):
    # The tests are held in memory; the file in the run folder is only a placeholder.
    wrong = run_one(engine, """\
        import os
        os.remove("test_solution.py")

        def add(a, b):
            return 0
        """)
    right = run_one(engine, """\
        import os

        def add(a, b):
            try:   # the judge's folder, which a run keeping the right to read sees
                os.remove("test_solution.py")
            except OSError:
                pass
            return a + b
        """)
    assert wrong.outcome == "failed" and "test_small" in wrong.reason
    assert right.outcome == "passed", right.reason


def test_parent_environment_is_not_visible(engine):
    result = run_one(engine, f"""\
        import os

        def add(a, b):
            leaked = os.environ.get("{SECRET_VAR}")
            assert leaked is None, leaked
            return a + b
        """)
    assert result.outcome == "passed", result.reason


def test_no_other_process_environment_is_readable(strong_engine):
    result = run_one(strong_engine, f"""\
        import os

        def add(a, b):
            for pid in os.listdir("/proc"):
                try:
                    with open(f"/proc/{{pid}}/environ", "rb") as fh:
                        assert b"{SECRET_VALUE}" not in fh.read()
                except OSError:
                    pass
            return a + b
        """)
    assert result.outcome == "passed", result.reason


def test_stdout_flood_is_capped(engine):
    result = run_one(engine, """\
        import sys

        def add(a, b):
            chunk = "x" * (1 << 20)
            for _ in range(200):
                sys.stdout.write(chunk)
            return a + b
        """, file_mb=16, output_kb=32)
    assert result.outcome != "passed"
    assert len(result.stdout) < 40 * 1024
    assert "bytes cut" in result.stdout


def test_socket_to_localhost_fails_in_sandbox(strong_engine):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    try:
        result = run_one(strong_engine, f"""\
            import socket

            def add(a, b):
                socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
                return a + b
            """)
        server.settimeout(0.2)
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()
    assert result.outcome == "failed"
    assert "Connection" in result.reason or "Errno" in result.reason


def test_writes_outside_the_run_folder_do_not_land(strong_engine, tmp_path):
    inside_tmp = tmp_path / "escaped.txt"
    var_tmp = f"/var/tmp/curator-escape-{uuid.uuid4().hex}"
    result = run_one(strong_engine, f"""\
        import os

        def _try(path):
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as fh:
                    fh.write("escaped")
            except OSError:
                pass

        _try("{inside_tmp}")
        _try("{var_tmp}")

        def add(a, b):
            return a + b
        """)
    assert result.outcome == "passed"
    assert not inside_tmp.exists()
    assert not os.path.exists(var_tmp)


def test_killing_its_worker_costs_only_that_run(engine):
    killer = job("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n" + GOOD_SOLUTION)
    good = [job(GOOD_SOLUTION) for _ in range(3)]
    results = {r.job_id: r for r in engine.run([killer, *good])}
    outcome = results[killer.job_id].outcome
    if sandbox.run_uid() is None:
        assert outcome == "crashed", results[killer.job_id]
    else:  # runs are nobody and cannot signal the worker at all
        assert outcome == "error" and "PermissionError" in results[killer.job_id].reason
    assert [results[j.job_id].outcome for j in good] == ["passed"] * 3


def test_worker_killed_from_outside_is_replaced(engine):
    slow = job("import time\ndef add(a, b):\n    time.sleep(30)\n    return a + b\n",
               timeout=60)

    done = threading.Event()

    def kill_workers():
        # Whichever worker has the job, a second after it took it, until the run ends: a
        # worker killed before it read the job (a loaded machine) hands it to a new one,
        # which is killed in turn; one that had read it makes the run crashed.
        while not done.is_set():
            if engine.pool.worker_pids(busy_only=True) and not done.wait(1.0):
                for pid in engine.pool.worker_pids(busy_only=True):
                    try:
                        os.kill(pid, 9)
                    except ProcessLookupError:
                        pass
            done.wait(0.5)

    killer = threading.Thread(target=kill_workers)
    killer.start()
    try:
        results = list(engine.run([slow]))
    finally:
        done.set()
        killer.join()
    assert results[0].outcome == "crashed"
    assert "worker" in results[0].reason
    assert run_one(engine, GOOD_SOLUTION).outcome == "passed"


def test_batch_with_hostile_runs_keeps_good_runs_passing(engine):
    jobs = [job(GOOD_SOLUTION), job("def add(a, b):\n    while True: pass\n", timeout=1),
            job(GOOD_SOLUTION), job("import os\nos._exit(3)\n"), job(GOOD_SOLUTION)]
    outcomes = {r.job_id: r.outcome for r in engine.run(jobs)}
    assert [outcomes[j.job_id] for j in jobs] == \
        ["passed", "timeout", "passed", "crashed", "passed"]


def test_limits_do_not_break_ordinary_tests(engine):
    result = run_one(engine, GOOD_SOLUTION, ADD_TESTS + """
def test_subprocess_and_tmp(tmp_path):
    import subprocess, sys
    (tmp_path / "f.txt").write_text("ok")
    out = subprocess.run([sys.executable, "-c", "print(40 + 2)"], capture_output=True, text=True)
    assert out.stdout.strip() == "42"
""")
    assert result.outcome == "passed", (result.reason, result.stdout[-2000:])


# -- forging a verdict ---------------------------------------------------------------------

TORCH_TESTS = """\
import math

import torch
from solution import add


def test_equal():
    assert torch.equal(add(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))


def test_close():
    torch.testing.assert_close(add(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))


def test_isclose():
    assert math.isclose(float(add(1.0, 2.0)), 3.0)


def test_eq():
    assert (add(torch.ones(2), torch.ones(2)) == 2).all()
"""
WRONG_ADD = "\ndef add(a, b):\n    return a * 0\n"


def _fails_honestly(result):
    # The trick ran in the solution's own process; the judge, in another process, saw
    # only the wrong answer.
    assert result.outcome == "failed", (result.outcome, result.reason, result.stderr[-2000:])
    assert "test_" in result.reason and not result.evidence


def test_patching_the_test_runner_changes_nothing(engine):
    result = run_one(engine, "import _pytest.python\n"
                     "_pytest.python.Function.runtest = lambda self: None\n" + WRONG_ADD)
    _fails_honestly(result)


def test_patching_pluggy_or_the_harness_changes_nothing(engine):
    pluggy = run_one(engine, "import pluggy\npluggy.HookCaller.__call__ = "
                     "lambda self, **kw: []\n" + WRONG_ADD)
    harness = run_one(engine, "import curator.execution.harness as h\n"
                      "h._final_outcome = lambda reports: ('passed', '')\n" + WRONG_ADD)
    _fails_honestly(pluggy)
    _fails_honestly(harness)


@pytest.mark.parametrize("poison", [
    "import torch\ntorch.equal = lambda a, b: True",
    "import torch\ntorch.testing.assert_close = lambda *a, **k: None",
    "import math\nmath.isclose = lambda *a, **k: True",
    "import torch\ntorch.Tensor.__eq__ = lambda self, other: torch.ones(2, dtype=torch.bool)",
    "import builtins\nbuiltins.float = lambda x: 3.0",
])
def test_poisoned_comparisons_change_nothing(engine, poison):
    result = run_one(engine, poison + "\n" + WRONG_ADD, TORCH_TESTS)
    _fails_honestly(result)


def test_gc_walk_to_the_reporter_forges_nothing(engine):
    # The attack from the issue: find the harness's reporter, report every test of the
    # test file as passed, report the end, and leave before any test runs.
    result = run_one(engine, """\
        import gc, os, re
        try:
            ids = re.findall(r"^def (test\\w+)", open("test_solution.py").read(), re.M)
            for obj in gc.get_objects():
                if type(obj).__name__ == "Reporter":
                    for name in ids:
                        obj.send("test", id="test_solution.py::" + name, outcome="passed",
                                 duration_s=0.0, message="")
                    obj.send("finish", exitstatus=0)
                    os._exit(0)
        except RuntimeError:
            pass

        def add(a, b):
            return 0
        """)
    _fails_honestly(result)   # no reporter, no tests in the solution's process


def test_solution_cannot_read_its_tests(engine):
    result = run_one(engine, """\
        import os, sys
        print("FILE", repr(open("test_solution.py").read()))
        print("MODULES", [m for m in sys.modules if "test_solution" in m])

        def add(a, b):
            print("AT CALL", repr(open("test_solution.py").read()))
            print("MODULES", [m for m in sys.modules if "test_solution" in m])
            return a + b
        """)
    assert result.outcome == "passed", result.reason
    assert "FILE ''" in result.stdout and "AT CALL ''" in result.stdout
    assert "add(1, 2) == 3" not in result.stdout
    assert "'test_solution'" not in result.stdout


ATTRIBUTE_WALK = '''
import sys, types, warnings
warnings.simplefilter("ignore")

def _walk():
    seen, found = set(), set()
    frontier = [sys.modules, sys.meta_path, sys.path_hooks, sys.path_importer_cache,
                [sys.excepthook, sys.unraisablehook, sys.displayhook]]
    try:
        import threading
        frontier.append(threading.excepthook)
    except Exception:
        pass
    for _ in range(7):
        following = []
        for obj in frontier:
            if id(obj) in seen or len(seen) > 400000:
                continue
            seen.add(id(obj))
            name = type(obj).__name__
            if name in ("Reporter", "Config", "Session", "PytestPluginManager", "Guard",
                        "Worker", "Function") and \
                    type(obj).__module__.startswith(("_pytest", "pytest", "curator", "_curator")):
                found.add(name)
            try:
                if isinstance(obj, dict):
                    following += list(obj.values())[:5000]
                elif isinstance(obj, (list, tuple, set, frozenset)):
                    following += list(obj)[:5000]
                else:
                    namespace = getattr(obj, "__dict__", None)
                    if isinstance(namespace, (dict, types.MappingProxyType)):
                        following += list(namespace.values())
                    for attr in ("__self__", "__closure__", "__wrapped__", "__func__",
                                 "__defaults__", "__kwdefaults__", "__globals__"):
                        try:
                            value = object.__getattribute__(obj, attr)
                        except Exception:
                            continue
                        if value is not None:
                            following.append(value)
                    if name == "cell":
                        following.append(obj.cell_contents)
            except Exception:
                pass
        frontier = [o for o in following
                    if not isinstance(o, (str, bytes, int, float, bool, type(None)))]
    return sorted(found)

print("AT IMPORT", _walk())

def add(a, b):
    print("AT CALL", _walk())
    return a + b
'''


def test_no_attribute_path_leads_to_the_harness(engine):
    result = run_one(engine, ATTRIBUTE_WALK, timeout=120)
    assert result.outcome == "passed", (result.reason, result.stderr[-2000:])
    assert "AT IMPORT []" in result.stdout, result.stdout[-3000:]
    assert "AT CALL []" in result.stdout, result.stdout[-3000:]


@pytest.mark.parametrize("attack, word", [
    ("import sys\nsys.settrace(lambda *a: None)", "sys.settrace"),
    ("import sys\nsys.setprofile(lambda *a: None)", "sys.setprofile"),
    ("import sys\nframe = sys._getframe(0)", "frame access"),
    ("import inspect\nframes = inspect.stack()", "frame access"),
    ("import traceback\nframes = list(traceback.walk_stack(None))", "frame access"),
    ("import sys\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n"
     "    caller = sys.exc_info()[2].tb_frame.f_back", "tb_frame"),
    ("import ctypes\nctypes.string_at(id(1), 8)", "ctypes"),
    ("import gc\ngc.get_referrers(print)", "gc.get_referrers"),
    ("f = open('/proc/self/mem', 'rb')", "/proc/self/mem"),
    ("import os\nos.symlink('/proc/self/mem', 'm')\nf = open('m', 'rb')", "/mem"),
    ("import threading, gc\nt = threading.Thread(target=gc.get_objects)\nt.start()\n"
     "t.join()", "gc.get_objects"),
    ("import pytest\nexec(compile('x = 1', pytest.__file__, 'exec'))", "compile()"),
    ("import pytest\ncode = (lambda: 0).__code__.replace(co_filename=pytest.__file__)",
     "code.__new__"),
    ("import sys\nsys.addaudithook(lambda *a: None)", "sys.addaudithook"),
])
def test_introspection_from_solution_code_reaches_nothing(engine, attack, word):
    # Frames, gc, tracers, ctypes and /proc/self/mem of the solution's own process hold
    # nothing of the judge: a correct solution still passes, a wrong one still fails.
    code = "try:\n" + "\n".join("    " + line for line in attack.splitlines()) + \
        "\nexcept Exception:\n    pass\n"
    assert run_one(engine, code + GOOD_SOLUTION).outcome == "passed", word
    _fails_honestly(run_one(engine, code + WRONG_ADD))


def test_ordinary_library_use_is_not_tampering(engine):
    result = run_one(engine, """\
        import collections, dataclasses, enum, logging, traceback, typing, warnings
        import torch

        Point = collections.namedtuple("Point", "x y")
        Color = enum.Enum("Color", "RED GREEN")
        T = typing.TypeVar("T")
        log = logging.getLogger("solution")

        @dataclasses.dataclass
        class Box:
            size: int = 1

        def _scripted(x: torch.Tensor) -> torch.Tensor:
            return x + 1

        def add(a, b):
            log.warning("adding %s and %s", a, b)
            warnings.warn("just a warning")
            try:
                raise ValueError("caught")
            except ValueError:
                text = traceback.format_exc()
            assert "caught" in text
            assert torch.jit.script(_scripted)(torch.zeros(1)).item() == 1
            return Point(a, b).x + Point(a, b).y + Box().size - 1
        """)
    assert result.outcome == "passed", (result.reason, result.evidence, result.stderr[-3000:])


def test_remaking_its_own_code_is_not_tampering(engine):
    # what torch.compile does to the code it compiles: new code objects and functions
    # that keep the solution's file name gain no trust, so they are allowed
    result = run_one(engine, """\
        import types

        def _double(x):
            return x * 2

        def add(a, b):
            code = _double.__code__.replace(co_name="_twice")
            twice = types.FunctionType(code, globals(), "_twice")
            return twice(a + b) // 2
        """)
    assert result.outcome == "passed", (result.reason, result.evidence, result.stderr[-3000:])
    compiled = run_one(engine, """\
        import torch

        def _scaled(x):
            return torch.sin(x) * 0 + x * 2

        def add(a, b):
            fn = torch.compile(_scaled, backend="eager", fullgraph=True)
            return int(fn(torch.tensor(a + b, dtype=torch.float64)).item()) // 2
        """)
    assert compiled.outcome == "passed", (compiled.reason, compiled.evidence,
                                          compiled.stderr[-3000:])
    library = run_one(engine, """\
        import types, pytest

        def add(a, b):
            types.FunctionType(pytest.main.__code__, {})   # a library's code, remade
            return a + b
        """)
    # harmless in the solution's own process
    assert library.outcome == "passed", (library.reason, library.stderr[-3000:])


def test_exit_from_inside_a_test_is_not_a_pass(engine):
    result = run_one(engine, "import pytest\ndef add(a, b):\n    pytest.exit('done', 0)\n")
    assert result.outcome != "passed", result


# -- the trusted side never trips over what a run left -------------------------------------

@pytest.mark.parametrize("replace", [
    "os.mkfifo('test_solution.py')",
    "os.symlink('/dev/zero', 'test_solution.py')",
    "os.symlink('/dev/zero', 'pytest.ini')",
    "os.mkfifo('solution.py')",
])
def test_files_replaced_by_the_run_do_not_hang_or_flood_the_worker(engine, replace):
    result = run_one(engine, f"""\
        import os
        os.remove("{replace.split("'")[-2]}")
        {replace}

        def add(a, b):
            return a + b
        """, timeout=10)
    assert result.duration_s < 8, result
    assert result.outcome in ("passed", "error"), (result.outcome, result.reason)
    assert run_one(engine, GOOD_SOLUTION).outcome == "passed"


def test_output_files_are_read_safely(tmp_path):
    from curator.execution.worker import read_capped

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    big = tmp_path / "big"
    big.write_bytes(b"x" * 100_000)
    started = time.monotonic()
    assert read_capped(fifo, 1000).startswith("[not a regular file")
    assert read_capped(link, 1000) == ""
    assert len(read_capped(big, 1000)) < 1100
    assert time.monotonic() - started < 1


# -- runs cannot reach each other ----------------------------------------------------------

def test_sysv_ipc_does_not_outlive_a_run(engine):
    if os.geteuid() != 0 and engine.isolation == "weak":
        pytest.skip("a fresh IPC namespace per run needs root or the sandbox")
    writer = job("""\
        import subprocess
        for kind in ("-M", "-S", "-Q"):
            args = [kind, "4096"] if kind == "-M" else [kind, "1"] if kind == "-S" else [kind]
            subprocess.run(["ipcmk", *args], check=True, capture_output=True)

        def add(a, b):
            return a + b
        """)
    reader = """\
        def add(a, b):
            for kind in ("shm", "sem", "msg"):
                with open("/proc/sysvipc/" + kind) as fh:
                    rows = fh.read().splitlines()[1:]
                assert rows == [], (kind, rows)
            return a + b
        """
    results = list(engine.run([writer, writer]))
    assert [r.outcome for r in results] == ["passed", "passed"], [r.reason for r in results]
    for _ in range(2):  # whichever worker takes it
        result = run_one(engine, reader)
        assert result.outcome == "passed", result.reason


def test_runs_started_by_root_reach_neither_roots_processes_nor_its_files(engine, tmp_path):
    # Weak isolation with an interpreter under /root (pyenv) kept runs at uid 0: a solution
    # could then read any process's descriptors (it stole from another worker's job pipe)
    # and write root's files. Runs now drop to nobody whatever the interpreter's place.
    if os.geteuid() != 0:
        pytest.skip("runs keep the caller's uid when it is not root")
    owned = tmp_path / "owned-by-root"
    owned.write_text("root's\n")
    owned.chmod(0o644)
    tmp_path.chmod(0o755)
    result = run_one(engine, f"""\
        import os

        def add(a, b):
            reached = []
            try:
                with open("/proc/{os.getpid()}/environ", "rb") as fh:
                    fh.read(1)
                reached.append("read the test process")
            except OSError:
                pass
            try:
                os.kill({os.getpid()}, 0)
                reached.append("signalled the test process")
            except OSError:
                pass
            try:
                with open({str(owned)!r}, "a") as fh:
                    fh.write("solution's")
                reached.append("wrote root's file")
            except OSError:
                pass
            print("REACHED", reached)
            return a + b
        """)
    assert result.outcome == "passed", result.reason
    assert "REACHED []" in result.stdout, result.stdout[-2000:]
    assert owned.read_text() == "root's\n"


def test_keyring_is_not_carried_over(engine):
    if os.geteuid() != 0 or sandbox.run_uid() is None:
        pytest.skip("runs keep the caller's uid here")
    # a name of this test's own: the other isolation level's run of this test may add its
    # key to the same uid's keyring at the same time (concurrent pytest workers)
    name = f"curator-leak-{engine.isolation}-{os.getpid()}".encode()
    add_key = ("import ctypes\n"
               "libc = ctypes.CDLL(None)\n"
               "libc.syscall.restype = ctypes.c_long\n"
               f"print(libc.syscall(248, b'user', {name!r}, b'secret', 6, -4))\n")
    writer = job(f"""\
        import subprocess, sys
        subprocess.run([sys.executable, "-c", {add_key!r}], check=True)

        def add(a, b):
            return a + b
        """)
    find_key = ("import ctypes\n"
                "libc = ctypes.CDLL(None)\n"
                "libc.syscall.restype = ctypes.c_long\n"
                f"print(libc.syscall(250, 10, -4, b'user', {name!r}, 0))\n")
    reader = f"""\
        import subprocess, sys

        def add(a, b):
            out = subprocess.run([sys.executable, "-c", {find_key!r}], capture_output=True,
                                 text=True, check=True).stdout.strip()
            assert out == "-1", "a key of an earlier run is still there: " + out
            return a + b
        """
    if os.uname().machine != "x86_64":
        pytest.skip("the syscall numbers in this test are x86_64's")
    assert [r.outcome for r in engine.run([writer, writer])] == ["passed", "passed"]
    for _ in range(2):
        result = run_one(engine, reader)
        assert result.outcome == "passed", result.reason


LEAKS = ("/tmp/.curator-src/leak", "/tmp/.hidden/leak", "/dev/shm/.hidden/leak",
         "/dev/shm/leak")


def test_tmp_and_dev_shm_are_wiped_completely(strong_engine):
    # The solution process writes its own folder only (its /dev/shm is a folder of it,
    # tests/adversarial/test_solution_writes.py): what a run leaves in the sandbox's /tmp
    # and /dev/shm is its judge's (the tests run there)
    writer = job(GOOD_SOLUTION, ADD_TESTS + f"""

def test_leave():
    import os
    for path in {LEAKS!r}:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write("x")
""")
    reader = job(GOOD_SOLUTION, ADD_TESTS + f"""

def test_nothing_left():
    import os
    assert [p for p in {LEAKS!r} if os.path.exists(p)] == []
""")
    assert [r.outcome for r in strong_engine.run([writer, writer])] == ["passed", "passed"]
    for _ in range(2):
        assert [r.outcome for r in strong_engine.run([reader])] == ["passed"]


# -- deny by default -------------------------------------------------------------------------

def test_a_run_sees_only_its_interpreter_and_run_folder(strong_engine):
    import curator

    checkout = os.path.dirname(os.path.dirname(os.path.abspath(curator.__file__)))
    hidden = [os.path.join(checkout, "tests"), os.path.join(checkout, "problems"),
              os.path.join(checkout, "db"), os.path.join(checkout, "curator", "cli"),
              os.path.join(checkout, "pyproject.toml"), "/var/lib", "/srv", "/var",
              "/etc/shadow", "/root/.bash_history", "/home", "/mnt", "/media", "/boot"]
    visible_needed = [os.path.join(checkout, "curator", "execution", "worker.py")]
    result = run_one(strong_engine, f"""\
        import os, sys

        def add(a, b):
            seen = [p for p in {hidden!r} if os.path.exists(p)]
            assert seen == [], seen
            assert all(os.path.exists(p) for p in {visible_needed!r})
            assert os.path.exists(sys.executable)
            return a + b
        """)
    assert result.outcome == "passed", (result.reason, result.stderr[-2000:])


def test_a_database_outside_the_workspace_is_not_visible(strong_engine):
    folder = f"/var/tmp/curator-db-{uuid.uuid4().hex}"
    os.makedirs(folder)
    try:
        with open(os.path.join(folder, "curator.sqlite"), "w") as fh:
            fh.write("secret references")
        result = run_one(strong_engine, f"""\
            import os

            def add(a, b):
                assert not os.path.exists({folder!r}), os.listdir({folder!r})
                return a + b
            """)
    finally:
        import shutil

        shutil.rmtree(folder)
    assert result.outcome == "passed", result.reason


def test_a_fork_flood_does_not_starve_the_run_on_the_other_worker(engine):
    if not engine.info().get("slot_cgroups"):
        if os.environ.get("CI") == "true":
            pytest.fail("no writable pids cgroup: runs share one process limit")
        pytest.skip("no writable pids cgroup here: runs share RLIMIT_NPROC")
    tag = f"flood{uuid.uuid4().hex[:8]}"
    flood = job(f"""\
        import os, sys
        code = "import os, time\\nwhile True:\\n    try:\\n        os.fork()\\n    except OSError:\\n        time.sleep(0.01)\\n"
        os.execv(sys.executable, [sys.executable, "-c", code, "{tag}"])
        """, timeout=6, processes=200)
    steady = job("""\
        import subprocess, sys, time

        def add(a, b):
            time.sleep(1.5)
            for _ in range(10):
                subprocess.run([sys.executable, "-c", "pass"], check=True)
            return a + b
        """, timeout=90, processes=16)
    results = {r.job_id: r for r in engine.run([flood, steady])}
    assert results[steady.job_id].outcome == "passed", results[steady.job_id].reason
    assert results[flood.job_id].outcome == "timeout"
    assert processes_matching(tag.encode()) == []


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_repo_backed_candidate_patching_pytest_does_not_pass(engine, tmp_path, warm):
    # The candidate's module is imported by the repository's conftest.py, before pytest
    # calls any plugin's pytest_configure. The module is the candidate's alone (the
    # repository has no such file), so the judge's is a proxy for the solution process,
    # where the patch changes only that process; the wrong answer fails. Without a warm
    # worker the same: a candidate never runs cold (in pytest's own process) but in a
    # worker started for its run alone.
    from curator.execution.engine import Engine

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "conftest.py").write_text("import pkg.mod  # noqa: F401\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_mod.py").write_text(
        "from pkg.mod import f\n\n\ndef test_f():\n    assert f() == 1\n")
    good = "def f():\n    return 1\n"
    bad = ("import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n"
           "def f():\n    return 0\n")

    def repo_job(text):
        from curator.execution.job import Job, Limits

        return Job(problem_id="r", solution=text, repo_dir=str(repo),
                   node_ids=["tests/test_mod.py"], overlay={"pkg/mod.py": text},
                   limits=Limits(timeout_s=120))

    with Engine(workers=1, isolation=engine.isolation, warm_repos=warm, eager=False) as runs:
        results = list(runs.run([repo_job(good)])) + list(runs.run([repo_job(bad)]))
    assert results[0].outcome == "passed", (results[0].reason, results[0].stderr[-2000:])
    assert results[1].outcome == "failed", (results[1].outcome, results[1].reason)
    assert results[0].env.get("boundary") and results[1].env.get("boundary")
    assert {r.env["repo_run"] for r in results} == {"warm" if warm else "fresh"}


COMPILING_TESTS = """\
import torch
from solution import add


def test_compiled_call_of_the_target():
    fn = torch.compile(add, backend="eager")
    assert int(fn(torch.tensor(2.0), torch.tensor(3.0)).item()) == 5


def test_compiled_caller_of_the_target():
    @torch.compile(backend="eager")
    def twice(a, b):
        return add(torch.sin(a) * 0 + a, b) * 2

    assert int(twice(torch.tensor(2.0), torch.tensor(3.0)).item()) == 10
"""


def test_tests_that_compile_the_target_judge_it(engine):
    """A test that hands the target to torch.compile (kornia's dynamo tests): the call
    across the boundary is a graph break, and the verdict is the candidate's."""
    right = run_one(engine, "def add(a, b):\n    return a + b\n", COMPILING_TESTS, timeout=60)
    assert right.outcome == "passed", (right.reason, right.stderr[-3000:])
    wrong = run_one(engine, "def add(a, b):\n    return a - b\n", COMPILING_TESTS, timeout=60)
    assert wrong.outcome == "failed", (wrong.reason, wrong.stderr[-3000:])
    assert {t["outcome"] for t in wrong.tests} == {"failed"}


SCRIPTING_TESTS = """\
import torch
from solution import add


def test_scripted_target():
    scripted = torch.jit.script(add)
    assert int(scripted(torch.tensor(2.0), torch.tensor(3.0)).item()) == 5


def test_traced_target():
    traced = torch.jit.trace(add, (torch.tensor(1.0), torch.tensor(1.0)))
    assert int(traced(torch.tensor(2.0), torch.tensor(3.0)).item()) == 5
"""


def test_tests_that_script_the_target_compile_the_candidate(engine):
    """kornia's `torch.jit.script(op)` tests: TorchScript cannot compile the judge's proxy,
    so the candidate is compiled in the solution process and called there; one that
    TorchScript rejects fails as it would upstream."""
    typed = "import torch\n\ndef add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:\n" \
            "    return a + b\n"
    right = run_one(engine, typed, SCRIPTING_TESTS, timeout=60)
    assert right.outcome == "passed", (right.reason, right.tests, right.stderr[-3000:])
    wrong = run_one(engine, typed.replace("a + b", "a - b"), SCRIPTING_TESTS, timeout=60)
    assert {t["outcome"] for t in wrong.tests} == {"failed"}, wrong.tests
    unscriptable = run_one(engine, typed.replace("return a + b", "return a + b if "
                                                 "isinstance(a, list) is False else {}[0]"),
                           SCRIPTING_TESTS, timeout=60)
    outcomes = {t["id"].split("::")[-1]: t["outcome"] for t in unscriptable.tests}
    assert outcomes["test_scripted_target"] == "failed", unscriptable.tests


def passes_and_plain_add(engine, source, tests):
    """`source` passes `tests`; the result of a plain `add` that does nothing else under
    the same tests (its control: what the tests see comes from the candidate)."""
    right = run_one(engine, source, tests)
    assert right.outcome == "passed", (right.reason, right.tests, right.stdout[-3000:])
    return run_one(engine, "def add(a, b):\n    return a + b\n", tests)


WARNING_TESTS = """\
import warnings

import pytest
from solution import add


def test_warns():
    with pytest.warns(UserWarning, match="negative"):
        assert add(-1, 1) == 0


def test_an_error_filter_applies():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            add(-1, 1)
"""


def test_warnings_the_candidate_issues_reach_the_tests(engine):
    """pytest.warns around a call: the candidate's warning, issued in the solution
    process, is issued again in the judge where the test's filters see it."""
    warns = ("import warnings\n\ndef add(a, b):\n    if a < 0:\n"
             "        warnings.warn('negative input', UserWarning)\n    return a + b\n")
    silent = passes_and_plain_add(engine, warns, WARNING_TESTS)
    assert {t["outcome"] for t in silent.tests} == {"failed"}, silent.tests


PRINT_TESTS = """\
from solution import add


def test_prints(capsys):
    assert add(1, 2) == 3
    out, err = capsys.readouterr()
    assert out == "adding 1 and 2\\n" and err == "careful\\n"
"""


def test_what_the_candidate_prints_reaches_capsys(engine):
    """cleanlab's verbose tests read what the function printed with capsys."""
    printing = ("import sys\n\ndef add(a, b):\n    print('adding', a, 'and', b)\n"
                "    print('careful', file=sys.stderr)\n    return a + b\n")
    quiet = passes_and_plain_add(engine, printing, PRINT_TESTS)
    assert quiet.outcome == "failed", (quiet.reason, quiet.tests)


RANDOM_TESTS = """\
import random

import numpy as np
import torch
from solution import noise


def test_seeded_draws_are_the_tests():
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    drawn = noise(3)
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    assert torch.equal(drawn[0], torch.rand(3))
    assert drawn[1] == np.random.rand() and drawn[2] == random.random()


def test_two_calls_in_a_row_differ():
    torch.manual_seed(0)
    assert not torch.equal(noise(3)[0], noise(3)[0])
"""


def test_random_draws_follow_the_tests_seed(engine):
    """A test seeds the global generators, then the function draws: it draws what it
    would have drawn in-process (kornia's and DL-Bench's seeded augmentation tests)."""
    source = ("import random\n\nimport numpy as np\nimport torch\n\n\ndef noise(n):\n"
              "    return torch.rand(n), np.random.rand(), random.random()\n")
    result = run_one(engine, source, RANDOM_TESTS)
    assert result.outcome == "passed", (result.reason, result.tests, result.stdout[-3000:])
    fixed = source.replace("torch.rand(n)", "torch.zeros(n) + 0.5")
    wrong = run_one(engine, fixed, RANDOM_TESTS)
    assert wrong.outcome == "failed", (wrong.reason, wrong.tests)


AMBIENT_TESTS = """\
import os

import torch
from solution import ambient


def test_what_the_test_set_around_the_call(monkeypatch, tmp_path):
    monkeypatch.setenv("CURATOR_TEST_SETTING", "on")
    monkeypatch.chdir(tmp_path)
    torch.set_default_dtype(torch.float64)
    try:
        dtype, setting, cwd = ambient()
    finally:
        torch.set_default_dtype(torch.float32)
    assert dtype == torch.float64 and setting == "on" and cwd == str(tmp_path)


def test_and_after_it_is_undone():
    dtype, setting, _cwd = ambient()
    assert dtype == torch.float32 and setting is None
"""


def test_the_tests_dtype_environment_and_folder_reach_the_call(engine):
    source = ("import os\n\nimport torch\n\n\ndef ambient():\n"
              "    return torch.zeros(1).dtype, os.environ.get('CURATOR_TEST_SETTING'), "
              "os.getcwd()\n")
    result = run_one(engine, source, AMBIENT_TESTS)
    assert result.outcome == "passed", (result.reason, result.tests, result.stdout[-3000:])


def test_a_warning_naming_a_file_never_makes_the_judge_read_it(engine):
    """The judge shows a forwarded warning without opening the file it names (linecache
    would read /dev/zero forever)."""
    source = ("import warnings\n\ndef add(a, b):\n"
              "    warnings.warn_explicit('look here', UserWarning, '/dev/zero', 1)\n"
              "    return a + b\n")
    result = run_one(engine, source, timeout=30)
    assert result.outcome == "passed", (result.reason, result.stdout[-2000:])
    assert "look here" in result.stdout


LOGGING_TESTS = """\
import logging

from solution import add


def test_caplog_sees_the_candidates_records(caplog):
    caplog.set_level(logging.INFO)
    assert add(1, 2) == 3
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("solution.adder", "INFO", "adding 1 and 2")]
"""


def test_log_records_of_the_candidate_reach_caplog(engine):
    logging_ = ("import logging\n\nlog = logging.getLogger('solution.adder')\n\n"
                "def add(a, b):\n    log.info('adding %s and %s', a, b)\n    return a + b\n")
    quiet = passes_and_plain_add(engine, logging_, LOGGING_TESTS)
    assert quiet.outcome == "failed", (quiet.reason, quiet.tests)


MODULE_ARGUMENT_TESTS = """\
import numpy as np
from solution import draw


def test_a_module_as_an_argument():
    np.random.seed(0)
    value = draw(np.random)
    np.random.seed(0)
    assert value == np.random.rand()
"""


def test_a_module_passed_as_an_argument_is_the_solutions_own(engine):
    """umap's tests pass `np.random` to the function: a module the solution process has
    crosses by name."""
    result = run_one(engine, "def draw(module):\n    return float(module.rand())\n",
                     MODULE_ARGUMENT_TESTS)
    assert result.outcome == "passed", (result.reason, result.tests, result.stdout[-3000:])


UFUNC_TESTS = """\
import numpy as np
from solution import pick


def test_a_ufunc_crosses():
    chosen = pick()
    assert chosen["op"] is np.sqrt and chosen["op"](np.float64(4.0)) == 2.0
"""


def test_a_numpy_ufunc_in_a_value_is_not_tampering(engine):
    """A value holding numpy's ufunc (umap's returned objects hold np.sqrt) crosses: it
    was refused as a forged name, making a reference `tampered`."""
    result = run_one(engine, "import numpy as np\n\ndef pick():\n    return {'op': np.sqrt}\n",
                     UFUNC_TESTS)
    assert result.outcome == "passed", (result.reason, result.evidence, result.tests)
