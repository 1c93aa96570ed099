"""The warm worker: a process (inside the sandbox when there is one) that has imported
torch and pytest once and forks a fresh child for every run.

Protocol with the engine, one JSON object per line: the worker writes {"ready": {...}}
once warm, then reads {"job": {...}} and answers {"result": {...}} for each job. It exits
when its input closes. Started as `python -m curator.execution.worker SETTINGS_JSON`.

Per run: the child leaves the worker's session, drops to an unprivileged uid when the
worker is root, gets a private run folder, a scrubbed environment, rlimits, stdout and
stderr redirected to size-limited files, and the result pipe as fd 3; then it runs
pytest from a configuration the worker parsed once (self-contained problems) or execs
`python -m pytest` (repo-backed ones).
The worker waits with a wall-clock deadline, kills every process the run left behind,
and decides the outcome from the harness events (curator.execution.verdict).
"""

from __future__ import annotations

import ast
import functools
import gc
import importlib
import json
import math
import os
import re
import secrets
import select
import shutil
import signal
import socket
import stat
import sys
import tempfile
import threading
import time
import traceback
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath

from curator.execution import boundary, proctree, sandbox, verdict, views
from curator.execution.call_files import read_at_most
from curator.execution.harness import ENV_VAR as HARNESS_ENV
from curator.execution.harness import (
    SHADOW_VAR,
    EndWhenReported,
    HiddenTests,
    Reporter,
    compiled_tests,
    install_shadow,
)
from curator.execution.harness import TRUSTED_VAR as TRUSTED_ENV
from curator.execution.job import Job, Limits, RunResult

RESULT_FD = 3
RUN_CACHE_PARENT = ".curator-cache"   # /tmp/.curator-cache (root's alone) holds the run cache
BUILD_GRACE_S = 180.0   # what a reference run's build left running gets to finish (`views`)
SETTLE_S = 3.0          # and anything else it left
BUILD_TOOLS = frozenset({"ninja", "make", "gmake", "cmake", "cc", "c++", "gcc", "g++", "cc1",
                         "cc1plus", "as", "ld", "ld.bfd", "ld.gold", "collect2", "clang",
                         "clang++", "nvcc"})
CHANNEL_FD = 4          # the judge's end of its one channel to the solution process
COLD_BASE_MB = 2048     # address space of a fresh interpreter importing torch
MAX_EVENT_BYTES = 8 << 20
SOLUTION_FILE = "solution.py"
PYTEST_ARGS = ["-q", "-s", "--color=no", "--tb=native", "--noconftest", "-p", "no:cacheprovider",
               "-p", "no:junitxml",
               "-p", "no:pastebin", "-p", "no:doctest", "-p", "no:stepwise",
               "-p", "no:setuponly", "-p", "no:setupplan", "-p", "no:faulthandler",
               "-p", "no:debugging", "-p", "no:legacypath", "-W", "ignore::DeprecationWarning",
               # Asserts of the hidden test module are rewritten by the harness; the
               # assertion plugin would leave paths from module globals to pytest's state.
               "-p", "no:assertion"]


@dataclass
class Settings:
    warm: bool = True
    preload: tuple[str, ...] = ()
    isolation: str = "weak"
    host_pid_ns: str | None = None
    uid: int | None = None
    read_grant: bool = False   # runs keep CAP_DAC_READ_SEARCH (sandbox.needs_read_grant)
    nproc_base: int = 0
    tmp_root: str = "/tmp"
    wipe_tmp: bool = False   # /dev/shm is ours too (strong isolation)
    slot_cgroup: bool = False  # the engine limits processes per slot (pids cgroup)
    # A warm worker of one repository environment: it runs in that environment's
    # interpreter, has imported its heavy third-party modules (preload), and runs each
    # repo-backed job with pytest.main in a forked child that imports the patched checkout.
    repo_mode: bool = False
    shared_checkout: bool = False   # the checkout is a read-only mount: no copy per run
    # the environment's run cache (`views`): judge/ and solution/, written by the worker
    run_cache: str | None = None
    left_out: tuple[str, ...] = ()  # preloads this worker started again without, and why
    disable_plugins: tuple[str, ...] = ()   # its jobs' (Job.disable_plugins): not imported
    # what a pytest session in this environment imported, as an earlier worker of the
    # same environment found it before any job (`_import_pytest_plugins`): not run again
    plugin_imports: tuple[str, ...] | None = None

    @classmethod
    def from_json(cls, text: str) -> Settings:
        data = json.loads(text)
        data["preload"] = tuple(data.get("preload") or ())
        data["left_out"] = tuple(data.get("left_out") or ())
        data["disable_plugins"] = tuple(data.get("disable_plugins") or ())
        if data.get("plugin_imports") is not None:
            data["plugin_imports"] = tuple(data["plugin_imports"])
        return cls(**data)


class PreloadPatched(Exception):
    """A preloaded module replaced parts of the standard library at import (gevent's
    monkey.patch_all, which locust runs when imported; eventlet's): the worker, its
    zygote and every run forked from them would fork, wait and talk through the
    patched versions (recommenders' solution processes died before pytest started).
    Nothing undoes that, so the worker starts again without it."""

    def __init__(self, name: str, changed: list[str]):
        super().__init__(f"{name}: replaces {', '.join(changed)} at import; not preloaded")
        self.name = name


def _stdlib_primitives() -> dict:
    """What a run's processes fork, wait, sleep and talk with."""
    import subprocess
    import threading

    return {"os.fork": os.fork, "os.waitpid": os.waitpid, "socket.socket": socket.socket,
            "socket.socketpair": socket.socketpair, "select.select": select.select,
            "time.sleep": time.sleep, "threading.Thread": threading.Thread,
            "signal.signal": signal.signal, "subprocess.Popen": subprocess.Popen}


