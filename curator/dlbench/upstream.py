"""Reading one pinned commit of an upstream repository for a DL-Bench problem.

`Snapshot` lists a commit's files and reads them from the object store on demand;
`locate` finds the ground-truth file and symbol there (undoing DL-Bench's path quirks,
taking near spellings of its typos, following a symbol that moved), `test_node_ids`
keeps the test targets that exist, and `reference_solution` extracts the definition
with the imports it uses. Each raises `Unresolved` with a reason people read.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import PurePosixPath

from curator.dlbench import parametrized
from curator.problem import Problem
from curator.pysource.formatting import format_or_keep
from curator.pysource.modules import (
    collect_references,
    dedent_block,
    dotted_path,
    package_of,
    parse_module,
    resolve_relative,
    signature,
    split_lines,
    start_line,
)
from curator.repos import licenses
from curator.repos.gitcache import CachedRepo

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Unresolved(Exception):
    """Why one problem cannot be resolved (the message is the reason)."""


# -- reading one commit ------------------------------------------------------------------

class Snapshot:
    """The files of one commit, read lazily from the cache's object store."""

    def __init__(self, cache: CachedRepo, commit: str):
        self.cache, self.commit = cache, commit
        self.blobs = {e.path: e.sha for e in cache.ls_tree(commit)
                      if e.type == "blob" and e.mode in ("100644", "100755")}
        self._text: dict[str, str | None] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._defs: dict[str, list[str]] | None = None

    def text(self, path: str) -> str | None:
        if path not in self._text:
            sha = self.blobs.get(path)
            data = next(self.cache.read_blobs([sha])) if sha else None
            try:
                self._text[path] = data.decode("utf-8-sig") if data is not None else None
            except UnicodeDecodeError:
                self._text[path] = None
        return self._text[path]

    def tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            text = self.text(path)
            try:
                self._trees[path] = ast.parse(text, filename=path) if text is not None else None
            except (SyntaxError, ValueError, RecursionError):
                self._trees[path] = None
        return self._trees[path]

    def definitions(self) -> dict[str, list[str]]:
        """Top-level function and class name (`.name` for methods) -> modules (not tests)."""
        if self._defs is None:
            paths = [p for p in sorted(self.blobs) if p.endswith(".py")
                     and not _is_test_path(p)]
            self._defs = {}
            for path, data in zip(paths, self.cache.read_blobs([self.blobs[p] for p in paths]),
                                  strict=True):
                try:
                    text = data.decode("utf-8-sig")
                    self._text.setdefault(path, text)
                    tree = ast.parse(text, filename=path)
                except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
                    continue
                for stmt in tree.body:
                    if isinstance(stmt, (*_DEFS, ast.ClassDef)):
                        self._defs.setdefault(stmt.name, []).append(path)
                    if isinstance(stmt, ast.ClassDef):
                        for item in stmt.body:
                            if isinstance(item, _DEFS):
                                self._defs.setdefault("." + item.name, []).append(path)
        return self._defs

    def license(self) -> str:
        wanted = [p for p in self.blobs if "/" not in p and (
            licenses.LICENSE_FILES.match(p) or p in ("pyproject.toml", "setup.cfg", "setup.py"))]
        root = {p: text.encode() for p in wanted if (text := self.text(p)) is not None}
        return licenses.detect(root)


