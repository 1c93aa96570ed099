"""Property tests, one per reader: arbitrary bytes never produce a traceback (only the
reader's own one-line errors) and never change the database unless they are valid."""

from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curator import sync, taxonomy
from curator.config import Config
from curator.dlbench import importer
from curator.errors import CuratorError
from curator.evaluation import samples as sample_files
from curator.release import importing
from curator.release.verify import verify
from curator.review import exchange
from curator.store import Store
from curator.workspace import load_config
from tests.samples_support import make_problems

# Fragments that reach deep into parsers more often than uniform bytes do.
FRAGMENTS = ['{', '}', '[', ']', '"', ',', ':', '\n', ' ', 'NaN', 'Infinity', '1e999',
             '99999999999999999999999', '-1', '0', 'true', 'null', '"\\ud800"', '"task_id"',
             '"add_one"', '"solution"', '"model"', '"sample_index"', '"temperature"',
             '"result"', '"function_name"', '"kind"', '"sample"', '"labelled_at"', '=',
             '[source]', '[tests]', 'repo', 'id', 'node_ids', '1979-05-27T07:32:00Z',
             '{a = 1}', 'stage:', 'prompt:', 'test_cases:', 'function:', 'repo:', ',,,',
             '"x\nwith newline"', '\x00', '\ud800', 'é', '\r\n']
hostile_text = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)

