"""Release gates (docs/ARCHITECTURE.md#data-flow): what every problem must satisfy before it is released.

Gates, in order:
  reference_passes   the reference solution passes its tests on this (pinned) environment:
                     the latest reference run of the current solution passed, and no run of
                     it since the solution or tests last changed failed (a flaky reference
                     blocks release). `infra` runs are the harness's fault and are ignored.
  tests_discriminate a stub of the entry point (its body `raise NotImplementedError`) fails
                     at least one of the tests the reference passes, per `curator
                     validate` on the current solution and tests (not validated: fails).
  reference_stable   `curator validate` found no flaky test: every test had the same
                     outcome in each of the reference's repeated runs.
  min_mutation_score when [release] min_mutation_score is set (off by default): the share
                     of the reference's mutants the tests kill is at least that.
  min_tests          at least `min_tests` tests (default 3): test functions in
                     test_solution.py (parametrize cases counted), or node ids; a reference
                     run that reported more tests counts those.
  labels_set         stage, task and data all set to known slugs.
  prompt_present     the prompt is not empty.
  code_prompt        the prompt has a python block declaring the entry point that parses:
                     it becomes the bundle's `code_prompt`, which completions continue.
  provenance_known   a problem with [source] needs repo, a pinned commit, path and licence.
                     A problem without [source] is original work written in this workspace
                     and is released under the workspace's licence: `[release] license` in
                     curator.toml, else the licence file / pyproject.toml at the workspace
                     root. When neither says, the gate fails for original problems.
  no_near_duplicate  no other problem has the same upstream symbol, the same prompt, or
                     code whose normalised-AST shingle similarity is >= the threshold
                     (default 0.9). Of a pair, the problem that was released, then ready,
                     then created earlier is kept; the other one fails.

Settings live under [release] in curator.toml: min_tests, near_duplicate_threshold, license,
min_mutation_score.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from curator.evaluation.extract import signature_problem
from curator.labels import VOCAB
from curator.problem import SHA_PATTERN, Problem
from curator.progress import CancelCheck, Progress, checkpoint
from curator.release import similarity
from curator.release.codeinfo import count_tests
from curator.repos.licenses import LICENSE_FILES, detect
from curator.store import Store
from curator.store import problems as problem_store
from curator.store import runs as run_store
from curator.timestamps import parse_or_none
from curator.validity import validate as validity
from curator.workspace import Workspace

GATES: dict[str, str] = {
    "reference_passes": "reference solution passes its tests on the pinned environment",
    "tests_discriminate": "a stub of the entry point fails at least one test",
    "reference_stable": "no flaky test in the reference's repeated runs",
    "min_mutation_score": "mutation score is at least {min_mutation_score}",
    "min_tests": "has at least {min_tests} tests",
    "labels_set": "stage, task and data labels are set",
    "prompt_present": "prompt is present",
    "code_prompt": "prompt has a parsable signature of the entry point",
    "provenance_known": "provenance and licence are known",
    "no_near_duplicate": "no near-duplicate (code similarity < {near_duplicate_threshold})",
}
RELEASABLE = ("ready", "released")
_STATUS_RANK = {"released": 0, "ready": 1, "draft": 2, "retired": 3}


@dataclass
class Settings:
    min_tests: int = 3
    near_duplicate_threshold: float = 0.9
    license: str | None = None          # the workspace's licence (SPDX id) for original work
    min_mutation_score: float | None = None   # None: the gate is off

    def to_json(self) -> dict:
        return asdict(self)


def workspace_license(workspace: Workspace) -> str | None:
    """SPDX id of the workspace's own licence: [release] license, else its root files."""
    configured = workspace.config.release.license
    if configured:
        return configured
    root = Path(workspace.root)
    files = {}
    try:
        for path in root.iterdir():
            if path.is_file() and (LICENSE_FILES.match(path.name) or path.name in (
                    "pyproject.toml", "setup.cfg", "setup.py")):
                files[path.name] = path.read_bytes()[:200_000]
    except OSError:
        return None
    spdx = detect(files)
    return None if spdx == "unknown" else spdx


def settings_for(workspace: Workspace) -> Settings:
    config = workspace.config.release
    out = Settings(license=workspace_license(workspace))
    if config.min_tests is not None:
        out.min_tests = config.min_tests
    if config.near_duplicate_threshold is not None:
        out.near_duplicate_threshold = config.near_duplicate_threshold
    if config.min_mutation_score is not None:
        out.min_mutation_score = config.min_mutation_score
    return out


@dataclass
class Failure:
    gate: str
    problem_id: str
    status: str
    reason: str


