"""Exchanging labels between machines: export, merge without loss or duplicates, conflicts."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from samples_support import add_samples, make_problems, record_run

from curator import review
from curator import workspace as workspace_mod
from curator.cli import main
from curator.errors import CuratorError
from curator.review import exchange
from curator.store import Store

ROWS = [{"task_id": "add_one", "solution": f"def add_one(x):\n    return x + {i}\n"}
        for i in range(2, 6)]


def machine(tmp_path, name: str, extra_first: bool = False):
    ws = workspace_mod.init(tmp_path / name)
    store = Store(ws.db_path, name)
    make_problems(store)
    record_run(store, "add_one", "passed")
    if extra_first:  # different local ids for the same samples
        add_samples(store, tmp_path, [{"task_id": "double_it", "solution": "x = 1"}],
                    name=f"{name}-extra.jsonl")
    ids = add_samples(store, tmp_path, ROWS, name="shared.jsonl")
    for sample_id in ids:
        record_run(store, "add_one", "failed", sample_id)
    return ws, store, ids


@pytest.fixture
def machines(tmp_path):
    a = machine(tmp_path, "alice")
    b = machine(tmp_path, "bob", extra_first=True)
    yield a, b
    a[1].close()
    b[1].close()


def test_merge_without_loss_or_duplicates(machines, tmp_path):
    (_, a, a_ids), (_, b, b_ids) = machines
    assert a_ids != b_ids
    review.label(a, a_ids[0], "alice", pairs=[("8", "wrong attribute")])
    review.label(a, a_ids[1], "alice", verdict="sample-correct")
    review.adjudicate(a, a_ids[1], accept="alice")
    review.label(b, b_ids[0], "bob", pairs=[("10", "off by one")])
    path = tmp_path / "alice.jsonl"
    text, count = exchange.export_jsonl(a, path)
    assert count == 3 and path.read_text(encoding="utf-8") == text
    rows = [json.loads(line) for line in text.splitlines()]
    assert {r["kind"] for r in rows} == {"label", "final"}
    assert all(len(r["sample"]) == 64 for r in rows)

    report = exchange.import_jsonl(b, path)
    assert report.to_json() == {"added": 3, "updated": 0, "unchanged": 0, "conflicts": [],
                                "errors": []}
    labels = {(r["sample_id"], r["annotator"]): r for r in
              (dict(x) for x in b.query("SELECT * FROM review_labels"))}
    assert set(labels) == {(b_ids[0], "alice"), (b_ids[0], "bob"), (b_ids[1], "alice")}
    assert labels[(b_ids[0], "alice")]["labelled_at"] == rows[0]["labelled_at"]
    assert b.one("SELECT * FROM review_final")["sample_id"] == b_ids[1]
    # Re-importing is a no-op.
    again = exchange.import_jsonl(b, path)
    assert (again.added, again.updated, again.unchanged, again.conflicts) == (0, 0, 3, [])
    assert b.one("SELECT COUNT(*) AS n FROM review_labels")["n"] == 3
    # Round trip back: alice's database gains bob's label and nothing else changes.
    back = tmp_path / "bob.jsonl"
    exchange.export_jsonl(b, back, annotator="bob")
    merged = exchange.import_jsonl(a, back)
    assert merged.added == 1 and merged.unchanged == 0
    assert a.one("SELECT COUNT(*) AS n FROM review_labels")["n"] == 3
    assert exchange.export_rows(a) == exchange.export_rows(b)


def test_conflict_keeps_the_newer_and_reports_it(machines, tmp_path):
    (_, a, a_ids), (_, b, b_ids) = machines
    review.label(b, b_ids[2], "carol", pairs=[("5", "older opinion")])    # older
    review.label(a, a_ids[2], "carol", pairs=[("13", "newer opinion")])   # newer
    review.label(a, a_ids[3], "carol", pairs=[("1", "older here")])       # older
    review.label(b, b_ids[3], "carol", pairs=[("7", "newer there")])      # newer
    path = tmp_path / "a.jsonl"
    exchange.export_jsonl(a, path)
    report = exchange.import_jsonl(b, path)
    assert report.added == 0 and report.updated == 1
    kept = {c["sample_id"]: c["kept"] for c in report.conflicts}
    assert kept == {b_ids[2]: "imported", b_ids[3]: "local"}
    assert review.annotations.get(b, b_ids[2], "carol")["pairs"][0]["category"] == "13"
    assert review.annotations.get(b, b_ids[3], "carol")["pairs"][0]["category"] == "7"
    history = b.history("review_label", f"{b_ids[2]}/carol")
    assert history[-1]["action"] == "import" and history[-1]["actor"] == "bob"
    # Importing again changes nothing more (the local newer label still wins).
    again = exchange.import_jsonl(b, path)
    assert again.updated == 0 and again.added == 0 and len(again.conflicts) == 1


def test_malformed_and_unknown_rows(machines, tmp_path):
    (_, a, a_ids), (_, b, _) = machines
    review.label(a, a_ids[0], "alice", pairs=[("8", "x")])
    good = exchange.export_rows(a)[0]
    lines = [
        json.dumps(good),
        "{broken",
        json.dumps(dict(good, sample="f" * 64)),
        json.dumps(dict(good, verdict="maybe")),
        json.dumps(dict(good, pairs=[])),
        json.dumps(dict(good, labelled_at="yesterday")),
        json.dumps(dict(good, annotator="")),
        "[]",
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = exchange.import_jsonl(b, path)
    assert report.added == 1
    assert [e["line"] for e in report.errors] == [2, 3, 4, 5, 6, 7, 8]
    assert "unknown sample" in report.errors[1]["message"]


def test_cli_export_import(machines, tmp_path):
    (ws_a, a, a_ids), (ws_b, _, _) = machines
    review.label(a, a_ids[0], "alice", pairs=[("8", "x")])
    runner = CliRunner()
    out = runner.invoke(main, ["--workspace", str(ws_a.root), "review", "export",
                               "--annotator", "alice"])
    assert out.exit_code == 0 and json.loads(out.stdout.splitlines()[0])["annotator"] == "alice"
    path = tmp_path / "labels.jsonl"
    out = runner.invoke(main, ["--workspace", str(ws_a.root), "review", "export", "--out",
                               str(path), "--json"])
    assert json.loads(out.stdout) == {"path": str(path), "rows": 1}
    out = runner.invoke(main, ["--workspace", str(ws_b.root), "review", "import", str(path),
                               "--json"])
    assert json.loads(out.stdout)["added"] == 1
    out = runner.invoke(main, ["--workspace", str(ws_b.root), "review", "import", str(path)])
    assert "0 added, 0 updated, 1 unchanged" in out.stdout


def test_undo_refuses_when_an_import_changed_the_label(machines, tmp_path):
    (_, a, a_ids), (_, b, b_ids) = machines
    review.label(b, b_ids[0], "dana", pairs=[("5", "first thought")])   # by actor "bob"
    review.label(a, a_ids[0], "dana", pairs=[("6", "newer, elsewhere")])
    path = tmp_path / "a.jsonl"
    exchange.export_jsonl(a, path)
    assert exchange.import_jsonl(b, path).updated == 1
    with pytest.raises(CuratorError, match="changed since"):
        review.undo(b)
    assert review.annotations.get(b, b_ids[0], "dana")["pairs"][0]["category"] == "6"


def test_conflicts_compare_moments_not_strings(machines, tmp_path):
    """12:00+02:00 is 10:00 UTC: older than a local 11:00 UTC label, though it sorts later;
    a stamp without a zone is UTC."""
    (_, a, a_ids), (_, b, b_ids) = machines
    review.label(a, a_ids[2], "carol", pairs=[("13", "from a")])
    review.label(b, b_ids[2], "carol", pairs=[("5", "from b")])
    review.label(a, a_ids[3], "carol", pairs=[("1", "from a")])
    review.label(b, b_ids[3], "carol", pairs=[("7", "from b")])
    b.execute("UPDATE review_labels SET labelled_at = ? WHERE sample_id = ?",
              ("2026-03-01T11:00:00+00:00", b_ids[2]))
    b.execute("UPDATE review_labels SET labelled_at = ? WHERE sample_id = ?",
              ("2026-03-01T11:00:00", b_ids[3]))
    rows = [r for r in exchange.export_rows(a) if r["kind"] == "label"]
    stamps = {a_ids[2]: "2026-03-01T12:00:00+02:00",      # 10:00 UTC: older
              a_ids[3]: "2026-03-01T07:30:00-04:00"}      # 11:30 UTC: newer than 11:00
    by_hash = {s["content_hash"]: s["id"] for s in a.query("SELECT id, content_hash FROM samples")}
    for row in rows:
        row["labelled_at"] = stamps[by_hash[row["sample"]]]
    path = tmp_path / "offsets.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = exchange.import_jsonl(b, path)
    kept = {c["sample_id"]: c["kept"] for c in report.conflicts}
    assert kept == {b_ids[2]: "local", b_ids[3]: "imported"}
    assert review.annotations.get(b, b_ids[2], "carol")["pairs"][0]["category"] == "5"
    assert review.annotations.get(b, b_ids[3], "carol")["pairs"][0]["category"] == "1"
