"""Deciding a run's outcome from what the harness reported and how the process ended.

A run is judged in two steps that compose:

1. `decide`: what pytest itself says, read faithfully. A run passes when the harness
   reported the session finished, at least one test passed and none failed or errored,
   every expected test was reported, and the process exited 0. Skipped, xfailed,
   xpassed and deselected (by an option or the repository's conftest) tests neither
   pass nor fail a run; they stay in its per-test list.
2. `against_baseline`: a solution other than the reference is held to the reference's
   own per-test outcomes (the problem's baseline). Every test that passed on the
   reference must pass: one skipped, xfailed, erroring or missing fails the run. Tests
   the reference skipped or xfailed are reported, not counted. Without a baseline,
   `strict` asks every reported test to pass.

A run whose guard reported tampering is `tampered` in step 1, before anything else it
reported is read, and step 2 leaves it so: it is never a pass.
"""

from __future__ import annotations

import ast
import json
import signal
from dataclasses import dataclass, field

MEMORY_MARKERS = ("MemoryError", "can't allocate memory", "Cannot allocate memory",
                  "std::bad_alloc", "out of memory")
TEST_FILE = "test_solution.py"
# ends the reason of a run whose value could not cross the boundary (see boundary.py)
CANNOT_CROSS = "cannot cross from the solution process to the judge"
# ... and of one whose argument could not be given to the solution process
CANNOT_SEND = "cannot cross from the judge to the solution process"


def crossing_reason(reason: str | None) -> bool:
    """Whether a run's reason says a value could not cross the boundary (either way):
    this tool's limit, not the solution's answer."""
    return CANNOT_CROSS in (reason or "") or CANNOT_SEND in (reason or "")


def expected_tests(tests_text: str, filename: str = TEST_FILE) -> list[str]:
    """The node ids pytest will collect from a test file, read from its syntax tree.

    Parametrised tests collect as `id[param]`; they match their plain id.
    """
    try:
        tree = ast.parse(tests_text)
    except SyntaxError:
        return []
    ids = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name.startswith("test"):
            ids.append(f"{filename}::{node.name}")
        elif isinstance(node, ast.ClassDef) and _is_test_class(node):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                        item.name.startswith("test"):
                    ids.append(f"{filename}::{node.name}::{item.name}")
    return ids


def _is_test_class(node: ast.ClassDef) -> bool:
    unittest_case = any(
        (isinstance(b, ast.Name) and b.id.endswith("TestCase"))
        or (isinstance(b, ast.Attribute) and b.attr.endswith("TestCase")) for b in node.bases)
    if unittest_case:
        return True
    has_init = any(isinstance(i, ast.FunctionDef) and i.name == "__init__" for i in node.body)
    return node.name.startswith("Test") and not has_init


@dataclass
class Events:
    """What the harness said, parsed from the lines that carry this run's token."""

    collected: list[str] | None = None
    collect_errors: list[dict] = field(default_factory=list)
    tests: list[dict] = field(default_factory=list)
    finish: dict | None = None
    setup_error: str | None = None
    tampered: list[str] = field(default_factory=list)
    crossing: list[str] = field(default_factory=list)   # values that cannot cross
    rebuilt: list[str] = field(default_factory=list)    # values rebuilt as a base type
    # a call's files the judge did not write into its folders (`call_files`), and why
    files_refused: list[str] = field(default_factory=list)
    collected_at: float | None = None   # monotonic clock (shared by the machine's processes)
    ending_at: float | None = None      # the judge about to exit (`harness.EndWhenReported`)

    @classmethod
    def parse(cls, data: bytes, token: str) -> Events:
        events = cls()
        prefix = token + " "
        for raw in data.decode("utf-8", "replace").splitlines():
            if not raw.startswith(prefix):
                continue
            try:
                event = json.loads(raw[len(prefix):])
            except ValueError:
                continue
            kind = event.get("event")
            if kind == "collected":
                events.collected = list(event.get("ids") or [])
                at = event.get("t")
                events.collected_at = float(at) if isinstance(at, (int, float)) else None
            elif kind == "collect_error":
                events.collect_errors.append(event)
            elif kind == "test":
                events.tests.append(event)
            elif kind == "finish":
                events.finish = event
            elif kind == "ending":
                at = event.get("t")
                events.ending_at = float(at) if isinstance(at, (int, float)) else None
            elif kind == "tampered":
                events.tampered += [str(e) for e in event.get("evidence") or []
                                    if str(e) not in events.tampered]
            elif kind == "setup_error":
                events.setup_error = str(event.get("message") or "unknown error")
            elif kind == "crossing":
                events.crossing.append(str(event.get("message") or "a value"))
            elif kind == "rebuilt":
                what = str(event.get("what") or "")
                if what and what not in events.rebuilt:
                    events.rebuilt.append(what)
            elif kind == "files_refused":
                what = str(event.get("what") or "")[:500]
                if what and what not in events.files_refused:
                    events.files_refused.append(what)
        return events