class Worker:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.own_namespace = proctree.own_pid_namespace(settings.host_pid_ns)
        self.private = Path(settings.tmp_root) / f".curator-worker-{os.getpid()}"
        self.private.mkdir(mode=0o700, exist_ok=True)
        self._skeletons: dict[str, Path | None] = {}   # per checkout (`_skeleton`)
        self.harness_dir = Path(settings.tmp_root) / ".curator-harness"
        self.versions = {"python": sys.version.split()[0], "torch": None}
        self._config = None  # pytest's Config, parsed and configured once (warm workers)
        self._judge_state: tuple | None = None   # what configuring installed, for judges
        self._judge_fds: frozenset[int] = frozenset()   # descriptors it opened (/dev/null)
        self._zygote: Zygote | None = None  # forks solution processes; never sees a job
        self.plugin_imports: list[str] | None = None   # what its pytest session imported

    # -- start-up ---------------------------------------------------------------------

    def warm_up(self) -> list[str]:
        """Import what every run needs once, so forked children start warm."""
        problems = []
        self._install_harness()
        if self.settings.warm:
            try:
                import torch

                torch.set_num_threads(1)  # before any op: forking after threads can hang
                try:
                    torch.set_num_interop_threads(1)
                except RuntimeError:
                    pass
                # autograd across (the solution process's torch.autograd.grad and
                # backward) before any library is preloaded: one that binds the function
                # at import (curvlinops' `from torch.autograd import grad`) binds the
                # wrapper, which is torch's own function outside a solution process
                boundary.install_autograd_across()
                _exercise_torch(torch)
                self.versions["torch"] = torch.__version__
            except Exception as exc:  # a worker without torch still runs plain tests
                problems.append(f"torch: {exc}")
            import _pytest.config
            import pytest  # noqa: F401

            for name in _pytest.config.default_plugins:
                try:
                    importlib.import_module(f"_pytest.{name}")
                except ImportError:
                    pass
            problems += self.settings.left_out
            before = _stdlib_primitives()
            for name in self.settings.preload:
                try:
                    importlib.import_module(name)
                except Exception as exc:
                    problems.append(f"{name}: {exc}")
                changed = [k for k, v in _stdlib_primitives().items() if before[k] is not v]
                if changed:
                    raise PreloadPatched(name, changed)
        sandbox.become_subreaper()
        gc.collect()
        gc.freeze()  # children then do not copy pages just to touch GC headers
        # Forked before any job is read: no solution process ever holds a test, a
        # baseline or another run's job in its memory; and before pytest is configured,
        # so it holds no pytest configuration either (its plugins, options, hooks).
        self._zygote = Zygote(self)
        if self.settings.warm:
            # a repository's own ini decides its options: its judges configure pytest
            problems += self._import_pytest_plugins() if self.settings.repo_mode \
                else self._prepare_pytest()
            gc.collect()
            gc.freeze()
        return problems

    @property
    def rundir(self) -> Path:
        """Where a run's files go: one fixed path, so pytest's config can be parsed once."""
        return Path(self.settings.tmp_root) / "run"

    def pytest_args(self) -> list[str]:
        rundir = self.rundir
        return [*PYTEST_ARGS, "--rootdir", str(rundir), "-c", str(rundir / "pytest.ini"),
                "--confcutdir", str(rundir), verdict.TEST_FILE]

    def _prepare_pytest(self) -> list[str]:
        """Parse pytest's command line and configure its plugins once here; each judge
        starts from this Config.

        Parsing (plugin registration, option tables, ini) and every plugin's
        pytest_configure are most of pytest.main's fixed cost, and were paid again in every
        judge; what depends on the run (the session, collection, the reporter) happens in
        the judge. What configuring installs in the process (the unraisable-exception and
        thread-exception hooks, the warning filters) is taken back from the worker and
        handed to each judge (`_enter_judge_state`), and the descriptors it opens (the
        logging plugin's log file, /dev/null) stay open in the judge, not closed under a
        handler that would then write to whatever reuses the number.
        """
        from _pytest.config import _prepareconfig

        rundir = self.rundir
        rundir.mkdir(exist_ok=True)
        (rundir / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        here = os.getcwd()
        try:
            os.chdir(rundir)
            self._config = _prepareconfig(self.pytest_args(), plugins=[])
        except Exception as exc:  # fall back to pytest.main in every child
            self._config = None
            os.chdir(here)
            shutil.rmtree(rundir, ignore_errors=True)
            return [f"pytest: cannot pre-parse its configuration: {exc}"]
        before = (sys.unraisablehook, threading.excepthook, list(warnings.filters))
        holders = _hold_low_fds(CHANNEL_FD)   # what it opens must not be a judge's 0-4
        fds = _open_fds()
        try:
            self._config._do_configure()
            opened = _open_fds() - fds
            if any(_fd_target(fd) != os.devnull or fd <= CHANNEL_FD for fd in opened):
                raise RuntimeError("it opened descriptors a judge cannot keep: " + ", ".join(
                    f"{fd} {_fd_target(fd)}" for fd in sorted(opened)))
            self._judge_state = (sys.unraisablehook, threading.excepthook,
                                 list(warnings.filters))
            self._judge_fds = frozenset(opened)
            # configured once: the judge's pytest_cmdline_main must not configure again
            self._config._do_configure = _configured_already
            return []
        except Exception as exc:  # configure in every judge, as pytest.main does
            self._config = None
            return [f"pytest: cannot configure its plugins ahead of runs: {exc}"]
        finally:
            for fd in holders:
                os.close(fd)
            sys.unraisablehook, threading.excepthook = before[0], before[1]
            _set_warning_filters(before[2])
            os.chdir(here)
            shutil.rmtree(rundir, ignore_errors=True)

    def _import_pytest_plugins(self) -> list[str]:
        """In a warm worker of a repository's environment: the environment's pytest plugins
        (pytest11 entry points) and what they import late (hypothesis's terminal summary
        imports hypothesis) imported once, so each judge finds them imported instead of
        importing them in every run.

        pytest runs once, on an empty folder, in a child of the worker that only says which
        modules the session imported; the worker itself parses pytest's command line (which
        imports the plugins) and imports those modules, and never configures pytest. A
        session here ran every plugin's pytest_configure in the worker, and state a plugin
        keeps at module level reached every judge: pytest-retry adds FILTERED_EXCEPTIONS to
        its module's defaults there, and each judge's pytest_configure then asked for an
        option of that name (roboflow inference: all 11 runs crashed before pytest started).

        They are imported through pytest's assertion-rewriting hook, as in any pytest
        run: a judge's pytest then finds them loaded by that hook and does not warn that
        they were imported too early to be rewritten (a warning a repository's
        `filterwarnings = error` would turn into a run that cannot start). Nothing else
        reaches a judge: the repository's own ini, conftests and options are read
        by each judge's own pytest.main. Returns what went wrong, if anything (the runs
        then import the plugins themselves, as before).

        The session's list is the same for every worker of one environment (an empty
        folder, the same plugins): the engine hands a later worker of that environment
        the list the first one found (Settings.plugin_imports), and the session, about a
        second and a half of CPU, is not run again.
        """
        folder = Path(tempfile.mkdtemp(prefix="plugins-", dir=self.private))
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        saved = {k: os.environ.pop(k) for k in ("PYTEST_DISABLE_PLUGIN_AUTOLOAD",
                                                "PYTEST_ADDOPTS", "PYTEST_PLUGINS")
                 if k in os.environ}
        state = (sys.unraisablehook, threading.excepthook, list(warnings.filters),
                 list(sys.path), signal.getsignal(signal.SIGALRM))
        threads = self.threads()
        quiet = os.open(os.devnull, os.O_WRONLY)
        kept = [os.dup(1), os.dup(2)]
        here = os.getcwd()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(quiet, 1)
            os.dup2(quiet, 2)
            os.chdir(folder)
            args = ["-q", "-p", "no:cacheprovider", *disabled_plugins(
                self.settings.disable_plugins), "--rootdir", str(folder),
                    "-c", str(folder / "pytest.ini"), str(folder)]
            if self.settings.plugin_imports is not None:
                code, late = 0, list(self.settings.plugin_imports)
                self.versions["plugin_session"] = "given"
            else:
                code, late = _session_imports(args)
                self.versions["plugin_session"] = "ran"
            problem = [] if code in (0, 5) else \
                [f"pytest: importing its plugins ahead of runs ended with status {code}"]
            if not problem:
                from _pytest.config import _prepareconfig

                config = _prepareconfig(args, plugins=[])   # imports the plugins
                try:   # (inside its rewriting hook, as the session imported them)
                    for name in late:
                        if name not in sys.modules:
                            try:
                                importlib.import_module(name)
                            except BaseException:   # noqa: BLE001 - a judge imports it
                                pass
                finally:
                    config._ensure_unconfigure()   # never configured: its cleanups only
                self.plugin_imports = late
        except BaseException as exc:   # noqa: BLE001 - each judge imports them instead
            problem = [f"pytest: cannot import its plugins ahead of runs: {exc!r}"]
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(kept[0], 1)
            os.dup2(kept[1], 2)
            for fd in (quiet, *kept):
                os.close(fd)
            os.chdir(here)
            os.environ.update(saved)
            sys.unraisablehook, threading.excepthook = state[0], state[1]
            _set_warning_filters(state[2])
            sys.path[:] = state[3]
            signal.signal(signal.SIGALRM, state[4])
            shutil.rmtree(folder, ignore_errors=True)
        if self.threads() > threads:   # a plugin left a thread: forks from here may hang
            problem.append(f"pytest: its plugins left {self.threads() - threads} "
                           "thread(s) running in the worker")
        return problem

    def _enter_judge_state(self) -> None:
        """In the judge: the hooks and warning filters pytest's configuring installed."""
        if self._judge_state is not None:
            sys.unraisablehook, threading.excepthook, filters = self._judge_state
            _set_warning_filters(filters)

    @staticmethod
    def threads() -> int:
        return len(os.listdir("/proc/self/task"))

    def _install_harness(self) -> None:
        self.harness_dir.mkdir(mode=0o755, exist_ok=True)
        source = Path(__file__).with_name("harness.py").read_text(encoding="utf-8")
        target = self.harness_dir / "_curator_harness.py"
        target.write_text(source, encoding="utf-8")
        target.chmod(0o644)

    # -- one run ----------------------------------------------------------------------

    def run(self, job: Job, marker: str | None = None) -> RunResult:
        entered, cpu_entered = time.monotonic(), time.process_time()
        self.tidy()
        isolation = self.settings.isolation
        env = {"python": self.versions["python"], "torch": self.versions["torch"],
               "isolation": isolation}
        if job.repo_backed:
            env["repo_run"] = "warm" if self.settings.repo_mode else "cold"
        if not (job.solution or "").strip():
            return RunResult(job.job_id, job.problem_id, "no_code", reason="empty solution",
                             env=env, timeout_s=job.limits.timeout_s)
        if not job.repo_backed and not job.tests:
            return RunResult.infra(job, "the problem has no tests", env=env)
        crosses = not job.repo_backed or self.settings.repo_mode
        if not crosses and not job.reference:   # the engine never sends one (pool._run_cold)
            return RunResult.infra(job, "a cold repository run (pytest's own process) is "
                                   "for a reference only; any other text runs across the "
                                   "judge/solution boundary", env=env)
        if job.repo_backed and crosses:
            problem = overlay_problem(Path(job.repo_dir), job.overlay)
            if problem:
                return RunResult.infra(job, problem, env=env)
        token = secrets.token_hex(16)
        marker = marker or secrets.token_hex(8)
        rundir = self.rundir
        if not job.repo_backed:
            try:   # compiled here once per test file; the judge forked below reuses it
                compiled_tests(job.tests, rundir / verdict.TEST_FILE)
            except Exception:   # noqa: BLE001 - the judge meets the same error and says it
                pass
        out_paths = (self.private / "stdout", self.private / "stderr")
        out_fds = [os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
                   for p in out_paths]
        read_end, write_end = os.pipe()
        started = time.monotonic()
        marks = {"start": started}
        solution = None
        if crosses:
            try:
                solution = self._start_solution(job, marker)
            except (OSError, ValueError) as exc:
                for fd in (read_end, write_end, *out_fds):
                    os.close(fd)
                return RunResult.infra(job, f"the solution process cannot start: {exc}",
                                       env=env)
        marks["solution"] = time.monotonic()
        self._folders = self._skeleton(job)
        # The judge forks while the zygote forks the solution process (each copies a
        # warm process's page tables): it needs the channel's end, not the pid.
        pid = os.fork()
        if pid == 0:  # the run's own process; never returns
            try:
                os.close(read_end)
                if solution is not None:
                    os.dup2(solution["judge_end"].fileno(), CHANNEL_FD, inheritable=False)
                else:   # no channel: whatever the worker holds there is not the run's
                    try:
                        os.close(CHANNEL_FD)
                    except OSError:
                        pass
                self._child(job, token, marker, write_end, out_fds, rundir)
            except BaseException:   # a harness bug: its traceback in the run's stderr
                try:
                    traceback.print_exc()
                    sys.stderr.flush()
                except BaseException:
                    pass
            finally:
                os._exit(70)
        os.close(write_end)
        for fd in out_fds:
            os.close(fd)
        # The worker keeps its copy of the judge's end until the solution is stopped: the
        # judge exiting must not look like an early end of the solution (EOF, then exit 0).
        marks["fork"] = time.monotonic()
        if solution is not None:
            try:
                solution["pid"] = self._zygote.spawned()
            except OSError as exc:   # no solution process: the judge goes unheard
                self._zygote.end()   # and this worker goes after the run (needs_restart)
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                proctree.kill_tree(os.getpid(), in_own_namespace=self.own_namespace,
                                   spare={self._zygote.pid})
                os.close(read_end)
                solution["judge_end"].close()
                return RunResult.infra(job, f"the solution process cannot start: {exc}",
                                       env=env)
            marks["spawned"] = time.monotonic()
        # the solution process is killed once the judge says it is exiting (its last
        # event), its end awaited once the judge has exited: the two exits overlap
        data, status, timed_out, limit_s = self._wait(
            pid, read_end, job.limits, token,
            (lambda: self._kill_solution(solution)) if solution is not None else None)
        marks["exit"] = time.monotonic()
        duration = marks["exit"] - started
        os.close(read_end)
        solution_status = None
        if solution is not None:
            solution_status = self._stop_solution(solution)
            solution["judge_end"].close()
        marks["stopped"] = time.monotonic()
        # What a reference run's processes compiled goes to the environment's run cache
        # once its judge has ended by itself and nothing of the run is left running: a
        # build still going would leave half of itself. One that outlived the tests
        # (nncf loads its extension in a thread, the build runs in ninja, and the tests
        # gave up after nncf's own 60 s) gets BUILD_GRACE_S to finish first.
        keep = bool(job.reference and job.repo_backed and self.settings.run_cache
                    and not timed_out and status is not None and os.WIFEXITED(status)
                    and self._builds_finished())
        proctree.kill_tree(os.getpid(), in_own_namespace=self.own_namespace,
                           spare={self._zygote.pid} if self._zygote else None)
        marks["killed"] = time.monotonic()
        kept = self._harvest(rundir, "judge", self.settings.uid) if keep else 0
        limit = job.limits.output_kb * 1024
        stdout, stderr = (read_capped(p, limit) for p in out_paths)
        if solution is not None:
            s_out, s_err = (read_capped(p, limit) for p in solution["out_paths"])
            if s_out:
                stdout += ("\n" if stdout and not stdout.endswith("\n") else "") + \
                    "[solution process]\n" + s_out
            if s_err:
                stderr += ("\n" if stderr and not stderr.endswith("\n") else "") + \
                    "[solution process]\n" + s_err
            if keep:
                kept += self._harvest(self.solution_rundir, "solution", solution["uid"])
            views.close(self.solution_rundir)
            shutil.rmtree(self.solution_rundir, ignore_errors=True)
            env["boundary"] = "separate uid" if solution["uid"] is not None and \
                solution["uid"] != self.settings.uid else "same uid, judge not dumpable"
        self._dirty = rundir   # emptied once the result is out (tidy), before the next run
        if kept:
            env["run_cache_kept"] = kept   # bytes this run added to the run cache
        marks["cleaned"] = time.monotonic()
        events = verdict.Events.parse(data, token)
        if events.finish and events.finish.get("python"):
            env["python"] = events.finish["python"]
            env["torch"] = events.finish.get("torch") or env["torch"]
        expected = job.node_ids or verdict.expected_tests(job.tests or "")
        exit_code = os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) \
            else None
        exit_signal = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) \
            else None
        decided = verdict.decide(events, expected, exit_code=exit_code, exit_signal=exit_signal,
                                 timed_out=timed_out, timeout_s=limit_s,
                                 stderr_tail=stderr[-4000:], uncollected_ok=job.repo_backed)
        decided = verdict.against_baseline(decided, job.baseline, strict=not job.reference)
        if events.rebuilt:
            env["rebuilt"] = events.rebuilt[:20]
        if events.files_refused:   # a call's files the judge did not write (`call_files`)
            env["files_refused"] = events.files_refused[:20]
        if solution_status is not None and decided.outcome in ("failed", "error", "crashed") \
                and solution_status.get("ended_early"):
            # how it ended is the cause; the judge only saw it gone ("the solution
            # process ended", even before pytest started)
            decided = verdict.Verdict("crashed", "the solution process "
                                      + solution_status["how"] + " during the run; "
                                      + decided.reason, decided.tests, decided.evidence)
        if solution is not None and not self._zygote.alive():
            # The run killed what forks solution processes: this worker goes after this
            # result (a fresh one forks a fresh zygote before it reads any job).
            decided = verdict.Verdict("crashed", "the run killed or stopped its worker's solution "
                                      "zygote", decided.tests, decided.evidence)
        marks["cpu"] = {"judge_cpu": self._judge_cpu,
                        "solution_cpu": self._zygote.cpu if solution is not None else None,
                        "worker_cpu": time.process_time() - cpu_entered}
        env["timing"] = run_timing(marks, events, decided.tests, time.monotonic(), entered)
        return RunResult(job.job_id, job.problem_id, decided.outcome, tests=decided.tests,
                         duration_s=round(duration, 6), stdout=stdout, stderr=stderr,
                         reason=decided.reason, env=env, timeout_s=limit_s,
                         evidence=decided.evidence)

    def needs_restart(self) -> bool:
        """A worker whose zygote died must not fork another: it would hold jobs."""
        return self._zygote is not None and not self._zygote.alive()

    @property
    def solution_rundir(self) -> Path:
        return Path(self.settings.tmp_root) / "srun"

    def solution_uid(self) -> int | None:
        """The solution process's own uid: never the judge's when we can choose."""
        # Runs drop to `nobody` when we are root; the solution then takes the uid below
        # it. Started by an ordinary user, judge and solution keep that user's uid and
        # the judge relies on not being dumpable.
        if os.geteuid() != 0 or self.settings.uid is None:
            return None
        return self.settings.uid - 1

    def _start_solution(self, job: Job, marker: str) -> dict:
        if self._zygote is None or not self._zygote.alive():
            raise OSError("the solution zygote is gone")
        judge_end, solution_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_paths = (self.private / "solution-stdout", self.private / "solution-stderr")
        out_fds = [os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
                   for p in out_paths]
        source = os.memfd_create("solution", os.MFD_CLOEXEC)
        text = job.solution
        if job.repo_backed:   # what the solution process imports: the patched checkout
            text = json.dumps({"repo_dir": job.repo_dir, "overlay": job.overlay,
                               "symbol": job.symbol or job.entry_point or "",
                               "roots": repo_roots(Path(job.repo_dir), job)})
        try:
            _write_all(source, text.encode("utf-8", "surrogateescape"))
            uid = self.solution_uid()   # it writes through these descriptors only
            spec = {"uid": uid, "rundir": str(self.solution_rundir), "marker": marker,
                    "limits": job.limits.to_dict(), "repo": job.repo_backed,
                    "python": job.python, "judge_root": str(self.rundir)}
            self._zygote.spawn(spec, [solution_end.fileno(), *out_fds, source])
        except BaseException:
            judge_end.close()
            raise
        finally:
            solution_end.close()
            for fd in (*out_fds, source):
                os.close(fd)
        # its pid: `Zygote.spawned`, once the judge is forked
        return {"pid": None, "judge_end": judge_end, "out_paths": out_paths, "uid": uid}

    def _kill_solution(self, solution: dict) -> None:
        """Whether the solution process ended before the judge did (`ended_early`); then
        kill it (its end: `_stop_solution`)."""
        if "ended_early" in solution:
            return
        zygote = self._zygote
        status = zygote.poll(0) if zygote else None
        solution["ended_early"], solution["status"] = status is not None, status
        if status is None:
            try:
                os.kill(solution["pid"], signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _stop_solution(self, solution: dict) -> dict:
        """Whether the solution process ended before the judge did, and how it ended,
        once killed (`_kill_solution`) and its exit awaited."""
        self._kill_solution(solution)
        zygote = self._zygote
        status = solution["status"]
        if status is None:
            status = zygote.poll(10.0) if zygote else None
        early = solution["ended_early"]
        how = "ended"
        if status is not None:
            if os.WIFSIGNALED(status):
                how = f"was killed by {signal.Signals(os.WTERMSIG(status)).name}" \
                    if os.WTERMSIG(status) in signal.Signals._value2member_map_ \
                    else f"was killed by signal {os.WTERMSIG(status)}"
            elif os.WIFEXITED(status):
                how = f"exited with status {os.WEXITSTATUS(status)}"
        return {"ended_early": early, "how": how}

    def _wait(self, pid: int, read_end: int, limits: Limits, token: str, ending=None):
        """Collect harness events until the child exits or the deadline passes; the
        deadline moves when the harness's collection event, a line with this run's
        token, says how many tests run (`Limits.wall_limit`, never beyond its cap).
        `ending` is called once the judge says it is exiting (its event `ending`, this
        run's token): what it does overlaps the judge's exit.
        (data, status, timed out, the limit that applied)"""
        started = time.monotonic()
        limit_s = limits.wall_limit()
        deadline = started + limit_s
        pidfd = os.pidfd_open(pid)
        watched = [read_end, pidfd]
        data = bytearray()
        seen = {"at": 0, "done": 0, "total": None, "token": token.encode(), "collected": None}
        status, timed_out, usage = None, False, None
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    os.kill(pid, signal.SIGKILL)
                    _, status, usage = os.wait4(pid, 0)
                    break
                ready, _, _ = select.select(watched, [], [], left)
                if read_end in ready:
                    chunk = os.read(read_end, 65536)
                    if not chunk:
                        watched.remove(read_end)  # EOF: now only the exit matters
                    elif len(data) < MAX_EVENT_BYTES:
                        data += chunk
                        self._tell_progress(data, seen)
                        limit_s = limits.wall_limit(seen["collected"])
                        deadline = started + limit_s
                        if seen.get("ending") and ending is not None:
                            ending, call = None, ending
                            call()
                if pidfd in ready:
                    _, status, usage = os.wait4(pid, 0)
                    break
        finally:
            os.close(pidfd)
        data += _drain(read_end)
        self._judge_cpu = usage.ru_utime + usage.ru_stime if usage is not None else None
        return bytes(data[:MAX_EVENT_BYTES]), status, timed_out, limit_s

    _judge_cpu: float | None = None   # CPU seconds the last judge used

    tell = None   # main() sets it: each finished test, to the engine (display only)

    def _tell_progress(self, data: bytearray, seen: dict) -> None:
        end = data.rfind(b"\n") + 1
        for line in bytes(data[seen["at"]:end]).splitlines():
            prefix, _, body = line.partition(b" ")
            try:   # the code under test can write here too: this is display only
                event = json.loads(body)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            if event.get("event") == "collected":
                seen["total"] = len(event.get("ids") or [])
                if prefix == seen.get("token"):   # the harness's: the run's limit uses it
                    seen["collected"] = seen["total"]
            elif event.get("event") == "ending" and prefix == seen.get("token"):
                seen["ending"] = True
            elif event.get("event") == "test" and self.tell is not None and \
                    event.get("outcome") != "deselected":
                seen["done"] += 1
                self.tell({"test": event.get("id"), "done": seen["done"],
                           "total": seen["total"]})
        seen["at"] = end

    def _child(self, job: Job, token: str, marker: str, write_end: int, out_fds: list[int],
               rundir: Path) -> None:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_fds[0], 1)
        os.dup2(out_fds[1], 2)
        os.dup2(write_end, RESULT_FD, inheritable=job.repo_backed)
        cold = job.repo_backed and not self.settings.repo_mode   # no channel: it execs
        _close_from(RESULT_FD + 1 if cold else CHANNEL_FD + 1,
                    keep=set() if job.repo_backed else self._judge_fds)
        reporter = Reporter(RESULT_FD, token)
        try:
            env = self._enter_run(job, marker, rundir)
        except BaseException as exc:  # our fault, not the solution's: say so on the channel
            reporter.send("setup_error", message=f"{type(exc).__name__}: {exc}")
            os._exit(70)
        fresh_generators()
        if job.repo_backed and self.settings.repo_mode:
            env.pop(SHADOW_VAR, None)
            # the judge compiles too (pynndescent's NNDescent.__setstate__ builds its
            # search functions when umap's index crosses): its own caches, as the solution's
            _own_caches(env, rundir)
            enter_environment(env)
            checkout = Path(os.getcwd())
            # As `python -m pytest` run in the checkout: the checkout first on sys.path.
            # The judge imports the repository's own modules, never the patched one.
            roots = [str(checkout), *overlay_roots(checkout, job.overlay)]
            sys.path[:] = [*dict.fromkeys(roots),
                           *[p for p in sys.path if p not in ("", ".")]]
            sys.argv = ["pytest"]
            import pytest

            # The judge: pytest, the repository's code, its conftest and test
            # dependencies (trusted: what they patch is the baseline) and the reporter;
            # the target symbol is a proxy for the candidate in the solution process.
            sandbox.not_dumpable()
            link = boundary.JudgeLink(socket.socket(fileno=CHANNEL_FD), report=reporter.send)
            reporter.extra = lambda: {"boundary": link.timings()}
            boundary.configure_allowed(repo_roots(Path(job.repo_dir), job))
            module, targets, whole = repo_targets(checkout, job)
            boundary.configure_repository(module.split(".")[0], module,
                                          None if whole else defined_names(job.solution))
            # the repository's own modules' plain values a test changes reach the
            # solution process with each call (`boundary.ModuleValues`)
            boundary.ModuleValues([module.split(".")[0]]).start()
            installer = boundary.RepositoryTargets(link, module, targets,
                                                   report=reporter.send, whole=whole)
            installer.start()
            code = pytest.main(repo_pytest_args(job, os.getcwd()),
                               plugins=[reporter, installer, EndWhenReported(reporter.send)])
            _flush_and_exit(code)
        if job.repo_backed:
            shadow = json.loads(env.get(SHADOW_VAR, "{}"))
            env["PYTHONPATH"] = ":".join([str(self.harness_dir),
                                          *_import_roots(shadow, os.getcwd())[1:]])
            env[HARNESS_ENV] = f"{RESULT_FD}:{token}:{os.pathsep.join(_watched(job, shadow))}"
            if job.reference:
                env[TRUSTED_ENV] = "1"   # the repository's own code: no guard
            python = job.python or sys.executable
            args = [python, "-m", "pytest", "-p", "_curator_harness",
                    *repo_pytest_args(job, os.getcwd())]
            problem = sandbox.interpreter_problem(python)
            if problem:
                reporter.send("setup_error", message=f"the interpreter cannot start inside "
                              f"the sandbox: {problem}")
                os._exit(70)
            try:
                os.execve(python, args, env)
            except OSError as exc:
                reporter.send("setup_error", message=f"the interpreter cannot start inside "
                              f"the sandbox: exec {python}: {exc.strerror or exc}")
                os._exit(70)
        enter_environment(env)
        sys.path[:] = [p for p in sys.path if p not in ("", ".")]
        sys.argv = ["pytest"]
        # The judge: pytest, the hidden tests and the reporter. No solution code runs
        # here; `solution` is a proxy for the solution process at the other end.
        sandbox.not_dumpable()  # no other process of the run's uid may read our memory
        link = boundary.JudgeLink(socket.socket(fileno=CHANNEL_FD), report=reporter.send)
        reporter.extra = lambda: {"boundary": link.timings()}
        sys.modules["solution"] = boundary.SolutionModule(
            link, str(self.solution_rundir / SOLUTION_FILE))
        code = self._pytest(reporter, HiddenTests(job.tests or "", verdict.TEST_FILE))
        _flush_and_exit(code)

    _folders: Path | None = None     # the skeleton of this run's checkout (`views`)

    def _skeleton(self, job: Job) -> Path | None:
        """The checkout's folders as the run's uid's (`views.skeleton`), made once per
        checkout a worker serves (one, warm or cold)."""
        if not (job.repo_backed and self.settings.shared_checkout and
                can_mount(self.settings)):
            return None
        made = self._skeletons
        if job.repo_dir not in made:
            folder = self.private / f"skeleton-{len(made)}"
            made[job.repo_dir] = views.skeleton(Path(job.repo_dir), folder,
                                                self.settings.uid)
        return made[job.repo_dir]

    def _views(self, job: Job, rundir: Path) -> bool:
        """In the judge, still root: its run folder and private views (`views`) of the
        checkout and of the environment's run cache; whether the checkout has one."""
        if not can_mount(self.settings):
            return False
        uid = self.settings.uid
        layers = views.layers_of(rundir)
        try:
            os.mkdir(rundir, 0o700)
            os.chown(rundir, uid, uid)   # as if the run's uid made it
            os.mkdir(layers, 0o700)
        except OSError:   # a sandbox without CAP_CHOWN: the run as before, no views
            shutil.rmtree(layers, ignore_errors=True)
            shutil.rmtree(rundir, ignore_errors=True)
            return False
        if self.settings.run_cache:
            views.cache_view(Path(self.settings.run_cache) / "judge", rundir / ".cache",
                             layers, uid)
        return self._folders is not None and \
            views.repo_view(Path(job.repo_dir), self._folders, rundir / "repo", layers, uid)

    def _enter_run(self, job: Job, marker: str, rundir: Path) -> dict:
        """In the child: drop privileges, lay out the run folder, set limits; its env."""
        sandbox.die_with_parent()
        sandbox.no_new_privileges()
        if os.geteuid() == 0 or self.settings.isolation == "strong":
            sandbox.new_ipc_namespace()
        viewed = self._views(job, rundir) if job.repo_backed else False
        sandbox.drop_privileges(self.settings.uid, self.settings.read_grant)
        sandbox.fresh_keyrings()
        if not rundir.is_dir():
            os.mkdir(rundir, 0o700)
        limits = job.limits
        shadow = {}
        # The judge of a warm repository run never sees the candidate's module: it goes
        # to the solution process.
        overlay = {} if job.repo_backed and self.settings.repo_mode else job.overlay
        if job.repo_backed and self.settings.shared_checkout:
            # The checkout is mounted read-only for this sandbox alone. The run works in
            # a private writable view of it (`views.repo_view`: what its tests write stays
            # in the run), else a folder of links to its top-level entries (so files a
            # test or conftest creates at the top land there), and the patched module is
            # served from the run's private folder.
            workdir = rundir / "repo"
            if not viewed:
                link_tree(Path(job.repo_dir), workdir)
            shadow = write_shadow(rundir / "shadow", workdir, overlay)
        elif job.repo_backed:
            workdir = rundir / "repo"
            _copy_repo(Path(job.repo_dir), workdir, overlay)
        else:
            workdir = rundir
            (rundir / verdict.TEST_FILE).write_text("", encoding="utf-8")  # tests: in memory
            (rundir / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        # The solution process (another uid) follows the paths the tests hand the
        # candidate into this folder: the run folder traversed, never listed or written.
        # It is the judge's temporary folder (TMPDIR, `enter_environment`), where
        # pytest's tmp_path folders are (`boundary.install_readable_tmp`).
        os.chmod(rundir, 0o711)
        if job.repo_backed:
            # `Path(__file__).parent / "data"` (imagededup's test images, read by
            # load_image): the checkout's links readable, never written. The repository's
            # tests are no secret (the solution process links the same checkout); a
            # self-contained problem's tests are in memory, its file a placeholder.
            os.chmod(workdir, 0o755)
        os.chdir(workdir)
        env = sandbox.base_env(str(rundir), python=job.python, plugins_autoload=job.repo_backed)
        env[proctree.MARKER_VAR] = marker
        if shadow:
            env[SHADOW_VAR] = json.dumps(shadow)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        # as in any Python process: a write to a closed pipe or socket is BrokenPipeError
        # (the tests' own subprocesses, the boundary's socket), never death by the signal
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        if self.settings.slot_cgroup:
            _prefer_as_oom_victim()  # the slot's memory limit must hit the run, not us
        # a cold repository run execs a fresh interpreter; every other run is this process
        # forked, so its address space starts from ours
        cold = job.repo_backed and not self.settings.repo_mode
        base = COLD_BASE_MB << 20 if cold else sandbox.vm_size_bytes()
        sandbox.apply_rlimits(
            address_space=base + (limits.memory_mb << 20),
            cpu_s=max(1, math.ceil(limits.longest())) + 1,
            # With a pids cgroup per slot the per-uid RLIMIT_NPROC, shared by every run of
            # this uid on the host, is not needed and would let runs starve each other.
            processes=None if self.settings.slot_cgroup else
            self.settings.nproc_base + limits.processes,
            file_bytes=limits.file_mb << 20,
            open_files=limits.open_files)
        return env

    def _pytest(self, reporter: Reporter, tests: HiddenTests) -> int:
        config = self._config
        if config is None:
            import pytest

            return int(pytest.main(self.pytest_args(),
                                   plugins=[reporter, tests, EndWhenReported(reporter.send)]))
        self._enter_judge_state()
        config.pluginmanager.register(reporter, "curator-reporter")
        config.pluginmanager.register(tests, "curator-tests")
        config.pluginmanager.register(EndWhenReported(reporter.send), "curator-end")
        try:
            return int(config.hook.pytest_cmdline_main(config=config))
        finally:
            config._ensure_unconfigure()

    _dirty: Path | None = None

    def tidy(self) -> None:
        """Empty what the last run left: after its result is sent, so the engine records
        it meanwhile; run() tidies first if nobody did."""
        if self._dirty is not None:
            rundir, self._dirty = self._dirty, None
            self._clean(rundir)

    def _builds_finished(self) -> bool:
        """Whether nothing of the run is left running, once a build it left (a compiler,
        ninja, make) has had BUILD_GRACE_S to end, and anything else SETTLE_S (what ends
        with its parent: multiprocessing's resource tracker)."""
        spare = {self._zygote.pid} if self._zygote else None
        start = time.monotonic()
        while True:
            left = proctree.running_descendants(os.getpid(), spare)
            if not left:
                return True
            building = any(proctree.command_name(p) in BUILD_TOOLS for p in left)
            if time.monotonic() - start > (BUILD_GRACE_S if building else SETTLE_S):
                return False
            time.sleep(0.1)

    def _harvest(self, rundir: Path, kind: str, uid: int | None) -> int:
        try:
            return views.harvest(rundir, Path(self.settings.run_cache) / kind, uid)
        except OSError:
            return 0   # a cache is an optimisation: the next run compiles again

    def _clean(self, rundir: Path) -> None:
        """Empty this worker's temp folder (a private tmpfs, or a folder the engine made
        for it) so nothing a run leaves there reaches the next run."""
        views.close(rundir)
        shutil.rmtree(rundir, ignore_errors=True)
        folders = [Path(self.settings.tmp_root)]
        if self.settings.wipe_tmp:
            folders.append(Path("/dev/shm"))  # private only inside the sandbox
        # the run cache is a mount of the environment's folder: never emptied here
        ours = {self.private.name, self.harness_dir.name, RUN_CACHE_PARENT}
        if not self.settings.warm:
            ours.add(".curator-src")  # a one-shot worker's repository mount
        if self._mounts is None:
            self._mounts = mount_points()
        for folder in folders:
            for entry in folder.iterdir() if folder.is_dir() else ():
                if folder == Path(self.settings.tmp_root) and entry.name in ours:
                    continue
                remove_unmounted(entry, self._mounts)

    # What the sandbox mounted (an interpreter or checkout under /tmp is bound in at its
    # own path): read once, at the first tidy.
    _mounts: frozenset[str] | None = None


def mount_points(mountinfo: str = "/proc/self/mountinfo") -> frozenset[str]:
    """The mount points of this process's mount namespace (mountinfo's fifth field, its
    octal escapes undone)."""
    try:
        text = Path(mountinfo).read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return frozenset()
    found = set()
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) > 4:
            found.add(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4]))
    return frozenset(found)


