"""The Ray backend on a real local Ray cluster (a head started with `ray start`, 2 CPUs).

One cluster per module; teardown stops exactly the processes of that cluster (its session),
never other Ray instances on the machine.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest
from requirements_support import import_or_fail

from curator import runs
from curator.execution.engine import Engine
from curator.execution.job import Job, Limits
from curator.store import problems as problem_store

ray = import_or_fail("ray")
pytestmark = pytest.mark.ray

BIN = Path(sys.executable).parent
ADD_TESTS = textwrap.dedent("""\
    from solution import add


    def test_small():
        assert add(1, 2) == 3


    def test_negative():
        assert add(-1, -2) == -3
    """)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _session_pids(sid: int, needle: str) -> list[int]:
    """Live processes of the cluster: in the `ray start` session or naming its temp dir."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if fields[0] != b"Z" and (int(fields[3]) == sid or needle.encode() in cmdline):
            found.append(int(entry.name))
    return found


def _stop_cluster(sid: int, temp: str) -> None:
    for _ in range(20):
        pids = _session_pids(sid, temp)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)


@pytest.fixture(scope="module")
def ray_cluster():
    """address of a fresh head node on 127.0.0.1 with 2 CPUs; this process is connected."""
    temp = tempfile.mkdtemp(prefix="cur-ray-", dir="/tmp")   # short: socket paths are capped
    port = _free_port()
    command = [str(BIN / "ray"), "start", "--head", "--node-ip-address", "127.0.0.1",
               "--port", str(port), "--num-cpus", "2", "--disable-usage-stats",
               "--include-dashboard=false", "--dashboard-port", str(_free_port()),
               "--temp-dir", temp]
    # A token in ~/.ray (left by any local ray.init) would turn token auth on for the head
    # but not for drivers given an explicit address: say "disabled" to both, explicitly.
    saved_mode = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    # Notice a lost node within a couple of seconds, not the default ~30 s.
    env = {**os.environ, "RAY_TMPDIR": temp, "RAY_health_check_period_ms": "500",
           "RAY_health_check_failure_threshold": "3", "RAY_health_check_timeout_ms": "1000"}
    starter = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=env, start_new_session=True)
    sid = starter.pid
    try:
        out, _ = starter.communicate(timeout=120)
        assert starter.returncode == 0, out.decode(errors="replace")[-2000:]
        address = f"127.0.0.1:{port}"
        ray.init(address=address, log_to_driver=False, logging_level="warning")
        yield address
    finally:
        if ray.is_initialized():
            ray.shutdown()
        _stop_cluster(sid, temp)
        shutil.rmtree(temp, ignore_errors=True)
        if saved_mode is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = saved_mode


@pytest.fixture(scope="module")
def ray_engine(ray_cluster):
    engine = Engine(backend="ray", address=ray_cluster)
    engine.start()
    yield engine
    engine.close()


def add_job(delay: float = 0.0, solution: str | None = None, timeout: float = 20.0) -> Job:
    code = solution or (f"import time\ntime.sleep({delay})\n\n\n" if delay else "") + \
        "def add(a, b):\n    return a + b\n"
    return Job(problem_id="add", solution=code, tests=ADD_TESTS, entry_point="add",
               limits=Limits(timeout_s=timeout))


def _live_runner(engine: Engine):
    live = [r for r in engine.pool.runners if r.ready and not r.dead]
    assert live
    return live[0]


# -- same outcomes ---------------------------------------------------------------------------


def _mixed_jobs(store, workspace) -> list[Job]:
    """Every seed reference plus solutions that fail in different ways."""
    problems = problem_store.all_problems(store)
    jobs = [runs.job_for(store, workspace, p, p.solution) for p in problems]
    first = problems[0]
    body = f"def {first.function_name}(*args, **kwargs):\n    return None\n" \
        if first.kind == "function" else "raise RuntimeError('nope')\n"
    broken = {
        "wrong": body,
        "import_error": "import no_such_module_for_curator\n" + first.solution,
        "syntax": "def broken(:\n",
        "empty": "",
        "raises": "raise ValueError('boom at import')\n",
        "slow": "import time\ntime.sleep(30)\n" + first.solution,
    }
    for name, code in broken.items():
        limits = Limits(timeout_s=2.0) if name == "slow" else None
        jobs.append(runs.job_for(store, workspace, first, code, "sample", limits))
    return jobs


