"""A panel reviewing mined candidates: relevance votes decided by the accept rule.

Each reviewer votes a candidate relevant or not (`vote`); after every vote the rule of
curator.toml ([candidates] accept_when, curator.panel.rule) is applied: the candidate is
promoted to a draft problem exactly as `candidates accept` does, rejected with the vote
count as its reason, or left waiting. A decided candidate takes no more votes. Votes and
decisions are audited. `assign` spreads new candidates over reviewers, `stats` gives
progress and agreement on relevance (the agreement module of failure review).
"""

from __future__ import annotations

from curator.errors import CuratorError
from curator.mining import promote
from curator.panel import balance
from curator.panel.rule import AcceptRule, CandidateSettings
from curator.review.agreement import agreement
from curator.store import Store, now
from curator.store import candidate_votes as vote_store
from curator.store import candidates as candidate_store
from curator.workspace import Workspace

VOTE_ENTITY = "candidate_vote"


def rule_for(workspace: Workspace) -> AcceptRule:
    return CandidateSettings.from_config(workspace.config).accept_when


def _yes_no(value: str | bool) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("yes", "y"):
        return True
    if text in ("no", "n"):
        return False
    raise CuratorError(f"--relevant takes yes or no, got {value!r}")


def tally(store: Store) -> dict[int, dict]:
    """candidate id -> {"yes", "no", "votes": {reviewer: "yes"|"no"}}."""
    out: dict[int, dict] = {}
    for row in vote_store.votes(store):
        entry = out.setdefault(row["candidate_id"], {"yes": 0, "no": 0, "votes": {}})
        answer = "yes" if row["relevant"] else "no"
        entry[answer] += 1
        entry["votes"][row["reviewer"]] = answer
    return out


def votes_text(counts: dict | None) -> str:
    """`2✓ 1✗` for a candidate's panel votes (a `tally` entry), empty before the first."""
    if not counts:
        return ""
    return f"{counts['yes']}✓ {counts['no']}✗"


def votes_json(counts: dict | None, reviewers: list[str] | None = None) -> dict:
    """The `votes` key of `candidates list --json`: counts, each reviewer's vote, and the
    reviewers assigned (`candidates assign`)."""
    counts = counts or {"yes": 0, "no": 0, "votes": {}}
    return {"yes": counts["yes"], "no": counts["no"], "by": dict(counts["votes"]),
            "assigned": list(reviewers or [])}


def vote(store: Store, workspace: Workspace, candidate_id: int | str, reviewer: str,
         relevant: str | bool, reason: str = "", rule: AcceptRule | None = None) -> dict:
    """Record a reviewer's vote, then promote, reject or leave the candidate waiting.

    Returns {"candidate", "reviewer", "relevant", "yes", "no", "rule", "decision"} with
    decision `accepted` (and "problem_id"), `rejected`, `waiting`, or `blocked` (the rule
    holds but the candidate cannot become a problem: "error" says why; the vote stays).
    """
    if not reviewer:
        raise CuratorError("a reviewer name is needed (--user or $CURATOR_USER)")
    rule = rule or rule_for(workspace)
    answer = _yes_no(relevant)
    row = candidate_store.get(store, candidate_id)
    if row["status"] != "new":
        where = f" (problem {row['problem_id']})" if row["problem_id"] else ""
        raise CuratorError(f"candidate {row['id']} is already {row['status']}{where}; "
                           "votes are for new candidates")
    cid = row["id"]
    with store.transaction():
        before = vote_store.vote(store, cid, reviewer)
        after = vote_store.upsert_vote(store, cid, reviewer, answer, (reason or "").strip(),
                                       now())
        store.audit(VOTE_ENTITY, f"{cid}/{reviewer}", "vote", before=before, after=after)
    counts = tally(store).get(cid, {"yes": 0, "no": 0})
    result = {"candidate": cid, "reviewer": reviewer, "relevant": "yes" if answer else "no",
              "yes": counts["yes"], "no": counts["no"], "rule": str(rule)}
    decision = rule.decide(counts["yes"], counts["no"])
    summary = f"panel {counts['yes']} yes / {counts['no']} no (rule {rule})"
    if decision == "accept":
        try:
            accepted = promote.accept(store, workspace, cid)
        except CuratorError as exc:
            return dict(result, decision="blocked", error=str(exc))
        with store.transaction():
            store.audit("candidate", cid, "panel_accept", after={
                "yes": counts["yes"], "no": counts["no"], "rule": str(rule),
                "problem_id": accepted["problem_id"]})
        return dict(result, decision="accepted", problem_id=accepted["problem_id"])
    if decision == "reject":
        reasons = [v["reason"] for v in vote_store.votes(store, cid)
                   if not v["relevant"] and v["reason"]]
        text = summary + (": " + "; ".join(reasons) if reasons else "")
        candidate_store.reject(store, cid, text)
        return dict(result, decision="rejected")
    return dict(result, decision="waiting")


def assign(store: Store, reviewers, per_item: int, min_score: float | None = None,
           seed: int = 0) -> dict:
    """Give each new candidate without reviewers to `per_item` reviewers, balanced."""
    names = [r.strip() for r in reviewers if r and r.strip()]
    if not names:
        raise CuratorError("give at least one reviewer (--reviewers ana,ben,cy)")
    if len(set(names)) != len(names):
        raise CuratorError("a reviewer is listed twice")
    if not 1 <= per_item <= len(names):
        raise CuratorError(f"--per-item must be between 1 and the number of reviewers "
                           f"({len(names)}), got {per_item}")
    current = vote_store.assignments(store)
    rows = candidate_store.list_rows(store, min_score=min_score, status="new")
    todo = sorted(r["id"] for r in rows if r["id"] not in current)
    plan: dict[int, list[str]] = balance.plan(todo, names, per_item, current, seed)
    stamp = now()
    with store.transaction():
        for cid, people in plan.items():
            for a in people:
                vote_store.assign(store, cid, a, stamp)
                store.audit("candidate_assignment", f"{cid}/{a}", "assign",
                            after={"per_item": per_item, "seed": seed})
    return {"assigned": len(plan), "already_assigned": len(rows) - len(todo),
            "per_item": per_item,
            "reviewers": {a: sum(a in p for p in plan.values()) for a in names}}


def assigned_to(store: Store) -> dict[int, list[str]]:
    """candidate id -> its reviewers."""
    return vote_store.assignments(store)


def stats(store: Store, rule: AcceptRule) -> dict:
    """Progress per reviewer, decisions so far and agreement on relevance."""
    votes = tally(store)
    assigned = vote_store.assignments(store)
    statuses = {r["id"]: r["status"] for r in candidate_store.list_rows(store, status="all")}
    voted = set(votes) | set(assigned)
    decided = {"accepted": 0, "rejected": 0, "waiting": 0}
    for cid in voted:
        status = statuses.get(cid, "new")
        key = {"accepted": "accepted", "rejected": "rejected"}.get(status, "waiting")
        decided[key] += 1
    names = sorted({a for people in assigned.values() for a in people}
                   | {a for v in votes.values() for a in v["votes"]})
    reviewers = {}
    for name in names:
        mine = [cid for cid, people in assigned.items() if name in people]
        reviewers[name] = {"assigned": len(mine),
                           "done": sum(name in votes.get(cid, {}).get("votes", {})
                                       for cid in mine),
                           "votes": sum(name in v["votes"] for v in votes.values())}
    return {"candidates": len(voted), "rule": str(rule), "decisions": decided,
            "reviewers": reviewers,
            "agreement": agreement({cid: v["votes"] for cid, v in votes.items()})}