@dataclass
class CheckReport:
    settings: Settings
    statuses: dict[str, str] = field(default_factory=dict)     # checked problem -> status
    failures: list[Failure] = field(default_factory=list)

    @property
    def blocking(self) -> list[str]:
        """Releasable (ready or released) problems that fail at least one gate."""
        return sorted({f.problem_id for f in self.failures if f.status in RELEASABLE})

    @property
    def ok(self) -> bool:
        return not self.blocking

    def failing(self, ids=None) -> list[Failure]:
        wanted = None if ids is None else set(ids)
        return [f for f in self.failures if wanted is None or f.problem_id in wanted]

    def to_json(self) -> dict:
        fmt = self.settings.to_json()
        gates = []
        for gate, description in GATES.items():
            if gate == "min_mutation_score" and self.settings.min_mutation_score is None:
                description = "off ([release] min_mutation_score is not set)"
            gates.append({
                "gate": gate, "description": description.format(**fmt),
                "failing": [{"problem_id": f.problem_id, "status": f.status,
                             "reason": f.reason} for f in self.failures if f.gate == gate]})
        return {"ok": self.ok, "checked": len(self.statuses), "blocking": self.blocking,
                "settings": fmt, "gates": gates}


def _last_code_change(store: Store, ids: set[str]) -> dict[str, datetime | None]:
    """problem id -> when its solution or tests last changed (per the audit log)."""
    return {pid: parse_or_none(at) for pid, at in problem_store.code_changes(store).items()
            if pid in ids}


def _run_tests(row: dict) -> list:
    value = row.get("tests")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return value if isinstance(value, list) else []


def _reference_failure(runs: list[dict], changed: datetime | None) -> str | None:
    if not runs:
        return "reference never run on its current solution (run `curator run ID`)"
    if changed is not None:
        recent = [r for r in runs if (parse_or_none(r["started_at"]) or changed) >= changed]
        if not recent:
            return "reference not run since its solution or tests last changed"
        runs = recent
    counted = [r for r in runs if r["outcome"] != "infra"]
    if not counted:
        return "reference runs only hit harness failures (infra); run it again"
    latest = counted[-1]
    if latest["outcome"] != "passed":
        why = f": {latest['reason']}" if latest.get("reason") else ""
        return f"latest reference run {latest['outcome']}{why}"
    bad = [r["outcome"] for r in counted if r["outcome"] != "passed"]
    if bad:
        return (f"flaky: {len(bad)} of {len(counted)} reference runs since the last change "
                f"did not pass ({', '.join(sorted(set(bad)))})")
    return None


def _validity_failures(problem: Problem, found, settings: Settings) -> list[tuple[str, str]]:
    """(gate, reason) of the validity gates this problem fails."""
    if found is None:
        why = (f"not validated on its current solution and tests (run `curator validate "
               f"{problem.id}`)")
        out = [("tests_discriminate", why), ("reference_stable", why)]
        if settings.min_mutation_score is not None:
            out.append(("min_mutation_score", why))
        return out
    out = []
    if found.discriminates is None:
        out.append(("tests_discriminate", found.reason or "not decided"))
        out.append(("reference_stable", found.reason or "not decided"))
    else:
        if not found.discriminates:
            out.append(("tests_discriminate", (
                f"a stub of {problem.entry_point} passes all {found.baseline_tests} test(s): "
                f"they never call it (`curator validate {problem.id} --repair`)")))
        if not found.stable:
            flaky = found.flaky_tests or []
            out.append(("reference_stable", (
                f"{len(flaky)} flaky test(s): {', '.join(flaky[:3])}"
                + (" ..." if len(flaky) > 3 else "")) if flaky else
                f"reference outcomes differ between runs: {', '.join(found.reference_outcomes)}"))
    floor = settings.min_mutation_score
    if floor is not None and found.discriminates is not None:
        if found.mutation_score is None:
            out.append(("min_mutation_score", "no mutant was counted (none made, or all "
                                              "timed out)"))
        elif found.mutation_score < floor:
            out.append(("min_mutation_score", (
                f"mutation score {found.mutation_score:.2f} < {floor:.2f} "
                f"({found.killed} of {found.mutants} mutants killed)")))
    return out


def _test_count(problem: Problem, runs: list[dict]) -> int | None:
    static = len(problem.test_node_ids) if problem.test_node_ids else count_tests(problem.tests)
    passed = [r for r in runs if r["outcome"] == "passed"]
    observed = len(_run_tests(passed[-1])) if passed else 0
    if static is None:
        return observed or None
    return max(static, observed)


def _provenance_failure(problem: Problem, license_: str | None) -> str | None:
    source = problem.source
    if not source:
        if not license_:
            return ("original work, but the workspace declares no licence: set "
                    "[release] license in curator.toml or add a LICENSE file")
        return None
    missing = [key for key in ("repo", "path") if not str(source.get(key) or "").strip()]
    if not source.get("commit"):
        missing.append("commit (unpinned)")
    elif not SHA_PATTERN.match(str(source["commit"])):
        missing.append("commit (not a full SHA)")
    if str(source.get("license") or "unknown").strip().lower() in ("", "unknown", "none"):
        missing.append("license")
    if missing:
        return f"[source] lacks {', '.join(missing)}"
    return None


def _prompt_key(prompt: str) -> str:
    return " ".join(prompt.split()).lower()


