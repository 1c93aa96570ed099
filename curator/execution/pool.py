"""Where jobs execute: the Pool interface and the local pool of warm worker processes.

A Pool is all the engine needs from a backend, so a cluster backend (Ray) can replace
the local one by implementing these four members:

    start()                       get ready (start workers, connect to a cluster ...)
    run(jobs, cancelled) -> Iterator[RunResult]
                                  execute the jobs, yield each result as it finishes;
                                  stop starting new jobs once cancelled() is true
    close()                       release everything; no process may be left behind
    info() -> dict                {"backend", "workers", "isolation", "reason"}

Jobs and results are plain data (Job.to_dict / RunResult.from_dict), and a remote
backend runs each job with curator.execution.worker exactly as the local one does.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import queue
import secrets
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from curator.execution import cgroups, proctree, sandbox
from curator.execution.job import Job, Limits, RunResult
from curator.progress import CancelCheck

READY_TIMEOUT_S = 300.0
GRACE_S = 30.0            # time a worker gets beyond a run's own limit to answer
REPO_MOUNT = "/tmp/.curator-src/repo"
LIB_MOUNT = "/tmp/.curator-src/lib"       # holds only the curator package, for foreign Pythons
RUN_CACHE_MOUNT = "/tmp/.curator-cache/layers"   # the environment's run cache (`views`)
REPO_WORKERS_PER_SLOT = 2                 # warm repository workers a slot keeps (LRU)
# job id -> what to tell about its tests as they finish (display only, never a verdict):
# called with (problem id, test id, tests done, tests collected or None).
TEST_WATCHERS: dict[str, object] = {}


def run_cache_for(job: Job) -> str | None:
    """The host folder of the run cache of a job's environment (`views`): in the
    environment curator built (its `.curator` folder), per lock (an environment built
    again in place is another), with judge/ and solution/ in it; None when the job has
    no such environment or runs cannot make views here (not root)."""
    if not job.python or os.geteuid() != 0:
        return None
    prefix = Path(os.path.abspath(job.python)).parent.parent
    if not (prefix / ".curator").is_dir():
        return None
    lock = str((job.repo or {}).get("lock") or "")
    folder = prefix / ".curator" / "run-cache" / hashlib.sha256(lock.encode()).hexdigest()[:16]
    try:
        for kind in ("judge", "solution"):
            (folder / kind).mkdir(parents=True, exist_ok=True)
        os.chmod(folder.parent, 0o700)   # root's alone on the host too
        os.chmod(folder, 0o700)
    except OSError:
        return None
    return str(folder)


def conftest_imports(checkout: Path) -> list[str]:
    """Third-party modules the checkout's top conftest files import (its own packages
    excepted: runs import those patched): warm workers import them once."""
    own = {p.name for p in checkout.iterdir() if (p / "__init__.py").is_file()} | \
        {p.name for p in (checkout / "src").glob("*") if (p / "__init__.py").is_file()}
    found: list[str] = []
    for path in (checkout / "conftest.py", checkout / "tests" / "conftest.py"):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in tree.body:
            inner = node.body if isinstance(node, ast.Try) else [node]
            for stmt in inner:
                names = []
                if isinstance(stmt, ast.Import):
                    names = [a.name for a in stmt.names]
                elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
                    names = [stmt.module]
                for name in names:
                    if name.split(".")[0] not in own and name not in found:
                        found.append(name)
    return found


def run_memory_mb(limits: Limits) -> int:
    """The memory a run may add to its slot's cgroup: a share of `memory_mb` for each of
    its two processes, the judge and the solution, as each one's address-space limit
    already allows. What crosses the boundary exists in both (the test's model in the
    judge, its copy in the solution): with one share for the pair, torchgeo's swin_v2_b
    tests were killed by the memory cgroup two runs in three, and passed alone."""
    return 2 * limits.memory_mb


class Pool(ABC):
    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def run(self, jobs: Iterable[Job], cancelled: CancelCheck | None = None
            ) -> Iterator[RunResult]: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def info(self) -> dict: ...


# (interpreter, lock digest, plugins disabled) -> the modules a pytest session of that
# environment imported, as its first warm worker found them before any job ran (the
# worker's own trusted start-up: `Worker._import_pytest_plugins`). Later workers of the
# environment, in any engine of this process, import those instead of running the
# session again. Kept only while it fits a worker's command line.
_PLUGIN_IMPORTS: dict[tuple, list[str]] = {}
_PLUGIN_IMPORTS_LOCK = threading.Lock()
PLUGIN_IMPORTS_MAX_BYTES = 64 * 1024   # one argument may hold 128 KiB (MAX_ARG_STRLEN)


def known_plugin_imports(key: tuple) -> list[str] | None:
    with _PLUGIN_IMPORTS_LOCK:
        return _PLUGIN_IMPORTS.get(key)


def remember_plugin_imports(key: tuple, names: list[str] | None) -> None:
    if names is None or len(json.dumps(names)) > PLUGIN_IMPORTS_MAX_BYTES:
        return
    with _PLUGIN_IMPORTS_LOCK:
        _PLUGIN_IMPORTS.setdefault(key, names)


class WorkerDied(Exception):
    """The worker process ended (or stopped answering) while it held a job."""


class WorkerLost(WorkerDied):
    """The worker was gone before it took the job: the job never started."""


@dataclass
class PoolSettings:
    workers: int = 1
    preload: tuple[str, ...] = ()
    isolation: str = "auto"        # auto | strong | weak
    hide: tuple[str, ...] = ()     # folders runs must not see (the workspace)
    tmp_mb: int = 2048
    shm_mb: int = 512
    warm_repos: bool = True        # repo-backed runs fork from a warm worker of their env
    # each slot warms its worker of plain runs at once (False: when a plain job first
    # comes; a batch of repository runs never needs it)
    eager: bool = True
    extra: dict = field(default_factory=dict)


class WorkerProcess:
    """One worker process seen from the engine: start, send a job, read its result."""

    def __init__(self, settings: PoolSettings, isolation: str, *, warm: bool = True,
                 python: str | None = None, ro_binds: list[tuple[str, str]] | None = None,
                 nproc_base: int = 0, group: cgroups.SlotGroup | None = None,
                 repo_mode: bool = False, preload: tuple[str, ...] | None = None,
                 run_cache: str | None = None, disable_plugins: tuple[str, ...] = (),
                 plugin_imports: list[str] | None = None):
        self.settings = settings
        self.isolation = isolation
        self.warm = warm
        self.python = python
        self.repo_mode = repo_mode
        self.preload = tuple(settings.preload if preload is None else preload)
        self.disable_plugins = tuple(disable_plugins)
        self.plugin_imports = plugin_imports   # given to it (`known_plugin_imports`)
        self.found_plugin_imports: list[str] | None = None   # what its ready message said
        self._lib: str | None = None
        self.ro_binds = ro_binds or []
        self.run_cache = run_cache
        self.nproc_base = nproc_base
        self.group = group
        self.proc: subprocess.Popen | None = None
        self.versions: dict = {}
        self.busy = False
        self._buffer = b""
        self._tmp_root: str | None = None
        self._log = None

    def start(self) -> None:
        strong = self.isolation == "strong"
        if strong:
            tmp_root = "/tmp"
        else:
            self._tmp_root = tempfile.mkdtemp(prefix="curator-runs-")
            os.chmod(self._tmp_root, 0o1777)  # runs may be dropped to another uid
            tmp_root = self._tmp_root
        worker_settings = {
            "warm": self.warm, "preload": list(self.preload),
            "isolation": self.isolation, "host_pid_ns": os.readlink("/proc/self/ns/pid"),
            "uid": sandbox.run_uid(),
            "read_grant": sandbox.needs_read_grant(self.isolation),
            "nproc_base": self.nproc_base,
            "tmp_root": tmp_root, "wipe_tmp": strong,
            "slot_cgroup": self.group is not None, "repo_mode": self.repo_mode,
            "disable_plugins": list(self.disable_plugins),
            "plugin_imports": self.plugin_imports,
            "shared_checkout": strong and any(i == REPO_MOUNT for _, i in self.ro_binds),
            "run_cache": RUN_CACHE_MOUNT if strong and self.run_cache else None}
        interpreter = (self.python or sys.executable) if self.repo_mode else sys.executable
        command = [interpreter, "-m", "curator.execution.worker",
                   json.dumps(worker_settings)]
        binds = list(self.ro_binds)
        lib = None
        if self.repo_mode:
            # The environment's Python sees the curator package and nothing else of ours.
            package = str(Path(__file__).resolve().parents[1])
            if strong:
                binds.append((package, f"{LIB_MOUNT}/curator"))
                lib = LIB_MOUNT
            else:
                self._lib = lib = tempfile.mkdtemp(prefix="curator-lib-")
                os.symlink(package, os.path.join(lib, "curator"))
                os.chmod(lib, 0o755)
        if strong:
            spec = sandbox.SandboxSpec(hide=list(self.settings.hide), ro_binds=binds,
                                       tmp_mb=self.settings.tmp_mb, shm_mb=self.settings.shm_mb)
            if self.run_cache:
                spec.private_binds = [(self.run_cache, RUN_CACHE_MOUNT)]
            if self.python:
                spec.python = self.python
            command = spec.argv(command)
        if self.group is not None:
            command = self.group.wrap(command)
        env = sandbox.base_env("/tmp" if strong else tmp_root, python=interpreter)
        if lib:
            env["PYTHONPATH"] = lib
        else:   # the worker runs the engine's own copy of the curator package
            env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, env=env, cwd="/",
                                     start_new_session=not strong)

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> dict:
        message = self._read_message(time.monotonic() + timeout_s)
        if "ready" not in message:
            raise WorkerDied(f"unexpected worker message: {str(message)[:200]}")
        ready = dict(message["ready"])
        found = ready.pop("plugin_imports", None)
        if isinstance(found, list) and all(isinstance(n, str) for n in found):
            self.found_plugin_imports = found
        self.versions = ready
        return self.versions

    def execute(self, job: Job, marker: str) -> RunResult:
        self.busy = True
        try:
            return self._execute(job, marker)
        finally:
            self.busy = False

    def _execute(self, job: Job, marker: str) -> RunResult:
        if self.group is not None:
            self.group.limit(job.limits.processes, run_memory_mb(job.limits))
        try:
            return self._exchange(job, marker)
        finally:
            if self.group is not None:
                self.group.release()

    def _exchange(self, job: Job, marker: str) -> RunResult:
        sent = time.monotonic()
        try:
            self.proc.stdin.write(json.dumps({"job": job.to_dict(), "marker": marker})
                                  .encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerLost(f"worker input closed: {exc}") from None
        try:
            self._read_message(time.monotonic() + GRACE_S)  # {"started": job_id}
        except WorkerDied as exc:
            raise WorkerLost(str(exc)) from None
        # the worker enforces the run's limit; this is the net for a worker that stopped
        # answering, at the most the limit can grow to (`Limits.wall_limit`)
        deadline = time.monotonic() + job.limits.longest() + GRACE_S
        message = self._read_message(deadline)
        while "progress" in message:   # a test finished: for display only
            watcher = TEST_WATCHERS.get(job.job_id)
            note = message["progress"] if isinstance(message["progress"], dict) else {}
            if callable(watcher):
                watcher(job.problem_id, str(note.get("test") or ""), int(note.get("done") or 0),
                        note.get("total") if isinstance(note.get("total"), int) else None)
            message = self._read_message(deadline)
        result = RunResult.from_dict(message["result"])
        timing = result.env.get("timing")
        if isinstance(timing, dict):   # the engine's view: the job sent to the result read
            timing["exchange"] = round(time.monotonic() - sent, 6)
        return result

    def _read_message(self, deadline: float) -> dict:
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerDied("worker stopped answering")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise WorkerDied(self._death_note())
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def _death_note(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        how = f"exit status {code}" if code is not None and code >= 0 else \
            f"signal {-code}" if code is not None else "no exit status"
        return f"worker died ({how}){self.log_tail()}"

    def log_tail(self, limit: int = 2000) -> str:
        if self._log is None:
            return ""
        try:
            self._log.seek(0, os.SEEK_END)
            size = self._log.tell()
            self._log.seek(max(0, size - limit))
            text = self._log.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
        return f": {text.splitlines()[-1]}" if text else ""

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self, kill: bool = False) -> None:
        if self.proc is not None:
            if not kill:
                try:
                    self.proc.stdin.close()
                    self.proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    kill = True
            if kill and self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._tmp_root:
            shutil.rmtree(self._tmp_root, ignore_errors=True)
            self._tmp_root = None
        if self._lib:
            shutil.rmtree(self._lib, ignore_errors=True)
            self._lib = None


class LocalPool(Pool):
    """N warm workers on this machine, each served by one thread of the engine."""

    def __init__(self, settings: PoolSettings):
        self.settings = settings
        self.isolation, self.reason = sandbox.resolve_isolation(settings.isolation)
        self._jobs: queue.Queue = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._workers: dict[int, WorkerProcess | None] = {}
        self._cold: dict[int, WorkerProcess] = {}   # one-shot sandboxes of repo-backed jobs
        # slot -> {environment key: warm worker of that repository environment}
        self._repo_workers: dict[int, dict[tuple, WorkerProcess]] = {}
        self._nproc_base = 0
        self._groups: dict[int, cgroups.SlotGroup | None] = {}  # a pids/memory cgroup a slot
        self._conftest_imports: dict[str, list[str]] = {}   # checkout -> what it preloads

    # -- Pool --------------------------------------------------------------------------

    def start(self) -> None:
        uid = sandbox.run_uid()
        self._nproc_base = sandbox.count_tasks(os.getuid() if uid is None else uid)
        cgroups.sweep()   # the groups of engines that died without closing their pool
        for slot in range(max(1, self.settings.workers)):
            self._groups[slot] = cgroups.SlotGroup.create(slot)
            thread = threading.Thread(target=self._serve, args=(slot,), daemon=True,
                                      name=f"curator-worker-{slot}")
            thread.start()
            self._threads.append(thread)

    supports_test_progress = True

    def run(self, jobs: Iterable[Job], cancelled: CancelCheck | None = None,
            test_progress=None) -> Iterator[RunResult]:
        """test_progress(problem id, test id, done, collected or None): each test as it
        finishes (display only)."""
        jobs = list(jobs)
        results: queue.Queue = queue.Queue()
        stop = threading.Event()
        for job in jobs:
            if test_progress is not None:
                TEST_WATCHERS[job.job_id] = test_progress
            self._jobs.put((job, results, stop))
        received = 0
        try:
            while received < len(jobs):
                if cancelled is not None and not stop.is_set() and cancelled():
                    stop.set()
                try:
                    result = results.get(timeout=0.1)
                except queue.Empty:
                    continue
                received += 1
                if result is not None:
                    TEST_WATCHERS.pop(result.job_id, None)
                    yield result
        finally:
            for job in jobs:
                TEST_WATCHERS.pop(job.job_id, None)

    def close(self) -> None:
        """Drop jobs not started, stop idle workers, kill busy ones (an interrupted run)."""
        while True:
            try:
                self._jobs.get_nowait()
            except queue.Empty:
                break
        for _ in self._threads:
            self._jobs.put(None)
        repo_workers = [w for by_key in self._repo_workers.values() for w in by_key.values()]
        for worker in [*self._workers.values(), *self._cold.values(), *repo_workers]:
            if worker is not None and worker.busy and worker.proc is not None:
                worker.proc.kill()
        for thread in self._threads:
            thread.join(timeout=60)
        self._threads.clear()
        for group in self._groups.values():
            if group is not None:
                group.remove()
        self._groups.clear()

    def info(self) -> dict:
        return {"backend": "local", "workers": self.settings.workers,
                "isolation": self.isolation, "reason": self.reason,
                "slot_cgroups": bool(self._groups) and all(self._groups.values())}

    def worker_pids(self, busy_only: bool = False) -> list[int]:
        """Host pids of the running worker processes (bwrap's, under strong isolation)."""
        return [w.proc.pid for w in self._workers.values()
                if w is not None and w.alive and (w.busy or not busy_only)]

    # -- one thread per worker ------------------------------------------------------------

    def _serve(self, slot: int) -> None:
        worker = None
        try:
            if self.settings.eager:
                worker = self._start_worker(slot)
            while True:
                item = self._jobs.get()
                if item is None:
                    return
                job, results, stop = item
                if stop.is_set():
                    results.put(None)
                    continue
                if job.repo_backed:
                    results.put(self._run_repo(slot, job) if self.settings.warm_repos
                                else self._run_cold(slot, job))
                    continue
                if worker is None or not worker.alive:
                    if worker is not None:
                        worker.close(kill=True)
                    worker = self._start_worker(slot)
                results.put(self._run_warm(slot, worker, job))
                worker = self._workers.get(slot) or worker
        finally:
            if worker is not None:
                worker.close()
            self._workers[slot] = None
            for repo_worker in self._repo_workers.pop(slot, {}).values():
                repo_worker.close()

    def _start_worker(self, slot: int) -> WorkerProcess:
        worker = WorkerProcess(self.settings, self.isolation, nproc_base=self._nproc_base,
                               group=self._groups.get(slot))
        worker.start()
        try:
            worker.wait_ready()
        except WorkerDied:
            pass  # its first job reports why, as an infra result
        self._workers[slot] = worker
        return worker

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> bool:
        """Block until every worker has warmed up (or failed to); True when all did."""
        if not self.settings.eager:
            return True   # nothing warms before its first job
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            workers = [self._workers.get(slot) for slot in range(len(self._threads))]
            if all(w is not None for w in workers):
                return all(w.versions for w in workers)
            time.sleep(0.01)
        return False

    def _run_warm(self, slot: int, worker: WorkerProcess, job: Job) -> RunResult:
        marker = secrets.token_hex(8)
        try:
            if not worker.versions:
                worker.wait_ready()
            try:
                return worker.execute(job, marker)
            except WorkerLost:
                # It died before taking the job (killed while idle): the job is not to
                # blame, so it gets one fresh worker.
                worker.close(kill=True)
                worker = self._start_worker(slot)
                if not worker.versions:
                    worker.wait_ready()
                return worker.execute(job, marker)
        except WorkerDied as exc:
            worker.close(kill=True)
            self._sweep(marker)
            outcome = "crashed" if worker.versions else "infra"
            reason = (f"the run ended its worker: {exc}" if worker.versions
                      else f"worker could not start: {exc}")
            return RunResult(job.job_id, job.problem_id, outcome, reason=reason,
                             env=self._env(worker), timeout_s=job.limits.timeout_s)

    def _run_cache(self, job: Job) -> str | None:
        return run_cache_for(job) if self.isolation == "strong" else None

    def _repo_binds(self, job: Job) -> tuple[list[tuple[str, str]], Job]:
        if self.isolation != "strong":
            return [], job
        return [(os.path.realpath(job.repo_dir), REPO_MOUNT)], replace(job, repo_dir=REPO_MOUNT)

    def _run_repo(self, slot: int, job: Job) -> RunResult:
        """A repo-backed job on the slot's warm worker of its environment (started when
        missing); when that worker cannot start, the job runs cold, which says why."""
        imports = self._conftest_imports.get(job.repo_dir)
        if imports is None:   # a checkout is one commit's: read its conftests once
            imports = self._conftest_imports[job.repo_dir] = conftest_imports(
                Path(job.repo_dir))
        preload = tuple(dict.fromkeys([*job.env_preload, *imports]))
        # The lock is part of the key: an environment built again in place (the same
        # interpreter path with other packages, `repo env` or a rebuild's missing-module
        # pass) gets fresh workers, not ones that imported the old packages.
        lock = hashlib.sha256(str((job.repo or {}).get("lock") or "").encode()).hexdigest()
        plugins_off = tuple(job.disable_plugins)
        key = (job.python or sys.executable, os.path.realpath(job.repo_dir), preload, lock,
               plugins_off)
        workers = self._repo_workers.setdefault(slot, {})
        worker = workers.pop(key, None)
        if worker is not None and not worker.alive:
            worker.close(kill=True)
            worker = None
        binds, sent = self._repo_binds(job)
        if worker is None:
            while len(workers) >= REPO_WORKERS_PER_SLOT:   # the least recently used goes
                workers.pop(next(iter(workers))).close()
            session_key = (key[0], lock, plugins_off)
            worker = WorkerProcess(self.settings, self.isolation, warm=True,
                                   python=job.python, ro_binds=binds,
                                   nproc_base=self._nproc_base, repo_mode=True,
                                   preload=preload, group=self._groups.get(slot),
                                   run_cache=self._run_cache(job),
                                   disable_plugins=plugins_off,
                                   plugin_imports=known_plugin_imports(session_key))
            worker.start()
            try:
                worker.wait_ready()
            except WorkerDied:
                worker.close(kill=True)
                return self._run_cold(slot, job)
            remember_plugin_imports(session_key, worker.found_plugin_imports)
        workers[key] = worker
        marker = secrets.token_hex(8)
        try:
            return worker.execute(sent, marker)
        except WorkerLost:
            worker.close(kill=True)
            workers.pop(key, None)
            return self._run_cold(slot, job)
        except WorkerDied as exc:
            worker.close(kill=True)
            workers.pop(key, None)
            self._sweep(marker)
            return RunResult(job.job_id, job.problem_id, "crashed",
                             reason=f"the run ended its worker: {exc}", env=self._env(worker),
                             timeout_s=job.limits.timeout_s)

    def _run_cold(self, slot: int, job: Job) -> RunResult:
        """Repo-backed jobs run in their own one-shot sandbox with the repo bound in.

        Only a reference runs cold (a fresh `python -m pytest` in which the text is the
        repository's own module): it is the baseline, trusted like the repository. Any
        other text (a sample, a stub, a mutant) runs across the judge/solution boundary
        or not at all: in a worker of its own, started for this run without the warm
        one's preloads (what kept a warm worker from starting, or none of it); the run
        says so (`repo_run: "fresh"`)."""
        binds, sent = self._repo_binds(job)
        across = not job.reference
        worker = WorkerProcess(self.settings, self.isolation, warm=across, python=job.python,
                               ro_binds=binds, nproc_base=self._nproc_base,
                               group=self._groups.get(slot), run_cache=self._run_cache(job),
                               repo_mode=across, preload=() if across else None,
                               disable_plugins=tuple(job.disable_plugins) if across else ())
        marker = secrets.token_hex(8)
        self._cold[slot] = worker
        try:
            worker.start()
            try:
                worker.wait_ready()
            except WorkerDied as exc:
                if not across:
                    raise
                return RunResult.infra(
                    job, "no worker could start in the repository's interpreter with the "
                    f"judge and the solution apart ({exc}); only a reference runs in "
                    "pytest's own process", env=self._env(worker))
            result = worker.execute(sent, marker)
            if across:
                result.env["repo_run"] = "fresh"   # a worker of its own, without preloads
            return result
        except WorkerDied as exc:
            self._sweep(marker)
            return RunResult(job.job_id, job.problem_id, "crashed" if worker.versions else
                             "infra", reason=str(exc), env=self._env(worker),
                             timeout_s=job.limits.timeout_s)
        finally:
            self._cold.pop(slot, None)
            worker.close(kill=not worker.alive)

    def _sweep(self, marker: str) -> None:
        if self.isolation == "weak":  # a pid namespace dies with its worker by itself
            for _ in range(3):
                pids = proctree.with_marker(marker)
                if not pids:
                    return
                proctree.kill_pids(pids)
                time.sleep(0.01)

    def _env(self, worker: WorkerProcess) -> dict:
        return {"python": worker.versions.get("python") or sys.version.split()[0],
                "torch": worker.versions.get("torch"), "isolation": self.isolation}
