"""The execution engine: a context manager around a Pool that runs jobs in parallel.

    with Engine(workers=2) as engine:
        for result in engine.run(jobs, progress=bar, cancelled=lambda: False):
            ...

Results come back as they finish, not in submission order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

from curator.config import ExecutionConfig
from curator.errors import CuratorError
from curator.execution.job import Job, RunResult
from curator.execution.pool import LocalPool, Pool, PoolSettings
from curator.progress import CancelCheck, Progress

# (problem id, test id, tests done, tests collected or None), as each test finishes.
TestProgress = Callable[[str, str, int, "int | None"], None]

BACKENDS = ("local", "ray")


def resolve_backend(conf: ExecutionConfig | None, backend: str | None = None,
                    address: str | None = None) -> tuple[str, str | None]:
    """(backend, address) from explicit values, else [execution] backend/address.

    An address without a backend means ray; the configured address applies to ray only.
    """
    conf = conf or ExecutionConfig()
    backend = backend or ("ray" if address else None) or conf.backend or "local"
    if backend not in BACKENDS:
        raise CuratorError(f"unknown execution backend {backend!r} (use "
                           f"{' or '.join(BACKENDS)})")
    if backend == "ray":
        address = address or conf.address or None
    return backend, address


WORKERS_VAR = "CURATOR_WORKERS"


def default_workers() -> int:
    """Workers when neither the command nor [execution] workers says: CURATOR_WORKERS
    when set (a whole number of at least 1), else the CPUs this process may use."""
    value = os.environ.get(WORKERS_VAR, "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise CuratorError(f"{WORKERS_VAR}={value!r}: expected a whole number of "
                               "at least 1")
        return int(value)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class Engine:
    def __init__(self, workers: int | None = None, preload: Iterable[str] = (),
                 isolation: str = "auto", hide: Iterable[str] = (),
                 pool: Pool | None = None, backend: str = "local",
                 address: str | None = None, **pool_options):
        self.workers = workers or default_workers()
        if pool is None and backend == "ray":   # workers = warm workers per node (0: CPUs)
            from curator.execution.ray_pool import RayPool

            pool = RayPool(PoolSettings(
                workers=workers or 0, preload=tuple(preload), isolation=isolation,
                hide=tuple(str(h) for h in hide), **pool_options), address=address)
        self.pool = pool or LocalPool(PoolSettings(
            workers=self.workers, preload=tuple(preload), isolation=isolation,
            hide=tuple(str(h) for h in hide), **pool_options))
        self._started = False

    @property
    def isolation(self) -> str:
        return self.pool.info()["isolation"]

    def info(self) -> dict:
        return self.pool.info()

    def __enter__(self) -> Engine:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        if not self._started:
            self.pool.start()
            self._started = True

    def close(self) -> None:
        if self._started:
            self.pool.close()
            self._started = False

    def run(self, jobs: Iterable[Job], progress: Progress | None = None,
            cancelled: CancelCheck | None = None,
            test_progress: TestProgress | None = None) -> Iterator[RunResult]:
        """Execute jobs; yield each result as it finishes. Cancelling skips unstarted jobs.

        test_progress(problem id, test id, tests done, tests collected or None) hears of
        each test as it finishes, on pools that report them (the local one)."""
        self.start()
        jobs = list(jobs)
        total = len(jobs)
        if progress:
            progress(0, total, "")
        note = getattr(self.pool, "progress_note", None)   # cluster pools: runs/s, nodes
        if test_progress is not None and getattr(self.pool, "supports_test_progress", False):
            results = self.pool.run(jobs, cancelled, test_progress=test_progress)
        else:
            results = self.pool.run(jobs, cancelled)
        for done, result in enumerate(results, start=1):
            if progress:
                label = f"{result.problem_id}: {result.outcome}"
                progress(done, total, f"{label} · {note()}" if note else label)
            yield result