def _verdicts(results) -> dict[str, tuple]:
    return {r.job_id: (r.problem_id, r.outcome, tuple(sorted((t["id"], t["outcome"])
                                                             for t in r.tests)))
            for r in results}


def test_same_jobs_same_outcomes_on_local_and_ray(ray_engine, workspace, store):
    jobs = _mixed_jobs(store, workspace)
    with Engine(workers=2, hide=[str(workspace.root)]) as local:
        on_local = _verdicts(local.run(jobs))
    labels = []
    on_ray = _verdicts(ray_engine.run(jobs, progress=lambda d, t, label: labels.append(label)))
    assert len(on_local) == len(on_ray) == len(jobs)
    assert on_ray == on_local
    outcomes = Counter(v[1] for v in on_ray.values())
    assert outcomes["passed"] == len(jobs) - 6
    assert {"failed", "error", "no_code", "timeout"} <= set(outcomes)
    # progress across the cluster: runs/s and per-node counts
    assert "runs/s" in labels[-1]
    stats = ray_engine.pool.stats()
    assert stats["done"] == len(jobs)
    assert sum(n["done"] for n in stats["nodes"].values()) == len(jobs)
    info = ray_engine.info()
    assert info["backend"] == "ray" and info["workers"] == 2 and info["nodes"] == 1


# -- faults ------------------------------------------------------------------------------------


def test_killed_runner_mid_batch_loses_and_duplicates_nothing(ray_engine):
    jobs = [add_job(0.1) for _ in range(24)]
    seen = []
    for result in ray_engine.run(jobs):
        seen.append(result)
        if len(seen) == 4:
            victim = _live_runner(ray_engine)
            assert victim.inflight > 0
            ray.kill(victim.handle)
    ids = [r.job_id for r in seen]
    assert len(ids) == len(set(ids)) == len(jobs)
    assert set(ids) == {j.job_id for j in jobs}
    assert {r.outcome for r in seen} == {"passed"}
    stats = ray_engine.pool.stats()
    assert stats["lost_runners"] == 1 and stats["retried"] >= 1
    assert stats["duplicates"] == 0