# JSON values of every kind a reader must refuse or accept: huge integers, NaN and
# infinities, lone surrogates, wrong types, and nesting far past any limit.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10**30, max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8)
    | st.sampled_from(["\ud800", "x\udfff", "add_one", "def add_one(x):\n    return x\n"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=8)
deep = st.integers(min_value=60, max_value=20_000).map(lambda n: "[" * n + "]" * n)
ROW_KEYS = ["task_id", "solution", "completion", "response", "model", "technique",
            "temperature", "sample_index", "result", "function_name", "class", "repo", "kind",
            "sample", "labelled_at", "annotator", "pairs", "verdict", "name", "version",
            "files", "categories", "dl_categories", "verdicts", "entry_point", "source"]
json_rows = st.dictionaries(st.sampled_from(ROW_KEYS), json_values | st.text(max_size=20),
                            max_size=6)
json_lines = st.lists(
    json_rows.map(lambda row: __import__("json").dumps(row, allow_nan=True)) | deep
    | hostile_text, min_size=1, max_size=6).map("\n".join)

TOML_VALUES = ['1979-05-27T07:32:00Z', '07:32:00', '{a = 1}', '99999999999999999999', 'nan',
               'inf', '"\\ud800"', '"x"', '12', '[1, 2]', '[[1]]', 'true', '[]', '"abc"',
               '1.5', '[{a = 1}]']
toml_docs = st.tuples(
    st.sampled_from(["title", "stage", "status", "kind", "framework", "entry_point"]),
    st.sampled_from(TOML_VALUES),
    st.sampled_from(["repo", "commit", "path", "symbol", "lines", "license", "other"]),
    st.sampled_from(TOML_VALUES) | st.integers(min_value=60, max_value=6000).map(
        lambda n: "[" * n + "]" * n),
    st.booleans(),
).map(lambda t: ('id = "p1"\nentry_point = "f"\n' + (f"{t[0]} = {t[1]}\n" if t[4] else "")
                 + f"[source]\n{t[2]} = {t[3]}\n"))

hostile_bytes = st.one_of(
    st.binary(max_size=600),
    hostile_text.map(lambda t: t.encode("utf-8", "surrogatepass")),
    json_lines.map(lambda t: t.encode("utf-8", "surrogatepass")),
    toml_docs.map(lambda t: t.encode("utf-8")),
)
PROPERTY = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


def db_digest(path: Path) -> str:
    """Everything in the database that a reader could change."""
    with Store(path, "digest") as store:
        parts = []
        for table in ("problems", "samples", "review_labels", "review_final",
                      "taxonomy_versions", "problem_imports", "audit"):
            rows = store.query(f"SELECT * FROM {table} ORDER BY rowid")
            parts.append(repr(rows))
    return hashlib.sha256("".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


@pytest.fixture
def samples_ws(workspace):
    with Store(workspace.db_path, "tester") as store:
        make_problems(store)
    return workspace


@PROPERTY
@given(data=hostile_bytes)
def test_problem_toml_bytes(samples_ws, tmp_path_factory, data):
    problems = tmp_path_factory.mktemp("problems")
    folder = problems / "p1"
    folder.mkdir()
    (folder / "problem.toml").write_bytes(data)
    (folder / "prompt.md").write_text("x\n", encoding="utf-8")
    (folder / "solution.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    (folder / "test_solution.py").write_text("def test_f():\n    pass\n", encoding="utf-8")
    before = db_digest(samples_ws.db_path)
    with Store(samples_ws.db_path, "tester") as store:
        report = sync.load(store, problems)
    if report.errors:
        assert len(report.errors) == 1 and "\n" not in report.errors[0]["message"]
        assert db_digest(samples_ws.db_path) == before
    shutil.rmtree(problems)


@PROPERTY
@given(data=hostile_bytes, suffix=st.sampled_from([".jsonl", ".json"]))
def test_samples_file_bytes(samples_ws, tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("samples") / f"s{suffix}"
    path.write_bytes(data)
    before = db_digest(samples_ws.db_path)
    with Store(samples_ws.db_path, "tester") as store:
        count = store.one("SELECT COUNT(*) AS n FROM samples")["n"]
        report = sample_files.import_files(store, [path], model="m")
        after = store.one("SELECT COUNT(*) AS n FROM samples")["n"]
    assert after - count == report.imported
    assert all("\n" not in e["message"] for e in report.errors)
    if report.imported == 0:
        assert db_digest(samples_ws.db_path) == before


@PROPERTY
@given(data=hostile_bytes, kind=st.sampled_from(["txt", "csv", "tar.gz", "tar"]))
def test_dlbench_bytes(samples_ws, tmp_path_factory, data, kind):
    folder = tmp_path_factory.mktemp("dlbench")
    if kind.startswith("tar"):
        path = folder / f"DL-Bench.{kind}"
        if kind == "tar.gz":  # the bytes as a member, and the bytes as the archive
            raw = io.BytesIO()
            with tarfile.open(fileobj=raw, mode="w:gz") as tar:
                info = tarfile.TarInfo("DL-Bench/x1.txt")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            path.write_bytes(raw.getvalue())
        else:
            path.write_bytes(data)
    else:
        path = folder / f"kornia_x1.{kind}"
        path.write_bytes(data)
    before = db_digest(samples_ws.db_path)
    with Store(samples_ws.db_path, "tester") as store:
        try:
            report = importer.import_dlbench(store, samples_ws, path)
        except CuratorError as exc:
            assert "\n" not in str(exc)
            report = None
    if report is None or not report.problems:
        assert db_digest(samples_ws.db_path) == before


@PROPERTY
@given(data=hostile_bytes, where=st.sampled_from(["manifest.json", "problems.jsonl",
                                                  "archive"]))
def test_release_bundle_bytes(samples_ws, tmp_path_factory, data, where):
    folder = tmp_path_factory.mktemp("bundle")
    if where == "archive":
        path = folder / "dl-bench-1.0.0.tar.gz"
        path.write_bytes(data)
    else:
        path = folder / "b"
        path.mkdir()
        (path / "manifest.json").write_text('{"name": "b", "version": "1.0.0", "files": {}}')
        (path / where).write_bytes(data)
    try:
        report = verify(path)
        assert all("\n" not in str(i) for i in report.issues)
    except CuratorError as exc:
        assert "\n" not in str(exc)
    before = db_digest(samples_ws.db_path)
    with Store(samples_ws.db_path, "tester") as store:
        try:
            importing.import_release(store, samples_ws, path)
        except CuratorError as exc:
            assert "\n" not in str(exc)
    assert db_digest(samples_ws.db_path) == before


@PROPERTY
@given(data=hostile_bytes)
def test_label_exchange_bytes(samples_ws, tmp_path_factory, data):
    path = tmp_path_factory.mktemp("labels") / "labels.jsonl"
    path.write_bytes(data)
    before = db_digest(samples_ws.db_path)
    with Store(samples_ws.db_path, "tester") as store:
        try:
            report = exchange.import_jsonl(store, path)
            assert all("\n" not in e["message"] for e in report.errors)
        except CuratorError as exc:
            assert "\n" not in str(exc)
    assert db_digest(samples_ws.db_path) == before  # no sample matches: nothing to merge


@PROPERTY
@given(data=hostile_bytes)
def test_taxonomy_bytes(samples_ws, tmp_path_factory, data):
    path = tmp_path_factory.mktemp("taxonomy") / "taxonomy.json"
    path.write_bytes(data)
    with Store(samples_ws.db_path, "tester") as store:
        taxonomy.current(store)
    before = db_digest(samples_ws.db_path)
    with Store(samples_ws.db_path, "tester") as store:
        try:
            taxonomy.load_file(store, path)
            changed_ok = True
        except CuratorError as exc:
            assert "\n" not in str(exc)
            changed_ok = False
    if not changed_ok:
        assert db_digest(samples_ws.db_path) == before


@PROPERTY
@given(data=hostile_bytes)
def test_curator_toml_bytes(tmp_path_factory, data):
    root = tmp_path_factory.mktemp("ws")
    (root / "curator.toml").write_bytes(data)
    try:
        config = load_config(root)
        assert isinstance(config, Config)
    except CuratorError as exc:
        assert "\n" not in str(exc)