def _is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1]
    return any(p in ("tests", "test", "testing") for p in parts[:-1]) or \
        name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def typo_distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap two neighbours) from A to B, capped at 3."""
    if abs(len(a) - len(b)) > 2:
        return 3
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], previous2[j - 2] + 1)
        previous2, previous = previous, row
    return min(previous[-1], 3)


def _qualified(a: str, b: str) -> bool:
    """True when one name is the other plus a block of 2+ characters (`Crop` / `Crop3D`):
    a different thing, not a typo."""
    short, long = sorted((a, b), key=len)
    extra = len(long) - len(short)
    return extra >= 2 and any(long[:i] + long[i + extra:] == short
                              for i in range(len(short) + 1))


def close_name(name: str, choices) -> str | None:
    """The one choice that is a typo of NAME, at most two edits away (DL-Bench has
    `apply_transfrom`, `test_depth_wrapper.py`, `TestDepthTo3`), else None. A name that
    only adds a qualifier (`TestRandomCrop3D` / `TestRandomCrop`) or other digits
    (`TestRgbToYuv420` / `TestRgbToYuv422`) is a different thing."""
    if len(name) < 5:
        return None
    digits = re.sub(r"\D", "", name)     # 420 and 422, 2d and 3d are different things
    found = [c for c in sorted(set(choices)) if c != name and typo_distance(name, c) <= 2
             and not _qualified(name, c) and re.sub(r"\D", "", c) == digits]
    return found[0] if len(found) == 1 else None


# -- one problem -------------------------------------------------------------------------

def path_candidates(path: str) -> list[str]:
    """The ground-truth path and the spellings DL-Bench's paths may really mean."""
    path = path.strip().lstrip("/")
    out = [path]
    match = re.match(r"^(?:[^/]+/[^/]+/)?(?:blob|tree)/[^/]+/(.+)$", path)
    if match:
        out.append(match.group(1))
    for base in list(out):
        parts = base.split("/")
        out += ["/".join(parts[i:]) for i in range(1, len(parts) - 1)]
    seen: dict[str, None] = {}
    for item in out:
        if item:
            seen.setdefault(item, None)
    return list(seen)


def _find_symbol(tree: ast.Module, entry_point: str, methods_only: bool = False,
                 prompt: str = "") -> tuple[str, ast.AST, ast.ClassDef | None] | None:
    """(qualname, node, class) for `f` or `C.m`; a bare name also matches one class's method
    (only that with methods_only: a method problem whose class is not known yet), or the
    one of several that the prompt describes (`prompt_choice`)."""
    cls_name, _, name = entry_point.rpartition(".")
    for stmt in tree.body:
        if not cls_name and not methods_only and isinstance(stmt, _DEFS) and stmt.name == name:
            return name, stmt, None
        if cls_name and isinstance(stmt, ast.ClassDef) and stmt.name == cls_name:
            for item in stmt.body:
                if isinstance(item, _DEFS) and item.name == name:
                    return f"{cls_name}.{name}", item, stmt
    methods = _methods_named(tree, name)
    if len(methods) > 1 and not cls_name:
        methods = [m for m in [prompt_choice(methods, prompt)] if m is not None]
    if len(methods) == 1:
        cls, item = methods[0]
        return f"{cls.name}.{name}", item, cls
    return None