def test_lost_node_mid_batch_its_jobs_run_elsewhere(ray_cluster, ray_engine):
    node = subprocess.Popen([str(BIN / "ray"), "start", "--address", ray_cluster,
                             "--num-cpus", "1", "--disable-usage-stats"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        assert node.wait(timeout=120) == 0
        pool = ray_engine.pool
        assert pool.refresh(wait_s=120) == 2
        joined = next(r for r in pool.runners if r.ready and not r.dead and r.workers == 1)
        jobs = [add_job(0.2) for _ in range(20)]
        seen, killed = [], False
        for result in ray_engine.run(jobs):
            seen.append(result)
            if not killed and len(seen) >= 3 and joined.inflight > 0:
                _stop_cluster(node.pid, "/nonexistent/")   # the whole node, raylet and all
                killed = True
        assert killed
    finally:
        _stop_cluster(node.pid, "/nonexistent/")
    ids = [r.job_id for r in seen]
    assert sorted(ids) == sorted(j.job_id for j in jobs)   # each exactly once
    assert {r.outcome for r in seen} == {"passed"}
    stats = pool.stats()
    assert stats["retried"] >= 1 and stats["duplicates"] == 0
    assert joined.dead and stats["lost_runners"] >= 1


def test_cancel_stops_cleanly_and_the_pool_stays_usable(ray_engine):
    jobs = [add_job(0.3) for _ in range(16)]
    seen = []
    for result in ray_engine.run(jobs, cancelled=lambda: len(seen) >= 2):
        seen.append(result)  # noqa: PERF402 - the cancel check reads `seen` as it grows
    assert 2 <= len(seen) < len(jobs)
    assert len({r.job_id for r in seen}) == len(seen)
    again = list(ray_engine.run([add_job(), add_job()]))
    assert [r.outcome for r in again] == ["passed", "passed"]


def test_retries_are_bounded_then_infra(ray_engine):
    """Runs last on the shared engine: it leaves the pool without a runner."""
    pool = ray_engine.pool
    pool.max_attempts, pool.max_replacements = 1, 0   # no retry, no replacement runner
    jobs = [add_job(0.2) for _ in range(12)]
    seen = []
    for result in ray_engine.run(jobs):
        seen.append(result)
        if len(seen) == 1:
            ray.kill(_live_runner(ray_engine).handle)
    assert sorted(r.job_id for r in seen) == sorted(j.job_id for j in jobs)
    infra = [r for r in seen if r.outcome == "infra"]
    gave_up = [r for r in infra if "gave up after 1 attempt" in r.reason]
    left = [r for r in infra if "no Ray node is left" in r.reason]
    assert gave_up and len(gave_up) + len(left) == len(infra)
    assert {r.outcome for r in seen} <= {"passed", "infra"}
    assert pool.stats()["duplicates"] == 0


# -- the CLI and an interrupted driver ------------------------------------------------------------


def _samples(store, tmp_path, n: int) -> list[int]:
    from samples_support import add_samples

    problems = problem_store.all_problems(store)
    rows = [{"task_id": p.id, "sample_index": i,
             "solution": "import time\ntime.sleep(0.3)\n\n\n" + p.solution}
            for i in range(2) for p in problems][:n]
    return add_samples(store, tmp_path, rows)


def _eval_command(workspace, address: str) -> list[str]:
    return [str(BIN / "curator"), "--workspace", str(workspace.root), "samples", "eval",
            "--backend", "ray", "--address", address, "--json"]


def test_resume_after_an_interrupted_driver(ray_cluster, ray_engine, workspace, store,
                                            tmp_path):
    ray_engine.close()   # its runner holds the cluster's CPUs; the drivers below need them
    ids = _samples(store, tmp_path, 12)
    env = {**os.environ, "CURATOR_USER": "tester"}
    driver = subprocess.Popen(_eval_command(workspace, ray_cluster), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env)
    count = "SELECT COUNT(*) AS n FROM runs WHERE sample_id IS NOT NULL"
    deadline = time.monotonic() + 120
    while store.one(count)["n"] < 3:
        assert driver.poll() is None, driver.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    driver.kill()
    driver.wait()
    driver.stderr.close()
    interrupted = store.one(count)["n"]
    assert 3 <= interrupted < len(ids)

    done = subprocess.run(_eval_command(workspace, ray_cluster), capture_output=True, text=True,
                          env=env, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    report = json.loads(done.stdout)
    assert report["skipped"] == interrupted
    assert report["evaluated"] == len(ids) - interrupted
    assert report["cluster"]["done"] == len(ids) - interrupted, report
    rows = store.query("SELECT sample_id, outcome FROM runs WHERE sample_id IS NOT NULL")
    assert sorted(r["sample_id"] for r in rows) == sorted(ids)   # each exactly once
    assert {r["outcome"] for r in rows} == {"passed"}


# -- repo-backed runs on any node ------------------------------------------------------------


def test_repo_backed_runs_prepare_their_checkout_on_the_node(ray_cluster, tmp_path):
    """A node that does not see the driver's checkout builds the pinned one itself."""
    from repo_support import make_repo, mine_and_accept

    from curator.store import Store

    upstream = make_repo(tmp_path / "mathlib", {
        "conftest.py": "", "mathlib/__init__.py": "",
        "mathlib/ops.py": "def triple(x):\n    return 3 * x\n",
        "tests/test_ops.py": "from mathlib.ops import triple\n\n\n"
                             "def test_triple():\n    assert triple(2) == 6\n"})
    ws, _ = mine_and_accept(tmp_path, upstream, "triple", "triple", isolation="auto")
    with Store(ws.db_path, "tester") as store:
        problem = problem_store.get(store, "triple")
        good = runs.job_for(store, ws, problem, problem.solution)
        wrong = runs.job_for(store, ws, problem, "def triple(x):\n    return x\n")
    assert good.repo == {"url": str(upstream), "commit": problem.source["commit"],
                         "lock": None, "python_version": None}
    for job in (good, wrong):
        job.repo_dir = str(tmp_path / "not-on-this-node")   # as seen from another host
    node_cache = tmp_path / "node"
    with Engine(backend="ray", address=ray_cluster,
                extra={**runs.REPO_PREPARING, "node_cache": str(node_cache)}) as engine:
        results = {r.job_id: r for r in engine.run([good, wrong])}
    assert results[good.job_id].outcome == "passed", results[good.job_id].reason
    assert results[wrong.job_id].outcome == "failed"
    (worktree,) = [p for p in (node_cache / "db" / "repos" / "worktrees").iterdir()
                   if not p.name.startswith(".")]   # .NAME.json lists missing blobs
    assert (worktree / "mathlib" / "ops.py").is_file()
