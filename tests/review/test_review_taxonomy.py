"""The bug taxonomy: packaged default, versions in the database, CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from curator import taxonomy as tax
from curator.cli import main
from curator.errors import CuratorError, NotFoundError
from curator.store import Store


@pytest.fixture
def db(empty_workspace):
    store = Store(empty_workspace.db_path, "tester")
    yield store
    store.close()


def test_default_has_the_dlbench_categories(db):
    current = tax.current(db)
    assert current.version == 1
    assert [c.id for c in current.categories] == [str(i) for i in range(1, 16)]
    assert current.category("2").slug == "syntax-error"
    assert current.category("wrong-import").id == "15"
    dl_ids = [c.id for c in current.dl_categories]
    assert "not-dl" in dl_ids and "shape-dimension" in dl_ids and len(dl_ids) == 12
    assert current.verdict_ids() == ("sample-correct", "benchmark-defect")
    assert all(c.definition for c in current.categories + current.dl_categories)
    assert tax.validate(tax.default_document()) == []
    # Seeding is audited and happens once.
    tax.current(db)
    assert len(db.query("SELECT * FROM taxonomy_versions")) == 1
    assert db.history("taxonomy", "1")[0]["action"] == "create"


def test_resolve_category_specs(db):
    current = tax.current(db)
    assert current.resolve("8") == ("8", None)
    assert current.resolve("wrong-attribute-api/dl-api-usage") == ("8", "dl-api-usage")
    assert current.resolve("10/not-dl") == ("10", "not-dl")
    with pytest.raises(NotFoundError):
        current.resolve("99")
    with pytest.raises(NotFoundError):
        current.resolve("8/nonsense")


def test_new_versions_and_validation(db, tmp_path):
    doc = tax.default_document()
    doc["categories"][0]["definition"] = "Edited by the team."
    path = tmp_path / "tax.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert tax.load_file(db, path) == (2, True)
    assert tax.load_file(db, path) == (2, False)  # unchanged: no new version
    assert tax.current(db).category("1").definition == "Edited by the team."
    assert tax.get_version(db, 1).category("1").definition != "Edited by the team."
    broken = dict(doc, dl_categories=[{"id": "x", "name": "X"}])
    with pytest.raises(CuratorError, match="not-dl"):
        tax.add_version(db, broken)
    dup = dict(doc, categories=doc["categories"] + [doc["categories"][0]])
    with pytest.raises(CuratorError, match="duplicate id"):
        tax.add_version(db, dup)
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{", encoding="utf-8")
    with pytest.raises(CuratorError, match="bad.json:1: invalid JSON"):
        tax.load_file(db, bad_json)
    assert [v["version"] for v in tax.versions(db)] == [1, 2]


def test_cli_taxonomy(empty_workspace, tmp_path):
    runner = CliRunner()
    base = ["--workspace", str(empty_workspace.root), "taxonomy"]
    data = json.loads(runner.invoke(main, base + ["--json"]).stdout)
    assert data["version"] == 1
    assert len(data["categories"]) == 15 and data["categories"][0]["slug"]
    exported = tmp_path / "t.json"
    runner.invoke(main, base + ["--export", str(exported)])
    doc = json.loads(exported.read_text(encoding="utf-8"))
    doc["categories"][1]["name"] = "Syntax or indentation error"
    exported.write_text(json.dumps(doc), encoding="utf-8")
    data = json.loads(runner.invoke(main, base + ["--load", str(exported), "--json"]).stdout)
    assert data["version"] == 2 and data["categories"][1]["name"] == "Syntax or indentation error"
    old = json.loads(runner.invoke(main, base + ["--version", "1", "--json"]).stdout)
    assert old["categories"][1]["name"] == "Syntax error"
    text = runner.invoke(main, base).stdout
    assert "Wrong import" in text