def remove_unmounted(entry: Path, mounts: frozenset[str]) -> None:
    """Remove what a run left at `entry`, never going into a mount: an interpreter, a venv
    or a checkout that lives under /tmp on the host is bound into the sandbox's /tmp at
    its path, and emptying /tmp after each run walked it whole and failed on every file
    (0.47 s a run for a venv under /tmp, most of the time a seed run took). A folder that
    holds a mount is emptied around it."""
    path = os.path.normpath(str(entry))
    if path in mounts:
        return
    inside = path + os.sep
    if entry.is_dir() and not entry.is_symlink():
        if any(m.startswith(inside) for m in mounts):
            for child in entry.iterdir():
                remove_unmounted(child, mounts)
            return
        shutil.rmtree(entry, ignore_errors=True)
        return
    try:
        entry.unlink()
    except OSError:
        pass


class Zygote:
    """A warm process forked before the worker reads any job; it forks one solution
    process per run. Its memory holds no test, baseline or job of anyone: what the
    solution may read of its own process is the warm interpreter and its own code."""

    def __init__(self, worker: Worker):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                _zygote_loop(worker, theirs)
            finally:
                os._exit(0)
        theirs.close()
        self.pid = pid
        self.sock = ours
        self._statuses: list[int] = []
        self._gone = False

    def alive(self) -> bool:
        """Whether it still forks solution processes: not ended, and not stopped (a
        solution of the zygote's uid, an ordinary user's run, can SIGSTOP its parent:
        every later run of the worker then waited 30 s for a pid and was `infra`, and
        the worker, whose zygote was not dead, was never replaced). A stopped zygote is
        killed and counts as gone (a stop is reported once)."""
        if self._gone:
            return False
        try:
            done, status = os.waitpid(self.pid, os.WNOHANG | os.WUNTRACED)
        except ChildProcessError:
            self._gone = True
            return False
        if done and os.WIFSTOPPED(status):
            self.end()
        elif done:
            self._gone = True
        return not self._gone

    def end(self) -> None:
        """Kill it (it answers no more): the worker goes after this run."""
        self._gone = True
        try:
            os.kill(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def spawn(self, spec: dict, fds: list[int]) -> None:
        """Ask for a solution process (its pid: `spawned`)."""
        self._statuses.clear()
        self.cpu = None
        socket.send_fds(self.sock, [json.dumps(spec).encode("utf-8")], fds)

    def spawned(self) -> int:
        """The pid of the solution process `spawn` asked for."""
        reply = self._read(30.0)
        if not reply or "pid" not in reply:
            raise OSError("the solution zygote did not answer")
        return int(reply["pid"])

    def poll(self, timeout: float) -> int | None:
        """The exit status of the current solution process, if it ended by `timeout`
        (`cpu`: the CPU seconds it used, then)."""
        reply = self._read(timeout)
        if not reply or "status" not in reply:
            return None
        self.cpu = reply.get("cpu") if isinstance(reply.get("cpu"), float) else None
        return int(reply["status"])

    cpu: float | None = None

    def _read(self, timeout: float) -> dict | None:
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            return None
        try:
            data = self.sock.recv(65536)
        except OSError:
            return None
        return json.loads(data) if data else None


def _zygote_loop(worker: Worker, sock: socket.socket) -> None:
    sandbox.die_with_parent()
    keep = sock.fileno()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    for fd in range(3, 1 << 16):
        if fd not in (keep, 2):
            try:
                os.close(fd)
            except OSError:
                pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, 1 << 16, 8)
        except OSError:
            os._exit(0)
        if not message:
            os._exit(0)
        spec = json.loads(message)
        # The child waits until its pid has been sent: a solution that signals its parent
        # at import (the zygote, in weak isolation) can then only end its own run, never
        # the worker's spawn of it (a loaded machine ran the child first)
        gate_r, gate_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                sock.close()
                os.close(gate_w)
                os.read(gate_r, 1)
                os.close(gate_r)
                _solution_child(worker, spec, fds)
            finally:
                os._exit(70)
        os.close(gate_r)
        for fd in fds:
            os.close(fd)
        try:
            sock.send(json.dumps({"pid": pid}).encode())
        finally:
            os.write(gate_w, b"g")
            os.close(gate_w)
        _, status, usage = os.wait4(pid, 0)
        try:
            sock.send(json.dumps({"status": status, "cpu": round(
                usage.ru_utime + usage.ru_stime, 6)}).encode())
        except OSError:
            os._exit(0)


