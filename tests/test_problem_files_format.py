"""problem.toml and problem folders, unit by unit: each refusal names the file and the
field, the canonical text is exact, writes report what changed, scans skip and go on."""

from __future__ import annotations

import shutil
import tomllib
from datetime import date
from pathlib import Path

import pytest

from curator.errors import ProblemFormatError
from curator.problem import Problem
from curator.problem_files import (
    parse_toml,
    read_problem,
    render_toml,
    scan,
    toml_text,
    write_problem,
)

PATH = Path("problems/p/problem.toml")
BASE = 'id = "p"\nentry_point = "f"\n'
SHA = "0123456789abcdef0123456789abcdef01234567"

REFUSED = {
    "unknown keys, sorted": ('zeta = 1\ncolour = "red"\n' + BASE, "unknown key(s): colour, zeta"),
    "a field of the wrong type": (BASE + "title = 3\n", "title must be a string"),
    "a missing required key": ('id = "p"\n', "missing required key 'entry_point'"),
    "an empty required key": ('id = ""\nentry_point = "f"\n', "missing required key 'id'"),
    "source not a table": (BASE + 'source = "x"\n', "source must be a table ([source])"),
    "tests not a table": (BASE + 'tests = "x"\n', "[tests] may only hold node_ids"),
    "other keys in [tests]": (BASE + "[tests]\nfoo = 1\n", "[tests] may only hold node_ids"),
    "node_ids a string": (BASE + '[tests]\nnode_ids = "t::a"\n',
                          "[tests] node_ids must be a list of strings"),
    "node_ids of numbers": (BASE + "[tests]\nnode_ids = [1]\n",
                            "[tests] node_ids must be a list of strings"),
    "every [source] problem at once": (BASE + '[source]\ncommit = "abc"\nextra = "y"\n',
                                       "unknown [source] key(s): extra; "
                                       "[source] commit 'abc' must be a full hex SHA"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_toml_names_the_file_and_what_is_wrong(case):
    text, message = REFUSED[case]
    with pytest.raises(ProblemFormatError) as info:
        parse_toml(text, PATH)
    assert (info.value.path, info.value.message) == (str(PATH), message)
    assert str(info.value) == f"{PATH}: {message}"


def test_only_id_and_entry_point_are_required():
    assert parse_toml(BASE, PATH) == Problem(id="p", entry_point="f")


def test_missing_toml_and_several_problems_are_reported_on_problem_toml(tmp_path):
    folder = tmp_path / "p"
    folder.mkdir()
    with pytest.raises(ProblemFormatError) as info:
        read_problem(folder)
    assert (info.value.path, info.value.message) == (str(folder / "problem.toml"),
                                                     "missing problem.toml")
    (folder / "problem.toml").write_text(BASE + 'kind = "x"\nstatus = "x"\n')
    (folder / "prompt.md").write_text("Write f.\n")
    (folder / "solution.py").write_text("def f():\n    return 1\n")
    (folder / "test_solution.py").write_text("")
    with pytest.raises(ProblemFormatError) as info:
        read_problem(folder)
    assert info.value.path == str(folder / "problem.toml")
    assert info.value.message == ("kind 'x' must be one of function, method; "
                                  "status 'x' must be one of draft, ready, released, retired")


def test_canonical_toml_is_exact():
    problem = Problem(
        id="p1", entry_point="Net.forward", kind="method", stage="model", task="general",
        title='Focal "loss" \\ a\tb\nc\x01\x7f é',
        source={"license": "MIT", "lines": [3, 9], "repo": "https://example.org/x.git",
                "commit": SHA, "path": "x/loss.py"},
        test_node_ids=["tests/test_loss.py::test_a", "tests/test_loss.py::test_b"])
    text = render_toml(problem)
    assert text == (
        'id = "p1"\n'
        'title = "Focal \\"loss\\" \\\\ a\\tb\\nc\\u0001\\u007F é"\n'
        'entry_point = "Net.forward"\n'
        'kind = "method"\n'
        'stage = "model"\n'
        'task = "general"\n'
        'data = ""\n'
        'framework = "pytorch"\n'
        'status = "draft"\n'
        "\n"
        "[source]\n"
        'repo = "https://example.org/x.git"\n'
        f'commit = "{SHA}"\n'
        'path = "x/loss.py"\n'
        "lines = [\n    3,\n    9,\n]\n"
        'license = "MIT"\n'
        "\n"
        "[tests]\n"
        'node_ids = [\n    "tests/test_loss.py::test_a",\n    "tests/test_loss.py::test_b",\n]\n')
    assert parse_toml(text, PATH) == problem


def test_canonical_toml_writes_every_toml_scalar_so_it_reads_back():
    source = {"repo": "r", "lines": 7, "verified": True, "stale": False, "score": 0.5,
              "tags": []}
    text = render_toml(Problem(id="p", entry_point="f", source=source))
    assert tomllib.loads(text)["source"] == source
    with pytest.raises(TypeError, match="^cannot write date to problem.toml$"):
        render_toml(Problem(id="p", entry_point="f", source={"when": date(2024, 1, 1)}))


def test_last_read_text_is_kept_only_while_it_still_says_the_same():
    problem = Problem(id="p", entry_point="f")
    handwritten = "# mine\n" + BASE
    assert toml_text(problem, handwritten) == handwritten
    assert toml_text(Problem(id="p", entry_point="g"), handwritten) == \
        render_toml(Problem(id="p", entry_point="g"))
    assert toml_text(problem, 'id = "p\n') == render_toml(problem)   # unreadable: canonical


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_write_reports_a_change_in_any_one_file_and_only_then(tmp_path):
    problem = Problem(id="p", entry_point="f", prompt="Write f.\r\nNow.\r\n",
                      solution="def f():\n    return 1\n", tests="def test_f():\n    pass\n")
    changed, toml = write_problem(problem, tmp_path)
    folder = tmp_path / "p"
    assert changed and toml == render_toml(problem)
    assert folder_bytes(folder) == {
        "problem.toml": toml.encode(), "prompt.md": b"Write f.\r\nNow.\r\n",
        "solution.py": b"def f():\n    return 1\n",
        "test_solution.py": b"def test_f():\n    pass\n"}
    assert write_problem(problem, tmp_path)[0] is False   # CRLF kept: nothing differs
    for field, value, name in (("status", "ready", "problem.toml"),
                               ("prompt", "Write g.\n", "prompt.md"),
                               ("solution", "def f():\n    return 2\n", "solution.py"),
                               ("tests", "def test_g():\n    pass\n", "test_solution.py")):
        before = folder_bytes(folder)
        setattr(problem, field, value)
        assert write_problem(problem, tmp_path)[0] is True, field
        after = folder_bytes(folder)
        assert [n for n in after if after[n] != before[n]] == [name]
    problem.tests = None
    assert write_problem(problem, tmp_path)[0] is True
    assert not (folder / "test_solution.py").exists()
    assert write_problem(problem, tmp_path)[0] is False



def test_a_byte_order_mark_is_content_and_comes_back(tmp_path):
    folder = tmp_path / "in" / "p"
    write_problem(Problem(id="p", entry_point="f", solution="S\n", tests=""), tmp_path / "in")
    (folder / "prompt.md").write_bytes(b"\xef\xbb\xbfWrite f.\n")
    problem, raw = read_problem(folder)
    assert problem.prompt == "\ufeffWrite f.\n"
    write_problem(problem, tmp_path / "out", raw)
    assert folder_bytes(tmp_path / "out" / "p") == folder_bytes(folder)

def test_scan_skips_hidden_folders_and_reports_bad_ones_but_loads_the_rest(tmp_path):
    problems = tmp_path / "problems"
    for pid in ("a", "b", "d"):
        write_problem(Problem(id=pid, entry_point="f", prompt="P\n", solution="S\n",
                              tests=""), problems)
    (problems / ".git").mkdir()
    (problems / "_drafts").mkdir()
    (problems / "_drafts" / "problem.toml").write_text("not toml [")
    # a copy that claims a's id: an id names its folder, so two can never share one
    shutil.copytree(problems / "a", problems / "c")
    result = scan(problems)
    assert [(p.id, folder.name) for p, _raw, folder in result.problems] == \
        [("a", "a"), ("b", "b"), ("d", "d")]
    assert [str(e) for e in result.errors] == [
        f"{problems / 'c' / 'problem.toml'}: id 'a' does not match its folder name 'c'"]


def test_scan_of_a_missing_folder_is_one_error(tmp_path):
    result = scan(tmp_path / "nowhere")
    assert result.problems == []
    assert [(e.path, e.message) for e in result.errors] == [
        (str(tmp_path / "nowhere"), "problems folder not found")]


@pytest.mark.parametrize("name", ["problem.toml", "prompt.md", "solution.py",
                                  "test_solution.py"])
def test_each_file_of_a_folder_is_held_to_the_size_limit(tmp_path, name):
    problems = tmp_path / "problems"
    for pid in ("big", "small"):
        write_problem(Problem(id=pid, entry_point="f", prompt="P\n", solution="S\n",
                              tests="T\n"), problems)
    path = problems / "big" / name
    path.write_bytes(path.read_bytes() + b"#" * 300 + b"\n")
    result = scan(problems, limit=200)
    assert [p.id for p, _raw, _folder in result.problems] == ["small"]
    assert [str(e) for e in result.errors] == [
        f"{path}: larger than the limit of 200 bytes (raise [limits] file_bytes in "
        "curator.toml)"]
    assert [p.id for p, _raw, _folder in scan(problems, limit=2000).problems] == \
        ["big", "small"]
