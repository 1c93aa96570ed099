"""What a repository declares it needs: runtime and test requirements read from
pyproject.toml, setup.cfg, setup.py, requirements files, tox and nox, and the import
name of its own package.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from curator.errors import CuratorError

TEST_EXTRAS = ("dev", "test", "tests", "testing")
ALWAYS = ("pytest",)
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


def dependency_files(root: Path) -> list[Path]:
    """The files whose content decides the environment (their hash is part of its key)."""
    names = ["pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "noxfile.py"]
    found = [root / n for n in names if (root / n).is_file()]
    found += sorted(p for p in root.glob("requirements*.txt") if p.is_file())
    found += sorted(p for p in root.glob("requirements/*.txt") if p.is_file())
    return found


def declared(root: Path) -> Declared:
    """The runtime and test dependencies a checkout declares, from every usual place."""
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
    for path in [*sorted(root.glob("requirements*.txt")), *sorted(root.glob("requirements/*.txt"))]:
        if "doc" in path.name.lower() or not path.is_file():
            continue
        kind = "test" if any(w in path.stem.lower() for w in ("dev", "test")) else "runtime"
        result.add(kind, _requirements_file(path, root, set()))
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
    optional = project.get("optional-dependencies") or {}
    groups = data.get("dependency-groups") or {}
    for extra in TEST_EXTRAS:
        result.add("test", _strings(optional.get(extra)))
        result.add("test", _strings(groups.get(extra)))
    result.files.append("pyproject.toml")


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
    if parser.has_section("options.extras_require"):
        for extra in TEST_EXTRAS:
            if parser.has_option("options.extras_require", extra):
                result.add("test", parser.get("options.extras_require", extra).splitlines())
    result.files.append("setup.cfg")


def _from_setup_py(path: Path, result: Declared) -> None:
    """install_requires / extras_require given as literals (or names bound to literals)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return
    bound: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            bound[node.targets[0].id] = node.value

    def literal(node):
        if isinstance(node, ast.Name) and node.id in bound:
            node = bound[node.id]
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg == "install_requires":
                value = literal(keyword.value)
                if isinstance(value, (list, tuple)):
                    result.add("runtime", [v for v in value if isinstance(v, str)])
            elif keyword.arg == "extras_require":
                value = literal(keyword.value)
                if isinstance(value, dict):
                    for extra in TEST_EXTRAS:
                        items = value.get(extra)
                        if isinstance(items, (list, tuple)):
                            result.add("test", [v for v in items if isinstance(v, str)])
            elif keyword.arg == "name" and not result.project:
                value = literal(keyword.value)
                if isinstance(value, str):
                    result.project = value
    result.files.append("setup.py")


def _requirements_file(path: Path, root: Path, seen: set[Path]) -> list[str]:
    """Requirement lines of a requirements file, following -r includes inside the repo."""
    path = path.resolve()
    if path in seen or not path.is_relative_to(root.resolve()) or not path.is_file():
        return []
    seen.add(path)
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ", "-r")) and not line.startswith("-re"):
            include = line.split(None, 1)[1] if " " in line else line[2:]
            out += _requirements_file(path.parent / include.strip(), root, seen)
            continue
        if _is_requirement(line):
            out.append(line)
    return out


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


def preload_modules(runtime: list[str]) -> list[str]:
    """Third-party modules a warm worker of the environment imports once: torch, numpy
    and the repository's runtime dependencies (by their usual import names)."""
    names = ["torch", "numpy"]
    for requirement in runtime:
        name = requirement_name(requirement)
        module = name.replace("-", "_") if name else None
        if module and module.isidentifier() and module not in names:
            names.append(module)
    return names
