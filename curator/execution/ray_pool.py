"""The Ray backend: run jobs on a Ray cluster, one warm engine per node.

    pool = RayPool(PoolSettings(isolation="auto"), address="auto")
    with Engine(pool=pool) as engine:            # or Engine(backend="ray", address=...)
        for result in engine.run(jobs): ...

Each node with CPUs gets one actor (a `NodeRunner`, pinned to the node by id) that holds
the same sandboxed local pool of warm workers as `curator run` uses on one machine, sized
to the node's CPUs (or `workers` per node when given). Jobs travel as `Job.to_dict()` and
results come back as `RunResult.to_dict()`; only the driver touches the database.

Fault tolerance: a runner (or its node) lost mid-batch fails its outstanding calls; those
jobs are queued again and run on another runner (a replacement is started on the node
while the node is alive), at most `max_attempts` times each, then they come back as
`infra`. Results are keyed by job id, so a job that ran twice is yielded once.
Cancellation stops dispatching, tells the runners to drop the jobs they hold, and yields
only what finished. Progress: `stats()` (runs/s, per-node counts) and `progress_note()`,
which the engine appends to its progress label.

Ray is an optional dependency: `pip install ".[ray]"`.
"""

from __future__ import annotations

import importlib
import logging
import os
import socket
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from typing import Any

from curator.errors import CuratorError
from curator.execution.job import Job, RunResult
from curator.execution.pool import LocalPool, Pool, PoolSettings
from curator.progress import CancelCheck

RAY_HINT = 'the ray backend needs Ray: pip install ".[ray]"'
MAX_ATTEMPTS = 3            # dispatches of one job before it comes back as infra
MAX_REPLACEMENTS = 3        # runners started on one node after its first one died
START_TIMEOUT_S = 300.0     # for the first runner to be warm
STRAGGLER_GRACE_S = 10.0    # how long start() waits for other runners once one is warm
REFRESH_S = 5.0             # how often the driver looks for new or dead nodes
CLOSE_TIMEOUT_S = 10.0


def import_ray():
    """The ray module, or a CuratorError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise CuratorError(RAY_HINT) from None
    return ray


def _one_line(exc: BaseException | str, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()
    line = next((t.strip() for t in text if t.strip()), type(exc).__name__
                if isinstance(exc, BaseException) else "")
    return line[:limit]


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast on a host:port nobody listens on (ray.init would retry for minutes)."""
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return   # auto, local, or a form Ray resolves itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise CuratorError(f"cannot connect to Ray at {address}: {exc.strerror or exc} "
                           "(is `ray start --head` running there?)") from None


# -- the actor on each node ----------------------------------------------------------------


# PoolSettings.extra: "module:function" that builds (or reuses) a repo-backed job's
# checkout and environment on a node from its portable spec, (spec, node_cache) ->
# (checkout, python). The layer that owns repositories names it (curator.runs uses
# curator.repos.environments:materialize); without it repo-backed jobs stay on the driver's node.
REPO_PREPARER = "repo_preparer"


def _named_callable(reference: str):
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def _host_bound(job: Job, settings: PoolSettings) -> bool:
    """A repo-backed job whose checkout and interpreter only the driver's host has."""
    return job.repo_backed and not (job.repo and settings.extra.get(REPO_PREPARER))


def _visible_here(job: Job) -> bool:
    """Whether the driver's checkout and interpreter are on this node too (same host or
    a shared file system): then they are used as they are."""
    return os.path.isdir(job.repo_dir) and (not job.python or os.path.exists(job.python))


