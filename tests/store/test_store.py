"""The store: migrations, WAL, foreign keys, the append-only audit log, two writers."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from curator.errors import StoreError
from curator.problem import Problem
from curator.store import Store, migrations
from curator.store import problems as problem_store


def schema(path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return sorted(conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchall())
    finally:
        conn.close()


def test_fresh_database_is_at_latest_version_with_wal_and_foreign_keys(tmp_path):
    with Store(tmp_path / "c.sqlite", "ann") as store:
        assert store.execute("PRAGMA user_version").fetchone()[0] == migrations.latest_version()
        assert store.journal_mode == "wal"
        assert store.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert store.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
        axes = {r["axis"] for r in store.labels()}
        assert axes == {"stage", "task", "data"}
        assert len(store.labels("task")) == 7


@pytest.mark.parametrize("migration", migrations.all_migrations(), ids=lambda m: m.name)
def test_each_migration_from_previous_version_matches_fresh_build(tmp_path, migration):
    """Migrating step by step gives the same schema as migrating in one go."""
    stepwise = tmp_path / "step.sqlite"
    conn = sqlite3.connect(stepwise, isolation_level=None)
    earlier = [m.version for m in migrations.all_migrations() if m.version < migration.version]
    previous = earlier[-1] if earlier else 0   # numbering may have gaps
    migrations.migrate(conn, target=previous)
    assert migrations.current_version(conn) == previous
    migrations.migrate(conn, target=migration.version)
    assert migrations.current_version(conn) == migration.version
    migrations.migrate(conn)
    conn.close()
    fresh = tmp_path / "fresh.sqlite"
    conn = sqlite3.connect(fresh, isolation_level=None)
    migrations.migrate(conn)
    conn.close()
    assert schema(stepwise) == schema(fresh)


def test_migrating_twice_is_a_no_op(tmp_path):
    path = tmp_path / "c.sqlite"
    Store(path).close()
    before = schema(path)
    Store(path).close()
    assert schema(path) == before


def test_newer_schema_version_is_refused_with_one_line(tmp_path):
    path = tmp_path / "c.sqlite"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError) as err:
        Store(path)
    message = str(err.value)
    assert str(path) in message and "newer" in message and "\n" not in message


def test_unreadable_database_is_refused_with_one_line(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database at all, just text" * 100)
    with pytest.raises(StoreError) as err:
        Store(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_folder_as_database_is_refused(tmp_path):
    with pytest.raises(StoreError):
        Store(tmp_path)


def test_audit_log_records_who_what_before_after_and_is_append_only(tmp_path):
    with Store(tmp_path / "c.sqlite", "alice") as store:
        problem = Problem(id="p1", entry_point="f", prompt="x", solution="def f(): pass\n",
                          tests="def test_f(): pass\n", stage="model")
        problem_store.save(store, problem)
        problem_store.update_fields(store, "p1", stage="training", task="general")
        rows = store.history("problem", "p1")
        assert [r["action"] for r in rows] == ["create", "update", "update"]
        stage_row = next(r for r in rows if r["field"] == "stage")
        assert (stage_row["actor"], stage_row["before"], stage_row["after"]) == (
            "alice", "model", "training")
        assert all(r["at"] for r in rows)
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store.execute("UPDATE audit SET actor = 'mallory'")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store.execute("DELETE FROM audit")


def test_unchanged_save_writes_no_audit_row(tmp_path):
    with Store(tmp_path / "c.sqlite", "alice") as store:
        problem = Problem(id="p1", entry_point="f", tests="def test(): pass\n")
        problem_store.save(store, problem)
        count = store.one("SELECT count(*) AS n FROM audit")["n"]
        assert problem_store.save(store, problem) == []
        assert store.one("SELECT count(*) AS n FROM audit")["n"] == count


def test_label_definitions_are_editable_and_audited(tmp_path):
    with Store(tmp_path / "c.sqlite", "bob") as store:
        store.set_label_text("data", "other", definition="Everything else.")
        row = [r for r in store.labels("data") if r["slug"] == "other"][0]
        assert row["definition"] == "Everything else."
        assert store.history("label", "data/other")[0]["after"] == "Everything else."


def test_failed_transaction_rolls_back_everything(tmp_path):
    with Store(tmp_path / "c.sqlite", "a") as store:
        with pytest.raises(RuntimeError), store.transaction():
            problem_store.save(store, Problem(id="p1", entry_point="f", tests="x\n"))
            raise RuntimeError("boom")
        assert not problem_store.exists(store, "p1")
        assert store.one("SELECT count(*) AS n FROM audit")["n"] == 0


WRITER = r"""
import sys
from curator.store import Store
from curator.store import problems as ps
from curator.problem import Problem
store = Store(sys.argv[1], sys.argv[2])
for i in range(int(sys.argv[3])):
    ps.save(store, Problem(id=f"{sys.argv[2]}-{i}", entry_point="f", tests="def test(): pass\n"))
    ps.update_fields(store, f"{sys.argv[2]}-{i}", stage="model")
store.close()
"""


def test_two_processes_write_concurrently_without_losing_anything(tmp_path):
    path = tmp_path / "c.sqlite"
    Store(path).close()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), who, "60"],
                              stderr=subprocess.PIPE, text=True)
             for who in ("alice", "bob")]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    with Store(path) as store:
        assert store.one("SELECT count(*) AS n FROM problems")["n"] == 120
        assert store.one("SELECT count(*) AS n FROM problems WHERE stage = 'model'")["n"] == 120
        actors = store.query("SELECT actor, count(*) AS n FROM audit GROUP BY actor")
        assert {r["actor"]: r["n"] for r in actors} == {"alice": 120, "bob": 120}
