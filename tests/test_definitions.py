"""One definition per concept (docs/ARCHITECTURE.md#one-definition-of-each-thing): the
places that use outcomes, verdicts, labels, timestamps and pass@k agree with it."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta, timezone

import pytest
from samples_support import add_samples, make_problems, record_run

from curator import taxonomy, timestamps
from curator.evaluation import report
from curator.evaluation.pass_at_k import model_key, per_problem
from curator.execution.job import OUTCOMES
from curator.release import datasheet
from curator.release.gates import Settings
from curator.review import annotations
from curator.store import Store
from curator.store.migrations import migrate
from curator.tui import filtering


def test_the_runs_table_accepts_exactly_the_outcomes(empty_workspace):
    with Store(empty_workspace.db_path, "tester") as store:
        make_problems(store)
        for outcome in OUTCOMES:
            record_run(store, "add_one", outcome)
        stored = [r["outcome"] for r in store.query("SELECT outcome FROM runs ORDER BY id")]
        assert stored == list(OUTCOMES)
        with pytest.raises(sqlite3.IntegrityError):
            store.execute("UPDATE runs SET outcome = 'bogus'")


def test_an_old_database_learns_tampered(tmp_path):
    conn = sqlite3.connect(tmp_path / "old.sqlite", isolation_level=None)
    migrate(conn, target=11)
    conn.execute("INSERT INTO problems (id, title, entry_point, kind, status, created_at, "
                 "updated_at) VALUES ('p', 't', 'f', 'function', 'draft', 'x', 'x')")
    insert = ("INSERT INTO runs (problem_id, solution_kind, solution_hash, outcome, "
              "started_at, actor, job_id) VALUES ('p', 'reference', 'h', ?, 'x', 'a', 'j')")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(insert, ("tampered",))
    other = sqlite3.connect(tmp_path / "old.sqlite", isolation_level=None)
    other.execute("SELECT COUNT(*) FROM runs").fetchone()   # caches the old schema
    migrate(conn)
    conn.execute(insert, ("tampered",))
    other.execute(insert, ("tampered",))                    # reloads the new one
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(insert, ("bogus",))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_the_app_filter_knows_every_outcome():
    assert filtering.KEYS["run"][1] == OUTCOMES
    assert filtering.parse("run:tampered").include == {"outcome": {"tampered"}}


def test_verdicts_come_from_the_taxonomy_file():
    doc = taxonomy.default_document()
    assert taxonomy.VERDICTS == tuple(v["id"] for v in doc["verdicts"])
    tax = taxonomy.from_document(doc, 1)
    for verdict in doc["verdicts"]:
        value = annotations.make(tax, verdict=verdict["id"])
        assert annotations.format_label(value.to_json(), tax) == f"verdict: {verdict['name']}"
    with pytest.raises(Exception, match="unknown verdict"):
        annotations.make(tax, verdict="looks-fine")


def test_one_label_format_for_the_cli_and_the_app():
    tax = taxonomy.from_document(taxonomy.default_document(), 1)
    value = annotations.make(tax, pairs=[("5", "misses n=0"), ("8/dl-api-usage", "")])
    name5, name8 = tax.category("5").name, tax.category("8").name
    assert annotations.format_label(value.to_json(), tax) == (
        f"5 {name5}: misses n=0; 8 {name8} / dl-api-usage: (no reason)")
    assert annotations.format_label(value.to_json()) == (
        "5: misses n=0; 8 / dl-api-usage: (no reason)")
    assert annotations.format_label(None, tax) == "not labelled yet"


@pytest.mark.parametrize("text, expected", [
    ("2026-03-01T10:00:00", datetime(2026, 3, 1, 10, tzinfo=UTC)),
    ("2026-03-01T10:00:00+00:00", datetime(2026, 3, 1, 10, tzinfo=UTC)),
    ("2026-03-01T12:00:00+02:00", datetime(2026, 3, 1, 10, tzinfo=UTC)),
    ("2026-03-01T05:30:00-04:30", datetime(2026, 3, 1, 10, tzinfo=UTC)),
])
def test_timestamps_without_a_zone_are_utc(text, expected):
    assert timestamps.parse(text) == expected
    assert timestamps.parse(text).utcoffset() is not None
    assert timestamps.parse_or_none(text) == expected


def test_timestamps_ignore_the_local_zone(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    import time
    time.tzset()
    try:
        assert timestamps.parse("2026-03-01T10:00:00") == datetime(
            2026, 3, 1, 15, 30, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_bad_timestamps():
    assert timestamps.parse_or_none("") is None
    assert timestamps.parse_or_none("yesterday") is None
    with pytest.raises(ValueError, match="yesterday"):
        timestamps.parse("yesterday")
    assert timestamps.parse(timestamps.now()).tzinfo is not None


def test_technique_naming():
    assert model_key("m", "cot", {"cot"}) == "m"
    assert model_key("m", "cot", {"cot", ""}) == "m [cot]"
    assert model_key("m", "", {"cot", ""}) == "m [default]"
    rows = [("m", "a", "p1", True), ("m", "b", "p1", False), ("m", "b", "p2", None),
            ("x", "", "p1", True), ("x", "", "p1", False), ("x", "", "skip", True)]
    assert per_problem(rows, skip={"skip"}) == {
        "m [a]": {"p1": (1, 1)}, "m [b]": {"p1": (1, 0)}, "x": {"p1": (2, 1)}}


def test_report_and_datasheet_name_a_model_alike(empty_workspace, tmp_path):
    """`curator report` and a release's README label the same model the same way."""
    with Store(empty_workspace.db_path, "tester") as store:
        problems = make_problems(store)
        record_run(store, "add_one", "passed")
        for technique, outcome in (("zero-shot", "passed"), ("cot", "failed")):
            path = tmp_path / f"{technique}.jsonl"
            path.write_text(json.dumps({"task_id": "add_one", "technique": technique,
                                        "solution": f"# {technique}\n"}) + "\n")
            from curator.evaluation import samples as sample_files
            ids = sample_files.import_files(store, [path], model="m1").sample_ids
            record_run(store, "add_one", outcome, ids[0])
        one = add_samples(store, tmp_path, [{"task_id": "add_one", "technique": "cot",
                                             "solution": "# solo\n"}], model="solo")
        record_run(store, "add_one", "passed", one[0])
        keys = set(report.build(store)["models"])
        assert keys == {"m1 [zero-shot]", "m1 [cot]", "solo"}
        results = [{"task_id": "b/add_one", "solution_kind": "reference", "outcome": "passed"}]
        for row in store.query("SELECT s.model, s.technique, r.outcome FROM samples s "
                               "JOIN runs r ON r.sample_id = s.id"):
            results.append({"task_id": "b/add_one", "solution_kind": "sample", **row})
        facts = datasheet.Facts("b", "1.0.0", "MIT", [problems["add_one"]],
                                {"problems": 1}, results, [], Settings())
        table = datasheet._pass_at_k(facts)
        named = {line.split("|")[1].strip() for line in table[2:] if line.startswith("| ")}
        assert keys <= named


def test_one_cancellation_mechanism():
    from curator.errors import Cancelled, CuratorError
    from curator.mining.index import MiningCancelled
    from curator.progress import checkpoint

    checkpoint(None, "x")
    checkpoint(lambda: False, "x")
    with pytest.raises(Cancelled, match="release build cancelled"):
        checkpoint(lambda: True, "release build")
    assert issubclass(Cancelled, CuratorError) and MiningCancelled is Cancelled


def test_the_core_never_raises_keyboard_interrupt_as_a_cancel_signal():
    """Only the CLI's own SIGINT handler re-raises a real second Ctrl-C."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1] / "curator"
    offenders = [str(p) for p in root.rglob("*.py")
                 if p.parent.name not in ("cli", "tui")
                 and "raise KeyboardInterrupt" in p.read_text(encoding="utf-8")]
    assert offenders == []
