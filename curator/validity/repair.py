"""Repairing tests that do not exercise their problem: propose the ones that do.

For a repo-backed problem, the mining index of its pinned commit links tests to the
problem's symbol: tests that call it (direct), else tests of the functions that call it
(indirect, with the call path). `propose` runs those tests on the reference and on the
stub through the sandboxed engine and keeps the ones the reference passes and the stub
fails; together with the problem's own node ids that already exercise it, they are the
proposed node ids (node ids the stub does not fail are dropped, which also makes the
problem's runs faster). `apply` saves them as the problem's node ids (database and
problem.toml).

The index comes from the stored candidates when the repository was mined at exactly
that commit, else from indexing the commit (nothing is written to the mining tables).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace

from curator import runs, sync
from curator.errors import CuratorError
from curator.execution.engine import Engine
from curator.execution.job import RunResult
from curator.mining.index import IndexResult, index_commit
from curator.problem import Problem
from curator.progress import CancelCheck, Progress, checkpoint
from curator.repos import checkout, identity
from curator.store import Store
from curator.store import candidates as candidate_store
from curator.store import problems as problem_store
from curator.validity.source import symbol_of
from curator.validity.stub import NoEntryPoint, stub_solution
from curator.validity.validate import consent, engine_for
from curator.workspace import Workspace

_VIA = re.compile(r"through (.+)$")


@dataclass
class Link:
    kind: str                          # direct | indirect
    tests: list[str]
    via: list[str] = field(default_factory=list)


@dataclass
class Proposal:
    id: str
    current: list[str] = field(default_factory=list)
    proposed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    link: str | None = None
    via: list[str] = field(default_factory=list)
    fixes: bool = False                # the proposed node ids make the stub fail
    applied: bool = False
    reason: str | None = None

    def to_json(self) -> dict:
        return {"id": self.id, "current": self.current, "proposed": self.proposed,
                "added": self.added, "dropped": self.dropped, "link": self.link,
                "via": self.via, "fixes": self.fixes, "applied": self.applied,
                "reason": self.reason}

    @property
    def changes(self) -> bool:
        return bool(self.proposed) and self.proposed != self.current


def under(node_id: str, test_id: str) -> bool:
    """Whether a collected test id belongs to a listed node id (file, class, function)."""
    return test_id == node_id or test_id.startswith(node_id + "::") or \
        test_id.startswith(node_id + "[")


# -- the mining index's tests of a symbol ----------------------------------------------------


def _from_candidates(store: Store, repo_id: int, commit: str, path: str,
                     qualname: str) -> Link | None:
    for row in candidate_store.of_repo(store, repo_id):
        if (row["commit_sha"], row["path"], row["qualname"]) != (commit, path, qualname):
            continue
        tests = json.loads(row["tests"]) if isinstance(row["tests"], str) else row["tests"]
        evidence = json.loads(row["evidence"]) if isinstance(row["evidence"], str) \
            else row["evidence"]
        indirect = [e for e in evidence if e.get("kind") == "indirect-tests"]
        if not tests:
            return None
        if indirect:
            match = _VIA.search(indirect[0].get("detail", ""))
            return Link("indirect", sorted(tests),
                        match.group(1).split(" -> ") if match else [])
        return Link("direct", sorted(tests))
    return None


def _from_index(result: IndexResult, path: str, qualname: str) -> Link | None:
    for module, function, tests, link in result.present.values():
        if module.path == path and function.qualname == qualname:
            if not tests:
                return None
            if link is not None:
                return Link("indirect", sorted(tests), list(link.via))
            return Link("direct", sorted(tests))
    return None


def linked_tests(store: Store, workspace: Workspace, problem: Problem,
                 cache: dict | None = None, cancelled: CancelCheck | None = None
                 ) -> Link | None:
    """The tests the mining index links to the problem's symbol at its pinned commit."""
    source = problem.source or {}
    url, commit, path = source.get("repo"), source.get("commit"), source.get("path")
    if not (url and commit and path and problem.test_node_ids is not None):
        raise CuratorError(f"problem {problem.id}: not repo-backed (no [source] repo, commit "
                           "and path with node ids); edit its test_solution.py instead")
    qualname = symbol_of(problem.entry_point, source)
    row = identity.record_for(store, url)
    if row is not None:
        found = _from_candidates(store, row["id"], commit, path, qualname)
        if found is not None:
            return found
    cache = {} if cache is None else cache
    key = (url, commit)
    if key not in cache:
        repo, _ = checkout.pinned_checkout(workspace, url, commit, store)
        cache[key] = index_commit(repo, commit, cancelled=cancelled)
    return _from_index(cache[key], path, qualname)


