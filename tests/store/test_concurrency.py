"""Writers never crash each other: a long import, two evaluations and the app's queries
at once, as real processes on one real SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from curator.errors import StoreError
from curator.evaluation import claims as claims_mod
from curator.evaluation.outcomes import sample_outcomes
from curator.store import Store, lock_holder
from curator.store import problems as problem_store
from tests.samples_support import make_problems, write_jsonl


class Proc:
    """A curator process whose output goes to files (a full pipe would block it)."""

    def __init__(self, ws, name: str, *args: str):
        self.out = ws.root / f"{name}.out"
        self.err = ws.root / f"{name}.err"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "curator", "--workspace", str(ws.root), *args],
                stdout=out, stderr=err, env={**os.environ, "CURATOR_USER": "tester"})

    def poll(self):
        return self.proc.poll()

    def finish(self, timeout: float = 600) -> tuple[int, str, str]:
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        return code, self.out.read_text(), self.err.read_text()


def curator(ws, *args: str) -> Proc:
    curator.count = getattr(curator, "count", 0) + 1
    return Proc(ws, f"proc{curator.count}", *args)


def test_a_lock_past_the_busy_timeout_names_its_holder(empty_workspace):
    holder = Store(empty_workspace.db_path, "a")
    waiter = Store(empty_workspace.db_path, "b", busy_timeout_ms=200)
    try:
        with holder.transaction():
            assert f"pid {os.getpid()}" in lock_holder(empty_workspace.db_path)
            with pytest.raises(StoreError) as caught:
                with waiter.transaction():
                    pass
            message = str(caught.value)
            assert "\n" not in message and "locked by pid" in message
            # readers are not blocked by the writer (WAL)
            assert waiter.one("SELECT COUNT(*) AS n FROM labels")["n"] > 0
        assert lock_holder(empty_workspace.db_path) is None
    finally:
        holder.close()
        waiter.close()


def test_claims_are_atomic_and_stale_ones_are_taken_over(store, tmp_path):
    make_problems(store)
    from tests.samples_support import add_samples

    ids = add_samples(store, tmp_path, [{"task_id": "add_one", "solution": f"x = {i}"}
                                        for i in range(6)])
    first, second = claims_mod.Claims(store), claims_mod.Claims(store)
    assert first.claim(ids[:4]) == set(ids[:4])
    assert second.claim(ids) == set(ids[4:])
    # a claim of a process that is gone can be taken over
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    store.execute("UPDATE sample_claims SET pid = ? WHERE owner = ?", (int(dead), first.owner))
    assert second.claim(ids[:4]) == set(ids[:4])
    second.release()
    assert store.one("SELECT COUNT(*) AS n FROM sample_claims")["n"] == 0


@pytest.mark.slow
def test_long_import_two_evals_and_the_apps_queries_at_once(workspace, tmp_path):
    with Store(workspace.db_path, "tester") as store:
        make_problems(store)
    few = write_jsonl(tmp_path / "few.jsonl", [
        {"task_id": "double_it", "solution": f"def double(x):\n    return x * 2 + {i % 2}\n",
         "sample_index": i} for i in range(16)])
    code, _out, err = curator(workspace, "samples", "import", str(few), "--model", "m1").finish()
    assert code == 0, err
    rows = 12_000
    big = write_jsonl(tmp_path / "big.jsonl", [
        {"task_id": "add_one", "solution": f"def add_one(x):\n    return x + 1  # {i}\n",
         "sample_index": i} for i in range(rows)])
    importer = curator(workspace, "samples", "import", str(big), "--model", "m2", "--json")
    time.sleep(0.5)
    evals = [curator(workspace, "samples", "eval", "--model", "m1", "--workers", "1", "--json")
             for _ in range(2)]
    reader = Store(workspace.db_path, "app")
    queries = 0
    try:
        while any(p.poll() is None for p in (importer, *evals)):
            # what the app's tables and panes ask while the others write
            assert len(problem_store.list_rows(reader)) >= 3
            sample_outcomes(reader)
            reader.query("SELECT model, COUNT(*) AS n FROM samples GROUP BY model")
            queries += 1
            code, _out, err = curator(workspace, "problems", "list", "--json").finish(120)
            assert code == 0 and "Traceback" not in err, err
    finally:
        reader.close()
        results = [p.finish() for p in (importer, *evals)]
    for code, _out, err in results:
        assert code == 0, err
        assert "Traceback" not in err and "locked" not in err
    assert json.loads(results[0][1])["imported"] == rows
    reports = [json.loads(out) for _code, out, _err in results[1:]]
    assert sum(r["evaluated"] for r in reports) == 16
    with Store(workspace.db_path, "tester") as store:
        runs = store.query("SELECT s.id, COUNT(r.id) AS n FROM samples s JOIN runs r "
                           "ON r.sample_id = s.id WHERE s.model = 'm1' GROUP BY s.id")
        assert len(runs) == 16 and all(r["n"] == 1 for r in runs)  # nothing evaluated twice
        assert store.one("SELECT COUNT(*) AS n FROM samples WHERE model = 'm2'")["n"] == rows
        assert store.one("SELECT COUNT(*) AS n FROM sample_claims")["n"] == 0
    assert queries > 0
