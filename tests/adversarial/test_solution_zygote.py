"""A solution process stopping its zygote costs only its own run.

The zygote forks every solution process of its worker. Started by an ordinary user, a
run's solution process has the zygote's uid and can SIGSTOP its parent (as root it cannot:
its uid is its own; the test stops it from outside, during a run, as such a solution
would). The worker saw a stopped zygote as alive: every later run of that worker waited
30 s for a pid that never came and was `infra` ("the solution zygote did not answer"),
and the worker was never replaced. A stopped zygote now counts as gone: the run during
which it stopped is `crashed` and names it, the worker starts again, later runs pass.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from execution_support import GOOD_SOLUTION, engine_fixture, job

engine = engine_fixture()

SLOW = "import time\n\n\ndef add(a, b):\n    time.sleep(3)\n    return a + b\n"


def _children(pid):
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                found += [int(p) for p in fh.read().split()]
        except OSError:
            pass
    return found


def _started(pid):
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[19])


def _is_worker(pid):
    """A process running the worker's code (bwrap's arguments name it too)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().split(b"\0")[1:3] == [b"-m", b"curator.execution.worker"]
    except OSError:
        return False


def zygote_of(top):
    """The worker's oldest child process running the worker's code (the judge of the
    current run is younger), under the pool's process `top` (bwrap's, or the worker)."""
    pid = top
    while not _is_worker(pid):   # down bwrap's processes to the worker
        kids = _children(pid)
        if not kids:
            return None
        pid = kids[0]
    kids = [k for k in _children(pid) if _is_worker(k)]
    return min(kids, key=_started) if kids else None


def test_a_stopped_zygote_costs_only_the_run_that_stopped_it(engine):
    stopped = []

    def stop_the_zygote():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not stopped:
            for top in engine.pool.worker_pids(busy_only=True):
                time.sleep(1.5)   # the run's solution process is in its call
                zygote = zygote_of(top)
                if zygote is not None:
                    os.kill(zygote, signal.SIGSTOP)
                    stopped.append(zygote)
                    return
            time.sleep(0.1)

    stopper = threading.Thread(target=stop_the_zygote)
    stopper.start()
    try:
        slow = job(SLOW, timeout=60)
        result = next(iter(engine.run([slow])))
    finally:
        stopper.join()
    assert stopped, "no zygote found"
    assert result.outcome == "crashed" and "zygote" in result.reason, (result.outcome,
                                                                      result.reason)
    # with the stopped zygote kept, each of these waited 30 s for a pid and was `infra`
    # (no wall-clock bound here: on a loaded machine two good runs took 27 s)
    later = list(engine.run([job(GOOD_SOLUTION), job(GOOD_SOLUTION)]))
    assert [r.outcome for r in later] == ["passed", "passed"], [(r.outcome, r.reason)
                                                                for r in later]