@dataclass
class Verdict:
    outcome: str
    reason: str
    tests: list[dict]
    evidence: list[str] = field(default_factory=list)


def _covers(node_id: str, reported: str) -> bool:
    return reported == node_id or reported.startswith((node_id + "[", node_id + "::"))


def _mentions_memory(*texts: str | None) -> bool:
    return any(marker in text for text in texts if text for marker in MEMORY_MARKERS)


def _last_line(text: str) -> str:
    """": <the last line that says error:, else the last non-empty line>" of a stderr
    tail, or "" when there is none. pytest's usage error (status 4: small-text's
    pytest.ini addopts named an option of a plugin not installed) ends with its inifile
    and rootdir lines, which said nothing."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line.lower()]
    return f": {(errors or lines)[-1][:300]}" if lines else ""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def decide(events: Events, expected: list[str], *, exit_code: int | None,
           exit_signal: int | None, timed_out: bool, timeout_s: float | None,
           stderr_tail: str = "", uncollected_ok: bool = False) -> Verdict:
    """The outcome of one run. exit_code/exit_signal describe how the run's process ended."""
    tests = [{"id": t.get("id", ""), "outcome": t.get("outcome", "error"),
              "duration_s": float(t.get("duration_s") or 0.0),
              **({"message": t["message"]} if t.get("message") else {})}
             for t in events.tests]
    if events.setup_error:
        return Verdict("infra", f"the run could not be set up: {events.setup_error}", tests)
    if events.tampered:
        # Decided before anything else the run reported: once it has tried to change how
        # it is judged, none of its reports can be taken at their word.
        return Verdict("tampered", "the run tried to change how it is judged: "
                       + events.tampered[0], tests, list(events.tampered[:50]))
    if timed_out:
        return Verdict("timeout", f"wall-clock limit of {timeout_s:g} s exceeded", tests)
    if events.crossing:
        return Verdict("error", events.crossing[0], tests)
    if exit_signal == signal.SIGXCPU:
        return Verdict("timeout", "CPU time limit exceeded", tests)
    failures = [t for t in events.tests if t.get("outcome") in ("failed", "error")]
    texts = [e.get("text") for e in events.collect_errors] + \
        [t.get("message") for t in failures]
    if events.finish is None:
        if _mentions_memory(*texts, stderr_tail):
            return Verdict("oom", "ran out of memory (address-space limit)", tests)
        if exit_signal is not None:
            return Verdict("crashed", f"killed by {_signal_name(exit_signal)} before the "
                                      "tests finished", tests)
        if events.collected is None and not events.tests and not events.collect_errors:
            # Nothing from the harness at all: the interpreter or pytest never started.
            return Verdict("crashed", f"exited with status {exit_code} before pytest "
                                      f"started{_last_line(stderr_tail)}", tests)
        return Verdict("crashed", f"exited with status {exit_code} before the tests "
                                  f"finished{_last_line(stderr_tail)}", tests)
    if events.collect_errors:
        error = events.collect_errors[0]
        outcome = "oom" if _mentions_memory(error.get("text")) else "error"
        where = error.get("id") or "collection"
        return Verdict(outcome, f"{where}: {error.get('message') or 'could not be collected'}",
                       tests)
    if not events.tests:
        return Verdict("error", "no tests ran", tests)
    if failures:
        first = failures[0]
        outcome = "oom" if _mentions_memory(*texts) else "failed"
        return Verdict(outcome, f"{first['id']} {first['outcome']}: {first.get('message', '')}"
                       .strip(), tests)
    if not any(t.get("outcome") == "passed" for t in events.tests):
        return Verdict("failed", f"no test passed ({_tally(tests)})", tests)
    reported = [t["id"] for t in tests]
    missing = [n for n in expected if not any(_covers(n, r) for r in reported)]
    if missing and not uncollected_ok:
        return Verdict("failed", f"expected test {missing[0]} did not run", tests)
    # uncollected_ok (repo-backed runs): an upstream node id that pytest never collected
    # (a repository's conftest may drop tests silently, e.g. dynamo tests without an
    # optimizer) is reported, not counted, as pytest itself does; a solution held to a
    # baseline still needs every test that passed on the reference.
    tests += [{"id": node_id, "outcome": "deselected", "duration_s": 0.0,
               "message": "not collected"} for node_id in missing]
    if events.collected is not None and set(events.collected) - set(reported):
        extra = min(set(events.collected) - set(reported))
        return Verdict("crashed", f"collected test {extra} never reported", tests)
    if exit_signal is not None or exit_code != 0 or events.finish.get("exitstatus") != 0:
        how = _signal_name(exit_signal) if exit_signal is not None else f"status {exit_code}"
        return Verdict("crashed", f"tests passed but the run ended with {how}", tests)
    return Verdict("passed", "", tests)