def prompt_choice(methods: list[tuple[ast.ClassDef, ast.AST]], prompt: str
                  ) -> tuple[ast.ClassDef, ast.AST] | None:
    """The one (class, method) of several that PROMPT describes: the only class it names,
    else the method with more of its parameters named in it than any other (Laplace's
    `fit` is a method of LLLaplace(train_loader, override, progress_bar) and of
    FunctionalLLLaplace(train_loader); its prompt names all three). None when the prompt
    does not tell them apart."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", prompt or ""))
    named = [m for m in methods if m[0].name in words]
    if len(named) == 1:
        return named[0]

    def score(method) -> int:
        args = method[1].args
        params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]
                  if a.arg not in ("self", "cls")]
        return sum(p in words for p in params)

    scores = sorted(((score(m), i) for i, m in enumerate(methods)), reverse=True)
    if scores[0][0] > 0 and scores[0][0] > scores[1][0]:
        return methods[scores[0][1]]
    return None


def _methods_named(tree: ast.Module, name: str) -> list[tuple[ast.ClassDef, ast.AST]]:
    """(class, method) of every top-level class of the module with a method NAME."""
    return [(stmt, item) for stmt in tree.body if isinstance(stmt, ast.ClassDef)
            for item in stmt.body if isinstance(item, _DEFS) and item.name == name]


def class_in_prompt(tree: ast.Module, name: str, prompt: str) -> str | None:
    """The one class with a method NAME that the prompt names (`class X(` in its code,
    else "the `X` class"), when the file has several (CompressAI's `forward`)."""
    classes = [cls.name for cls, _m in _methods_named(tree, name)]
    for pattern in (r"\bclass\s+{}\b", r"`{}`\s+class\b|\bclass\s+`{}`"):
        found = [c for c in classes if re.search(pattern.format(re.escape(c), re.escape(c)),
                                                 prompt or "")]
        if len(found) == 1:
            return found[0]
    return None


def tests_named_for(snapshot: Snapshot, qualname: str, path: str,
                    module_too: bool = False) -> list[str]:
    """Test targets named for a symbol, for a problem whose release gives none that exist:
    the test class `Test<Class>` of a method's class, else the one test module
    `test_<function>.py` (with `module_too`, when the release gives no tests at all:
    `test_<module>.py`) that mentions the function."""
    func = qualname.rpartition(".")[2]
    cls = qualname.partition(".")[0] if "." in qualname else None
    modules = sorted(p for p in snapshot.blobs if p.endswith(".py") and _is_test_path(p)
                     and PurePosixPath(p).name != "conftest.py")
    if cls:
        found = []
        for test in modules:
            if f"class Test{cls}" not in (snapshot.text(test) or ""):
                continue
            tree = snapshot.tree(test)
            if tree is not None and f"Test{cls}" in _test_names(tree):
                found.append(f"{test}::Test{cls}")
        return found
    names = [f"test_{func.lstrip('_')}.py"]
    if module_too:
        names.append(f"test_{PurePosixPath(path).stem}.py")
    for name in names:
        hits = [t for t in modules if PurePosixPath(t).name == name and
                func in (snapshot.text(t) or "")]
        if len(hits) == 1:
            return hits
    return []


CALLING_TESTS_MAX = 20   # node ids a problem without tests gets from its callers
CALLERS_DEPTH = 2   # callers, then their callers (when none of the first has tests)


def _imported_names(tree: ast.Module, test_path: str, wanted: str, home: str
                    ) -> tuple[set[str], set[str]]:
    """(the names a test module binds WANTED to when it imports it from the repository,
    the names it binds the repository's modules to: `mod.WANTED` is the target too).
    HOME: the target module's dotted path."""
    top = home.split(".")[0]
    names: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = resolve_relative(package_of(test_path), node.level, node.module)
            if node.level > 0 or module == top or module.startswith(top + "."):
                for alias in node.names:
                    (names if alias.name == wanted else modules).add(
                        alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == top or alias.name.startswith(top + "."):
                    modules.add(alias.asname or alias.name.split(".")[0])
    return names, modules


def _uses(node: ast.AST, names: set[str], modules: set[str], attribute: str) -> bool:
    """Whether NODE names the target: a name bound to it, or `module.attribute` (also
    `pkg.sub.attribute`) of a repository module."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in names:
            return True
        if isinstance(n, ast.Attribute) and n.attr == attribute:
            root = n.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in modules:
                return True
    return False


def _fixtures(tree: ast.Module, names: set[str], modules: set[str], attribute: str
              ) -> set[str]:
    """Module-level pytest fixtures (by the name tests ask for) that use the target."""
    out = set()
    for stmt in tree.body:
        if isinstance(stmt, _DEFS) and any("fixture" in ast.unparse(d)
                                           for d in stmt.decorator_list) \
                and _uses(stmt, names, modules, attribute):
            named = [k.value.value for d in stmt.decorator_list if isinstance(d, ast.Call)
                     for k in d.keywords if k.arg == "name" and isinstance(k.value,
                                                                          ast.Constant)]
            out.add(str(named[0]) if named else stmt.name)
    return out


def _test_class(cls: ast.ClassDef) -> bool:
    """A class pytest collects: named Test*, or a unittest TestCase (neupy's
    `HintonDiagramTestCase(BaseTestCase)`), which it collects by its base."""
    return cls.name.startswith("Test") or cls.name.endswith(("Test", "TestCase", "Tests")) \
        or any("TestCase" in ast.unparse(base) for base in cls.bases)


# Decorators that replace a test by generated ones under other names, so pytest has no
# test of the written name and a node id naming it is "not found", which ends the whole
# run before any test (sparseml's `@parameterized.expand([[ConvNet], [LinearNet]])` on
# `test_quantization_oneshot` makes `test_quantization_oneshot_0`, `..._1`): the
# `parameterized` package's expand and parameterized_class, ddt's data on a @ddt class.
_EXPANDERS = {"expand", "parameterized"}
_DDT_DATA = {"data", "idata", "file_data"}
_CLASS_EXPANDERS = {"parameterized_class"}


def _decorator_names(node: ast.AST) -> set[str]:
    out = set()
    for decorator in getattr(node, "decorator_list", ()):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Name):
            out.add(target.id)
        elif isinstance(target, ast.Attribute):
            out.add(target.attr)
    return out


def as_collected(tree: ast.Module | None, parts: list[str]) -> list[str]:
    """The parts (after the file) of a node id as pytest collects the test they name: a
    method a decorator expands into generated ones is run as its class; a function or a
    class so expanded, as its file ([])."""
    if tree is None or not parts:
        return parts
    top = {s.name: s for s in tree.body if isinstance(s, (*_DEFS, ast.ClassDef))}
    stmt = top.get(re.sub(r"\[.*$", "", parts[0]))
    decorators = _decorator_names(stmt)
    if isinstance(stmt, _DEFS):
        return [] if decorators & _EXPANDERS else parts
    if not isinstance(stmt, ast.ClassDef):
        return parts
    if decorators & _CLASS_EXPANDERS:
        return []
    if len(parts) > 1:
        method = next((i for i in stmt.body if isinstance(i, _DEFS) and
                       i.name == re.sub(r"\[.*$", "", parts[1])), None)
        own = _decorator_names(method)
        if own & _EXPANDERS or (own & _DDT_DATA and "ddt" in decorators):
            return parts[:1]
    return parts


def _calling_tests(tree: ast.Module, path: str, names: set[str], modules: set[str],
                   attribute: str) -> list[str]:
    """Node ids of the tests in one module that use the target: test functions and test
    methods that name it (or ask for a fixture that does); every test of a class whose
    setup names it."""
    fixtures = _fixtures(tree, names, modules, attribute)

    def calls(fn: ast.AST) -> bool:
        args = {a.arg for a in fn.args.args} if isinstance(fn, _DEFS) else set()
        return _uses(fn, names, modules, attribute) or bool(args & fixtures)

    def uses(node: ast.AST) -> bool:
        return _uses(node, names, modules, attribute)

    def cases(fn: ast.AST, owner: ast.ClassDef | None) -> list[str]:
        """`fn[id]` for each case that uses the target when only some of its
        parametrized cases do (pyro's test_exponential_gamma over eight ELBOs)."""
        asked = {a.arg for a in fn.args.args} if isinstance(fn, _DEFS) else set()
        ids = None if asked & fixtures else \
            parametrized.cases(tree, fn, owner, attribute, uses)
        return [f"{fn.name}[{i}]" for i in ids] if ids else [fn.name]

    found: list[list[str]] = []
    for stmt in tree.body:
        if isinstance(stmt, _DEFS) and stmt.name.startswith("test") and calls(stmt):
            found += [[case] for case in cases(stmt, None)]
        elif isinstance(stmt, ast.ClassDef) and _test_class(stmt):
            methods = [i for i in stmt.body if isinstance(i, _DEFS)]
            setup = any(m.name.lower().startswith(("setup", "set_up")) and calls(m)
                        for m in methods)
            found += [[stmt.name, case] for m in methods
                      if m.name.startswith("test") and (setup or calls(m))
                      for case in (cases(m, stmt) if not setup else [m.name])]
    return uncovered(["::".join([path, *as_collected(tree, parts)]) for parts in found])


def uncovered(nodes: list[str]) -> list[str]:
    """The node ids no other one of them covers (`f::C` covers `f::C::t`, `f` covers
    `f::t`), in order, once each: pytest would run a test twice otherwise."""
    out: list[str] = []
    for node in nodes:
        if node not in out and not any(node.startswith(other + "::") for other in nodes):
            out.append(node)
    return out


def tests_calling(snapshot: Snapshot, qualname: str, path: str,
                  within: set[str] | None = None, limit: int | None = CALLING_TESTS_MAX
                  ) -> list[str]:
    """Tests that use a symbol, for a problem whose release gives no tests at all
    (deepchecks' calculate_builtin_properties, sparseml's ConvNet.forward): the test
    functions and methods of the repository's test modules that import it from the
    repository (a method: its class, which they build and call) and name it, or ask
    for a fixture that does. The modules named for it come first, then those with the
    most such tests; at most `limit` node ids. `within`: only these test modules (a
    whole module given as a problem's tests, narrowed). Whether they exercise it is the
    triage's stub check."""
    wanted = qualname.partition(".")[0] if "." in qualname else qualname
    home = dotted_path(path)
    stem = PurePosixPath(path).stem.lstrip("_")
    found: list[tuple[tuple, list[str]]] = []
    candidates = snapshot.blobs if within is None else [p for p in within
                                                        if p in snapshot.blobs]
    for test in sorted(p for p in candidates if p.endswith(".py") and
                       (_is_test_path(p) or within is not None) and p != path):
        if not re.search(rf"\b{re.escape(wanted)}\b", snapshot.text(test) or ""):
            continue
        tree = snapshot.tree(test)
        if tree is None:
            continue
        names, modules = _imported_names(tree, test, wanted, home)
        nodes = _calling_tests(tree, test, names, modules, wanted)
        if nodes:
            name = PurePosixPath(test).stem.lower()
            named = wanted.lower().lstrip("_") in name or stem.lower() in name
            found.append(((not named, -len(nodes), test), nodes))
    out: list[str] = []
    for _key, nodes in sorted(found):
        out += nodes if limit is None else nodes[:limit - len(out)]
        if limit is not None and len(out) >= limit:
            break
    return out


def callers(snapshot: Snapshot, name: str, path: str) -> list[str]:
    """The repository's top-level functions and classes (not tests) that call function
    NAME of PATH, as `module::name`, then the classes that subclass such a class, one
    level each: GPflow's ndiag_mc is called by MonteCarloLikelihood._mc_quadrature and
    named by no test, whose tests build its subclasses Softmax and GaussianMC."""
    home = dotted_path(path)
    word = re.compile(rf"\b{re.escape(name)}\b")
    modules = sorted(p for p in snapshot.blobs if p.endswith(".py") and not _is_test_path(p))
    found: list[str] = []
    classes: set[str] = set()
    for module in modules:
        if not word.search(snapshot.text(module) or ""):
            continue
        tree = snapshot.tree(module)
        if tree is None:
            continue
        names, bound = _imported_names(tree, module, name, home)
        if module == path:
            names.add(name)
        for stmt in tree.body:
            if isinstance(stmt, (*_DEFS, ast.ClassDef)) and \
                    not (module == path and stmt.name == name) and \
                    _uses(stmt, names, bound, name):
                found.append(f"{module}::{stmt.name}")
                if isinstance(stmt, ast.ClassDef):
                    classes.add(stmt.name)
    for cls in sorted(classes):
        pattern = re.compile(rf"\b{re.escape(cls)}\b")
        for module in modules:
            if not pattern.search(snapshot.text(module) or ""):
                continue
            for stmt in (snapshot.tree(module) or ast.Module(body=[])).body:
                if isinstance(stmt, ast.ClassDef) and stmt.name != cls and any(
                        (isinstance(b, ast.Name) and b.id == cls) or
                        (isinstance(b, ast.Attribute) and b.attr == cls) for b in stmt.bases):
                    if f"{module}::{stmt.name}" not in found:
                        found.append(f"{module}::{stmt.name}")
    return found


def tests_calling_through(snapshot: Snapshot, qualname: str, path: str,
                          limit: int | None = CALLING_TESTS_MAX
                          ) -> tuple[list[str], list[str]]:
    """(node ids, the callers they use) of the tests that reach a function through the
    repository's code (`callers`) when none uses it directly; ([], []) for a method or
    when none does. When no caller has tests, those of its callers' callers (a caller
    named "Rotate (through _check_valid_rotation_matrix)"): pytorch3d's _safe_det_3x3 is
    called only by _check_valid_rotation_matrix, which no test names, and that by
    Rotate.__init__. At most `limit` node ids."""
    if "." in qualname:
        return [], []
    out: list[str] = []
    via: list[str] = []
    seen = {f"{path}::{qualname}"}
    frontier = [(path, qualname, "")]
    for _depth in range(CALLERS_DEPTH):
        further = []
        for where, called, through in frontier:
            for caller in callers(snapshot, called, where):
                if caller in seen:
                    continue
                seen.add(caller)
                module, _, name = caller.partition("::")
                nodes = [n for n in tests_calling(snapshot, name, module, limit=None)
                         if n not in out]
                if limit is not None:
                    nodes = nodes[:limit - len(out)]
                if nodes:
                    out = uncovered([*out, *nodes])
                    via.append(f"{name} (through {through})" if through else name)
                else:
                    further.append((module, name, name))
                if limit is not None and len(out) >= limit:
                    return out, via
        if out:
            break
        frontier = further
    return out, via


def class_missing_reason(tree: ast.Module | None, name: str, path: str) -> str:
    """Why the class of method NAME cannot be found in PATH (a one-line reason)."""
    classes = [cls.name for cls, _m in _methods_named(tree, name)] if tree is not None else []
    if len(classes) > 1:
        return (f"class missing: {name} is a method of {len(classes)} classes in {path} "
                f"({', '.join(classes)}) and the prompt does not say which; set "
                f"entry_point to Class.{name} in problem.toml")
    return (f"class missing: no class in {path} has a method {name}; set entry_point to "
            f"Class.{name} in problem.toml")


def other_case(name: str, choices) -> str | None:
    """The one choice that is NAME in other letter case (DL-Bench lower-cases some names:
    `_j` for GPflow's `ArcCosine._J`), else None. Any length: case is no typo."""
    found = [c for c in set(choices) if c != name and c.lower() == name.lower()]
    return found[0] if len(found) == 1 else None


def _near_symbol(tree: ast.Module, entry_point: str) -> str | None:
    cls_name, _, name = entry_point.rpartition(".")
    if not cls_name:
        names = [n.name for n in tree.body if isinstance(n, _DEFS)]
        return other_case(name, names) or close_name(name, names)
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == cls_name:
            names = [i.name for i in stmt.body if isinstance(i, _DEFS)]
            near = other_case(name, names) or close_name(name, names)
            return f"{cls_name}.{near}" if near else None
    return None


_PROMPT_DEF = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)


def _prompt_symbol(tree: ast.Module, entry_point: str, prompt: str) -> str | None:
    """The entry point as the prompt's own signature names it, when the release's name is
    not there (deepchem's `L2Loss._compute_pytorch_loss` whose prompt shows `def
    _create_pytorch_loss(self)` in `class L2Loss`): the one name the prompt defines that
    the class (or, for a function, the module) has, else None."""
    cls_name, _, name = entry_point.rpartition(".")
    shown = set(_PROMPT_DEF.findall(prompt or "")) - {name}
    if cls_name:
        methods = {item.name for stmt in tree.body
                   if isinstance(stmt, ast.ClassDef) and stmt.name == cls_name
                   for item in stmt.body if isinstance(item, _DEFS)}
        found = [f"{cls_name}.{n}" for n in sorted(shown & methods)]
    else:
        names = {n.name for n in tree.body if isinstance(n, _DEFS)}
        found = sorted(shown & names)
    return found[0] if len(found) == 1 else None


def locate(snapshot: Snapshot, problem: Problem) -> tuple[str, str, ast.AST, ast.ClassDef | None,
                                                         list[str]]:
    """(path, qualname, node, class, notes) of the ground truth at the snapshot's commit.

    A method problem with a bare entry point (its class not known) takes the method of
    that name in exactly one class of the file; otherwise the reason says why not."""
    given = (problem.source or {}).get("path") or ""
    entry = problem.entry_point
    methods_only = problem.kind == "method" and "." not in entry
    prompt = problem.prompt
    notes: list[str] = []
    candidates = [p for p in path_candidates(given) if p in snapshot.blobs] if given else []
    for path in candidates:
        tree = snapshot.tree(path)
        found = _find_symbol(tree, entry, methods_only, prompt) if tree is not None else None
        if found is None and tree is not None and not methods_only:
            near = _near_symbol(tree, entry)
            if near:
                found = _find_symbol(tree, near)
                notes.append(f"symbol {entry} read as {near} (a near spelling)")
            elif (shown := _prompt_symbol(tree, entry, problem.prompt)) is not None:
                found = _find_symbol(tree, shown)
                notes.append(f"symbol {entry} read as {shown} (the prompt's signature)")
        if found:
            if path != given:
                notes.append(f"path {given!r} read as {path!r}")
            if "." in found[0] and "." not in entry:
                others = [c.name for c, _m in _methods_named(tree, entry)]
                notes.append(f"class {found[0].split('.')[0]} found in {path} (the only "
                             f"class there with a method {entry})" if len(others) == 1 else
                             f"class {found[0].split('.')[0]} found in {path} (of "
                             f"{', '.join(others)}, the one the prompt describes)")
            return (path, *found, notes)
    if methods_only and candidates:
        tree = snapshot.tree(candidates[0])
        named = class_in_prompt(tree, entry, problem.prompt) if tree is not None else None
        if named is not None:
            notes.append(f"class {named} of {entry} read from the prompt (a method of "
                         f"several classes in {candidates[0]})")
            return (candidates[0], *_find_symbol(tree, f"{named}.{entry}"), notes)
        raise Unresolved(class_missing_reason(tree, entry, candidates[0]))
    # Not where the release says: the one module that defines it now, if exactly one.
    defs = snapshot.definitions()
    paths = [] if methods_only else defs.get(entry.split(".")[0], [])
    if "." not in entry:   # or the method of one class somewhere
        paths = list(dict.fromkeys([*paths, *defs.get("." + entry, [])]))
    homes = [p for p in paths
             if (tree := snapshot.tree(p)) is not None and _find_symbol(tree, entry,
                                                                        methods_only, prompt)]
    if len(homes) == 1:
        path = homes[0]
        notes.append(f"{entry} found in {path} (the release says {given or 'nothing'})")
        return (path, *_find_symbol(snapshot.tree(path), entry, methods_only, prompt), notes)
    if not given:
        raise Unresolved("file missing at the commit: the release gives no ground-truth path")
    if not candidates:
        raise Unresolved(f"file missing at the commit: {given}")
    tree = snapshot.tree(candidates[0])
    if "." not in entry and tree is not None and len(_methods_named(tree, entry)) > 1:
        raise Unresolved(class_missing_reason(tree, entry, candidates[0]))
    raise Unresolved(f"symbol missing at the commit: {entry} in {candidates[0]}")


# A class's methods when one of its bases is defined elsewhere: any name may be one.
ANY_METHOD = "*"
_PLAIN_BASES = {"object", "TestCase", "unittest.TestCase", "IsolatedAsyncioTestCase",
                "unittest.IsolatedAsyncioTestCase"}


def _test_names(tree: ast.Module) -> dict[str, set[str] | None]:
    """Top-level test functions (None) and classes (their method names, with those they
    inherit from classes of the module: pfrl's `TestTRPONonRecurrent(_TestTRPO)` runs
    `test_abc_cpu` of its base; ANY_METHOD when a base is defined elsewhere)."""
    classes = {stmt.name: stmt for stmt in tree.body if isinstance(stmt, ast.ClassDef)}

    def methods(cls: ast.ClassDef, seen: frozenset[str]) -> set[str]:
        found = {i.name for i in cls.body if isinstance(i, _DEFS)}
        for base in cls.bases:
            name = ast.unparse(base)
            if name in classes and name not in seen:
                found |= methods(classes[name], seen | {name})
            elif name not in _PLAIN_BASES and name not in seen:
                found.add(ANY_METHOD)
        return found

    out: dict[str, set[str] | None] = {}
    for stmt in tree.body:
        if isinstance(stmt, _DEFS):
            out[stmt.name] = None
        elif isinstance(stmt, ast.ClassDef):
            out[stmt.name] = methods(stmt, frozenset({stmt.name}))
    return out


def test_node_ids(snapshot: Snapshot, targets: list[str]
                  ) -> tuple[list[str], list[str], list[str]]:
    """(node ids that exist at the commit, targets that do not, notes on near spellings)."""
    kept, missing, notes = [], [], []
    collapsed: set[str] = set()
    for target in targets:
        file, _, rest = target.partition("::")
        file = file.strip().removeprefix("./")
        parts = rest.split("::") if rest else []
        path = next((p for p in path_candidates(file) if p in snapshot.blobs), None)
        if path is None and not file.endswith(".py") and file:
            # `tests/gpflow/kernels/test_kernels`: the module, without its extension
            path = next((p for p in path_candidates(file + ".py") if p in snapshot.blobs),
                        None)
            if path is not None:
                notes.append(f"test file {file} read as {path}")
        if path is None and file.endswith(".py"):
            folder = str(PurePosixPath(file).parent)
            siblings = {PurePosixPath(p).name: p for p in snapshot.blobs
                        if str(PurePosixPath(p).parent) == folder}
            name = PurePosixPath(file).name
            near = close_name(name, siblings)
            if near is None and not _is_test_path(name):
                # `tests/networks.py` for `tests/test_networks.py`: pytest's own spellings
                near = next((n for n in (f"test_{name}", f"{name[:-3]}_test.py")
                             if n in siblings), None)
            if near:
                path = siblings[near]
                notes.append(f"test file {file} read as {path} (a near spelling)")
        if path is None and file.endswith(".py"):
            # `deepchem/model/tests/test_losses.py`: a typo in a folder's name, the file
            # named exactly
            name = PurePosixPath(file).name
            near = close_name(file, [p for p in snapshot.blobs
                                     if PurePosixPath(p).name == name])
            if near:
                path = near
                notes.append(f"test file {file} read as {path} (a near spelling)")
        if path is None:
            missing.append(target)
            continue
        ok = True
        if parts:
            tree = snapshot.tree(path)
            names = _test_names(tree) if tree is not None else {}
            base = re.sub(r"\[.*$", "", parts[0])
            if base not in names and (near := close_name(base, names)):
                notes.append(f"test {base} read as {near} (a near spelling)")
                parts[0] = base = near
            if base not in names:
                ok = False
            elif len(parts) > 1:
                methods = names[base]
                ok = methods is not None and (re.sub(r"\[.*$", "", parts[1]) in methods or
                                              ANY_METHOD in methods)
        if ok:
            collected = as_collected(snapshot.tree(path), parts) if parts else parts
            if collected != parts:
                collapsed.add("::".join([path, *collected]))
                notes.append(f"test {'::'.join(parts)} is generated under other names by "
                             f"its decorator: run as {'::'.join([path, *collected])}")
                parts = collected
            node = "::".join([path, *parts])
            if node not in kept:
                kept.append(node)
        else:
            missing.append(target)
    # a test that a collapsed one now covers would run twice
    kept = [n for n in kept if not any(n.startswith(c + "::") for c in collapsed)]
    return kept, missing, notes


def _render_import(binding, package: str) -> str:
    alias, stmt = binding.alias, binding.statement
    suffix = f" as {alias.asname}" if alias.asname else ""
    if binding.module_import:
        return f"import {alias.name}{suffix}"
    base = resolve_relative(package, stmt.level, stmt.module) if stmt.level else stmt.module
    return f"from {base} import {alias.name}{suffix}"


def class_header(cls: ast.ClassDef) -> str:
    """`class Name(Bases, key=value):` of a class definition."""
    args = [ast.unparse(b) for b in cls.bases] + [ast.unparse(k) for k in cls.keywords]
    return f"class {cls.name}" + (f"({', '.join(args)})" if args else "") + ":"


def signature_block(node: ast.FunctionDef | ast.AsyncFunctionDef,
                    cls: ast.ClassDef | None) -> str:
    """The entry point's signature as a prompt's code block: decorators, the `def` line with
    the full signature and a `...` body, inside its class header for a method."""
    lines = [f"@{ast.unparse(d)}" for d in node.decorator_list]
    lines += [signature(node), "    ..."]
    if cls is None:
        return "\n".join(lines) + "\n"
    return class_header(cls) + "\n" + "".join(f"    {line}\n" for line in lines)


def reference_solution(path: str, text: str, node: ast.AST, cls: ast.ClassDef | None) -> str:
    """The definition with the imports it uses (inside its class header for a method)."""
    module = parse_module(path, text)
    package = dotted_path(path) if path.endswith("__init__.py") else package_of(path)
    names = set(collect_references(node).names)
    if cls is not None:
        for part in (*cls.bases, *cls.keywords):
            names |= collect_references(part).names
    used = sorted((module.bindings[n] for n in names if n in module.bindings),
                  key=lambda b: (b.statement.lineno, b.statement.col_offset, b.name))
    lines = list(module.future)
    for binding in used:
        line = _render_import(binding, package)
        if line not in lines:
            lines.append(line)
    source_lines = split_lines(text)
    start, end = start_line(node), node.end_lineno or node.lineno
    body = "".join(source_lines[start - 1:end])
    if cls is not None:
        header = class_header(cls) + "\n"
        if node.col_offset == 4:
            body = header + body
        else:
            method = dedent_block(source_lines[start - 1:end], node.col_offset)
            body = header + textwrap.indent(method, "    ")
    elif node.col_offset:
        raise Unresolved(f"symbol missing at the commit: {node.name} is nested")
    head = "\n".join(lines)
    solution = (head + "\n\n\n" if head else "") + body
    return format_or_keep(solution if solution.endswith("\n") else solution + "\n")
