"""The pytest plugin that reports results of a run to the worker that started it.

Results travel over a file descriptor the worker opened for this run only, each line
prefixed with a random per-run token, so nothing the solution prints to stdout can pass
for a result. This file must stay standalone (no curator imports, Python 3.8 syntax):
repo-backed runs load it with `-p _curator_harness` into a foreign interpreter.

Events, one JSON object per line after the token:
  {"event": "collected", "ids": [...]}
  {"event": "collect_error", "id": ..., "message": ..., "text": ...}
  {"event": "test", "id": ..., "outcome": passed|failed|error|skipped|xfailed|xpassed|
   deselected,
   "duration_s": ..., "message": ...}
  {"event": "finish", "exitstatus": ..., "python": ..., "torch": ...}
  {"event": "setup_error", "message": ...}   (the worker could not prepare the run)
"""

import json
import os
import platform
import sys

ENV_VAR = "CURATOR_HARNESS"  # "<fd>:<token>", for runs started with -p _curator_harness
SHADOW_VAR = "CURATOR_SHADOW"  # JSON {module: [patched file, package folder or null]}
TEXT_LIMIT = 4000


class ShadowFinder:
    """Imports the patched copy of a repository module from the run's private folder.

    The checkout stays read-only and shared; only the one patched module comes from
    elsewhere, under its own name, so the package around it is the checkout's own.
    The copy is a real file, so tracebacks and inspect.getsource (torch.jit.script)
    see the patched source.
    """

    def __init__(self, mapping):
        self.mapping = dict(mapping)

    def find_spec(self, fullname, path=None, target=None):
        entry = self.mapping.get(fullname)
        if entry is None:
            return None
        import importlib.util

        filename, package_dir = entry[0], entry[1]
        return importlib.util.spec_from_file_location(
            fullname, filename,
            submodule_search_locations=[package_dir] if package_dir else None)


def install_shadow(mapping):
    if mapping:
        sys.meta_path.insert(0, ShadowFinder(mapping))


def _crash_message(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return crash.message[:500]
    text = _longrepr_text(report)
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("E "):
            return line[1:].strip()[:500]
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1].strip()[:500] if lines else ""


def _longrepr_text(report):
    try:
        text = report.longreprtext
    except Exception:  # a broken repr must not break the harness
        text = str(report.longrepr)
    return text[-TEXT_LIMIT:]


class Reporter:
    """Writes one event line per collected module, test and session end."""

    def __init__(self, fd, token):
        self.fd = fd
        self.token = token
        self.pid = os.getpid()
        self.phases = {}

    def send(self, event, **data):
        if os.getpid() != self.pid:
            return  # a copy forked by the code under test does not speak for the run
        data["event"] = event
        line = ("%s %s\n" % (self.token, json.dumps(data))).encode("utf-8", "replace")
        view = memoryview(line)
        try:
            while view:
                written = os.write(self.fd, view)
                view = view[written:]
        except OSError:
            pass  # the worker is gone; nothing left to report to

    def pytest_collectreport(self, report):
        if report.failed:
            self.send("collect_error", id=report.nodeid, message=_crash_message(report),
                       text=_longrepr_text(report))

    def pytest_deselected(self, items):
        # Left out by an option or by the repository's own conftest (e.g. tests that need
        # --runslow): reported, so the run says what did not run and why not.
        for item in items:
            self.send("test", id=item.nodeid, outcome="deselected", duration_s=0.0,
                      message="deselected")

    def pytest_collection_finish(self, session):
        self.send("collected", ids=[item.nodeid for item in session.items])

    def pytest_runtest_logreport(self, report):
        self.phases.setdefault(report.nodeid, []).append(report)

    def pytest_runtest_logfinish(self, nodeid, location):
        reports = self.phases.pop(nodeid, [])
        outcome, message = _final_outcome(reports)
        duration = sum(getattr(r, "duration", 0.0) or 0.0 for r in reports)
        self.send("test", id=nodeid, outcome=outcome, duration_s=round(duration, 6),
                   message=message)

    def pytest_sessionfinish(self, session, exitstatus):
        torch = sys.modules.get("torch")
        self.send("finish", exitstatus=int(exitstatus), python=platform.python_version(),
                   torch=getattr(torch, "__version__", None))


def _final_outcome(reports):
    """One outcome per test from its setup, call and teardown reports."""
    if not reports:
        return "error", "no report"
    for report in reports:
        xfail = hasattr(report, "wasxfail")
        if report.when == "call" and xfail:
            return ("xpassed" if report.passed else "xfailed"), ""
        if report.skipped:
            return ("xfailed" if xfail else "skipped"), _crash_message(report)
        if report.failed:
            kind = "failed" if report.when == "call" else "error"
            return kind, _crash_message(report)
    if not any(r.when == "call" for r in reports):
        return "error", "the test body never ran"
    return "passed", ""


def pytest_configure(config):
    """Entry point when loaded with -p _curator_harness in a fresh interpreter."""
    spec = os.environ.pop(ENV_VAR, "")
    if not spec or config.pluginmanager.has_plugin("curator-reporter"):
        return
    fd, _, token = spec.partition(":")
    config.pluginmanager.register(Reporter(int(fd), token), "curator-reporter")


# Loaded with -p _curator_harness: serve the patched module before anything imports it.
if os.environ.get(SHADOW_VAR):
    install_shadow(json.loads(os.environ.pop(SHADOW_VAR)))