def _symbol_key(problem: Problem) -> tuple | None:
    source = problem.source or {}
    if source.get("repo") and source.get("symbol"):
        return (source["repo"], source.get("path"), source["symbol"])
    return None


def _duplicate_failures(problems: list[Problem], created: dict[str, str],
                        threshold: float) -> list[tuple[str, str]]:
    """(problem id, reason) for the lesser problem of every near-duplicate pair."""
    def rank(p: Problem) -> tuple:
        return (_STATUS_RANK.get(p.status, 9), created.get(p.id, ""), p.id)

    by_id = {p.id: p for p in problems}
    pairs: dict[tuple[str, str], str] = {}

    def add(a: str, b: str, reason: str) -> None:
        key = tuple(sorted((a, b)))
        pairs.setdefault(key, reason)

    for key_of, what in ((_symbol_key, "the same upstream symbol"),
                         (lambda p: _prompt_key(p.prompt), "the same prompt")):
        groups: dict = {}
        for p in problems:
            key = key_of(p)
            if key:
                groups.setdefault(key, []).append(p.id)
        for members in groups.values():
            for other in members[1:]:
                add(members[0], other, what)
    # Identical fingerprints first (linear), so a big cluster of copies costs no pairs;
    # then near-duplicates among one representative of each.
    identical: dict[frozenset, list[Problem]] = {}
    for p in problems:
        fp = similarity.fingerprint(p.solution)
        if fp:
            identical.setdefault(fp, []).append(p)
    representatives = {}
    for fp, members in identical.items():
        members.sort(key=rank)
        representatives[members[0].id] = fp
        if threshold <= 1.0:
            for other in members[1:]:
                add(members[0].id, other.id, "code similarity 1.00")
    for pair in similarity.near_duplicates(representatives, threshold):
        add(pair.a, pair.b, f"code similarity {pair.similarity:.2f}")
    out = {}
    for (a, b), reason in sorted(pairs.items()):
        keep, lose = sorted((by_id[a], by_id[b]), key=rank)
        # One failure per problem: the best-ranked problem it duplicates.
        best = out.get(lose.id)
        if best is None or rank(keep) < rank(by_id[best[0]]):
            out[lose.id] = (keep.id, reason)
    return [(pid, f"near-duplicate of {keep} ({reason})")
            for pid, (keep, reason) in sorted(out.items())]


def check(store: Store, workspace: Workspace, problems: list[Problem] | None = None,
          settings: Settings | None = None, progress: Progress | None = None,
          cancelled: CancelCheck | None = None) -> CheckReport:
    """Run every gate over `problems` (default: every problem that is not retired)."""
    settings = settings or settings_for(workspace)
    if problems is None:
        problems = [p for p in problem_store.all_problems(store) if p.status != "retired"]
    report = CheckReport(settings, {p.id: p.status for p in problems})
    ids = set(report.statuses)
    runs = run_store.current_reference_runs(store, problems)
    changes = _last_code_change(store, ids)
    created = problem_store.created_times(store)

    def fail(gate: str, problem: Problem, reason: str) -> None:
        report.failures.append(Failure(gate, problem.id, problem.status, reason))

    validities = validity.current(store, problems)
    total = len(problems)
    for index, problem in enumerate(problems, 1):
        checkpoint(cancelled, "release check")
        problem_runs = runs.get(problem.id, [])
        reason = _reference_failure(problem_runs, changes.get(problem.id))
        if reason:
            fail("reference_passes", problem, reason)
        for gate, reason in _validity_failures(problem, validities.get(problem.id),
                                               settings):
            fail(gate, problem, reason)
        count = _test_count(problem, problem_runs)
        if count is None:
            fail("min_tests", problem, "test_solution.py does not parse")
        elif count < settings.min_tests:
            fail("min_tests", problem, f"{count} test(s), need at least {settings.min_tests}")
        unset = [axis for axis in VOCAB if not getattr(problem, axis)]
        bad = [f"{axis}={getattr(problem, axis)!r}" for axis, allowed in VOCAB.items()
               if getattr(problem, axis) and getattr(problem, axis) not in allowed]
        if unset or bad:
            fail("labels_set", problem, "; ".join(
                ([f"unset: {', '.join(unset)}"] if unset else [])
                + ([f"unknown: {', '.join(bad)}"] if bad else [])))
        if not problem.prompt.strip():
            fail("prompt_present", problem, "prompt is empty")
        else:
            reason = signature_problem(problem.prompt, problem.entry_point)
            if reason:
                fail("code_prompt", problem, reason)
        reason = _provenance_failure(problem, settings.license)
        if reason:
            fail("provenance_known", problem, reason)
        if progress:
            progress(index, total, problem.id)
    by_id = {p.id: p for p in problems}
    for problem_id, reason in _duplicate_failures(problems, created,
                                                  settings.near_duplicate_threshold):
        fail("no_near_duplicate", by_id[problem_id], reason)
    order = list(GATES)
    report.failures.sort(key=lambda f: (order.index(f.gate), f.problem_id))
    return report