# -- proposing ----------------------------------------------------------------------------


def _exercising(node_ids: list[str], reference: RunResult, stub: RunResult) -> list[str]:
    """Node ids the reference passes (every collected test under them) and the stub fails
    (at least one of those)."""
    ref = {t["id"]: t["outcome"] for t in reference.tests}
    got = {t["id"]: t["outcome"] for t in stub.tests}
    keep = []
    for node in node_ids:
        mine = [tid for tid in ref if under(node, tid)]
        passed = [tid for tid in mine if ref[tid] == "passed"]
        if not passed or any(ref[tid] in ("failed", "error") for tid in mine):
            continue
        if any(got.get(tid) != "passed" for tid in passed):
            keep.append(node)
    return keep


def propose(store: Store, workspace: Workspace, problems: list[Problem],
            engine: Engine | None = None,
            workers: int | None = None, progress: Progress | None = None,
            cancelled: CancelCheck | None = None,
            allow_weak: bool | None = None) -> list[Proposal]:
    """A proposal per problem: the node ids that exercise it (see the module docstring).
    allow_weak: as for `validate` (mined problems run the repository's code)."""
    proposals, batch = [], []
    index_cache: dict = {}
    for number, problem in enumerate(problems, 1):
        checkpoint(cancelled, "repair")
        proposal = Proposal(problem.id, current=list(problem.test_node_ids or []))
        proposals.append(proposal)
        try:
            link = linked_tests(store, workspace, problem, index_cache, cancelled)
            stub = stub_solution(problem.solution, symbol_of(problem.entry_point,
                                                             problem.source))
        except (CuratorError, NoEntryPoint) as exc:
            proposal.reason = str(exc)
            continue
        if progress:
            progress(number, len(problems), f"{problem.id}: tests linked")
        if link is not None:
            proposal.link, proposal.via = link.kind, link.via
        candidates = sorted(set(proposal.current) | set(link.tests if link else ()))
        if not candidates:
            proposal.reason = "the mining index links no test to this symbol"
            continue
        trial = replace(problem, test_node_ids=candidates)
        ref_job = runs.job_for(store, workspace, trial, problem.solution, "reference")
        stub_job = runs.job_for(store, workspace, trial, stub, "reference")
        stub_job.reference = False     # judged strictly; only its per-test outcomes matter
        batch.append((proposal, candidates, ref_job, stub_job))
    if batch:
        jobs = [j for item in batch for j in item[2:]]
        own = engine is None
        if own:
            engine = engine_for(workspace, workers, len(jobs),
                                plain=not all(job.repo_backed for job in jobs))
        try:
            consent(engine, workspace, problems, allow_weak)
            results = {r.job_id: r for r in engine.run(jobs, progress=progress,
                                                        cancelled=cancelled)}
        finally:
            if own:
                engine.close()
        if len(results) < len(jobs):
            checkpoint(lambda: True, "repair")
        for proposal, candidates, ref_job, stub_job in batch:
            good = _exercising(candidates, results[ref_job.job_id], results[stub_job.job_id])
            own_good = [n for n in proposal.current if n in good]
            added = [n for n in good if n not in proposal.current]
            proposal.proposed = own_good + added
            proposal.added = added
            proposal.dropped = [n for n in proposal.current if n not in proposal.proposed]
            proposal.fixes = bool(proposal.proposed)
            if not proposal.fixes:
                proposal.reason = ("none of the linked tests passes on the reference and "
                                   "fails on the stub")
    return proposals


def apply(store: Store, workspace: Workspace, proposal: Proposal) -> Problem:
    """Save the proposed node ids as the problem's (database and problems/<id>/)."""
    if not proposal.fixes or not proposal.proposed:
        raise CuratorError(f"problem {proposal.id}: no exercising tests to apply"
                           + (f" ({proposal.reason})" if proposal.reason else ""))
    problem = problem_store.get(store, proposal.id)
    updated = replace(problem, test_node_ids=list(proposal.proposed))
    sync.save_and_write(store, updated, workspace.problems_dir)
    proposal.applied = True
    return problem_store.get(store, proposal.id)
