"""Parse-and-index one commit of a cached repository: candidates, their tests, licence.

Pure with respect to the database: it reads git objects and returns an IndexResult; the
caller (curator.mining.mine) writes it. This is the step the speed target applies to.
"""

from __future__ import annotations

import ast
import builtins
import gc
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from curator.errors import Cancelled
from curator.mining import relevance, suggest
from curator.mining.callgraph import CallGraph, IndirectLink
from curator.mining.settings import MiningSettings
from curator.mining.symbols import CLASS, FUNCTION, Symbol, SymbolTable
from curator.mining.testfind import find_tests, in_test_folder, is_test_module
from curator.progress import CancelCheck, Progress
from curator.pysource.modules import (
    Binding,
    FunctionInfo,
    ModuleInfo,
    parse_module,
    resolve_relative,
)
from curator.repos import licenses
from curator.repos.gitcache import MODE_SYMLINK, CachedRepo, TreeEntry

# Phases reported through the progress callback's third argument (the parse phase also
# carries the rate: "parse 812 files/s").
PARSE_PHASE, LINK_PHASE, SCORE_PHASE = "parse", "link tests", "score"

# Reasons a Python file was not parsed; all but "excluded" count as failures.
EXCLUDED = "excluded"
FAILURE_REASONS = ("symlink", "too_large", "not_utf8", "syntax_error", "not_a_file",
                   "missing_object", "unreadable")
NOT_CANDIDATE_FILES = {"conftest.py", "setup.py", "noxfile.py", "__main__.py"}
_BUILTINS = set(dir(builtins)) | {"__file__", "__name__", "__doc__", "self", "cls"}
_SKIPPED_LIST_CAP = 500


MiningCancelled = Cancelled  # the old name; mining raises curator.errors.Cancelled

@dataclass
class Candidate:
    path: str
    qualname: str
    kind: str
    signature: str
    docstring: str | None
    source: str
    start: int
    end: int
    decorators: list[str]
    imports: list[str]            # the module's top-level imports
    needed_imports: list[str]     # imports the function needs, absolute where possible
    class_header: str
    ast_hash: str
    score: float
    evidence: list[dict]
    framework: str
    apis: list[str]
    tests: list[str]
    suggestions: list[dict]

    @property
    def lines(self) -> str:
        return f"{self.start}-{self.end}"


@dataclass
class IndexResult:
    commit: str
    files: int = 0
    parsed: int = 0
    skipped: Counter = field(default_factory=Counter)
    skipped_files: list[dict] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    functions: int = 0
    test_modules: int = 0
    tests: int = 0
    license: str = "unknown"
    seconds: float = 0.0
    # Every function at this commit by AST hash (with or without tests), for updating
    # known candidates and telling which vanished; built into a Candidate on demand.
    present: dict[str, tuple] = field(default_factory=dict, repr=False)
    _built: dict[str, Candidate] = field(default_factory=dict, repr=False)
    _build: Callable | None = field(default=None, repr=False)

    def candidate(self, ast_hash: str) -> Candidate | None:
        """The candidate with this normalised-AST hash at this commit, if present."""
        if ast_hash not in self.present:
            return None
        if ast_hash not in self._built:
            self._built[ast_hash] = self._build(*self.present[ast_hash])
        return self._built[ast_hash]

    @property
    def failed(self) -> int:
        return sum(n for reason, n in self.skipped.items() if reason in FAILURE_REASONS)

    def skip(self, path: str, reason: str, detail: str = "") -> None:
        self.skipped[reason] += 1
        if reason != EXCLUDED and len(self.skipped_files) < _SKIPPED_LIST_CAP:
            row = {"path": path, "reason": reason}
            if detail:
                row["detail"] = detail
            self.skipped_files.append(row)


def import_names(paths: set[str]) -> dict[str, str]:
    """Module path -> the name Python imports it by (packages found by __init__.py)."""
    init_dirs = {p[: -len("/__init__.py")] if "/" in p else "" for p in paths
                 if p == "__init__.py" or p.endswith("/__init__.py")}
    names = {}
    for path in paths:
        parts = path[:-3].split("/")
        dirs, stem = parts[:-1], parts[-1]
        start = len(dirs)
        while start > 0 and "/".join(dirs[:start]) in init_dirs:
            start -= 1
        chain = dirs[start:] + ([] if stem == "__init__" else [stem])
        names[path] = ".".join(chain)
    return names


