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
  {"event": "tampered", "evidence": [...]}   (the run tried to change how it is judged)

The Guard below keeps a solution from forging its verdict from inside its own process:
an audit hook (which Python code cannot remove) vetoes introspection from solution code
(gc walks, frames, tracers, ctypes, code objects, /proc/*/mem), and an integrity check
compares pytest, pluggy, this harness, builtins and the comparison functions tests use
against the objects they were before the solution was imported. Attribute writes raise
no audit event, hence the check after every test and at the end.
"""

import ast
import copyreg
import json
import os
import platform
import sys
import threading
import time
import types

from pluggy import HookimplMarker

_hookimpl = HookimplMarker("pytest")

ENV_VAR = "CURATOR_HARNESS"  # "<fd>:<token>", for runs started with -p _curator_harness
SHADOW_VAR = "CURATOR_SHADOW"  # JSON {module: [patched file, package folder or null]}
TRUSTED_VAR = "CURATOR_TRUSTED"  # "1": the run is the repository's own code (no guard)
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


# frames of the test runner and of the boundary's own plumbing (the call across, dynamo's
# disable wrapper around it): a failure's log shows the test's and the candidate's
RUNNER_DIRS = (os.sep + "_pytest" + os.sep, os.sep + "pluggy" + os.sep,
               os.sep + os.path.join("curator", "execution", ""),
               os.sep + os.path.join("torch", "_dynamo", "eval_frame.py"))


def _prune_native(report):
    """Runs use --tb=native (pytest's own styles read and parse every frame's source:
    most of a failing run's time); its traceback lacks pytest's pruning, so the frames
    of pytest, pluggy and the boundary's plumbing are left out here, before anything
    prints the report."""
    for entry in getattr(getattr(report.longrepr, "reprtraceback", None),
                         "reprentries", None) or ():
        lines = getattr(entry, "lines", None)
        if not isinstance(lines, list) or not lines:
            continue
        kept, skipping = [], False
        for line in lines:
            for part in line.splitlines(keepends=True):
                if part.startswith('  File "'):
                    skipping = any(d in part for d in RUNNER_DIRS)
                elif not part.startswith("    "):
                    skipping = False
                if not skipping:
                    kept.append(part)
        entry.lines = kept


def _longrepr_text(report):
    try:
        text = report.longreprtext
    except Exception:  # a broken repr must not break the harness
        text = str(report.longrepr)
    return text[-TEXT_LIMIT:]


# pytest-xdist's options, which a repository's addopts may set (avalanche: "-n 4"): a
# run is one process (its events, guard and limits are that process's), and without
# xdist installed they stop pytest before it starts ("unrecognized arguments: -n").
_DISTRIBUTION_OPTIONS = ("-n", "--numprocesses", "--maxprocesses", "--dist", "--tx",
                         "--max-worker-restart")


def drop_distribution(args):
    """Removes xdist's options (`-n 4`, `-n4`, `--dist=load`, ...) from pytest's argument
    list in place; called before pytest parses its options."""
    kept = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in _DISTRIBUTION_OPTIONS:
            skip = True
            continue
        if arg.startswith(tuple(o + "=" for o in _DISTRIBUTION_OPTIONS[1:])) or \
                (arg.startswith("-n") and not arg.startswith("--") and arg[2:].isalnum()):
            continue
        kept.append(arg)
    args[:] = kept


class Reporter:
    """Writes one event line per collected module, test and session end."""

    def pytest_load_initial_conftests(self, early_config, parser, args):
        drop_distribution(args)   # registered up front (the warm judge's runs)

    def __init__(self, fd, token, guard=None):
        self.fd = fd
        self.token = token
        self.pid = os.getpid()
        self.phases = {}
        self.guard = guard
        self.extra = None   # a callable: more for the finish event (the boundary's timings)

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
        self.send("collected", ids=[item.nodeid for item in session.items],
                  t=time.monotonic())

    def pytest_runtest_logreport(self, report):
        _prune_native(report)
        self.phases.setdefault(report.nodeid, []).append(report)

    def pytest_runtest_logfinish(self, nodeid, location):
        reports = self.phases.pop(nodeid, [])
        if self.guard is not None:
            self.guard.verify()  # before the outcome: a patched runner must not count
        outcome, message = _final_outcome(reports)
        duration = sum(getattr(r, "duration", 0.0) or 0.0 for r in reports)
        self.send("test", id=nodeid, outcome=outcome, duration_s=round(duration, 6),
                   message=message)

    def pytest_sessionfinish(self, session, exitstatus):
        if self.guard is not None:
            self.guard.verify()
        torch = sys.modules.get("torch")
        extra = {}
        if self.extra is not None:
            try:
                extra = dict(self.extra())
            except Exception:
                extra = {}
        self.send("finish", exitstatus=int(exitstatus), python=platform.python_version(),
                  t=time.monotonic(), **extra,
                   torch=getattr(torch, "__version__", None))


class EndWhenReported:
    """Ends the judge as soon as pytest has reported the session, exit status kept.

    What pytest does after its terminal summary (the unconfigure hooks, then its
    cleanups: `gc.collect()` five times to find unraisable exceptions, the temporary
    folders, interpreter shutdown) decides nothing and took up to 2 s per repository run
    with torch and a repository loaded. Only a session whose every `pytest_sessionfinish`
    returned ends here; output pytest still held (captured during collection) is written
    first, then the event `ending` (the exit status it leaves with; `report`, the
    reporter's `send`): the worker stops the solution process then, while this process
    exits.
    """

    def __init__(self, report=None):
        self.session = None
        self.report = report

    @_hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session, exitstatus):
        outcome = yield
        if outcome.excinfo is None:
            self.session = session

    @_hookimpl(tryfirst=True)
    def pytest_unconfigure(self, config):
        if self.session is None:
            return
        try:
            status = int(self.session.exitstatus)
        except (TypeError, ValueError):
            return
        capture = config.pluginmanager.getplugin("capturemanager")
        try:
            if capture is not None:
                capture.stop_global_capturing()
        except Exception:
            pass
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:
                pass
        if self.report is not None:
            self.report("ending", exitstatus=status, t=time.monotonic())
        os._exit(status)


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
    reporter, guard = _EARLY[0] if _EARLY else _start(spec)
    reporter.guard = guard
    config.pluginmanager.register(reporter, "curator-reporter")
    config.pluginmanager.register(EndWhenReported(reporter.send), "curator-end")


def _start(spec):
    """The reporter and the guard of a run in a foreign interpreter, from ENV_VAR."""
    fd, _, rest = spec.partition(":")
    token, _, watched = rest.partition(":")
    reporter = Reporter(int(fd), token)
    if os.environ.pop(TRUSTED_VAR, "") == "1":
        return reporter, None
    # The repository's own code may introspect, so only the files holding the candidate
    # are watched by the audit hook.
    guard = Guard(reporter.send, untrusted=[w for w in watched.split(os.pathsep) if w],
                  trusted=interpreter_prefixes())
    guard.start()
    return reporter, guard


# -- the guard --------------------------------------------------------------------------

# Modules whose functions and classes decide a verdict; their submodules count too.
PROTECTED = ("builtins", "pytest", "_pytest", "pluggy", "math", "operator", "unittest",
             "torch", "torch.testing", "torch.testing._comparison", "torch._tensor",
             "numpy", "numpy.testing", "numpy.testing._private.utils", "numpy.core.numeric",
             "_curator_harness", "curator.execution.harness", "functools", "json", "ast")
WHOLE_PACKAGES = ("pytest", "_pytest", "pluggy", "unittest")
# Module globals that pytest itself rebinds while it runs.
MUTABLE_GLOBALS = {("_pytest.assertion.util", "_reprcompare"),
                   ("_pytest.assertion.util", "_assertion_pass"),
                   ("_pytest.assertion.util", "_config")}
FRAME_ATTRS = {"tb_frame", "gi_frame", "cr_frame", "ag_frame"}
# Audit events no solution needs and every introspection attack uses.
VETOED = {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace",
          "sys.setprofile", "sys._current_frames", "sys.addaudithook", "code.__new__",
          "function.__new__", "marshal.load", "cpython.PyInterpreterState_Clear",
          "sys.monitoring.register_callback", "sys.monitoring.set_events"}
# Making code: vetoed, unless what is made still counts as the solution's own code.
NEW_CODE = {"code.__new__", "function.__new__"}
WATCHED = VETOED | {"sys._getframe", "object.__getattr__", "object.__setattr__",
                    "object.__delattr__", "open", "compile", "marshal.loads"}
# Events judged by the code that raised them, not by who is further down the stack.
INNERMOST_DECIDES = {"sys._getframe", "object.__getattr__", "compile", "marshal.loads"}
# Library helpers that hand frames to their caller (formatting helpers only read them).
FRAME_GIVERS = {"currentframe", "stack", "trace", "getouterframes", "getinnerframes",
                "walk_stack", "walk_tb", "_walk_tb_with_full_positions", "extract",
                "_extract_from_extended_frame_gen", "getframeinfo"}
HELPER_FILES = ("inspect.py", "traceback.py")


def interpreter_prefixes():
    import site
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    try:
        prefixes.update(site.getsitepackages())
    except Exception:
        pass
    return sorted(os.path.realpath(p) for p in prefixes if p)


class Tampering(RuntimeError):
    """Raised into solution code that tried something a run may not do."""


def _new_code_file(event, args):
    """The file name of the code object being made (code.__new__: args[1]) or of the
    code a function is being made from (function.__new__: args[0])."""
    if event == "code.__new__":
        return args[1] if len(args) > 1 else None
    return getattr(args[0], "co_filename", None) if args else None


class Guard:
    """The audit hook and the integrity check of one run (one process)."""

    def __init__(self, send, untrusted=(), trusted=()):
        self._send = send
        self._untrusted = tuple(os.path.join(os.path.realpath(u), "") if os.path.isdir(u)
                                else os.path.realpath(u) for u in untrusted)
        self._trusted = tuple(os.path.join(t, "") for t in trusted)
        self._main = threading.main_thread().ident
        self._busy = [False]
        self._trust = {}
        self._saved = []
        self.evidence = []

    # -- integrity ----------------------------------------------------------------------

    def adopt(self, other):
        """Compare against a snapshot another guard took (the warm worker's, pre-fork)."""
        self._saved = other._saved

    def snapshot(self):
        """Remember every function and class of the protected modules, as they are now."""
        saved = []
        for name, module in sorted(sys.modules.items()):
            if not isinstance(module, types.ModuleType) or not _protected(name):
                continue
            namespace = _namespace(module)
            if namespace is None:
                continue
            saved.append((name, namespace, _judging_items(namespace, name), None))
            for key, value in list(namespace.items()):
                if isinstance(value, type) and getattr(value, "__module__", None) == name:
                    _cache_slot_names(value)
                    # New entries count too: they shadow what the class inherits.
                    saved.append((name + "." + key, value.__dict__,
                                  _judging_items(value.__dict__, None),
                                  frozenset(value.__dict__)))
        self._saved = saved

    def changes(self):
        """What differs from the snapshot: "<where> was replaced|removed"."""
        found = []
        for where, namespace, items, keys in self._saved:
            if keys is not None and len(namespace) != len(keys):
                found += ["%s.%s was added" % (where, key) for key in
                          sorted(set(namespace) - keys, key=str)
                          if callable(namespace[key]) or key.startswith("__")]
            for key, value in items:
                try:
                    now = namespace[key]
                except KeyError:
                    found.append("%s.%s was removed" % (where, key))
                    continue
                except Exception:
                    found.append("%s cannot be read" % where)
                    break
                if now is not value:
                    found.append("%s.%s was replaced" % (where, key))
        return found

    def verify(self):
        changed = self.changes()
        if changed:
            self.flag(changed[:20])
        return not changed

    def flag(self, evidence):
        new = [e for e in evidence if e not in self.evidence]
        if new:
            self.evidence.extend(new)
            self._send("tampered", evidence=new)

    # -- the audit hook -------------------------------------------------------------------

    def install(self):
        sys.addaudithook(self._hook)

    def start(self):
        """Take the identities now, then watch: from here on, solution code may run."""
        self.snapshot()
        self.install()

    def _hook(self, event, args):
        if event not in WATCHED and not event.startswith("ctypes."):
            return
        busy = self._busy
        if busy[0]:
            return
        busy[0] = True
        try:
            why = self._judge(event, args)
        finally:
            busy[0] = False
        if why:
            self.flag([why])
            raise Tampering("curator: %s is not allowed in a run" % why)

    def _judge(self, event, args):
        """Why this event is tampering, or None."""
        if event == "open":
            return _proc_mem(args[0])
        if event == "object.__getattr__" and (len(args) < 2 or args[1] not in FRAME_ATTRS):
            return None  # reading __code__ or f_code of something in hand is harmless
        origin = sys._getframe(2)  # the code that raised the event
        on_main = threading.get_ident() == self._main
        if on_main and event in INNERMOST_DECIDES:
            # Only the innermost frame matters (or a helper it is in): pytest's and the
            # libraries' own frame and code use stay cheap.
            filename = origin.f_code.co_filename
            if not self._untrusted_code(filename) and not filename.endswith(HELPER_FILES):
                return None
        stack = self._stack(origin)
        if not on_main:
            stack.first_untrusted = True  # threads are the solution's: nothing else starts one
        elif not stack.solution:
            return None
        if event in NEW_CODE:
            filename = _new_code_file(event, args)
            if isinstance(filename, str) and self._untrusted_code(filename):
                # a code object or function that claims the solution's own file (or
                # another file judged as the solution's) gains no trust: torch.compile
                # rebuilds the reference's bytecode this way, the solution on the stack
                return None
            return "%s (of %s)" % (event, filename)
        if event in VETOED or event.startswith("ctypes."):
            return event
        if event in ("object.__setattr__", "object.__delattr__"):
            target = args[0]
            where = getattr(target, "__module__", None) or ""
            if _protected(where):
                return "%s of %s.%s" % (event, where, getattr(target, "__qualname__", "?"))
            return None
        if event == "compile":
            return self._spoofed(args[1] if len(args) > 1 else None, stack)
        if event == "marshal.loads":
            return "marshal.loads" if stack.first_untrusted else None
        return self._frame_grab(event, args, stack)

    def _stack(self, frame):
        """The frames from the event's origin outwards: (function, untrusted?, helper?)."""
        entries = []
        while frame is not None:
            code = frame.f_code
            entries.append((code.co_name, self._untrusted_code(code.co_filename),
                            code.co_filename.endswith(HELPER_FILES),
                            code.co_filename.startswith("<frozen importlib")))
            frame = frame.f_back
        return _Stack(entries)

    def _untrusted_code(self, filename):
        verdict = self._trust.get(filename)
        if verdict is None:
            if filename.startswith("<frozen "):
                verdict = False
            elif self._untrusted:
                verdict = filename.startswith(self._untrusted)
            else:
                verdict = not filename.startswith(self._trusted)
            self._trust[filename] = verdict
        return verdict

    def _spoofed(self, filename, stack):
        """Solution code compiling source under a library's file name, to pass as it."""
        if not stack.first_untrusted or not isinstance(filename, (str, bytes)):
            return None
        filename = os.fsdecode(filename)
        if not self._untrusted_code(filename):
            return "compile() under the library file name %s" % filename
        return None

    def _frame_grab(self, event, args, stack):
        what = "frame access (%s)" % (event if event == "sys._getframe" else args[1])
        if stack.first_untrusted:
            return what
        # A helper (inspect, traceback) the solution called to hand it frames; helpers
        # that only format them (traceback.format_exc) are fine.
        entry = None
        for name, untrusted, helper, _ in stack.entries:
            if untrusted:
                return what + " through " + entry if entry in FRAME_GIVERS else None
            if not helper:
                return None
            entry = name
        return None


class _Stack:
    def __init__(self, entries):
        self.entries = entries
        self.first_untrusted = bool(entries) and entries[0][1]
        # Solution code is on the stack, and the event is not raised by a library's own
        # module code that the solution merely imports (torch loading its libraries).
        self.solution = False
        for _, untrusted, _, importer in entries:
            if untrusted:
                self.solution = True
                break
            if importer:
                break


def _protected(name):
    return name in PROTECTED or name.startswith(tuple(p + "." for p in WHOLE_PACKAGES))


def _namespace(module):
    try:
        return module.__dict__
    except Exception:
        return None


def _cache_slot_names(cls):
    """Fill copyreg's `__slotnames__` cache of a class now: pickling an instance later
    (torch.save, inductor's cache keys) would add it, the library's own cache and no
    change to how anything judges."""
    try:
        copyreg._slotnames(cls)
    except Exception:
        pass


def _judging_items(namespace, module_name):
    """The entries whose identity must not change: functions, classes, descriptors."""
    items = []
    for key, value in list(namespace.items()):
        if key.startswith("__") and key not in ("__eq__", "__ne__", "__bool__", "__call__",
                                                 "__getattr__", "__getattribute__",
                                                 "__init__", "__new__", "__import__",
                                                 "__build_class__", "__lt__", "__le__",
                                                 "__gt__", "__ge__", "__len__", "__iter__"):
            continue
        if module_name and (module_name, key) in MUTABLE_GLOBALS:
            continue
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type,
                              types.MethodType, classmethod, staticmethod, property,
                              types.ModuleType)) or callable(value):
            items.append((key, value))
    return items


def _proc_mem(path):
    """Opening any process's memory through /proc (directly or through a symlink)."""
    if not isinstance(path, (str, bytes)):
        return None
    path = os.fsdecode(path)
    real = path
    try:
        if path.startswith("/proc") or os.path.basename(path) in ("mem", "map_files") or \
                os.path.islink(path):
            real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    for candidate in (path, real):
        parts = candidate.split("/")
        if len(parts) > 2 and parts[1] == "proc" and parts[-1] in ("mem", "map_files"):
            return "opening %s" % candidate
    return None


# The code of hidden test modules, by (source, path): a warm worker compiles a problem's
# tests once, before it forks that run's judge, which finds them here. Rewriting the
# asserts is most of collecting a test file (~25 ms), and every sample of a problem runs
# the same tests. The solution processes fork from a zygote made before any job was read:
# none of them ever holds this.
_COMPILED: dict = {}
_COMPILED_MAX = 128


def compiled_tests(source, path):
    """The test module's code object, asserts rewritten as pytest would (SyntaxError and
    encoding errors as compiling it would raise them)."""
    key = (source, str(path))
    code = _COMPILED.get(key)
    if code is None:
        from _pytest.assertion.rewrite import rewrite_asserts

        data = source.encode("utf-8")
        tree = ast.parse(data, filename=str(path))
        rewrite_asserts(tree, data, str(path), None)
        code = compile(tree, str(path), "exec", dont_inherit=True)
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        _COMPILED[key] = code
    return code


def hidden_module(source, path):
    """The test module built from source held in memory, never registered in sys.modules.

    The file at `path` is a placeholder: the solution can read it and finds nothing.
    Asserts are rewritten as pytest would.
    """
    code = compiled_tests(source, path)
    module = types.ModuleType(os.path.splitext(os.path.basename(str(path)))[0])
    module.__file__ = str(path)
    module.__curator_hidden__ = True  # never pickled by reference to the solution
    module.__builtins__ = __builtins__
    exec(code, module.__dict__)
    return module


class HiddenTests:
    """A pytest plugin that collects the test file from source held in memory.

    The run folder holds only an empty placeholder under the test file's name, so the
    solution cannot read the tests; the module built here is never put in sys.modules.
    """

    def __init__(self, source, filename):
        self._source = source
        self._filename = filename

    def pytest_sessionstart(self, session):
        # The mark generator keeps the Config for strict-marker checks: a path from a
        # module global to every plugin, the reporter among them.
        from _pytest.mark.structures import MARK_GEN

        MARK_GEN._config = None

    def pytest_pycollect_makemodule(self, module_path, parent):
        if module_path.name != self._filename or self._source is None:
            return None
        node = _hidden_module_class().from_parent(parent, path=module_path)
        node._curator_source, self._source = self._source, None
        return node


_HIDDEN_CLASS = []


def _hidden_module_class():
    if not _HIDDEN_CLASS:
        from _pytest.python import Module

        class HiddenModule(Module):
            def _getobj(self):
                return _import_hidden(self)

        _HIDDEN_CLASS.append(HiddenModule)
    return _HIDDEN_CLASS[0]


def _import_hidden(node):
    from _pytest._code import ExceptionInfo
    from _pytest.nodes import Collector
    from _pytest.outcomes import skip

    source, node._curator_source = getattr(node, "_curator_source", "") or "", None
    try:
        module = hidden_module(source, node.path)
    except SyntaxError as exc:
        raise Collector.CollectError(
            ExceptionInfo.from_current().getrepr(style="short")) from exc
    except skip.Exception as exc:
        if exc.allow_module_level:
            raise
        raise Collector.CollectError("pytest.skip outside of a test") from exc
    except ImportError as exc:
        info = ExceptionInfo.from_current()
        raise Collector.CollectError(
            "ImportError while importing test module '%s'.\nTraceback:\n%s"
            % (node.path, info.getrepr(style="short"))) from exc
    node.config.pluginmanager.consider_module(module)
    return module


# Loaded with -p _curator_harness: serve the patched module before anything imports it.
if os.environ.get(SHADOW_VAR):
    install_shadow(json.loads(os.environ.pop(SHADOW_VAR)))


_EARLY = []


def pytest_load_initial_conftests(early_config, parser, args):
    """Runs before any conftest.py is imported (pytest's own loader comes last), with
    pytest's plugins set up: identities taken now are the untouched ones, even when a
    conftest imports the candidate's module."""
    drop_distribution(args)
    spec = os.environ.get(ENV_VAR, "")
    if spec and not _EARLY:
        _EARLY.append(_start(spec))