def _solution_child(worker: Worker, spec: dict, fds: list[int]) -> None:
    """The solution process: its own uid, folder, limits; imports and serves the candidate."""
    channel, out, err, source_fd = fds
    os.setsid()
    os.lseek(source_fd, 0, os.SEEK_SET)
    chunks = []
    while True:
        chunk = os.read(source_fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    source = b"".join(chunks).decode("utf-8", "surrogateescape")
    repo = json.loads(source) if spec.get("repo") else None
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.dup2(channel, 3)
    os.closerange(4, 1 << 16)
    for stream in (sys.stdout, sys.stderr):   # a solution killed later keeps what it printed
        try:
            stream.reconfigure(line_buffering=True, write_through=True)
        except (AttributeError, ValueError, OSError):
            pass
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)   # as in any Python process
    settings = worker.settings
    sandbox.die_with_parent()
    sandbox.no_new_privileges()
    if os.geteuid() == 0 or settings.isolation == "strong":
        sandbox.new_ipc_namespace()
    rundir = Path(spec["rundir"])
    uid = spec.get("uid")
    if repo is not None and settings.run_cache and can_mount(settings) and uid is not None:
        # its own view of the environment's run cache of solution processes
        try:
            os.mkdir(rundir, 0o700)
            os.chown(rundir, uid, uid)
            os.mkdir(views.layers_of(rundir), 0o700)
            views.cache_view(Path(settings.run_cache) / "solution", rundir / ".cache",
                             views.layers_of(rundir), uid)
        except OSError:
            shutil.rmtree(views.layers_of(rundir), ignore_errors=True)
            shutil.rmtree(rundir, ignore_errors=True)
    if not rundir.is_dir():
        os.mkdir(rundir, 0o700)
        if uid is not None and os.geteuid() == 0:
            os.chown(rundir, uid, uid)   # as if the run's uid made it
    if settings.slot_cgroup:
        _prefer_as_oom_victim()   # before /proc is read-only
    # Nothing but its own folder is writable from here on, as root (before dropping to
    # its uid) or as an ordinary user, whose judge has the same uid; what a call writes
    # where the judge could have goes to layers of its own (`sandbox.CallMounts`)
    # (where the process keeps the right to read every file, its namespace maps root
    # too, so that the right still reaches root's files: `start_mapping_root`)
    boundary.CALL_MOUNTS[:] = []   # without them its writes there are refused, as before
    mapping_root = settings.read_grant and uid is not None and os.geteuid() == 0
    _confine(rundir, settings, proc_view=True)
    if mapping_root:
        try:
            boundary.CALL_MOUNTS[:] = [sandbox.CallMounts.start_mapping_root(
                str(rundir), spec["judge_root"], uid)]
        except (OSError, KeyError):
            pass
    sandbox.drop_privileges(uid, settings.read_grant)
    sandbox.fresh_keyrings()
    if not settings.read_grant:
        try:
            boundary.CALL_MOUNTS[:] = [sandbox.CallMounts.start(str(rundir),
                                                                spec["judge_root"])]
        except (OSError, KeyError):
            pass
    path = rundir / SOLUTION_FILE
    served = None
    if repo is None:
        path.write_text(source, encoding="utf-8", errors="surrogateescape")
        (rundir / verdict.TEST_FILE).write_text("", encoding="utf-8")  # never the tests
        (rundir / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # as a run's folder
        os.chdir(rundir)
        roots = []
    else:
        # A folder of links to the checkout's entries, the patched module beside it.
        workdir = rundir / "repo"
        link_tree(Path(repo["repo_dir"]), workdir)
        shadow = write_shadow(rundir / "shadow", workdir, repo["overlay"])
        os.chdir(workdir)
        roots = _import_roots(shadow, str(workdir))
        served = served_module(workdir, repo)
        boundary.configure_allowed(repo.get("roots") or ())
    env = sandbox.base_env(str(rundir), python=spec.get("python") if repo else None)
    env[proctree.MARKER_VAR] = spec.get("marker") or ""
    _own_caches(env, rundir)
    enter_environment(env)
    boundary.SOLUTION_HOME[:] = [os.getcwd()]   # where it waits between calls
    sys.path[:] = [*roots, *[p for p in sys.path if p not in ("", ".")]]
    sys.argv = ["solution"]
    fresh_generators()   # what the candidate draws at import is its own, as in a fresh one
    if repo is not None:
        install_shadow(shadow)
    limits = Job.from_dict({"problem_id": "", "solution": "",
                            "limits": spec.get("limits") or {}}).limits
    sandbox.apply_rlimits(
        address_space=sandbox.vm_size_bytes() + (limits.memory_mb << 20),
        cpu_s=max(1, math.ceil(limits.longest())) + 1,
        processes=None if settings.slot_cgroup else settings.nproc_base + limits.processes,
        file_bytes=limits.file_mb << 20,
        open_files=limits.open_files)
    if served is not None:
        code = boundary.solution_repo_main(3, served[0], served[1])
    else:
        code = boundary.solution_main(3, str(path), source)
    _flush_and_exit(code)


def _confine(rundir: Path, settings: Settings, proc_view: bool = False) -> None:
    """The solution process writes its own run folder and nothing else
    (`sandbox.confine_writes`): not the judge's run folder, the harness the judge
    imports, /tmp or anything above. The views its judge mounts after it started
    (`views`, as root) still appear to it. Where the kernel refuses, the process runs
    as before (`trust.consent_needed` asks first, from `sandbox.confinement_works`)."""
    follow = settings.tmp_root if can_mount(settings) else None
    try:
        sandbox.confine_writes(str(rundir), follow, proc_view)
    except OSError:
        pass


def _set_warning_filters(filters: list) -> None:
    warnings.filters[:] = filters
    mutated = getattr(warnings, "_filters_mutated", None)   # the module's cache of them
    if mutated is not None:
        mutated()


def _configured_already() -> None:
    """Config._do_configure of a Config the worker configured before forking the judge."""


def _hold_low_fds(highest: int) -> list[int]:
    """Occupy the free descriptors up to `highest` (with /dev/null), so what is opened
    next gets a higher number; close them afterwards."""
    held = []
    while True:
        fd = os.open(os.devnull, os.O_RDONLY)
        if fd > highest:
            os.close(fd)
            return held
        held.append(fd)


def _open_fds() -> set[int]:
    fds = set()
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            os.fstat(fd)   # the listing's own descriptor is gone by now
        except OSError:
            continue
        fds.add(fd)
    return fds


def _fd_target(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "?"


def _close_from(low: int, keep=frozenset()) -> None:
    """Close every descriptor from `low` up, except those in `keep`."""
    start = low
    for fd in sorted(f for f in keep if f >= low):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, 1 << 16)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _flush_and_exit(code) -> None:
    """End a run's child with pytest's exit status, its output flushed (no atexit)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(int(code))


def run_timing(marks: dict, events: verdict.Events, tests: list[dict], now: float,
               entered: float | None = None) -> dict:
    """Where one run's time went, in seconds: getting ready (`prepare`: the hidden tests
    compiled, output files opened), starting the solution process (asking the zygote,
    and reading its pid once the judge is forked), forking the judge, the judge until
    collection ended (pytest start, the test module's imports, collection), the tests
    (their bodies, and the rest: the boundary's codec and waits within), the judge's end
    (teardown, exit), the cleanup (`cleanup_stop`: the solution process killed and its
    exit awaited; `cleanup_tree`: what is left of the run killed; `cleanup_files`: output
    read, the solution's folder removed), and deciding the verdict (parsing events,
    reading output); `worker` is all of it, from the job taken to the result made. The
    CPU seconds of the judge and the solution process (fork and exit included; the
    solution's call-file helper aside) and of the worker for the run: `*_cpu`."""
    finish = events.finish or {}
    collected = events.collected_at
    finished = finish.get("t") if isinstance(finish.get("t"), (int, float)) else None
    fork = marks.get("fork", marks["start"])
    exit_ = marks.get("exit", fork)
    # the solution process is asked for, the judge forked, then its pid read
    timing = {"solution_start": marks.get("solution", marks["start"]) - marks["start"] +
              (marks["spawned"] - fork if "spawned" in marks else 0.0),
              "judge_fork": fork - marks.get("solution", marks["start"]),
              "test_bodies": sum(float(t.get("duration_s") or 0.0) for t in tests),
              "cleanup": marks.get("cleaned", exit_) - exit_,
              "verdict": now - marks.get("cleaned", exit_)}
    if "stopped" in marks and "killed" in marks and "cleaned" in marks:
        # (the solution process is killed once the judge says it is ending: its exit
        # mostly overlaps the judge's)
        timing["cleanup_stop"] = marks["stopped"] - exit_   # killed, its exit awaited
        timing["cleanup_tree"] = marks["killed"] - marks["stopped"]   # what is left, killed
        timing["cleanup_files"] = marks["cleaned"] - marks["killed"]  # output read, folder
    for key, value in (marks.get("cpu") or {}).items():   # CPU seconds of each process
        if isinstance(value, float):
            timing[key] = value
    if entered is not None:
        timing["prepare"] = marks["start"] - entered
        timing["worker"] = now - entered
    # the judge's collection counts from its pid read (while it started, the worker
    # read the solution process's pid: `solution_start`)
    judged = marks.get("spawned", fork)
    if collected is not None and judged <= collected <= exit_:
        timing["collection"] = collected - judged
        if finished is not None and collected <= finished <= exit_:
            timing["tests"] = finished - collected
            timing["judge_exit"] = exit_ - finished
            ending = events.ending_at
            if ending is not None and finished <= ending <= exit_:
                # pytest after its report (session teardown, the summary), then the
                # process's exit (its address space, namespaces)
                timing["judge_teardown"] = ending - finished
    boundary_stats = finish.get("boundary")
    if isinstance(boundary_stats, dict):
        for key in ("codec_s", "wait_s", "ready_s", "walk_s", "rng_s"):
            if isinstance(boundary_stats.get(key), (int, float)):
                timing["boundary_" + key[:-2]] = float(boundary_stats[key])
        for key in ("calls", "kept"):   # calls; large tensors not sent again (kept)
            if isinstance(boundary_stats.get(key), int):
                timing["boundary_" + key] = boundary_stats[key]
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in timing.items()}


def can_mount(settings: Settings) -> bool:
    """Whether a run's process may make private views (`views`): in the strong sandbox,
    as root (a privileged bwrap leaves the worker CAP_SYS_ADMIN and CAP_CHOWN), dropping
    to a uid of its own."""
    return settings.isolation == "strong" and os.geteuid() == 0 and settings.uid is not None


def _own_caches(env: dict, rundir: Path) -> None:
    """A run process's caches (the solution's, a repository run's judge's) in its own
    folder: libraries that placed theirs in the worker's home at import (numba's, for umap
    and pynndescent) would share a folder the other process, under another uid, made
    first."""
    cache = rundir / ".cache"
    env["XDG_CACHE_HOME"] = str(cache)   # torch's C++ extensions, among others
    env["NUMBA_CACHE_DIR"] = str(cache / "numba")
    # inductor's compiled code (its default is the temporary folder, beside it)
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache / "torchinductor")
    numba = sys.modules.get("numba")
    config = getattr(numba, "config", None)
    if config is not None:
        try:
            config.CACHE_DIR = str(cache / "numba")
        except Exception:
            pass
    # Functions decorated before (at the worker's preload) keep the worker's cache folder,
    # which the judge may own: compiling works, saving is skipped.
    caching = sys.modules.get("numba.core.caching")
    cache_class = getattr(caching, "Cache", None)
    save = getattr(cache_class, "save_overload", None)
    if save is not None and not getattr(save, "__curator_tolerant__", False):
        def save_overload(self, sig, data):
            try:
                save(self, sig, data)
            except OSError:
                pass

        save_overload.__curator_tolerant__ = True
        cache_class.save_overload = save_overload


def _prefer_as_oom_victim() -> None:
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")
    except OSError:
        pass


def enter_environment(env: dict) -> None:
    """A forked judge or solution process takes the run's environment as its own, and
    with it its own temporary folder: the worker's `tempfile.tempdir`, cached before the
    fork, was the sandbox's shared /tmp, where the solution process (another uid) can make
    any name first. The judge's torch.compile then kept its inductor cache in
    /tmp/torchinductor_nobody, a folder the solution had made and filled, and imported
    the compiled module the solution planted there (a wrong answer passed:
    tests/adversarial/test_boundary_redteam.py). TMPDIR is each process's own run folder,
    which no other uid can write."""
    os.environ.clear()
    os.environ.update(env)
    time.tzset()
    tempfile.tempdir = None   # asked again of TMPDIR on first use


def fresh_generators() -> None:
    """The global random generators of an interpreter the worker forked, seeded again as a
    fresh one seeds them (from the system's entropy): numpy's global generator and torch's
    default one, when imported. A fork copies the worker's: once a preloaded library had
    used one at import (gym, preloaded for pfrl, uses numpy's, which numpy 2 seeds on
    first use; torch seeds its own at import), every run of the worker drew the same
    numbers, and an unseeded test's outcome was the worker's. A repository that seeds
    them at import still does so in each run (the run imports its package). `random`
    reseeds itself in a forked child."""
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        try:
            numpy_random.seed()
        except Exception:   # noqa: BLE001 - a numpy without its legacy global generator
            pass
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            torch.default_generator.seed()
        except Exception:   # noqa: BLE001 - a torch stub or one without a CPU generator
            pass


def _exercise_torch(torch) -> None:
    """Run the lazy first-use imports (autograd, optimizers, torch._dynamo: the judge's
    calls across the boundary are graph breaks) once here."""
    import torch._dynamo  # noqa: F401
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    for optimizer in (torch.optim.SGD(model.parameters(), lr=0.1),
                      torch.optim.Adam(model.parameters(), lr=0.1)):
        loss = torch.nn.functional.mse_loss(model(torch.ones(2, 4)), torch.zeros(2, 1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def _drain(fd: int) -> bytes:
    os.set_blocking(fd, False)
    data = bytearray()
    while len(data) < MAX_EVENT_BYTES:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _session_imports(args: list[str]) -> tuple[int, list[str]]:
    """pytest.main(ARGS) in a child of this process: its exit status and the modules the
    session imported, in order (what it configured stays in the child)."""
    read_end, write_end = os.pipe()
    before = set(sys.modules)
    pid = os.fork()
    if pid == 0:   # the child: never returns into the worker
        status = 70
        try:
            os.close(read_end)
            import pytest

            code = int(pytest.main(args))
            names = [n for n in sys.modules if n not in before]
            data = json.dumps({"code": code, "late": names}).encode()
            while data:
                data = data[os.write(write_end, data):]
            status = 0
        except BaseException:   # noqa: BLE001 - the parent reads no answer
            pass
        finally:
            os._exit(status)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    try:
        answer = json.loads(b"".join(chunks))
        return int(answer["code"]), [str(n) for n in answer["late"]]
    except (ValueError, KeyError, TypeError):
        return 70, []


def disabled_plugins(names) -> list[str]:
    """pytest's arguments that disable the plugins named (pytest11 entry point names)."""
    return [arg for name in names or () for arg in ("-p", f"no:{name}")]


def repo_pytest_args(job: Job, rootdir: str) -> list[str]:
    """pytest's arguments for a repo-backed run, the same warm and cold."""
    return ["-q", "--color=no", "--tb=native", "-p", "no:cacheprovider", "--rootdir", rootdir,
            *disabled_plugins(job.disable_plugins), *(job.node_ids or []),
            *[arg for node in job.deselect for arg in ("--deselect", node)]]


def module_name(checkout: Path, relpath: str) -> tuple[str, str, str | None] | None:
    """(module name, import root, package folder or None) of a file in a checkout: the
    module is named from the first folder up that is not a package."""
    parts = PurePosixPath(relpath).parts
    if not parts or not parts[-1].endswith(".py"):
        return None
    folders = list(parts[:-1])
    names = [parts[-1][:-3]]
    package_dir = None
    if names[0] == "__init__":
        names = []
        package_dir = str(checkout.joinpath(*folders))
    while folders and (checkout.joinpath(*folders) / "__init__.py").is_file():
        names.insert(0, folders.pop())
    if not names or not all(n.isidentifier() for n in names):
        return None
    return ".".join(names), str(checkout.joinpath(*folders)), package_dir


def overlay_problem(checkout: Path, overlay: dict[str, str]) -> str | None:
    """Why an overlay cannot be laid over the checkout (None: it can)."""
    for relpath in overlay or {}:
        parts = PurePosixPath(relpath).parts
        if not parts or PurePosixPath(relpath).is_absolute() or ".." in parts:
            return f"overlay path {relpath!r} escapes the repository"
        if module_name(checkout, relpath) is None:
            return f"overlay path {relpath!r} is not an importable module"
    return None


def overlay_roots(checkout: Path, overlay: dict[str, str]) -> list[str]:
    """Import roots of the overlay's modules outside the checkout's top (src layouts)."""
    roots = []
    for relpath in overlay or {}:
        found = module_name(checkout, relpath)
        if found and found[1] != str(checkout) and found[1] not in roots:
            roots.append(found[1])
    return roots


MODULE_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _top_level(text: str) -> dict[str, ast.AST]:
    """Top-level names of a module's source and the statements binding them."""
    found: dict[str, ast.AST] = {}
    for stmt in ast.parse(text).body:
        if isinstance(stmt, MODULE_DEFS):
            found[stmt.name] = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = stmt
    return found


def changed_symbols(original: str, patched: str) -> tuple[list[str], set[str]]:
    """(the definitions of the original module that the patched one changes, as
    qualnames; the top-level names only the patched one has)."""
    try:
        before, after = _top_level(original), _top_level(patched)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], set()
    changed: list[str] = []
    for name, stmt in after.items():
        old = before.get(name)
        if old is None or not isinstance(stmt, MODULE_DEFS) or \
                ast.dump(old) == ast.dump(stmt):
            continue
        if isinstance(stmt, ast.ClassDef) and isinstance(old, ast.ClassDef):
            # a class whose methods changed: those methods; anything else: the class
            olds = {s.name: s for s in old.body if isinstance(s, MODULE_DEFS)}
            news = {s.name: s for s in stmt.body if isinstance(s, MODULE_DEFS)}
            rest_old = [ast.dump(s) for s in old.body if not isinstance(s, MODULE_DEFS)]
            rest_new = [ast.dump(s) for s in stmt.body if not isinstance(s, MODULE_DEFS)]
            methods = [f"{name}.{m}" for m, d in news.items()
                       if m in olds and ast.dump(olds[m]) != ast.dump(d)]
            same_frame = rest_old == rest_new and set(olds) <= set(news) and \
                [ast.dump(b) for b in old.bases] == [ast.dump(b) for b in stmt.bases]
            changed += methods if same_frame else [name]
        else:
            changed.append(name)
    return changed, set(after) - set(before)


def defined_names(text: str) -> frozenset[str] | None:
    """Every name a candidate text may bind in its module, over-counted (each def and
    class, each name stored or deleted, imported or declared global, at any depth; None
    when it does not parse): the judge never takes its own function of such a name of
    the target's module for the solution's (`boundary._repository_function`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, MODULE_DEFS):
            names.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return frozenset(names)


def _target_file(job: Job) -> str | None:
    return next(iter(job.overlay), None) if job.overlay else None


def repo_targets(checkout: Path, job: Job) -> tuple[str | None, list[str], str | None]:
    """(the patched module's name, the qualnames the judge serves from the solution
    process: the problem's symbol and every definition the candidate changed; the file
    of a module only the candidate has, served whole)."""
    relpath = _target_file(job)
    found = module_name(checkout, relpath) if relpath else None
    if found is None:
        return None, [], None
    if not (checkout / relpath).is_file():
        return found[0], [], str(checkout / relpath)
    symbol = job.symbol or job.entry_point or ""
    try:
        original = (checkout / relpath).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        original = ""
    changed, _ = changed_symbols(original, job.overlay[relpath])
    return found[0], [*([symbol] if symbol else []), *changed], None


def served_module(checkout: Path, repo: dict) -> tuple[str, list[str]] | None:
    """In the solution process: (the patched module, the names in it that are the
    candidate's own: its target, what it changed, what it added)."""
    overlay = repo.get("overlay") or {}
    relpath = next(iter(overlay), None)
    found = module_name(checkout, relpath) if relpath else None
    if found is None:
        return None
    try:
        original = (checkout / relpath).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        original = ""
    changed, added = changed_symbols(original, overlay[relpath])
    symbol = repo.get("symbol") or ""
    names = set(added) | {q for q in changed if "." not in q}
    if symbol and "." not in symbol:
        names.add(symbol)
    return found[0], sorted(names)


# Never classes the judge rebuilds from a message, whatever a repository preloads.
NEVER_ALLOWED = {"pytest", "_pytest", "pluggy", "unittest", "builtins", "os", "sys",
                 "subprocess", "importlib", "pickle", "marshal", "ctypes", "io", "shutil",
                 "socket", "signal", "types", "gc", "inspect", "runpy", "code", "codeop",
                 "multiprocessing", "threading", "_curator_harness", "curator"}


def repo_roots(checkout: Path, job: Job) -> list[str]:
    """Top-level packages whose classes the judge rebuilds in a repository run: the
    repository's own (the patched module's), the libraries its environment preloads and
    the third-party packages its test files import."""
    return list(_repo_roots(str(checkout), _target_file(job), tuple(job.node_ids or ()),
                            tuple(job.env_preload or ())))


@functools.lru_cache(maxsize=256)
def _repo_roots(checkout: str, relpath: str | None, node_ids: tuple[str, ...],
                preload: tuple[str, ...]) -> tuple[str, ...]:
    # A checkout is one commit, read-only: worked out once per problem in the worker,
    # before the judge is forked (the judge asks again and finds it here).
    roots = []
    found = module_name(Path(checkout), relpath) if relpath else None
    if found:
        roots.append(found[0].split(".")[0])
    for name in [*preload, *test_libraries(Path(checkout), node_ids),
                 *module_libraries(Path(checkout), relpath)]:
        top = str(name).split(".")[0]
        if top and top not in roots:
            roots.append(top)
    roots = [r for r in roots if r not in NEVER_ALLOWED]
    for top in required_packages(roots, (checkout, *sys.path)):
        if top not in roots:
            roots.append(top)
    return tuple(roots)


def required_packages(roots, search) -> list[str]:
    """The top-level packages of the installed distributions that those of `roots`
    require, transitively (their runtime requirements, not extras): a library's objects
    are made of its dependencies' classes (a GPy kernel holds paramz's
    ParameterIndexOperations). Never through torch's or numpy's own requirements
    (boundary.BASE_ROOTS: everything a library needs of them is theirs) nor a
    distribution of a package never allowed (pytest's)."""
    installed = _installed_distributions(tuple(str(p) for p in search))
    closed = set(boundary.BASE_ROOTS) | NEVER_ALLOWED
    queue = [dist for dist, (tops, _) in installed.items()
             if set(tops) & set(roots) and not set(tops) & closed]
    seen, found = set(queue), []
    while queue:
        for required in installed[queue.pop(0)][1]:
            tops = installed.get(required, ((), ()))[0]
            if required in seen or not tops or set(tops) & closed:
                continue
            seen.add(required)
            queue.append(required)
            found += [t for t in tops if t not in roots and t not in found]
    return found


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.lru_cache(maxsize=8)
def _installed_distributions(search: tuple[str, ...]
                             ) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Canonical name -> (its top-level packages, the canonical names of its runtime
    requirements) of each distribution on `search` (the first of a name wins, as for
    imports). Read once per worker: the environment does not change under it."""
    from importlib import metadata

    out = {}
    for dist in metadata.distributions(path=list(search)):
        try:
            name = _canonical(dist.metadata["Name"] or "")
            if not name or name in out:
                continue
            text = dist.read_text("top_level.txt")
            if text is not None:
                tops = [line.strip().split("/")[0] for line in text.splitlines()]
            else:
                tops = [str(f).split("/")[0].removesuffix(".py") for f in dist.files or ()
                        if not str(f).startswith(("..", "/"))]
            needs = [_canonical(m.group(0)) for r in dist.requires or ()
                     if "extra" not in r.partition(";")[2]
                     for m in [re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", r)] if m]
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        out[name] = (tuple(dict.fromkeys(t for t in tops if t.isidentifier()
                                             and not t.startswith("__"))),
                     tuple(dict.fromkeys(needs)))
    return out


def test_libraries(checkout: Path, node_ids) -> list[str]:
    """Third-party packages the run's test files and their conftests import (scipy for a
    test that builds a csr_matrix): the libraries the problem's tests allow. Read from
    the source, so the judge and the solution process agree before either starts."""
    files: list[Path] = []
    for node in node_ids or ():
        relpath = str(node).split("::")[0]
        if not relpath or ".." in PurePosixPath(relpath).parts:
            continue
        path = checkout / relpath
        files.append(path)
        for folder in [checkout, *[checkout.joinpath(*PurePosixPath(relpath).parts[:i])
                                   for i in range(1, len(PurePosixPath(relpath).parts))]]:
            files.append(folder / "conftest.py")
    return imported_packages(files)


def module_libraries(checkout: Path, relpath: str | None) -> list[str]:
    """Third-party packages the repository's own module under test imports, read from the
    checkout's file (never the candidate's text): what its target returns is made of them
    (nncf's `load_model` returns the torchvision model it names, a SqueezeNet, which the
    tests hand to torch.onnx.export; its test file never imports torchvision)."""
    if not relpath or PurePosixPath(relpath).is_absolute() or \
            ".." in PurePosixPath(relpath).parts:
        return []
    return imported_packages([checkout / relpath])


def imported_packages(files) -> list[str]:
    """The top-level third-party packages the given source files import (absolute
    imports only; a file that cannot be read or parsed adds none)."""
    found: list[str] = []
    for path in dict.fromkeys(files):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) \
                else [node.module] if isinstance(node, ast.ImportFrom) and node.module \
                and not node.level else []
            for name in names:
                top = name.split(".")[0]
                # the standard library's classes are not rebuilt from a message (a
                # logging.FileHandler opens its file): only third-party packages
                if top not in sys.stdlib_module_names and top not in found:
                    found.append(top)
    return found


def write_shadow(folder: Path, checkout: Path, overlay: dict[str, str]) -> dict:
    """Write each patched module under `folder`; {module: [file, package folder]}."""
    mapping = {}
    for relpath, text in (overlay or {}).items():
        parts = PurePosixPath(relpath).parts
        if not parts or PurePosixPath(relpath).is_absolute() or ".." in parts:
            raise ValueError(f"overlay path {relpath!r} escapes the repository")
        found = module_name(checkout, relpath)
        if found is None:
            raise ValueError(f"overlay path {relpath!r} is not an importable module")
        name, root, package_dir = found
        target = folder.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        mapping[name] = [str(target), package_dir, root]
    return mapping


def _watched(job: Job, shadow: dict) -> list[str]:
    """The files that hold the candidate's code in this run."""
    if shadow:
        return [entry[0] for entry in shadow.values()]
    return [str(Path.cwd() / rel) for rel in job.overlay or {}]


def _import_roots(shadow: dict, checkout: str) -> list[str]:
    """The checkout, then the import roots of patched modules outside it (src layouts)."""
    roots = [checkout]
    for entry in shadow.values():
        if len(entry) > 2 and entry[2] not in roots:
            roots.append(entry[2])
    return roots


def link_tree(source: Path, target: Path) -> None:
    """A writable folder whose entries are links to the checkout's top-level entries."""
    target.mkdir()
    for entry in os.scandir(source):
        if entry.name != ".git":
            os.symlink(entry.path, target / entry.name)


def _copy_repo(source: Path, target: Path, overlay: dict[str, str]) -> None:
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    for relpath, text in (overlay or {}).items():
        parts = PurePosixPath(relpath).parts
        if not parts or PurePosixPath(relpath).is_absolute() or ".." in parts:
            raise ValueError(f"overlay path {relpath!r} escapes the repository")
        path = target.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


SAFE_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def read_capped(path: Path, limit: int) -> str:
    """At most `limit` bytes of a file: its head and its tail around a marker.

    The file may have been replaced by the run: it is opened without following a symlink
    and without blocking (a FIFO), and read only if it is a regular file, never past
    `limit`, so a run cannot make the trusted side hang or read without end.
    """
    try:
        fd = os.open(path, SAFE_OPEN)
    except OSError:
        return ""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"[not a regular file: {path.name}]"
        size = info.st_size
        if size <= limit:
            data = read_at_most(fd, limit)
        else:
            head = read_at_most(fd, limit * 3 // 4)
            os.lseek(fd, size - limit // 4, os.SEEK_SET)
            tail = read_at_most(fd, limit // 4)
            cut = size - len(head) - len(tail)
            data = head + f"\n[... {cut} bytes cut ...]\n".encode() + tail
    except OSError:
        return ""
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")


def _start_again_without(settings: Settings, patched: PreloadPatched, proto_in,
                         proto_out) -> None:
    """This worker, in this process, without the preload that patched the standard
    library (nothing has been read from or sent to the engine yet)."""
    data = asdict(settings)
    data["preload"] = [n for n in settings.preload if n != patched.name]
    data["left_out"] = [*settings.left_out, str(patched)]
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(proto_in.fileno(), 0)
    os.dup2(proto_out.fileno(), 1)
    os.execv(sys.executable, [sys.executable, "-m", "curator.execution.worker",
                              json.dumps(data)])


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    settings = Settings.from_json(argv[0])
    sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]
    # Keep the protocol on private descriptors; stray prints go to stderr.
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    for fd in (proto_in.fileno(), proto_out.fileno()):
        os.set_inheritable(fd, False)
    if settings.isolation == "weak":
        sandbox.die_with_parent()
    worker = Worker(settings)
    worker.tell = lambda note: _send(proto_out, {"progress": note})
    try:
        problems = worker.warm_up()
    except PreloadPatched as exc:
        _start_again_without(settings, exc, proto_in, proto_out)
    _send(proto_out, {"ready": {**worker.versions, "problems": problems,
                                "plugin_imports": worker.plugin_imports,
                                "threads": worker.threads(),
                                "own_pid_namespace": worker.own_namespace}})
    for line in proto_in:
        message = json.loads(line)
        job = Job.from_dict(message["job"])
        _send(proto_out, {"started": job.job_id})
        try:
            result = worker.run(job, message.get("marker"))
        except Exception as exc:  # a harness bug must not take the worker down
            result = RunResult.infra(job, f"harness failed: {type(exc).__name__}: {exc}")
        _send(proto_out, {"result": result.cleaned().to_dict()})
        worker.tidy()
        if worker.needs_restart():
            break


def _send(stream, message: dict) -> None:
    stream.write(json.dumps(message).encode("utf-8") + b"\n")
    stream.flush()


if __name__ == "__main__":
    main()