class Indexer:
    """Indexes one commit. Use `index_commit` unless you need the pieces."""

    def __init__(self, repo: CachedRepo, commit: str, settings: MiningSettings,
                 with_tests: bool = True, progress: Progress | None = None,
                 cancelled: CancelCheck | None = None):
        self.repo = repo
        self.commit = commit
        self.settings = settings
        self.with_tests = with_tests
        self.progress = progress
        self.cancelled = cancelled
        self.result = IndexResult(commit=commit)
        self.modules: dict[str, ModuleInfo] = {}        # source modules
        self.found_tests: dict[str, list] = {}             # test module -> FoundTest
        self.referenced: set[str] = set()                  # every name part tests use
        self.import_name: dict[str, str] = {}

    # -- reading and parsing -------------------------------------------------

    def run(self) -> IndexResult:
        # The cyclic garbage collector would walk every syntax tree and table built so
        # far again and again (time growing with the square of the repository's size);
        # what indexing allocates is freed by reference counting, so it pauses meanwhile.
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._run()
        finally:
            if enabled:
                gc.enable()

    def _run(self) -> IndexResult:
        started = time.perf_counter()
        entries = self.repo.ls_tree(self.commit)
        python = [e for e in entries if e.path.endswith(".py")]
        self.result.files = len(python)
        self.result.license = self._license(entries)
        self.import_name = import_names({e.path for e in python})
        readable = [e for e in python if self._readable(e)]
        # Test modules first: the names they use tell which functions to keep in detail.
        readable.sort(key=lambda e: not is_test_module(e.path))
        blobs = self.repo.read_blobs([e.sha for e in readable])
        done = len(python) - len(readable)
        last_report = 0.0
        try:
            for entry, data in zip(readable, blobs):
                self._check_cancelled()
                if data is None:
                    self.result.skip(entry.path, "unreadable",
                                     f"git cannot read object {entry.sha} as a file")
                else:
                    self._parse(entry.path, data)
                done += 1
                now = time.perf_counter()
                if self.progress and (now - last_report > 0.05 or done == len(python)):
                    last_report = now
                    rate = done / max(now - started, 1e-9)
                    self.progress(done, len(python), f"{PARSE_PHASE} {rate:.0f} files/s")
        finally:
            blobs.close()  # stops the cat-file process when cancelled or on error
        if self.progress and not readable:
            self.progress(done, len(python), f"{PARSE_PHASE} 0 files/s")
        gc.collect()  # once, for what parsing left in reference cycles
        self._index()
        self.result.seconds = time.perf_counter() - started
        return self.result

    def _readable(self, entry: TreeEntry) -> bool:
        """False (and the reason counted) for files that are never read."""
        result, path = self.result, entry.path
        if self.settings.excluded(path):
            result.skip(path, EXCLUDED)
        elif entry.mode == MODE_SYMLINK:
            result.skip(path, "symlink", "symbolic link, never followed")
        elif entry.type != "blob":
            result.skip(path, "not_a_file", f"{entry.type} entry")
        elif entry.missing:
            result.skip(path, "missing_object", f"object {entry.sha} is not in the repository")
        elif entry.size is not None and entry.size > self.settings.max_file_bytes:
            result.skip(path, "too_large",
                        f"{entry.size} bytes > {self.settings.max_file_bytes}")
        else:
            return True
        return False

    def _parse(self, path: str, data: bytes) -> None:
        result = self.result
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            result.skip(path, "not_utf8", f"invalid UTF-8 at byte {exc.start}")
            return
        try:
            module = parse_module(path, text)
        except SyntaxError as exc:
            result.skip(path, "syntax_error", f"line {exc.lineno}: {exc.msg}")
            return
        except (ValueError, RecursionError, MemoryError) as exc:
            result.skip(path, "syntax_error", type(exc).__name__)
            return
        result.parsed += 1
        if is_test_module(path):
            found = find_tests(module)
            self.found_tests[path] = found
            for test in found:
                for ref in test.refs:
                    self.referenced.update(ref.split("."))
        elif self._is_source(path):
            module.infos = module.candidates()
            for info in module.infos:
                info.index_calls()
                if not self.with_tests or info.name in self.referenced:
                    info.prebuild()
                info.release()
            self.modules[path] = module
        module.release()  # the tree is the bulk of the memory; keep the text only

    def _license(self, entries: list[TreeEntry]) -> str:
        wanted = [e for e in entries if "/" not in e.path and e.type == "blob"
                  and e.mode != MODE_SYMLINK and (licenses.LICENSE_FILES.match(e.path) or e.path
                                                  in ("pyproject.toml", "setup.cfg", "setup.py"))
                  and (e.size or 0) < 1_000_000]
        if not wanted:
            return "unknown"
        texts = {}
        with self.repo.reader() as reader:
            for entry in wanted:
                if entry.missing:
                    continue
                try:
                    texts[entry.path] = reader.read(entry.sha)
                except Exception:  # noqa: BLE001 - gitdb raises many kinds on bad objects
                    continue  # an unreadable licence file: as if it were absent
        return licenses.detect(texts) if texts else "unknown"

    # -- indexing --------------------------------------------------------------

    def _is_source(self, path: str) -> bool:
        name = PurePosixPath(path).name
        return not (is_test_module(path) or in_test_folder(path) or name in NOT_CANDIDATE_FILES)

    def _index(self) -> None:
        table = SymbolTable(self.modules, self.import_name)
        functions = {(path, info.qualname): info for path, module in self.modules.items()
                     for info in module.infos}
        tests_of: dict[tuple[str, str], set[str]] = {}
        seeds: dict[Symbol, set[str]] = {}
        total = len(self.found_tests)
        for done, (path, found) in enumerate(sorted(self.found_tests.items()), 1):
            self._check_cancelled()
            self.result.test_modules += 1
            self.result.tests += len(found)
            test_dir = path.rsplit("/", 1)[0] if "/" in path else ""
            for test in found:
                for ref in test.refs:
                    for target in self._targets(table, ref, test_dir):
                        if target.key in functions:
                            tests_of.setdefault(target.key, set()).add(test.node_id)
                            seeds.setdefault(target, set()).add(test.node_id)
            self._report(LINK_PHASE, done, total)

        indirect: dict[tuple[str, str], IndirectLink] = {}
        if self.settings.call_depth > 0 and seeds:
            graph = CallGraph(table, functions)
            indirect = graph.propagate(seeds, self.settings.call_depth,
                                       self.settings.indirect_tests, self.cancelled)
        self._report(SCORE_PHASE, 0, 0)

        present = self.result.present
        self.result._build = self._candidate
        for path, module in self.modules.items():
            for function in module.infos:
                key = (path, function.qualname)
                tests = sorted(tests_of.get(key, ()))
                link = indirect.get(key) if not tests else None
                if function.name == "__init__" and not tests and link is None:
                    continue  # constructors only of classes some test builds
                self.result.functions += 1
                if link is not None:
                    tests = sorted(link.tests)
                kept = present.get(function.ast_hash)
                # Duplicates (same normalised AST): keep one, preferring one with tests.
                if kept is None or (not kept[2] and tests):
                    present[function.ast_hash] = (module, function, tests, link)
        built = []
        wanted = [h for h, (_, _, tests, _) in present.items() if tests or not self.with_tests]
        for done, ast_hash in enumerate(wanted, 1):
            self._check_cancelled()
            built.append(self.result.candidate(ast_hash))
            if done % 50 == 0 or done == len(wanted):
                self._report(SCORE_PHASE, done, len(wanted))
        for module in self.modules.values():
            module.release()
        self.result.candidates = sorted(built, key=lambda c: (c.path, c.start))

    def _targets(self, table: SymbolTable, ref: str, test_dir: str) -> list[Symbol]:
        """The repository functions a test reference reaches (a class: its __init__)."""
        found = table.resolve(ref)
        if len(found) > 1:  # the same name in several places: the one nearest the test
            best = max(_common_prefix(s.path, test_dir) for s in found)
            found = [s for s in found if _common_prefix(s.path, test_dir) == best][:1]
        targets = []
        for symbol in found:
            if symbol.kind == FUNCTION:
                targets.append(symbol)
            elif symbol.kind == CLASS:
                targets.extend(s for s in table.method(symbol, "__init__")
                               if s.kind == FUNCTION)
        return targets

    def _check_cancelled(self) -> None:
        if self.cancelled and self.cancelled():
            raise Cancelled("mining cancelled; nothing was written")

    def _report(self, phase: str, done: int, total: int) -> None:
        if self.progress:
            self.progress(done, total, phase)

    # -- one candidate ---------------------------------------------------------

    def _candidate(self, module: ModuleInfo, function: FunctionInfo,
                   tests: list[str], link: IndirectLink | None = None) -> Candidate:
        rel = relevance.score(function, module)
        evidence = list(rel.evidence)
        if link is not None:
            evidence.append({"kind": "indirect-tests", "weight": 0.0,
                             "detail": f"{len(link.tests)} test(s) of a caller, through "
                                       f"{' -> '.join(link.via)}"})
        bases = [relevance.resolve_chain(b, module) or b for b in function.class_bases]
        suggestions = suggest.suggest(function.name, function.class_name, function.args,
                                      rel.apis, bases,
                                      function.name if function.class_name else None,
                                      docstring=function.docstring, path=module.path,
                                      method_calls=function.refs.method_calls)
        return Candidate(
            path=module.path, qualname=function.qualname, kind=function.kind,
            signature=function.signature, docstring=function.docstring,
            source=function.source, start=function.start, end=function.end,
            decorators=function.decorators, imports=module.imports,
            needed_imports=self._needed_imports(module, function),
            class_header=function.class_header, ast_hash=function.ast_hash,
            score=rel.score, evidence=evidence, framework=rel.framework, apis=rel.apis,
            tests=tests, suggestions=suggestions)

    def _needed_imports(self, module: ModuleInfo, function: FunctionInfo) -> list[str]:
        names = set(function.refs.names)
        if function.class_refs is not None:
            names |= function.class_refs.names
        used: list[Binding] = []
        unresolved = False
        for name in names:
            binding = module.bindings.get(name)
            if binding is not None:
                used.append(binding)
            elif not module.defines(name) and name not in _BUILTINS:
                unresolved = True
        used.sort(key=lambda b: (b.statement.lineno, b.statement.col_offset, b.name))
        lines = list(module.future)
        for binding in used:
            line = self._render_import(module, binding)
            if line not in lines:
                lines.append(line)
        if unresolved:
            for star in module.stars:
                line = f"from {star} import *"
                if line not in lines:
                    lines.append(line)
        return lines

    def _render_import(self, module: ModuleInfo, binding: Binding) -> str:
        alias, stmt = binding.alias, binding.statement
        suffix = f" as {alias.asname}" if alias.asname else ""
        if binding.module_import:
            return f"import {alias.name}{suffix}"
        assert isinstance(stmt, ast.ImportFrom)
        if stmt.level:
            own = self.import_name.get(module.path, "")
            is_package = module.path.endswith("__init__.py")
            package = own if is_package else own.rpartition(".")[0]
            if package and len(package.split(".")) >= stmt.level:
                base = resolve_relative(package, stmt.level, stmt.module)
                if base:
                    return f"from {base} import {alias.name}{suffix}"
            dots = "." * stmt.level
            return f"from {dots}{stmt.module or ''} import {alias.name}{suffix}"
        return f"from {stmt.module} import {alias.name}{suffix}"


def _common_prefix(path: str, folder: str) -> int:
    a, b = path.split("/"), folder.split("/")
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def index_commit(repo: CachedRepo, commit: str, settings: MiningSettings | None = None,
                 with_tests: bool = True, progress: Progress | None = None,
                 cancelled: CancelCheck | None = None) -> IndexResult:
    """Parse every Python file of `commit` and find candidates with their tests."""
    return Indexer(repo, commit, settings or MiningSettings(), with_tests, progress,
                   cancelled).run()