class NodeRunner:
    """Runs jobs on one node through a LocalPool of warm, sandboxed workers.

    Created as a threaded Ray actor: each `run` call blocks one actor thread while a warm
    worker executes the job, so several calls run at once (up to the pool's workers).
    """

    def __init__(self, settings: dict):
        self._pool = LocalPool(PoolSettings(**settings))
        self._pool.start()
        self._stopped: set[str] = set()
        self._lock = threading.Lock()

    def ready(self) -> dict:
        import ray

        warm = self._pool.wait_ready()
        info = self._pool.info()
        return {"node_id": ray.get_runtime_context().get_node_id(),
                "ip": ray.util.get_node_ip_address(), "host": socket.gethostname(),
                "pid": os.getpid(), "warm": warm, "workers": info["workers"],
                "isolation": info["isolation"], "reason": info["reason"]}

    def run(self, batch: str, job: dict) -> dict | None:
        """One job's result as a dict; None when its batch was stopped before it started."""
        if batch in self._stopped:
            return None
        job = Job.from_dict(job)
        if job.repo_backed and job.repo and not _visible_here(job) and \
                self._pool.settings.extra.get(REPO_PREPARER):
            # Each node builds (or reuses) the pinned checkout and environment itself.
            try:
                prepare = _named_callable(self._pool.settings.extra[REPO_PREPARER])
                job.repo_dir, job.python = prepare(
                    job.repo, self._pool.settings.extra.get("node_cache"))
            except Exception as exc:  # noqa: BLE001 - any failure here is the node's
                return RunResult.infra(job, f"node {socket.gethostname()} cannot prepare "
                                            f"{job.repo.get('url')}: {_one_line(exc)}"
                                       ).to_dict()
        if job.repo_dir and not os.path.isdir(job.repo_dir):
            return RunResult.infra(job, f"the repository checkout {job.repo_dir} is not on "
                                        f"node {socket.gethostname()}").to_dict()
        for result in self._pool.run([job], cancelled=lambda: batch in self._stopped):
            return result.to_dict()
        return None

    def stop(self, batch: str) -> None:
        with self._lock:
            self._stopped.add(batch)

    def worker_pids(self) -> list[int]:
        return self._pool.worker_pids()

    def close(self) -> bool:
        self._pool.close()
        return True


_actor_class = None


def _runner_class():
    global _actor_class
    if _actor_class is None:
        _actor_class = import_ray().remote(NodeRunner)
    return _actor_class


# -- the driver -------------------------------------------------------------------------------


@dataclass
class Runner:
    """The driver's view of one NodeRunner actor."""
    node_id: str
    label: str
    workers: int
    handle: Any
    ready_ref: Any = None
    ready: bool = False
    dead: bool = False
    info: dict = field(default_factory=dict)
    inflight: int = 0
    done: int = 0
    error: str = ""

    @property
    def capacity(self) -> int:   # calls in flight: one per worker plus as many queued
        return 2 * self.workers


