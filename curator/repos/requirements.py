"""What a repository declares it needs: runtime and test requirements read from
pyproject.toml, setup.cfg, setup.py, requirements files, tox and nox, and the import
name of its own package.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from curator.errors import CuratorError

TEST_EXTRAS = ("dev", "test", "tests", "testing")
# The harness runs in the environment's pytest, and needs one of these days (its judge
# wraps TempPathFactory, pytest 3.9's), not one newer than it is used with (the curator's
# own is 8.x; uv.HARNESS_PACKAGES takes it undated for a date before pytest 7, and this machine's
# index has pytest 9): a repository's older pin (neupy's requirements/travis.txt:
# pytest==3.7.2, which no longer starts on this Python) does not fit beside it and is
# left out, named, like any test requirement that does not fit.
ALWAYS = ("pytest>=7,<9",)
NOT_PACKAGES = {"tests", "test", "testing", "docs", "doc", "benchmarks", "examples",
                "scripts", "tools", "build", "dist", "setup"}
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str | None:
    match = _NAME.match(requirement)
    return canonical(match.group(1)) if match else None


# -- what the repository declares --------------------------------------------------------


@dataclass
class Declared:
    runtime: list[str] = field(default_factory=list)
    test: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)   # the dependency files read
    project: str | None = None                        # its distribution name
    package: str | None = None                        # its import name
    # requirements files setup.py reads its install_requires from (read in its code)
    runtime_files: list[str] = field(default_factory=list)
    build: list[str] = field(default_factory=list)    # pyproject [build-system] requires
    notes: list[str] = field(default_factory=list)    # files not read, and why
    # `-c` constraints of the requirements files read: pip applies them to whatever the
    # install brings in, not only to what a file names (nncf's tests/tensorflow pins
    # tensorflow==2.15.1 there, and tensorflow comes in through tensorflow-hub)
    constraints: list[str] = field(default_factory=list)

    def add(self, kind: str, items) -> None:
        target = self.runtime if kind == "runtime" else self.test
        for item in items:
            item = (item or "").strip()
            if item and item not in target and _is_requirement(item):
                target.append(item)


def _is_requirement(text: str) -> bool:
    if text.startswith(("-", ".", "/", "git+", "http:", "https:", "file:")) or "{" in text:
        return False
    return _NAME.match(text) is not None


def dependency_files(root: Path, tests: list[str] | tuple[str, ...] = ()) -> list[Path]:
    """The files whose content decides the environment (their hash is part of its key);
    tests: the test files the environment runs (see `near_test_files`)."""
    names = ["pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "noxfile.py"]
    found = [root / n for n in names if (root / n).is_file()]
    files = found + requirement_files(root) + near_test_files(root, tests)
    return files + [c for c in _constraint_files(files, root) if c not in files]


def _constraint_files(files: list[Path], root: Path) -> list[Path]:
    """The files the `-c` lines of requirements files name (nncf's constraints.txt)."""
    out: list[Path] = []
    for path in files:
        if path.suffix != ".txt":
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.split(" #", 1)[0].strip()
            if line.startswith(("-c", "--constraint")):
                name = line.split(None, 1)[1] if " " in line else line[2:]
                target = Path(os.path.normpath(path.parent / name.strip()))
                if target.is_file() and target.is_relative_to(root) and target not in out:
                    out.append(target)
    return out


REQUIREMENT_GLOBS = ("*requirements*.txt", "requirements/**/*.txt", "requirements*/*.txt",
                     "tests/requirements*.txt", "test/requirements*.txt",
                     "ci/requirements*.txt", ".ci/requirements*.txt")


def requirement_files(root: Path) -> list[Path]:
    """Requirements files wherever repositories keep them (root, requirements/ folders and
    their subfolders, tests/ and ci/), docs excepted."""
    found: list[Path] = []
    for pattern in REQUIREMENT_GLOBS:
        for path in sorted(root.glob(pattern)):
            if path.is_file() and path not in found and "doc" not in \
                    str(path.relative_to(root)).lower():
                found.append(path)
    return found


def near_test_files(root: Path, tests: list[str] | tuple[str, ...]) -> list[Path]:
    """Requirements files in the folders of the given test files and the folders above
    them (below the root), not found by `requirement_files`: nncf keeps
    tests/torch/requirements.txt (pytest-mock, torchvision, transformers) beside
    tests/tensorflow/ and tests/openvino/ ones; the tests a repository's problems run
    need those of their own folders, not every backend's."""
    top = root.resolve()
    known = set(requirement_files(root))
    found: list[Path] = []
    for test in sorted(set(tests)):
        folder = (root / test.split("::", 1)[0]).parent
        while folder.resolve() != top and folder.resolve().is_relative_to(top):
            for path in sorted(folder.glob("*requirements*.txt")):
                if path.is_file() and path not in known and path not in found:
                    found.append(path)
            folder = folder.parent
    return found


FREEZE_MIN = 20


def is_freeze(items: list[str]) -> bool:
    """Whether requirement lines are `pip freeze` output, maybe edited: many, nearly all
    pinned exactly (CompressAI's requirements.txt: torch==1.8.1, numpy==1.21.0, jupyter,
    sphinx, ... and one Jinja2<3.1)."""
    pinned = [i for i in items if re.fullmatch(
        r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?\s*===?\s*[^\s,;<>=!~]+", i.strip())]
    return len(items) >= FREEZE_MIN and len(pinned) >= 0.9 * len(items)


# Files named for a CI service pin that service's matrix (neupy's requirements/travis.txt:
# pandas==0.23.4, pytest==3.7.2), as a requirements-ci.txt does.
CI_WORDS = {"ci", "travis", "appveyor", "circleci", "azure", "gitlab", "jenkins", "github",
            "gha", "buildkite"}


def _requirements_kind(path: Path, root: Path) -> str:
    """test for a file named (or in a folder named) for development, tests or CI
    (pennylane's requirements-ci.txt pins an autoray its setup.py excludes; neupy's
    requirements/travis.txt), else runtime."""
    words = re.split(r"[^a-z0-9]+", str(path.relative_to(root)).lower())
    return "test" if any(w in CI_WORDS or "dev" in w or "test" in w for w in words) \
        else "runtime"


def declared(root: Path, tests: list[str] | tuple[str, ...] = ()) -> Declared:
    """The runtime and test dependencies a checkout declares, from every usual place
    (tests: the test files the environment runs, whose folders' requirements files are
    test requirements too)."""
    result = Declared()
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        _from_pyproject(pyproject, result)
    cfg = root / "setup.cfg"
    if cfg.is_file():
        _from_setup_cfg(cfg, result)
    setup_py = root / "setup.py"
    if setup_py.is_file():
        _from_setup_py(setup_py, result)
    # The packaging's runtime requirements are the runtime ones; other requirements files
    # (torchgeo's requirements/required.txt pins a CI matrix: setuptools==75.1.0; roboflow
    # inference's requirements.gpu.txt, flash-attn) are test requirements, each taken
    # when it fits; a pip freeze beside them is not read at all.
    named = {str((root / f).resolve()) for f in result.runtime_files}
    packaged = bool(result.runtime) and not named
    for path in [*(root / f for f in result.runtime_files), *requirement_files(root)]:
        relative = str(path.relative_to(root))
        if relative in result.files or not path.is_file():
            continue
        runtime = str(path.resolve()) in named
        kind = "runtime" if runtime else \
            "test" if packaged or named else _requirements_kind(path, root)
        constraints: list[str] = []
        items = _requirements_file(path, root, set(), constraints)
        result.files.append(relative)
        if (packaged or named) and not runtime and is_freeze(items):
            result.notes.append(
                f"{relative} not read: a freeze of {len(items)} requirements, nearly all "
                "exact pins (a development environment of its day), while the package "
                "declares its own runtime requirements")
            continue
        result.add(kind, items)
        result.constraints += [c for c in constraints if c not in result.constraints]
    for path in near_test_files(root, tests):
        result.add("test", _requirements_file(path, root, set(), result.constraints))
        result.files.append(str(path.relative_to(root)))
    tox = root / "tox.ini"
    if tox.is_file():
        _from_tox(tox, root, result)
    nox = root / "noxfile.py"
    if nox.is_file():
        _from_nox(nox, result)
    own = canonical(result.project) if result.project else None
    for target in (result.runtime, result.test):
        target[:] = [r for r in target if requirement_name(r) != own]
    result.package = _package_name(root, result.project)
    return result


def _from_pyproject(path: Path, result: Declared) -> None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CuratorError(f"{path}: cannot read it: {exc}") from None
    project = data.get("project") or {}
    result.project = project.get("name") or result.project
    result.add("runtime", _strings(project.get("dependencies")))
    result.build = _strings((data.get("build-system") or {}).get("requires"))
    optional = {str(k): _strings(v) for k, v in
                (project.get("optional-dependencies") or {}).items()}
    groups = {str(k): _strings(v) for k, v in (data.get("dependency-groups") or {}).items()}
    result.add("test", _test_extras(optional, result.project))
    result.add("test", _test_extras(groups, result.project))
    result.files.append("pyproject.toml")


# PEP 517's build requirements of a project that names none.
DEFAULT_BUILD = ("setuptools>=40.8.0", "wheel")


def build_requirements(found: Declared) -> list[str]:
    """What building the repository in its environment needs (the build steps run there,
    without a build sandbox): its [build-system] requires, else PEP 517's default."""
    return list(found.build) if found.build else list(DEFAULT_BUILD)


def _strings(value) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _from_setup_cfg(path: Path, result: Declared) -> None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (configparser.Error, UnicodeDecodeError) as exc:
        raise CuratorError(f"{path}: cannot read it: {exc}") from None
    if parser.has_option("metadata", "name"):
        result.project = result.project or parser.get("metadata", "name").strip()
    if parser.has_option("options", "install_requires"):
        result.add("runtime", parser.get("options", "install_requires").splitlines())
    if parser.has_option("options", "tests_require"):
        result.add("test", parser.get("options", "tests_require").splitlines())
    if parser.has_section("options.extras_require"):
        extras = {k: _string_list(v) for k, v in parser.items("options.extras_require")}
        result.add("test", _test_extras(extras, result.project))
    result.files.append("setup.cfg")


def _from_setup_py(path: Path, result: Declared) -> None:
    """install_requires, tests_require and extras_require, also when setup.py builds them
    in code: names bound to lists, `A + [...]`, dicts filled key by key
    (`extras["test"] = ...`, `.update(...)`, `dict(...)`, `{**base}`), and when they are
    entries of a dict passed as `setup(**configuration)`."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return
    values = _SetupValues(tree)
    wanted = ("install_requires", "tests_require", "extras_require", "name")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        arguments: list[tuple[str, object]] = []
        for keyword in node.keywords:
            if keyword.arg in wanted:
                arguments.append((keyword.arg, values.eval(keyword.value)))
            elif keyword.arg is None:   # setup(**configuration): a dict built in code
                given = values.eval(keyword.value)
                if isinstance(given, dict):
                    arguments += [(k, v) for k, v in given.items() if k in wanted]
        for keyword in node.keywords:
            if keyword.arg == "install_requires" and values.eval(keyword.value) is None:
                # read_requirements(["requirements/_requirements.txt", ...]): the files
                result.runtime_files += [f for f in values.text_files(keyword.value)
                                         if (path.parent / f).is_file() and
                                         f not in result.runtime_files]
        for arg, value in arguments:
            if arg == "install_requires":
                result.add("runtime", _string_list(value))
            elif arg == "tests_require":
                result.add("test", _string_list(value))
            elif arg == "extras_require" and isinstance(value, dict):
                extras = {str(k): _string_list(v) for k, v in value.items()}
                result.add("test", _test_extras(extras, result.project))
            elif arg == "name" and not result.project and isinstance(value, str):
                result.project = value
    result.files.append("setup.py")


def _string_list(value) -> list[str]:
    if isinstance(value, str):
        return [line for line in value.splitlines() if line.strip()]
    if isinstance(value, (list, tuple, set)):
        return [v for v in value if isinstance(v, str)]
    return []


class _SetupValues:
    """Evaluates the expressions setup.py builds its requirements from, without running it:
    literals, names bound at module level, `+`, dicts and their key-by-key updates."""

    def __init__(self, tree: ast.Module):
        self.bound: dict[str, ast.expr] = {}
        # module-level functions setup.py calls for its arguments (sparseml:
        # `install_requires=_setup_install_requires()`, `return _nm_deps + _deps`)
        self.functions = {node.name: node for node in tree.body
                          if isinstance(node, ast.FunctionDef)}
        self.updates: dict[str, list[tuple[ast.expr | None, ast.expr]]] = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.bound.setdefault(target.id, node.value)
                    elif isinstance(target, ast.Subscript) and \
                            isinstance(target.value, ast.Name):
                        self.updates.setdefault(target.value.id, []).append(
                            (target.slice, node.value))
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                self.updates.setdefault(node.target.id, []).append((None, node.value))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and \
                    node.func.attr in ("update", "extend", "append") and node.args:
                kind = {"update": None, "extend": None, "append": "append"}[node.func.attr]
                self.updates.setdefault(node.func.value.id, []).append(
                    (ast.Constant(kind) if kind else None, node.args[0]))

    def eval(self, node: ast.expr | None, depth: int = 0):
        if node is None or depth > 20:
            return None
        again = lambda n: self.eval(n, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out = []
            for item in node.elts:
                if isinstance(item, ast.Starred):
                    out += _string_list(again(item.value))
                else:
                    value = again(item)
                    if isinstance(value, str):
                        out.append(value)
            return out
        if isinstance(node, ast.Dict):
            out = {}
            for key, value in zip(node.keys, node.values):
                if key is None:
                    merged = again(value)
                    if isinstance(merged, dict):
                        out.update(merged)
                    continue
                name = again(key)
                if isinstance(name, str):
                    out[name] = again(value)
            return out
        if isinstance(node, ast.Name):
            value = again(self.bound.get(node.id))
            return self._updated(node.id, value, depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.BitOr)):
            left, right = again(node.left), again(node.right)
            if isinstance(left, dict) and isinstance(right, dict):
                return {**left, **right}
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            return _string_list(left) + _string_list(right)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "dict":
                out = {}
                for arg in node.args:
                    value = again(arg)
                    if isinstance(value, dict):
                        out.update(value)
                for keyword in node.keywords:
                    if keyword.arg:
                        out[keyword.arg] = again(keyword.value)
                return out
            if node.func.id in ("list", "sorted", "set", "tuple") and node.args:
                return _string_list(again(node.args[0]))
            returned = self._returned(node)
            if returned is not None:
                return again(returned)
        if isinstance(node, ast.Subscript):
            container, key = again(node.value), again(node.slice)
            if isinstance(container, dict) and isinstance(key, str):
                return container.get(key)
        return None

    def _called(self, call: ast.Call) -> ast.FunctionDef | None:
        """The module-level function without parameters that `call` calls, if it is one."""
        func = self.functions.get(call.func.id) if isinstance(call.func, ast.Name) else None
        if func is None or call.args or call.keywords or func.args.args or \
                func.args.posonlyargs or func.args.kwonlyargs or func.args.vararg or \
                func.args.kwarg:
            return None
        return func

    def _returned(self, call: ast.Call) -> ast.expr | None:
        """What a call of a module-level function without parameters returns, when its
        body has one `return EXPR` (not counting functions defined inside it)."""
        func = self._called(call)
        if func is None:
            return None
        found: list[ast.Return] = []
        todo: list[ast.AST] = list(func.body)
        while todo:
            item = todo.pop()
            if isinstance(item, ast.Return):
                found.append(item)
            elif not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                       ast.ClassDef)):
                todo.extend(ast.iter_child_nodes(item))
        return found[0].value if len(found) == 1 else None

    def text_files(self, node: ast.AST, depth: int = 0) -> list[str]:
        """The `.txt` paths written as literals in an expression (and the names and
        parameterless module functions it uses), which setup.py reads requirements
        from in code it calls."""
        out: list[str] = []
        if depth > 20:
            return out
        for item in ast.walk(node):
            if isinstance(item, ast.Constant) and isinstance(item.value, str) and \
                    item.value.endswith(".txt") and item.value not in out:
                out.append(item.value.removeprefix("./"))
            elif isinstance(item, ast.Name) and item.id in self.bound:
                out += [f for f in self.text_files(self.bound[item.id], depth + 1)
                        if f not in out]
            elif isinstance(item, ast.Call) and (func := self._called(item)) is not None:
                out += [f for f in self.text_files(func, depth + 1) if f not in out]
        return out

    def _updated(self, name: str, value, depth: int):
        for key, update in self.updates.get(name, ()):
            new = self.eval(update, depth + 1)
            if isinstance(value, dict):
                if key is None and isinstance(new, dict):
                    value.update(new)
                elif key is not None:
                    field = self.eval(key, depth + 1)
                    if isinstance(field, str):
                        value[field] = new
            elif isinstance(value, list):
                if isinstance(key, ast.Constant) and key.value == "append":
                    value += [new] if isinstance(new, str) else []
                else:
                    value += _string_list(new)
        return value


def _test_extras(extras: dict[str, list[str]], project: str | None) -> list[str]:
    """The requirements of a repository's test extras (test/tests/testing, else dev),
    following chains to its own other extras (`test = ["pkg[extras]"]`; not docs)."""
    names = [e for e in TEST_EXTRAS[1:] if e in extras] or \
        [e for e in TEST_EXTRAS[:1] if e in extras]
    own = canonical(project) if project else None
    out: list[str] = []
    seen: set[str] = set()

    def take(extra: str) -> None:
        if extra in seen or extra not in extras:
            return
        seen.add(extra)
        for item in extras[extra]:
            match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*\[([^\]]*)\]", item)
            if match and own and canonical(match.group(1)) == own:
                for inner in match.group(2).split(","):
                    inner = inner.strip()
                    if inner and "doc" not in inner.lower():
                        take(inner)
                continue
            if item not in out:
                out.append(item)

    for name in names:
        take(name)
    return out


def _requirements_file(path: Path, root: Path, seen: set[Path],
                       constraints_out: list[str] | None = None) -> list[str]:
    """Requirement lines of a requirements file, following -r includes inside the repo;
    its -c constraints (those of its includes too) are added to `constraints_out`."""
    path = path.resolve()
    if path in seen or not path.is_relative_to(root.resolve()) or not path.is_file():
        return []
    seen.add(path)
    out: list[str] = []
    constraints: list[str] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ", "-r")) and not line.startswith("-re"):
            include = line.split(None, 1)[1] if " " in line else line[2:]
            out += _requirements_file(path.parent / include.strip(), root, seen,
                                      constraints_out)
            continue
        if line.startswith(("-c ", "--constraint ", "-c")):
            include = line.split(None, 1)[1] if " " in line else line[2:]
            constraints += _requirements_file(path.parent / include.strip(), root, set())
            continue
        if _is_requirement(line):
            out.append(line)
    # `-c ../../constraints.txt` (nncf: tensorflow==2.15.1): a constraint on a package
    # the file requires goes with it; the others are no requirement of this file
    names = {requirement_name(r) for r in out}
    if constraints_out is not None:
        constraints_out += [c for c in constraints if c not in constraints_out]
    return out + [c for c in constraints if requirement_name(c) in names and c not in out]


def _from_tox(path: Path, root: Path, result: Declared) -> None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (configparser.Error, UnicodeDecodeError):
        return
    if not parser.has_option("testenv", "deps"):
        return
    for line in parser.get("testenv", "deps").splitlines():
        line = line.strip()
        if line.startswith("-r"):
            result.add("test", _requirements_file(root / line[2:].strip(), root, set()))
        else:
            result.add("test", [line.split(":", 1)[-1].strip() if ": " in line else line])
    result.files.append("tox.ini")


def _from_nox(path: Path, result: Declared) -> None:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "install":
            result.add("test", [a.value for a in node.args
                                if isinstance(a, ast.Constant) and isinstance(a.value, str)])
    result.files.append("noxfile.py")


def _package_name(root: Path, project: str | None) -> str | None:
    """The import name of the repository's own package."""
    candidates = []
    for base in (root, root / "src"):
        if base.is_dir():
            candidates += [p.name for p in sorted(base.iterdir())
                           if (p / "__init__.py").is_file() and p.name not in NOT_PACKAGES
                           and p.name.isidentifier()]
    if project:
        wanted = canonical(project).replace("-", "_")
        for name in candidates:
            if name.lower() == wanted:
                return name
    return candidates[0] if candidates else None


# -- where packages come from: pip's configuration ---------------------------------------


def preload_modules(runtime: list[str], site_packages: Path | None = None) -> list[str]:
    """Third-party modules a warm worker of the environment imports once: torch, numpy
    and the repository's runtime dependencies, by the names they import as: what each
    installed distribution puts in `site_packages` (scikit-learn is `sklearn`, pyyaml is
    `yaml`), else the distribution's name as a module name. These are also the libraries
    whose classes a repository run's judge rebuilds (a fitted sklearn estimator crossing
    back from the solution process), so a wrong name is a run that cannot pass."""
    installed = installed_modules(site_packages) if site_packages is not None else {}
    names = ["torch", "numpy"]
    for requirement in runtime:
        name = requirement_name(requirement)
        if not name:
            continue
        modules = installed.get(name) or [name.replace("-", "_")]
        for module in modules:
            if module.isidentifier() and module not in names:
                names.append(module)
    return names


_NOT_MODULES = {"tests", "test", "docs", "doc", "benchmarks", "examples", "scripts"}


def installed_modules(site_packages: Path) -> dict[str, list[str]]:
    """Canonical distribution name -> the top-level modules it installed in
    `site_packages`, from its metadata files (top_level.txt, else the paths its RECORD
    lists); nothing of the environment runs. One whose module is its own name (torch)
    gives that name alone; private (`_yaml`) and test folders are left out."""
    found: dict[str, list[str]] = {}
    try:
        infos = sorted(site_packages.glob("*.dist-info"))
    except OSError:
        return found
    for info in infos:
        dist = canonical(info.name[:-len(".dist-info")].split("-")[0])
        tops: list[str] = []
        try:
            top_level = info / "top_level.txt"
            if top_level.is_file():
                tops = [line.strip().replace("/", ".").split(".")[0]
                        for line in top_level.read_text(encoding="utf-8").splitlines()]
            elif (info / "RECORD").is_file():
                for line in (info / "RECORD").read_text(encoding="utf-8").splitlines():
                    path = line.rsplit(",", 2)[0].strip('"')
                    first, slash, _ = path.partition("/")
                    if slash:
                        tops.append(first)
                    elif first.endswith((".py", ".so", ".pyd")):
                        tops.append(first.split(".")[0])
        except (OSError, UnicodeDecodeError):
            continue
        modules = sorted({t for t in tops if t.isidentifier() and not t.startswith("_")
                          and t not in _NOT_MODULES})
        own = dist.replace("-", "_")
        if own in modules:
            modules = [own]
        if modules:
            found.setdefault(dist, modules)
    return found
