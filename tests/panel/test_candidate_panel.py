"""A panel reviewing mined candidates: the accept rule of curator.toml promotes or rejects."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from mining_support import CURATOR_TOML, make_dl_repo, mine_first_commit, mining_workspace

from curator import workspace as workspace_mod
from curator.cli import main
from curator.problem_files import read_problem
from curator.review.agreement import krippendorff_alpha_nominal
from curator.store import Store
from curator.store import candidates as candidate_store


@pytest.fixture(scope="module")
def dl_repo(tmp_path_factory):
    return make_dl_repo(tmp_path_factory.mktemp("upstream") / "dlrepo")


def panel_workspace(tmp_path, dl_repo, rule: str):
    ws = mining_workspace(tmp_path / "ws")
    (ws.root / "curator.toml").write_text(
        CURATOR_TOML + f'\n[candidates]\naccept_when = "{rule}"\n', encoding="utf-8")
    ws = workspace_mod.discover(ws.root)
    with Store(ws.db_path, "miner") as store:
        ids = mine_first_commit(store, ws, dl_repo)
    return ws, ids


def invoke(ws, *args, user=None):
    base = ["--workspace", str(ws.root)] + (["--user", user] if user else [])
    return CliRunner().invoke(main, [*base, *args])


def vote(ws, cid, answer, user, reason=""):
    result = invoke(ws, "candidates", "vote", str(cid), "--relevant", answer, "--reason",
                    reason, "--json", user=user)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def status(ws, cid) -> dict:
    with Store(ws.db_path, "x") as store:
        return candidate_store.get(store, cid)


def test_two_of_three_accepts_rejects_and_waits(tmp_path, dl_repo):
    ws, ids = panel_workspace(tmp_path, dl_repo, "2 of 3")
    area, convert, accuracy = ids["box_area"], ids["xyxy_to_cxcywh"], ids["accuracy"]
    assigned = json.loads(invoke(ws, "candidates", "assign", "--reviewers", "ana,ben,cy",
                                 "--per-item", "3", "--json").output)
    assert assigned["assigned"] == len(ids) and assigned["reviewers"] == {
        "ana": len(ids), "ben": len(ids), "cy": len(ids)}

    # box_area: two relevant votes promote it, as `candidates accept` would
    first = vote(ws, area, "yes", "ana")
    assert (first["decision"], first["yes"], first["no"], first["rule"]) == \
        ("waiting", 1, 0, "2 of 3")
    second = vote(ws, area, "yes", "ben")
    assert second["decision"] == "accepted"
    problem, _ = read_problem(ws.problems_dir / second["problem_id"])
    assert problem.status == "draft" and problem.entry_point == "box_area"
    assert problem.source["symbol"] == "box_area" and problem.test_node_ids
    row = status(ws, area)
    assert (row["status"], row["problem_id"]) == ("accepted", second["problem_id"])
    late = invoke(ws, "candidates", "vote", str(area), "--relevant", "no", user="cy")
    assert late.exit_code == 1
    assert late.output.strip() == (f"error: candidate {area} is already accepted (problem "
                                   f"{second['problem_id']}); votes are for new candidates")

    # accuracy: two "not relevant" votes leave 2 of 3 out of reach
    vote(ws, accuracy, "no", "ana", reason="plain numpy")
    rejected = vote(ws, accuracy, "no", "cy", reason="not deep learning")
    assert rejected["decision"] == "rejected"
    row = status(ws, accuracy)
    assert row["status"] == "rejected"
    assert row["reason"] == ("panel 0 yes / 2 no (rule 2 of 3): plain numpy; "
                             "not deep learning")
    assert not any(p.name.endswith("accuracy") for p in ws.problems_dir.iterdir())

    # xyxy_to_cxcywh: a split waits for the third vote, which decides
    assert vote(ws, convert, "yes", "ana")["decision"] == "waiting"
    assert vote(ws, convert, "no", "ben")["decision"] == "waiting"
    assert status(ws, convert)["status"] == "new"
    # `candidates list` shows the votes so far, as the app's table does (keys kept)
    listed = json.loads(invoke(ws, "candidates", "list", "--json").output)
    row = next(r for r in listed if r["id"] == convert)
    assert {"id", "score", "status", "qualname", "tests", "suggestions"} <= set(row)
    assert row["votes"] == {"yes": 1, "no": 1, "by": {"ana": "yes", "ben": "no"},
                            "assigned": ["ana", "ben", "cy"]}
    untouched = next(r for r in listed if r["id"] not in (convert, area, accuracy))
    assert untouched["votes"] == {"yes": 0, "no": 0, "by": {},
                                  "assigned": ["ana", "ben", "cy"]}
    text = invoke(ws, "candidates", "list").output
    line = next(x for x in text.splitlines() if x.strip().startswith(f"{convert} ")
                or f"│ {convert} " in x)
    assert "1✓ 1✗" in line and "votes" in text
    assert vote(ws, convert, "yes", "cy")["decision"] == "accepted"
    assert status(ws, convert)["status"] == "accepted"

    stats = json.loads(invoke(ws, "candidates", "stats", "--json").output)
    assert stats["rule"] == "2 of 3"
    assert stats["decisions"] == {"accepted": 2, "rejected": 1,
                                  "waiting": len(ids) - 3}
    assert stats["reviewers"]["ana"] == {"assigned": len(ids), "done": 3, "votes": 3}
    assert stats["agreement"]["items"] == 3
    assert stats["agreement"]["alpha"] == round(krippendorff_alpha_nominal(
        [["yes", "yes"], ["no", "no"], ["yes", "no", "yes"]]), 4)
    assert set(stats["agreement"]["kappa"]) == {"ana|ben", "ana|cy", "ben|cy"}
    with Store(ws.db_path, "x") as store:
        audit = store.query("SELECT actor, action, after FROM audit WHERE entity = "
                            "'candidate' AND entity_id = ? AND action = 'panel_accept'",
                            (str(area),))
    assert [(a["actor"], json.loads(a["after"])["yes"]) for a in audit] == [("ben", 2)]


def test_unanimous_rule_rejects_at_the_first_no(tmp_path, dl_repo):
    ws, ids = panel_workspace(tmp_path, dl_repo, "3 of 3")
    cid = ids["box_area"]
    assert vote(ws, cid, "yes", "ana")["decision"] == "waiting"
    assert vote(ws, cid, "no", "ben")["decision"] == "rejected"
    assert status(ws, cid)["status"] == "rejected"


def test_a_bad_rule_is_one_line_naming_the_file(tmp_path, dl_repo):
    ws, ids = panel_workspace(tmp_path, dl_repo, "2 of 3")
    config = ws.root / "curator.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("2 of 3", "most of them"),
                      encoding="utf-8")
    result = invoke(ws, "candidates", "vote", str(ids["box_area"]), "--relevant", "yes",
                    user="ana")
    assert result.exit_code == 1
    assert result.output.strip() == (f"error: {config}:5: [candidates] accept_when = "
                                     "'most of them' must read \"K of N\", e.g. \"2 of 3\"")
    with Store(ws.db_path, "x") as store:
        assert store.query("SELECT * FROM candidate_votes") == []