class RayPool(Pool):
    """Pool on a Ray cluster: one NodeRunner actor per node, results keyed by job id."""

    def __init__(self, settings: PoolSettings | None = None, address: str | None = None, *,
                 max_attempts: int = MAX_ATTEMPTS, start_timeout_s: float = START_TIMEOUT_S):
        self._ray = import_ray()   # fail now, with the install hint, when Ray is missing
        self.settings = settings or PoolSettings(workers=0)
        self.address = address
        self.max_attempts = max(1, max_attempts)
        self.max_replacements = MAX_REPLACEMENTS
        self.start_timeout_s = start_timeout_s
        self.runners: list[Runner] = []
        self._started = False
        self._closed = False
        self._owns_ray = False
        self._driver_node = ""
        self._spawned: Counter = Counter()   # runners started per node
        self._last_refresh = 0.0
        self._last_error = ""
        self._labels: dict[str, str] = {}
        self._gcs = ""
        self._reset_stats()

    # -- Pool ------------------------------------------------------------------------------

    def start(self) -> None:
        if self._started:
            return
        self._closed = False
        ray = self._ray
        if not ray.is_initialized():
            self._connect()
        context = ray.get_runtime_context()
        self._driver_node = context.get_node_id() or ""
        self._gcs = getattr(context, "gcs_address", None) or ""
        self._started = True
        try:
            self._refresh(force=True)
            if not self.runners:
                raise CuratorError(f"the Ray cluster at {self._where()} has no node with a CPU "
                                   "to run on")
            self._wait_started()
        except BaseException:
            self.close()
            raise

    def run(self, jobs: Iterable[Job], cancelled: CancelCheck | None = None
            ) -> Iterator[RunResult]:
        self.start()
        ray = self._ray
        batch = uuid.uuid4().hex
        jobs = list(jobs)
        self._reset_stats(total=len(jobs))
        local_only: deque[Job] = deque()   # repo-backed: their checkout is on this host
        anywhere: deque[Job] = deque()
        for job in jobs:
            host_bound = _host_bound(job, self.settings) and self._has_driver_node()
            (local_only if host_bound else anywhere).append(job)
        attempts: Counter = Counter()
        finished: set[str] = set()
        inflight: dict[Any, tuple[Job, Runner]] = {}
        stopping = False
        try:
            while local_only or anywhere or inflight:
                if not stopping and cancelled is not None and cancelled():
                    stopping = True
                    local_only.clear()
                    anywhere.clear()
                    for runner in self._live():
                        with suppress(Exception):   # a lost runner holds nothing anyway
                            runner.handle.stop.remote(batch)
                self._refresh()
                if not stopping:
                    self._dispatch(batch, local_only, anywhere, inflight, attempts)
                if (local_only or anywhere) and not inflight and not self._live(starting=True):
                    reason = ("no Ray node is left to run curator jobs"
                              + (f": {self._last_error}" if self._last_error else ""))
                    for job in [*local_only, *anywhere]:
                        if job.job_id not in finished:
                            finished.add(job.job_id)
                            yield self._count(RunResult.infra(job, reason), None)
                    local_only.clear()
                    anywhere.clear()
                    break
                waitables = list(inflight) + [r.ready_ref for r in self._starting()]
                if not waitables:
                    time.sleep(0.05)
                    continue
                ready, _ = ray.wait(waitables, num_returns=1, timeout=0.2)
                if ready:
                    ready, _ = ray.wait(waitables, num_returns=len(waitables), timeout=0)
                for ref in ready:
                    if ref not in inflight:
                        self._runner_ready(ref)
                        continue
                    job, runner = inflight.pop(ref)
                    runner.inflight -= 1
                    result = self._collect(ref, job, runner, attempts, stopping)
                    if result is None:
                        continue
                    if isinstance(result, str):   # "retry": its runner was lost
                        (local_only if _host_bound(job, self.settings) and self._has_driver_node()
                         else anywhere).appendleft(job)
                        continue
                    if result.job_id in finished:   # a job that ran twice counts once
                        self.stats_counts["duplicates"] += 1
                        continue
                    finished.add(result.job_id)
                    yield self._count(result, runner)
        finally:
            self._finished_at = self._finished_at or time.monotonic()
            if inflight:   # interrupted: drop what the runners still hold for this batch
                for runner in self._live():
                    with suppress(Exception):   # best effort while unwinding
                        runner.handle.stop.remote(batch)
                    runner.inflight = 0

    def close(self) -> None:
        ray = self._ray
        runners, self.runners = self.runners, []
        if ray.is_initialized():
            refs = []
            for runner in runners:
                if not runner.dead:
                    with suppress(Exception):   # it is going away anyway
                        refs.append(runner.handle.close.remote())
            if refs:
                with suppress(Exception):
                    ray.wait(refs, num_returns=len(refs), timeout=CLOSE_TIMEOUT_S)
            for runner in runners:
                with suppress(Exception):
                    ray.kill(runner.handle)
            if self._owns_ray:
                ray.shutdown()
        self._owns_ray = False
        self._started = False
        self._closed = True

    def info(self) -> dict:
        if not self._closed:
            self.start()   # which nodes and what isolation are known once connected
        live = [r for r in self.runners if r.ready and not r.dead]
        levels = {r.info.get("isolation") for r in live} - {None}
        isolation = "weak" if "weak" in levels or not levels else "strong"
        reasons = sorted({r.info.get("reason", "") for r in live} - {""})
        return {"backend": "ray", "workers": sum(r.workers for r in live),
                "isolation": isolation, "reason": "; ".join(reasons),
                "address": self._where(), "nodes": len({r.node_id for r in live}),
                "cluster": self.stats()}

    def refresh(self, wait_s: float = 0.0) -> int:
        """Start runners on nodes that joined since; wait up to wait_s for them to be warm.

        Runs also look for new nodes by themselves every few seconds. Returns the number
        of runners ready to take jobs.
        """
        self.start()
        self._refresh(force=True)
        deadline = time.monotonic() + wait_s
        while self._starting() and time.monotonic() < deadline:
            ready, _ = self._ray.wait([r.ready_ref for r in self._starting()], num_returns=1,
                                      timeout=min(0.5, max(0.0, deadline - time.monotonic())))
            for ref in ready:
                self._runner_ready(ref)
        return len(self._live())

    # -- progress ------------------------------------------------------------------------

    def stats(self) -> dict:
        """Cluster progress of the current (or last) batch: runs/s and per-node counts."""
        elapsed = max(1e-9, (self._finished_at or time.monotonic()) - self._batch_started)
        nodes: dict[str, dict] = {}
        for runner in self.runners:
            entry = nodes.setdefault(runner.label, {"done": 0, "workers": 0, "alive": False})
            entry["workers"] += runner.workers if runner.ready and not runner.dead else 0
            entry["alive"] = entry["alive"] or not runner.dead
        for label, count in self._node_done.items():
            nodes.setdefault(label, {"done": 0, "workers": 0, "alive": False})["done"] = count
        done = self.stats_counts["done"]
        return {"backend": "ray", "address": self._where(), "done": done,
                "total": self._total, "runs_per_s": round(done / elapsed, 2),
                "elapsed_s": round(elapsed, 2), "nodes": nodes,
                "retried": self.stats_counts["retried"],
                "lost_runners": self.stats_counts["lost_runners"],
                "duplicates": self.stats_counts["duplicates"],
                "infra": self.stats_counts["infra"]}

    def progress_note(self) -> str:
        """A short line for progress bars: runs/s and runs per node."""
        stats = self.stats()
        parts = [f"{stats['runs_per_s']:.1f} runs/s"]
        parts += [f"{label} {n['done']}" for label, n in sorted(stats["nodes"].items())]
        if stats["retried"]:
            parts.append(f"{stats['retried']} retried")
        return " · ".join(parts)

    def _reset_stats(self, total: int = 0) -> None:
        self.stats_counts: Counter = Counter()
        self._node_done: Counter = Counter()
        self._total = total
        self._batch_started = time.monotonic()
        self._finished_at: float | None = None

    def _count(self, result: RunResult, runner: Runner | None) -> RunResult:
        self.stats_counts["done"] += 1
        if result.outcome == "infra":
            self.stats_counts["infra"] += 1
        if runner is not None:
            runner.done += 1
            self._node_done[runner.label] += 1
        if self.stats_counts["done"] >= self._total:
            self._finished_at = time.monotonic()
        return result

    # -- connecting and runners ------------------------------------------------------------

    def _where(self) -> str:
        if self._started and self._gcs:
            return self._gcs
        return self.address or os.environ.get("RAY_ADDRESS") or "a new local Ray instance"

    def _connect(self) -> None:
        ray = self._ray
        address = self.address or os.environ.get("RAY_ADDRESS") or "local"
        kwargs: dict = {"address": address, "log_to_driver": False,
                        "logging_level": logging.WARNING, "namespace": "curator"}
        if address == "local":
            kwargs["include_dashboard"] = False
        if address.startswith("ray://"):
            try:
                import grpc  # noqa: F401
            except ImportError:
                raise CuratorError('ray:// addresses need the Ray client: pip install '
                                   '"ray[client]"') from None
        _check_reachable(address)
        try:
            ray.init(**kwargs)
        except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; say which one
            # the port answered, so a common cause is a cluster that wants a token
            hint = (" (if it uses token authentication, set RAY_AUTH_MODE=token)"
                    if address not in ("local", "auto") and not os.environ.get("RAY_AUTH_MODE")
                    else "")
            raise CuratorError(f"cannot connect to Ray at {self._where()}: "
                               f"{_one_line(exc)}{hint}") from None
        self._owns_ray = True

    def _has_driver_node(self) -> bool:
        return any(r.node_id == self._driver_node and not r.dead for r in self.runners)

    def _live(self, starting: bool = False) -> list[Runner]:
        return [r for r in self.runners if not r.dead and (r.ready or starting)]

    def _starting(self) -> list[Runner]:
        return [r for r in self.runners if not r.dead and not r.ready]

    def _refresh(self, force: bool = False) -> None:
        """Start a runner on every alive node that has none; forget runners of dead nodes."""
        now = time.monotonic()
        if not force and now - self._last_refresh < REFRESH_S:
            return
        self._last_refresh = now
        try:
            nodes = self._ray.nodes()
        except Exception as exc:  # noqa: BLE001 - keep running with what we have
            self._last_error = f"cannot list the cluster's nodes: {_one_line(exc)}"
            return
        alive = {}
        for node in nodes:
            node_id = node.get("NodeID")
            if not node.get("Alive", False):
                continue
            cpus = int((node.get("Resources") or {}).get("CPU", 0))
            if cpus >= 1:
                alive[node_id] = node
        for runner in self.runners:
            if not runner.dead and runner.node_id not in alive:
                self._lose(runner, "its node left the cluster", replace=False)
        occupied = {r.node_id for r in self.runners if not r.dead}
        for node_id, node in alive.items():
            if node_id not in occupied and self._spawned[node_id] <= self.max_replacements:
                self._spawn(node_id, node)

    def _label(self, node: dict) -> str:
        node_id = node.get("NodeID", "")
        if node_id not in self._labels:
            ip = node.get("NodeManagerAddress") or node.get("NodeManagerHostname") or "node"
            taken = set(self._labels.values())
            self._labels[node_id] = ip if ip not in taken else f"{ip}/{node_id[:6]}"
        return self._labels[node_id]

    def _spawn(self, node_id: str, node: dict) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        cpus = int(node["Resources"]["CPU"])
        workers = min(self.settings.workers, cpus) if self.settings.workers else cpus
        settings = asdict(self.settings)
        settings["workers"] = workers
        options: dict = {
            "num_cpus": workers, "max_concurrency": 2 * workers + 4, "max_restarts": 0,
            "scheduling_strategy": NodeAffinitySchedulingStrategy(node_id, soft=False)}
        self._spawned[node_id] += 1
        try:
            handle = _runner_class().options(**options).remote(settings)
            ready_ref = handle.ready.remote()
        except Exception as exc:  # noqa: BLE001
            self._last_error = f"cannot start a runner on {self._label(node)}: {_one_line(exc)}"
            return
        self.runners.append(Runner(node_id=node_id, label=self._label(node), workers=workers,
                                   handle=handle, ready_ref=ready_ref))

    def _wait_started(self) -> None:
        """Until every first runner is warm (or failed), or one is and the rest straggle."""
        ray = self._ray
        deadline = time.monotonic() + self.start_timeout_s
        first_ready: float | None = None
        while self._starting():
            now = time.monotonic()
            if first_ready is not None and now - first_ready > STRAGGLER_GRACE_S:
                break
            if now > deadline:
                break
            refs = [r.ready_ref for r in self._starting()]
            ready, _ = ray.wait(refs, num_returns=1, timeout=0.5)
            for ref in ready:
                self._runner_ready(ref)
            if first_ready is None and self._live():
                first_ready = time.monotonic()
        if not self._live():
            detail = self._last_error or "no runner became ready in time"
            raise CuratorError(f"the Ray backend could not start on {self._where()}: {detail}")

    def _runner_ready(self, ref) -> None:
        runner = next((r for r in self.runners if r.ready_ref is not None and r.ready_ref == ref),
                      None)
        if runner is None:
            return
        runner.ready_ref = None
        try:
            runner.info = self._ray.get(ref)
        except Exception as exc:  # noqa: BLE001 - the actor could not start or warm up
            self._lose(runner, f"runner on {runner.label} did not start: {_one_line(exc)}")
            return
        if not runner.info.get("warm"):
            self._last_error = (f"workers on {runner.label} did not warm up "
                                f"({runner.info.get('reason', '')})")
        runner.ready = True

    def _lose(self, runner: Runner, why: str, replace: bool = True) -> None:
        if runner.dead:
            return
        runner.dead = True
        runner.error = why
        self._last_error = why
        self.stats_counts["lost_runners"] += 1
        with suppress(Exception):   # a half-alive actor must not answer later
            self._ray.kill(runner.handle)
        if replace:
            self._last_refresh = 0.0    # look at the cluster now: start a replacement

    def _dispatch(self, batch: str, local_only: deque, anywhere: deque, inflight: dict,
                  attempts: Counter) -> None:
        live = self._live()
        here = [r for r in live if r.node_id == self._driver_node]
        if local_only and not any(r.node_id == self._driver_node
                                  for r in self._live(starting=True)):
            anywhere.extendleft(reversed(local_only))   # no runner left on this host
            local_only.clear()
        for queue, candidates in ((local_only, here), (anywhere, live)):
            while queue:
                runner = min(candidates, key=lambda r: r.inflight / r.workers, default=None)
                if runner is None or runner.inflight >= runner.capacity:
                    break
                job = queue.popleft()
                attempts[job.job_id] += 1
                try:
                    ref = runner.handle.run.remote(batch, job.to_dict())
                except Exception as exc:  # noqa: BLE001 - the handle is unusable
                    queue.appendleft(job)
                    attempts[job.job_id] -= 1
                    self._lose(runner, f"runner on {runner.label} is unusable: {_one_line(exc)}")
                    return
                inflight[ref] = (job, runner)
                runner.inflight += 1

    def _collect(self, ref, job: Job, runner: Runner, attempts: Counter, stopping: bool):
        """The job's RunResult, "retry", or None (skipped after a cancel, or given up)."""
        ray = self._ray
        exceptions = ray.exceptions
        lost = (exceptions.RayActorError, exceptions.WorkerCrashedError,
                exceptions.ObjectLostError, exceptions.NodeDiedError,
                exceptions.TaskCancelledError)
        try:
            data = ray.get(ref)
        except lost as exc:
            self._lose(runner, f"lost the runner on {runner.label}: {_one_line(exc)}")
            if stopping:
                return None
            if attempts[job.job_id] >= self.max_attempts:
                return RunResult.infra(job, f"gave up after {attempts[job.job_id]} attempt(s); "
                                            f"last: {runner.error}")
            self.stats_counts["retried"] += 1
            return "retry"
        except exceptions.RayError as exc:
            return RunResult.infra(job, f"runner on {runner.label} failed: {_one_line(exc)}")
        if data is None:
            return None
        return RunResult.from_dict(data)