NOT_COUNTED = ("skipped", "xfailed", "xpassed", "deselected")


def _tally(tests: list[dict]) -> str:
    counts: dict[str, int] = {}
    for test in tests:
        counts[test["outcome"]] = counts.get(test["outcome"], 0) + 1
    return ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))


def baseline_of(tests: list[dict]) -> dict[str, str]:
    """The per-test outcomes of a passing reference run: {node id: outcome}."""
    return {t["id"]: t["outcome"] for t in tests}


def against_baseline(verdict: Verdict, baseline: dict[str, str] | None,
                     strict: bool = False) -> Verdict:
    """Hold a solution's verdict to the reference's per-test outcomes.

    Only a `passed` verdict can change: to `failed` when a test that passed on the
    reference did not pass here (or did not run). Without a baseline and with `strict`,
    every reported test must pass.
    """
    if verdict.outcome != "passed":
        return verdict
    outcomes = {t["id"]: t["outcome"] for t in verdict.tests}
    if baseline is None:
        if strict:
            for test in verdict.tests:
                if test["outcome"] != "passed":
                    return Verdict("failed", f"{test['id']} {test['outcome']} (without a "
                                             "reference baseline every test must pass) "
                                             f"{test.get('message', '')}".strip(),
                                   verdict.tests, verdict.evidence)
        return verdict
    for node_id, reference in sorted(baseline.items()):
        if reference != "passed":
            continue
        here = outcomes.get(node_id)
        if here is None:
            return Verdict("failed", f"{node_id} passed on the reference but did not run",
                           verdict.tests, verdict.evidence)
        if here != "passed":
            message = next(t.get("message", "") for t in verdict.tests if t["id"] == node_id)
            return Verdict("failed", f"{node_id} {here} (it passed on the reference) "
                                     f"{message}".strip(), verdict.tests, verdict.evidence)
    return verdict


def not_counted(tests: list[dict], baseline: dict[str, str] | None = None) -> list[str]:
    """Node ids reported but not counted: skipped/xfailed/xpassed here or on the reference."""
    ignored = {k for k, v in (baseline or {}).items() if v in NOT_COUNTED}
    return sorted({t["id"] for t in tests if t["outcome"] in NOT_COUNTED} | ignored)
