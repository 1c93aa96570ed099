"""Every reader survives hostile input: one line per bad item, the good items kept.

Each case here once gave a traceback, an abort or silent damage (docs/ARCHITECTURE.md#tests).
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tarfile
import time
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from curator import sync
from curator.cli import main
from curator.errors import Cancelled
from curator.evaluation import samples as sample_files
from curator.store import Store
from curator.store import problems as problem_store
from tests.conftest import SEED_DIR
from tests.samples_support import make_problems, write_jsonl

GOOD_TOML = '''id = "{id}"
title = "t"
entry_point = "f"
kind = "function"
stage = ""
task = ""
data = ""
framework = "pytorch"
status = "draft"
'''


def invoke(ws, *args):
    return CliRunner().invoke(main, ["--workspace", str(ws.root), *args])


def write_problem(root: Path, pid: str, toml: str | None = None) -> Path:
    folder = root / pid
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "problem.toml").write_text(toml if toml is not None else GOOD_TOML.format(id=pid),
                                         encoding="utf-8")
    (folder / "prompt.md").write_text("Write f.\n", encoding="utf-8")
    (folder / "solution.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    (folder / "test_solution.py").write_text(
        "from solution import f\n\ndef test_f():\n    assert f() == 1\n", encoding="utf-8")
    return folder


# -- problem.toml ------------------------------------------------------------------------

HOSTILE_TOML = {
    "deep": GOOD_TOML.format(id="deep") + "[source]\nlicense = " + "[" * 5000 + "]" * 5000 + "\n",
    "datetime": GOOD_TOML.format(id="datetime") + "[source]\nrepo = 1979-05-27T07:32:00Z\n",
    "repo_table": GOOD_TOML.format(id="repo_table") + "[source]\nrepo = {a = 1}\n",
    "lines_list": GOOD_TOML.format(id="lines_list") + "[source]\nlines = [[1]]\n",
    "node_ints": GOOD_TOML.format(id="node_ints") + "[tests]\nnode_ids = [1, 2]\n",
    "big_int": GOOD_TOML.format(id="big_int") + "[source]\nlines = 99999999999999999999\n",
    "nan": GOOD_TOML.format(id="nan") + "[source]\nlines = nan\n",
}


def test_hostile_problem_toml_is_skipped_and_the_rest_load(empty_workspace):
    ws = empty_workspace
    for pid, toml in HOSTILE_TOML.items():
        write_problem(ws.problems_dir, pid, toml)
    write_problem(ws.problems_dir, "good_one")
    write_problem(ws.problems_dir, "zz_good")
    result = invoke(ws, "load")
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == len(HOSTILE_TOML), result.output
    for pid in HOSTILE_TOML:
        assert any(f"{pid}/problem.toml" in ln for ln in lines), (pid, result.output)
    with Store(ws.db_path) as store:
        ids = {p.id for p in problem_store.all_problems(store)}
    assert ids == {"good_one", "zz_good"}


def test_a_bad_source_never_reaches_the_database_and_dump_goes_on(empty_workspace):
    ws = empty_workspace
    for pid in ("aa_bad", "good_one", "zz_good"):
        write_problem(ws.problems_dir, pid)
    assert invoke(ws, "load").exit_code == 0
    from curator.problem import Problem

    with Store(ws.db_path) as store:
        bad = problem_store.get(store, "aa_bad")
        bad.source = {"repo": {"a": 1}}
        with pytest.raises(Exception, match="'repo' must be a string"):
            problem_store.save(store, bad)
        assert problem_store.get(store, "aa_bad").source is None
        # a row an older curator let in: dump reports it and writes the others
        store.execute("UPDATE problems SET source = ? WHERE id = 'aa_bad'",
                      ('{"repo": {"a": 1}}',))
        good = problem_store.get(store, "zz_good")
        good.title = "changed"
        problem_store.save(store, good)
    assert isinstance(good, Problem)
    result = invoke(ws, "dump")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "error: " in result.output and "aa_bad/problem.toml" in result.output
    assert 'title = "changed"' in (ws.problems_dir / "zz_good" / "problem.toml").read_text()


# -- samples JSONL -----------------------------------------------------------------------

def _samples_rows() -> list:
    good = {"task_id": "add_one", "solution": "def add_one(x):\n    return x + 1\n"}
    rows = []
    for index in range(20):
        rows.append(dict(good, sample_index=index))
    rows += [
        dict(good, sample_index=10 ** 30),
        '{"task_id": "add_one", "solution": "\\ud800", "sample_index": 50}',
        "[" * 100_000 + "]" * 100_000,
        dict(good, model=["x"], sample_index=51),
        '{"task_id": "add_one", "solution": "x", "temperature": NaN, "sample_index": 52}',
        '{"task_id": "add_one", "solution": "x", "temperature": Infinity, "sample_index": 53}',
        '{"task_id": "add_one", "solution": "unterminated',
    ]
    return rows


def test_one_bad_sample_row_never_aborts_the_file(store, tmp_path):
    make_problems(store)
    path = write_jsonl(tmp_path / "mix.jsonl", _samples_rows())
    report = sample_files.import_files(store, [path], model="m1")
    assert report.imported == 20
    assert len(report.errors) == 7, report.errors
    by_line = {e["line"]: e["message"] for e in report.errors}
    assert "out of range" in by_line[21]
    assert "surrogate" in by_line[22]
    assert "nested deeper" in by_line[23]
    assert "'model' must be a string" in by_line[24]
    assert "NaN" in by_line[25] and "Infinity" in by_line[26]
    assert "starting at (column" in by_line[27]  # the JSON message is complete
    assert store.one("SELECT COUNT(*) AS n FROM samples")["n"] == 20


def test_samples_import_cli_exits_1_with_one_line_per_bad_row(workspace, tmp_path):
    with Store(workspace.db_path) as store:
        make_problems(store)
    path = write_jsonl(tmp_path / "mix.jsonl", _samples_rows())
    result = invoke(workspace, "samples", "import", str(path), "--model", "m1")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 7
    assert all(ln.startswith(f"error: {path}:") for ln in errors)


def test_samples_import_resumes_and_commits_in_chunks(store, tmp_path, monkeypatch):
    make_problems(store)
    rows = [{"task_id": "add_one", "solution": f"def add_one(x):\n    return x + {i}\n"}
            for i in range(50)]
    path = write_jsonl(tmp_path / "many.jsonl", rows)
    monkeypatch.setattr(sample_files, "CHUNK_ROWS", 7)
    calls = {"n": 0}

    def cancel_after_two_chunks():
        calls["n"] += 1
        return calls["n"] > 20

    with pytest.raises(Cancelled):
        sample_files.import_files(store, [path], model="m1", cancelled=cancel_after_two_chunks)
    kept = store.one("SELECT COUNT(*) AS n FROM samples")["n"]
    assert 0 < kept < 50 and kept % 7 == 0
    again = sample_files.import_files(store, [path], model="m1")
    assert again.imported == 50 - kept and again.duplicates == kept
    assert store.one("SELECT COUNT(*) AS n FROM samples")["n"] == 50


# -- archives ----------------------------------------------------------------------------

def _zeros_gzip_member(size: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    out = [compressor.compress(chunk) for _ in range(size >> 20)]
    out.append(compressor.flush())
    return b"".join(out)


def gzip_bomb(path: Path, members: list[tuple[str, int]]) -> Path:
    """A small .tar.gz whose members expand to the given (huge) sizes of zeros.

    gzip streams concatenate, so one compressed 64 MiB block of zeros is repeated."""
    block = _zeros_gzip_member(64 << 20)
    with open(path, "wb") as out:
        for name, size in members:
            header = tarfile.TarInfo(name)
            header.size = size
            out.write(gzip.compress(header.tobuf(format=tarfile.PAX_FORMAT)))
            for _ in range(size // (64 << 20)):
                out.write(block)
            rest = size % (64 << 20)
            if rest:
                out.write(gzip.compress(bytes(rest)))
        out.write(gzip.compress(bytes(1024)))
    return path


def test_release_verify_refuses_a_gzip_bomb_within_a_second(tmp_path):
    bomb = gzip_bomb(tmp_path / "dl-bench-1.0.0.tar.gz", [("dl-bench-1.0.0/manifest.json",
                                                            4 << 30)])
    assert bomb.stat().st_size < 8 << 20
    started = time.monotonic()
    result = CliRunner().invoke(main, ["release", "verify", str(bomb)])
    assert time.monotonic() - started < 1.0
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "limit" in result.output and result.output.count("\n") == 1


def test_dlbench_tarball_of_gigabyte_members_is_refused_at_once(empty_workspace, tmp_path):
    members = [(f"DL-Bench/f{i}.txt", 1 << 30) for i in range(3)]
    bomb = gzip_bomb(tmp_path / "DL-Bench.tar.gz", members)
    started = time.monotonic()
    result = invoke(empty_workspace, "dlbench", "import", str(bomb))
    assert time.monotonic() - started < 1.0
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "archive_member_bytes" in result.output


def test_dlbench_tarball_over_the_total_cap_is_refused(empty_workspace, tmp_path):
    (empty_workspace.root / "curator.toml").write_text(
        "[limits]\narchive_total_bytes = 3000000\n", encoding="utf-8")
    bomb = gzip_bomb(tmp_path / "DL-Bench.tar.gz",
                     [(f"DL-Bench/f{i}.txt", 1 << 20) for i in range(4)])
    result = invoke(empty_workspace, "dlbench", "import", str(bomb))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "archive_total_bytes" in result.output
    with Store(empty_workspace.db_path) as store:
        assert store.one("SELECT COUNT(*) AS n FROM problems")["n"] == 0


def test_archive_caps_come_from_curator_toml(empty_workspace, tmp_path):
    (empty_workspace.root / "curator.toml").write_text(
        "[limits]\narchive_member_bytes = 1000\n", encoding="utf-8")
    archive = tmp_path / "DL-Bench.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b"x" * 5000
        info = tarfile.TarInfo("DL-Bench/big.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    result = invoke(empty_workspace, "dlbench", "import", str(archive))
    assert result.exit_code == 1 and "archive_member_bytes" in result.output


def test_nested_json_in_a_bundle_is_one_line(tmp_path):
    folder = tmp_path / "bundle"
    folder.mkdir()
    (folder / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    result = CliRunner().invoke(main, ["release", "verify", str(folder)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "nested deeper" in result.output
    (folder / "manifest.json").write_text(json.dumps({"name": "b", "version": "1.0.0",
                                                      "files": {}}))
    (folder / "problems.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    result = CliRunner().invoke(main, ["release", "verify", str(folder)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "problems.jsonl:1: " in result.output and "nested deeper" in result.output


CSV_HEADER = "repo,filename,function,class,ground Truth,test_cases,prompt,stage,task,data\n"


def _csv_row(name: str, prompt: str) -> str:
    return (f'kornia,{name}.txt,rgb_to_gray,,kornia/color/gray.py,tests/test_gray.py,'
            f'"{prompt}",Pre/Post Processing,Classification,Image\n')


def test_dlbench_csv_with_a_huge_field_and_one_bad_row(empty_workspace, tmp_path):
    path = tmp_path / "dlbench.csv"
    path.write_text(CSV_HEADER + _csv_row("kornia_a1", "Write it. " + "y" * 200_000)
                    + "kornia,b.txt,too,many,cells,here,x,y,z,w,extra,extra2\n"
                    + _csv_row("kornia_c1", "Write c."), encoding="utf-8")
    result = invoke(empty_workspace, "dlbench", "import", str(path), "--json")
    assert "Traceback" not in result.output
    data = json.loads(result.output[result.output.index("{"):])
    assert data["imported"] == 2
    assert len(data["skipped"]) == 1 and ":3" in data["skipped"][0]["file"]
    assert result.exit_code == 1


# -- a huge sample expression ------------------------------------------------------------

def test_replace_symbol_survives_a_200k_term_expression():
    from curator.pysource.patch import replace_symbol

    module = "def f(x):\n    return x\n\n\ndef g():\n    return 2\n"
    huge = "def f(x):\n    return " + "+".join(["x"] * 200_000) + "\n"
    patched = replace_symbol(module, "f", huge)
    assert "def g():" in patched and patched.count("+x") > 1000


# -- last-resort handler -----------------------------------------------------------------

def test_an_unexpected_error_is_one_line_and_logged(empty_workspace, monkeypatch):
    from curator import sync as sync_mod

    def boom(*args, **kwargs):
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr(sync_mod, "load", boom)
    result = invoke(empty_workspace, "load")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert result.output.count("\n") == 1 and result.output.startswith("error: ")
    logs = list((empty_workspace.root / "db" / "logs").glob("*.log"))
    assert len(logs) == 1
    text = logs[0].read_text(encoding="utf-8")
    assert "Traceback" in text and "something nobody expected" in text
    assert str(logs[0].name) in result.output


# -- release build keeps older versions ----------------------------------------------------

def test_release_build_keeps_the_previous_versions_files(workspace, tmp_path):
    from tests.release_support import make_releasable

    with Store(workspace.db_path) as store:
        make_releasable(workspace, store)
    out = tmp_path / "dist"
    first = invoke(workspace, "release", "build", "--version", "1.0.0", "--out", str(out))
    assert first.exit_code == 0, first.output
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    second = invoke(workspace, "release", "build", "--version", "1.1.0", "--out", str(out))
    assert second.exit_code == 0, second.output
    names = {p.name for p in out.iterdir()}
    assert any(n.endswith("1.0.0.tar.gz") for n in names), names
    assert any(n.endswith("1.1.0.tar.gz") for n in names), names
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    for version in ("1.0.0", "1.1.0"):
        archive = next(p for p in out.iterdir() if p.name.endswith(f"{version}.tar.gz"))
        assert CliRunner().invoke(main, ["release", "verify", str(archive)]).exit_code == 0


def test_load_stays_byte_identical_for_valid_problems(workspace, tmp_path):
    with Store(workspace.db_path) as store:
        report = sync.load(store, workspace.problems_dir)
    assert not report.errors and not report.loaded


@pytest.mark.slow
def test_a_200k_term_sample_costs_only_its_own_run(tmp_path):
    """A repo-backed sample whose code is one huge expression: an error outcome for it,
    the other samples of the batch evaluated as usual."""
    from tests.mining.test_mining_run import SHAPES, TEST_SHAPES, WRONG
    from tests.mining_support import commit, git, write

    upstream = tmp_path / "geomlib"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    write(upstream, {"conftest.py": "", "geom/__init__.py": "", "geom/shapes.py": SHAPES,
                     "tests/test_shapes.py": TEST_SHAPES})
    commit(upstream, "geometry")
    from curator import workspace as workspace_mod
    from curator.store import candidates as candidate_store

    ws = workspace_mod.init(tmp_path / "ws")
    assert invoke(ws, "mine", str(upstream)).exit_code == 0
    with Store(ws.db_path) as store:
        (row,) = candidate_store.list_rows(store)
    assert invoke(ws, "candidates", "accept", str(row["id"]), "--id", "polygon_area"
                  ).exit_code == 0
    huge = "def polygon_area(points):\n    return " + "+".join(["1"] * 200_000) + "\n"
    path = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "polygon_area", "solution": SHAPES, "sample_index": 0},
        {"task_id": "polygon_area", "solution": huge, "sample_index": 1},
        {"task_id": "polygon_area", "solution": WRONG, "sample_index": 2}])
    assert invoke(ws, "samples", "import", str(path), "--model", "m").exit_code == 0
    result = invoke(ws, "samples", "eval", "--json", "--workers", "1")
    assert "Traceback" not in result.output
    data = json.loads(result.output[result.output.index("{"):])
    with Store(ws.db_path) as store:
        outcomes = {r["sample_index"]: r["outcome"] for r in store.query(
            "SELECT s.sample_index, r.outcome FROM samples s JOIN runs r ON r.sample_id = s.id")}
    assert outcomes[0] == "passed" and outcomes[2] == "failed"
    assert outcomes.get(1) == "error", (outcomes, data)


# -- label exchange, taxonomy, curator.toml: a generated corpus ------------------------

HOSTILE_JSON_LINES = [
    "[" * 100_000 + "]" * 100_000,
    '{"kind": "label", "sample": "\\ud800", "labelled_at": "2026-01-01"}',
    '{"kind": "label", "sample": "abc", "labelled_at": "2026-01-01", "sample_index": '
    + "9" * 5000 + "}",
    '{"kind": "label", "sample": "abc", "labelled_at": NaN}',
    '{"kind": ["label"], "sample": "abc", "labelled_at": "2026-01-01"}',
    '{"kind": "label", "sample": {"a": 1}, "labelled_at": "2026-01-01"}',
    '{"kind": "label", "sample": "abc", "labelled_at": "2026-01-01", "pairs": ["x"]}',
    '{"kind": "label", "sample": "abc", "labelled_at": "2026-01-01", "note": 1e999}',
    '{"kind": "label", "sample": "abc", "labelled_at": "2026-01-01", "note": "unterminated',
    "\xff\xfe not json",
]


def test_hostile_label_exchange_rows_are_one_line_each(workspace, tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(HOSTILE_JSON_LINES) + "\n", encoding="utf-8")
    result = invoke(workspace, "review", "import", str(path))
    assert result.exit_code == 1 and "Traceback" not in result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == len(HOSTILE_JSON_LINES), result.output
    with Store(workspace.db_path) as store:
        assert store.one("SELECT COUNT(*) AS n FROM review_labels")["n"] == 0


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,
    '{"name": "t", "categories": [{"id": "1", "name": "\\ud800"}]}',
    '{"name": ["t"], "categories": [], "dl_categories": [], "verdicts": []}',
    '{"name": "t", "categories": [{"id": 1, "name": {"a": 1}}]}',
    '{"name": "t", "categories": NaN}',
    '{"name": "t"',
])
def test_hostile_taxonomy_files_are_refused_in_one_line(workspace, tmp_path, text):
    path = tmp_path / "taxonomy.json"
    path.write_text(text, encoding="utf-8")
    with Store(workspace.db_path) as store:
        from curator import taxonomy

        before = len(taxonomy.versions(store))
    result = invoke(workspace, "taxonomy", "--load", str(path))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.count("\n") == 1 and result.output.startswith("error: ")
    with Store(workspace.db_path) as store:
        assert len(taxonomy.versions(store)) == before


@pytest.mark.parametrize("text", [
    "[limits]\nfile_bytes = " + "[" * 5000 + "]" * 5000 + "\n",
    "[limits]\nfile_bytes = -1\n",
    "[limits]\narchive_total_bytes = \"big\"\n",
    "[limits]\nnope = 1\n",
    "release = 1979-05-27T07:32:00Z\n",
    "[release]\nname = \"\\ud800\"\n",
    "\xff\xfe",
])
def test_hostile_curator_toml_is_one_line(empty_workspace, text):
    path = empty_workspace.root / "curator.toml"
    path.write_bytes(text.encode("utf-8", "surrogatepass") if "\xff" not in text
                     else text.encode("latin-1"))
    result = invoke(empty_workspace, "problems", "list")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.count("\n") == 1 and "curator.toml" in result.output


def test_the_file_size_cap_of_curator_toml_holds_for_problems_and_samples(empty_workspace,
                                                                          tmp_path):
    ws = empty_workspace
    (ws.root / "curator.toml").write_text("[limits]\nfile_bytes = 4000\n", encoding="utf-8")
    for pid in ("early_stopping_tracker", "autoregressive_forecast"):
        shutil.copytree(SEED_DIR / pid, ws.problems_dir / pid)
    big = ws.problems_dir / "autoregressive_forecast" / "solution.py"
    big.write_text(big.read_text(encoding="utf-8") + "#" * 5000 + "\n", encoding="utf-8")
    result = invoke(ws, "load")
    assert result.exit_code == 1, result.output
    assert "solution.py: larger than the limit of 4000 bytes" in result.output
    with Store(ws.db_path) as store:   # the other problem still loads
        assert [r["id"] for r in problem_store.list_rows(store)] == ["early_stopping_tracker"]
    small = write_jsonl(tmp_path / "small.jsonl", [
        {"task_id": "early_stopping_tracker", "completion": "def f():\n    pass\n"}])
    large = write_jsonl(tmp_path / "large.jsonl", [
        {"task_id": "early_stopping_tracker", "completion": "x = 1\n" * 1000}])
    result = invoke(ws, "samples", "import", str(small), str(large), "--model", "m", "--json")
    assert result.exit_code == 1
    assert "large.jsonl" in result.output and "limit of 4000 bytes" in result.output
    report = json.loads(result.stdout)
    assert report["imported"] == 1
