"""Untrusted code under weak isolation needs consent: samples and mined or imported
problems are refused without `--allow-weak` / `[execution] allow_weak = true`; references
the user wrote run without being asked; strong isolation asks nobody."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from execution_support import needs_bwrap
from samples_support import ADD_SOLUTION, make_problems, write_jsonl

from curator import workspace as workspace_mod
from curator.cli import main
from curator.evaluation import evaluate
from curator.evaluation import samples as sample_files
from curator.execution import sandbox, trust
from curator.execution.engine import Engine
from curator.runs import run_problems
from curator.store import Store

# add_one and counter_bump name an upstream repository (mined or imported); double_it not
ROWS = [{"task_id": "add_one", "solution": ADD_SOLUTION},
        {"task_id": "double_it", "solution": "def double(x):\n    return 2 * x\n"}]


@pytest.fixture(scope="module")
def weak():
    with Engine(workers=1, isolation="weak") as engine:
        yield engine


@pytest.fixture
def setup(empty_workspace, tmp_path):
    store = Store(empty_workspace.db_path, "tester")
    make_problems(store)
    yield empty_workspace, store, tmp_path
    store.close()


def runs_of(store, pid):
    return [r["outcome"] for r in store.query("SELECT outcome FROM runs WHERE problem_id = ?",
                                              (pid,))]


def test_weak_runs_of_mined_problems_need_consent_the_users_own_do_not(setup, weak):
    ws, store, _ = setup
    mine = run_problems(store, ws, ["double_it"], engine=weak)   # written here: no question
    assert [r["outcome"] for r in mine.runs] == ["passed"] and mine.isolation == "weak"
    with pytest.raises(trust.WeakIsolationRefused) as refused:
        run_problems(store, ws, ["double_it", "counter_bump"], engine=weak)
    message = str(refused.value)
    assert "counter_bump" in message and "double_it" not in message
    assert "--allow-weak" in message and "allow_weak = true" in message
    assert "\n" not in message
    assert runs_of(store, "counter_bump") == [] and runs_of(store, "double_it") == ["passed"]
    allowed = run_problems(store, ws, ["counter_bump"], engine=weak, allow_weak=True)
    assert [r["outcome"] for r in allowed.runs] == ["passed"]
    assert runs_of(store, "counter_bump") == ["passed"]


def test_the_setting_is_consent_and_an_explicit_no_overrides_it(setup, weak):
    ws, store, _ = setup
    (ws.root / "curator.toml").write_text("[execution]\nallow_weak = true\n")
    ws = workspace_mod.discover(ws.root)
    assert run_problems(store, ws, ["add_one"], engine=weak).runs[0]["outcome"] == "passed"
    with pytest.raises(trust.WeakIsolationRefused):
        run_problems(store, ws, ["add_one"], engine=weak, allow_weak=False)


@needs_bwrap
def test_strong_isolation_asks_nobody(setup):
    ws, store, _ = setup
    with Engine(workers=1, isolation="strong") as strong:
        report = run_problems(store, ws, ["counter_bump"], engine=strong)
    assert report.isolation == "strong" and report.runs[0]["outcome"] == "passed"


def test_sample_evaluation_under_weak_isolation_needs_consent(setup, weak):
    ws, store, tmp_path = setup
    sample_files.import_files(store, [write_jsonl(tmp_path / "s.jsonl", ROWS)], model="m")
    # samples are untrusted whatever their problem; add_one's reference is too
    (ws.root / "curator.toml").write_text('[execution]\nisolation = "weak"\n')
    ws = workspace_mod.discover(ws.root)
    assert evaluate.needs_consent(store, ws) == ["2 sample(s)", "add_one"]
    with pytest.raises(trust.WeakIsolationRefused, match=r"2 sample\(s\), add_one"):
        evaluate.evaluate(store, ws, engine=weak)
    assert store.query("SELECT id FROM runs") == []       # nothing ran, not even references
    report = evaluate.evaluate(store, ws, engine=weak, allow_weak=True)
    assert report.outcomes == {"passed": 2} and report.isolation == "weak"


def test_cli_run_and_samples_eval_take_allow_weak(setup, tmp_path):
    ws, store, _ = setup
    sample_files.import_files(store, [write_jsonl(tmp_path / "s.jsonl", ROWS)], model="m")
    (ws.root / "curator.toml").write_text('[execution]\nisolation = "weak"\n')
    base = ["--workspace", str(ws.root)]
    runner = CliRunner()
    own = runner.invoke(main, [*base, "run", "double_it", "--workers", "1"])
    assert own.exit_code == 0, own.output
    refused = runner.invoke(main, [*base, "run", "counter_bump", "--workers", "1"])
    assert refused.exit_code == 1
    assert refused.output.strip().splitlines()[-1].startswith(
        "error: isolation is weak (no working bubblewrap), so untrusted code (counter_bump)")
    done = runner.invoke(main, [*base, "run", "counter_bump", "--workers", "1", "--allow-weak"])
    assert done.exit_code == 0, done.output
    assert runs_of(store, "counter_bump") == ["passed"]
    no = runner.invoke(main, [*base, "samples", "eval", "--workers", "1", "--json"])
    assert no.exit_code == 1 and "--allow-weak" in no.output
    yes = runner.invoke(main, [*base, "samples", "eval", "--workers", "1", "--json",
                               "--allow-weak"])
    assert yes.exit_code == 0, yes.output
    assert store.one("SELECT COUNT(*) AS n FROM runs WHERE sample_id IS NOT NULL")["n"] == 2


def test_started_by_an_ordinary_user_the_sandbox_needs_consent_without_confinement(
        monkeypatch):
    # runs keep that user's uid: the judge's uid (found by running a strong engine as a
    # user of its own: the solution wrote the judge's run folder); where the kernel
    # refuses the solution process a user namespace its writes cannot be confined
    monkeypatch.setattr(trust, "shared_uid", lambda: True)
    monkeypatch.setattr(trust, "writes_confined", lambda: False)
    assert trust.consent_needed("strong") == trust.SHARED_UID
    assert trust.consent_needed("weak") == trust.WEAK
    trust.check("strong", [], allow_weak=False)          # nothing untrusted: no question
    trust.check("strong", ["add_one"], allow_weak=True)
    with pytest.raises(trust.WeakIsolationRefused) as refused:
        trust.check("strong", ["add_one", "add_one", "sample 3"], allow_weak=False)
    message = str(refused.value)
    assert message.startswith("curator runs as an ordinary user (uid ")
    assert "(add_one, sample 3)" in message and "run curator as root" in message
    assert "--allow-weak" in message and "\n" not in message
    assert refused.value.why == trust.SHARED_UID
    monkeypatch.setattr(trust, "shared_uid", lambda: False)
    assert trust.consent_needed("strong") is None
    trust.check("strong", ["add_one"], allow_weak=False)


def test_an_ordinary_user_whose_solution_writes_are_confined_needs_no_consent(monkeypatch):
    # the solution process writes nothing but its own folder (`sandbox.confine_writes`):
    # the judge's uid no longer matters (tests/adversarial/test_solution_writes.py)
    monkeypatch.setattr(trust, "shared_uid", lambda: True)
    monkeypatch.setattr(trust, "writes_confined", lambda: True)
    assert trust.consent_needed("strong") is None
    assert trust.consent_needed("weak") == trust.WEAK
    trust.check("strong", ["add_one", "sample 3"], allow_weak=False)


@needs_bwrap
def test_the_sandbox_here_confines_solution_writes():
    # probed in a sandbox as runs get it: this kernel allows the mount namespace
    assert sandbox.confinement_works("strong") is True
    assert trust.writes_confined() is True


@needs_bwrap
def test_an_ordinary_users_cli_run_of_a_mined_problem_asks_for_allow_weak(setup, tmp_path,
                                                                          monkeypatch):
    ws, store, _ = setup
    monkeypatch.setattr(trust, "shared_uid", lambda: True)
    monkeypatch.setattr(trust, "writes_confined", lambda: False)
    (ws.root / "curator.toml").write_text('[execution]\nisolation = "strong"\n')
    base = ["--workspace", str(ws.root)]
    runner = CliRunner()
    assert runner.invoke(main, [*base, "run", "double_it"]).exit_code == 0   # the user's own
    refused = runner.invoke(main, [*base, "run", "counter_bump"])
    assert refused.exit_code == 1
    assert refused.output.strip().splitlines()[-1].startswith(
        "error: curator runs as an ordinary user")
    assert runs_of(store, "counter_bump") == []
    ws = workspace_mod.discover(ws.root)
    sample_files.import_files(store, [write_jsonl(tmp_path / "s.jsonl", ROWS)], model="m")
    assert evaluate.needs_consent(store, ws) == ["2 sample(s)", "add_one"]
    done = runner.invoke(main, [*base, "run", "counter_bump", "--allow-weak"])
    assert done.exit_code == 0, done.output
    assert runs_of(store, "counter_bump") == ["passed"]
