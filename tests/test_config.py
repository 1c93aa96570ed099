"""curator.toml read into typed tables: values as the code uses them, every mistake refused
in one line with the file and the line."""

from __future__ import annotations

import dataclasses

import pytest

from curator import config as config_file
from curator.config import Config, ConfigError, ReleaseConfig
from curator.errors import WorkspaceError
from curator.mining.settings import DEFAULT_EXCLUDE, MiningSettings
from curator.panel.rule import CandidateSettings
from curator.workspace import Workspace, discover, init

FULL = '''\
# every table, as a workspace would write it
[execution]
backend = "ray"
address = "auto"
workers = 3
isolation = "weak"
preload = ["torch", "numpy"]
timeout_s = 30          # an integer where a number is wanted
timeout_floor_s = 2.5
memory_mb = 2048

[mining]
extra_exclude = ["scripts/*"]
call_depth = 0

[release]
name = "dl-bench-plus"
license = "MIT"
min_tests = 2
near_duplicate_threshold = 0.8

[dlbench.spellings.task]
"Reinforcement Learning" = "general"

[dlbench.repos]
geomlib = "https://example.org/geomlib.git"

[candidates]
accept_when = "3 of 5"

[limits]
file_bytes = 4000

[llm]
base_url = "http://127.0.0.1:8000/v1"
timeout_s = 30

[app]
theme = "nord"

[keymap]
"problem.save" = ["ctrl+w", "f10"]
"problems.filter" = "f"
'''


def write(tmp_path, text: str):
    ws = init(tmp_path / "ws")
    (ws.root / "curator.toml").write_text(text, encoding="utf-8")
    return ws.root / "curator.toml"


def test_every_table_is_read_into_its_types(tmp_path):
    config = config_file.load(write(tmp_path, FULL))
    assert config.execution.backend == "ray" and config.execution.workers == 3
    assert config.execution.preload == ("torch", "numpy")
    assert config.execution.timeout_s == 30.0 and isinstance(config.execution.timeout_s, float)
    assert config.execution.run_limits() == {"memory_mb": 2048}
    assert config.mining.extra_exclude == ("scripts/*",) and config.mining.call_depth == 0
    assert config.release.name == "dl-bench-plus" and config.release.min_tests == 2
    assert config.dlbench.spellings == {"task": {"Reinforcement Learning": "general"}}
    assert config.dlbench.repos == {"geomlib": "https://example.org/geomlib.git"}
    assert config.limits.file_bytes == 4000
    assert config.limits.depth == 64   # a key left out keeps its default
    assert config.app.theme == "nord"
    assert config.llm.base_url == "http://127.0.0.1:8000/v1" and config.llm.timeout_s == 30.0
    assert config.llm.api_key_env == "OPENAI_API_KEY" and config.llm.max_retries == 5
    assert config.keymap == {"problem.save": "ctrl+w,f10", "problems.filter": "f"}
    assert CandidateSettings.from_config(config).accept_when.k == 3
    mining = MiningSettings.from_config(config.mining)
    assert mining.exclude == DEFAULT_EXCLUDE + ("scripts/*",)
    assert mining.excluded("scripts/run.py") and mining.excluded("docs/x.py")
    assert not mining.excluded("src/model.py")


def test_no_file_and_an_empty_file_are_the_defaults(tmp_path):
    assert config_file.load(tmp_path / "curator.toml") == Config()
    assert config_file.load(write(tmp_path, "# nothing yet\n")) == Config()
    assert Config().execution.isolation == "auto" and Config().mining.call_depth == 3


def test_the_workspace_holds_the_typed_config(tmp_path):
    path = write(tmp_path, FULL)
    ws = discover(workspace=path.parent)
    assert ws.config.release.license == "MIT"
    assert ws.limits.file_bytes == 4000
    # parsed TOML handed to a Workspace is read the same way
    made = Workspace(ws.root, ws.db_path, {"release": {"license": "MIT"}})
    assert made.config == Config(release=ReleaseConfig(license="MIT"))
    with pytest.raises(ConfigError, match=r"unknown \[release\] key 'licence'"):
        Workspace(ws.root, ws.db_path, {"release": {"licence": "MIT"}})


@pytest.mark.parametrize(("text", "line", "message"), [
    ("[mining]\ncall_depth = 2\nmax_depth = 3\n", 3,
     "unknown [mining] key 'max_depth' (known: call_depth, exclude, extra_exclude, "
     "indirect_tests, max_file_bytes, with_tests)"),
    ("[minning]\ncall_depth = 2\n", 1,
     "unknown table [minning] (known: app, candidates, discover, dlbench, execution, keymap, limits, "
     "llm, mining, release)"),
    ("[execution]\n\nworkers = \"4\"\n", 3, "[execution] workers must be a whole number, "
     "got a string"),
    ("[execution]\nbackend = \"slurm\"\n", 2,
     "[execution] backend must be one of local, ray, got 'slurm'"),
    ("[execution]\npreload = [\"torch\", 3]\n", 2,
     "[execution] preload must be a list of strings (item 2 is an integer)"),
    ("[limits]\nfile_bytes = 0\n", 2, "[limits] file_bytes must be at least 1, got 0"),
    ("[limits]\ndepth = true\n", 2, "[limits] depth must be a whole number, got a boolean"),
    ("[llm]\nmodel = \"m\"\nmax_retries = \"five\"\n", 3,
     "[llm] max_retries must be a whole number, got a string"),
    ("[release]\nnear_duplicate_threshold = -0.5\n", 2,
     "[release] near_duplicate_threshold must be at least 0, got -0.5"),
    ("[execution]\ntimeout_factor = 2\nmemory_mb = 0\n", 3,
     "[execution] memory_mb must be at least 1, got 0"),
    ("[candidates]\naccept_when = \"4 of 3\"\n", 2,
     "[candidates] accept_when = '4 of 3' needs 1 <= K <= N"),
    ("[dlbench.spellings.task]\n\"RL\" = 1\n", 2,
     "[dlbench] spellings 'task' 'RL' must be a string, got an integer"),
    ("[keymap]\n\"problem.save\" = 3\n", 2,
     "[keymap] 'problem.save' must be a string or a list of strings, got an integer"),
    ("release = \"1.0\"\n", 1, "invalid config: release must be a [table]"),
    ("mining.call_depth = \"deep\"\n", 1,
     "[mining] call_depth must be a whole number, got a string"),
])
def test_a_mistake_is_refused_with_the_file_and_line(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        config_file.load(path)
    assert str(caught.value) == f"{path}:{line}: {message}"
    with pytest.raises(WorkspaceError, match="^" + str(path)):   # and every command says so
        discover(workspace=path.parent)


def test_malformed_toml_names_the_file(tmp_path):
    path = write(tmp_path, "[mining\n")
    with pytest.raises(ConfigError, match=f"^{path}: invalid config: malformed TOML"):
        config_file.load(path)


def test_without_the_text_the_error_names_the_file_only():
    with pytest.raises(ConfigError, match=r"^curator.toml: unknown \[app\] key 'colour'"):
        config_file.from_dict({"app": {"colour": "red"}})


def test_every_table_and_key_has_a_default():
    for table in dataclasses.fields(Config):
        assert table.default is not dataclasses.MISSING or \
            table.default_factory is not dataclasses.MISSING, table.name
        default = getattr(Config(), table.name)
        if dataclasses.is_dataclass(default):
            type(default)()   # constructible from nothing: every key is optional
