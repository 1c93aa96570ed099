"""Repository environments: `curator repo env NAME` builds one isolated Python environment
per mined repository at its pinned commit, under db/envs/, with uv.

What goes in: the repository's declared runtime dependencies and its test dependencies
(pyproject optional-dependencies or dependency-groups named dev/test/tests/testing,
requirements*.txt, setup.cfg / setup.py extras of those names, tox [testenv] deps, nox
session.install calls), pytest, and torch pinned to the curator's own torch version, so
a repository never pulls another (multi-GB CUDA) build. The repository itself is then
installed from the pinned checkout without its dependencies.

Where packages come from: pip's own configuration (`pip config list`: index URL, extra
index URLs, find-links, constraints), read at run time and handed to uv, which does not
read it. With the repository's `as_of` date, everything but torch is resolved as of that
day (uv --exclude-newer).

The environment is described by a lock (exact versions, with hashes, pip requirements
form) stored with the repository's record; `build(..., lock=TEXT)` rebuilds the same
environment from a lock alone. A second build reuses the environment while the commit,
the dependency files, the Python version and the extras are the same (the key).
"""

from __future__ import annotations

import ast
import configparser
import fcntl
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from curator.errors import CuratorError
from curator.mining import repos
from curator.mining.checkout import pinned_checkout
from curator.progress import CancelCheck, Progress
from curator.store import Store, mined_commits, now, repo_envs
from curator.workspace import Workspace

TEST_EXTRAS = ("dev", "test", "tests", "testing")
ALWAYS = ("pytest",)
UV_TIMEOUT_S = 1800
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


@dataclass
class IndexOptions:
    index_url: str | None = None
    extra_index_urls: list[str] = field(default_factory=list)
    find_links: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    cert: str | None = None

    def uv_args(self) -> list[str]:
        args = ["--index-strategy", "unsafe-best-match"]
        if self.index_url:
            args += ["--index-url", self.index_url]
        for url in self.extra_index_urls:
            args += ["--extra-index-url", url]
        for link in self.find_links:
            args += ["--find-links", link]
        return args

    def constraint_args(self) -> list[str]:
        return [a for c in self.constraints if os.path.isfile(c) for a in ("--constraint", c)]


def pip_options(pip_config_list: str | None = None) -> IndexOptions:
    """Package sources as pip is configured here (files and PIP_* variables)."""
    if pip_config_list is None:
        try:
            pip_config_list = subprocess.run(
                [sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                text=True, timeout=60, check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            pip_config_list = ""
    values: dict[str, str] = {}
    # Later lines win: pip lists files first and its :env: (PIP_*) values last.
    ordered = sorted(pip_config_list.splitlines(), key=lambda line: line.startswith(":env:"))
    for line in ordered:
        key, sep, value = line.partition("=")
        if not sep:
            continue
        name = key.rsplit(".", 1)[-1].strip()
        section = key.rsplit(".", 1)[0]
        if section not in ("global", "install", ":env:", "download"):
            continue
        values[name] = value.strip().strip("'\"")
    split = lambda name: [v for v in values.get(name, "").split() if v]  # noqa: E731
    return IndexOptions(index_url=values.get("index-url") or None,
                        extra_index_urls=split("extra-index-url"),
                        find_links=split("find-links"),
                        constraints=split("constraint") + split("constraints"),
                        cert=values.get("cert") or None)


def uv_bin() -> str:
    """The uv executable: the one installed with the curator, else one on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        pass
    found = shutil.which("uv") or (Path(sys.executable).parent / "uv")
    if not found or not os.path.exists(found):
        raise CuratorError("uv is not installed: pip install uv (it is one of the curator's "
                           "dependencies; reinstall with `make install`)")
    return str(found)


def _uv(args: list[str], options: IndexOptions, cwd: Path | None = None) -> str:
    # uv gets pip's sources as arguments; of its own variables only offline mode and the
    # cache folder pass through.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV",
                                                                    "PIP_"))}
    env.update({k: os.environ[k] for k in ("UV_OFFLINE", "UV_CACHE_DIR") if k in os.environ})
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env["UV_NO_PROGRESS"] = "1"
    if options.cert:
        env["SSL_CERT_FILE"] = options.cert
    try:
        done = subprocess.run([uv_bin(), *args], capture_output=True, text=True, env=env,
                              cwd=cwd, timeout=UV_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise CuratorError(f"uv {args[0]} {args[1] if len(args) > 1 else ''} took more "
                           f"than {UV_TIMEOUT_S} s") from None
    if done.returncode != 0:
        raise UvError(_uv_message(done.stderr), done.stderr)
    return done.stdout


class UvError(CuratorError):
    def __init__(self, message: str, stderr: str):
        super().__init__(message)
        self.stderr = stderr


def _uv_message(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("warning:", "Using "))]
    return " ".join((useful or lines or ["uv failed"])[:3])[:600]


# -- building ---------------------------------------------------------------------------


@dataclass
class EnvReport:
    repo: str
    python: str
    python_version: str
    path: str
    seconds: float
    packages: list[dict]
    reused: bool = False
    skipped: list[dict] = field(default_factory=list)   # optional deps that did not resolve
    package: str | None = None
    repo_installed: str = ""                            # "" or why it could not be
    lock: str = ""

    def to_json(self) -> dict:
        return {"repo": self.repo, "python": self.python, "seconds": round(self.seconds, 2),
                "packages": self.packages}


def torch_pin() -> str | None:
    """torch at exactly the curator's own version (e.g. torch==2.13.0+cpu), if it has one."""
    try:
        return f"torch=={importlib.metadata.version('torch')}"
    except importlib.metadata.PackageNotFoundError:
        return None


def torch_requirements() -> list[str]:
    """Names of the packages the curator's torch requires (setuptools, sympy, ...).

    An as-of date must not hold them back: torch 2.13 needs a setuptools newer than
    September 2024, so they are excepted together with torch.
    """
    try:
        requires = importlib.metadata.requires("torch") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    names = [requirement_name(r) for r in requires if "extra ==" not in r]
    return sorted({n for n in names if n})


def as_of(row: dict) -> str | None:
    """The repository's as-of date (set by `dlbench resolve --as-of`), when it has one."""
    value = (row or {}).get("as_of")
    return str(value).strip() or None if value else None


def env_key(commit: str, root: Path, python_version: str, extras: list[str],
            torch: str | None, as_of_date: str | None) -> str:
    digest = hashlib.sha256()
    for part in (commit, python_version, torch or "", as_of_date or "", *sorted(extras)):
        digest.update(part.encode() + b"\0")
    for path in dependency_files(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def envs_dir(workspace: Workspace) -> Path:
    return workspace.db_dir / "envs"


def _pinned_commit(store: Store, row: dict) -> str:
    found = mined_commits.latest(store, row["id"])
    if found is None:
        raise CuratorError(f"repository {row['name']} has no mined commit; mine it first")
    return found


def env_row(store: Store, repo_id: int) -> dict | None:
    return repo_envs.get(store, repo_id)


def build(store: Store, workspace: Workspace, ident: str, python: str | None = None,
          extras: list[str] | tuple[str, ...] = (), lock: str | None = None,
          progress: Progress | None = None, cancelled: CancelCheck | None = None,
          force: bool = False) -> EnvReport:
    """Build (or reuse) the environment of a mined repository and register its interpreter.

    python: "X.Y" (default: the curator's own version). extras: more requirements to add.
    lock: a lock text to install exactly instead of resolving.
    """
    started = time.monotonic()
    steps = 6
    note = progress or (lambda done, total, label: None)

    def step(done: int, label: str) -> None:
        if cancelled is not None and cancelled():
            raise CuratorError(f"building the environment of {row['name']} was cancelled")
        note(done, steps, label)

    row = repos.find(store, ident)
    commit = _pinned_commit(store, row)
    step(0, "checkout")
    _, checkout = pinned_checkout(workspace, row["url"], commit, store)
    version = python or f"{sys.version_info.major}.{sys.version_info.minor}"
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", version):
        raise CuratorError(f"--python {version!r}: give a version such as 3.11")
    wanted = declared(checkout)
    torch = torch_pin()
    day = as_of(row)
    extras = list(extras)
    key = env_key(commit, checkout, version, extras + ([lock] if lock else []), torch, day)
    target = envs_dir(workspace) / row["cache_key"]
    existing = env_row(store, row["id"])
    if existing and existing["key"] == key and not force and \
            os.path.exists(existing["python"]):
        return EnvReport(repo=row["name"], python=existing["python"],
                         python_version=existing["python_version"], path=existing["path"],
                         seconds=time.monotonic() - started, packages=existing["packages"],
                         reused=True, package=existing["package"], lock=existing["lock"])
    options = pip_options()
    step(1, "venv")
    try:
        env_python = _new_venv(target, version, options)
        work = target / ".curator"
        step(2, "resolve")
        skipped: list[dict] = []
        if lock is None:
            lock = _resolve(env_python, wanted, extras, torch, day, options, work, skipped)
        step(3, "install")
        repo_installed = _install(env_python, lock, checkout, options)
        step(5, "list")
        packages = _installed(env_python, options)
        version_line = repos.check_python(env_python)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    seconds = time.monotonic() - started
    record = {"repo_id": row["id"], "commit_sha": commit, "key": key, "path": str(target),
              "python": env_python, "python_version": version_line,
              "package": wanted.package, "lock": lock,
              "preload": preload_modules(wanted.runtime),
              "packages": packages, "seconds": round(seconds, 3),
              "built_at": now(), "actor": store.actor}
    repo_envs.save(store, record, replaced=existing is not None)
    repos.set_python(store, str(row["id"]), env_python)
    step(6, "done")
    return EnvReport(repo=row["name"], python=env_python, python_version=version_line,
                     path=str(target), seconds=seconds, packages=packages, skipped=skipped,
                     package=wanted.package, repo_installed=repo_installed, lock=lock)


def _new_venv(target: Path, version: str, options: IndexOptions) -> str:
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _uv(["venv", "--quiet", "--python", version, str(target)], options)
    (target / ".curator").mkdir()
    return str(target / "bin" / "python")


def _install(env_python: str, lock: str, checkout: Path, options: IndexOptions) -> str:
    """Install exactly the lock, then the repository without its dependencies; "" or
    why the repository itself could not be installed."""
    lock_path = Path(env_python).parents[1] / ".curator" / "lock.txt"
    lock_path.write_text(lock, encoding="utf-8")
    # Bytecode compiled once here: runs never write it (PYTHONDONTWRITEBYTECODE), and
    # compiling torch's and the repository's modules again in every run costs seconds.
    _uv(["pip", "sync", "--quiet", "--compile-bytecode", "--python", env_python,
         *options.uv_args(), str(lock_path)], options)
    compile_checkout(env_python, checkout)
    try:
        _uv(["pip", "install", "--quiet", "--no-deps", "--compile-bytecode", "--python",
             env_python, *options.uv_args(), str(checkout)], options)
    except UvError as exc:
        # Runs import the package from the checkout anyway; only its metadata is missing.
        return str(exc)
    return ""


def compile_checkout(python: str, checkout: Path) -> None:
    """Byte-compile the pinned checkout's modules for this interpreter (best effort: a
    file that does not compile is the runs' business)."""
    try:
        subprocess.run([python, "-m", "compileall", "-q", "-j", "0", "-x", r"/\.git/",
                        str(checkout)], capture_output=True, timeout=UV_TIMEOUT_S,
                       check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        pass


def node_cache() -> Path:
    """Where a cluster node keeps its checkouts and environments."""
    return Path(os.environ.get("CURATOR_NODE_CACHE") or
                Path.home() / ".cache" / "curator" / "node")


def materialize(spec: dict, root: Path | None = None) -> tuple[str, str | None]:
    """On a cluster node: (checkout, interpreter) for a portable repository spec
    {"url", "commit", "lock", "python_version"}, built once per node and then reused.
    Without a lock the node's own curator interpreter runs the tests (None)."""
    root = Path(root or node_cache())
    root.mkdir(parents=True, exist_ok=True)
    place = Workspace(root=root, db_path=root / "db" / "unused.sqlite")
    _, checkout = pinned_checkout(place, spec["url"], spec["commit"])
    lock = spec.get("lock")
    if not lock:
        return str(checkout), None
    version = spec.get("python_version") or f"{sys.version_info.major}.{sys.version_info.minor}"
    key = hashlib.sha256(f"{version}\0{spec['commit']}\0{lock}".encode()).hexdigest()[:16]
    target = root / "envs" / key
    done = target / ".curator" / "complete"
    python = target / "bin" / "python"
    (root / "envs").mkdir(parents=True, exist_ok=True)
    with open(root / "envs" / f".{key}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)   # actor threads and other processes wait here
        if not (done.is_file() and python.exists()):
            options = pip_options()
            try:
                _new_venv(target, version, options)
                _install(str(python), lock, checkout, options)
            except BaseException:
                shutil.rmtree(target, ignore_errors=True)
                raise
            done.write_text(spec["commit"] + "\n", encoding="utf-8")
    return str(checkout), str(python)


def portable_spec(store: Store, url: str, commit: str, python: str) -> dict | None:
    """What a cluster node needs to rebuild this repository's checkout and environment:
    None when the interpreter is one a node cannot rebuild (set by hand, no lock)."""
    record = repos.record_for(store, url)
    if record is not None:   # clone from where it was registered (a local folder, a mirror)
        url = record.get("source") or record["url"]
    if python == sys.executable:
        return {"url": url, "commit": commit, "lock": None, "python_version": None}
    row = repo_envs.get(store, record["id"]) if record is not None else None
    if row is None or row["python"] != python or not row["lock"]:
        return None
    version = ".".join(row["python_version"].split(".")[:2])
    return {"url": url, "commit": commit, "lock": row["lock"], "python_version": version}


def compile_args(env_python: str, options: IndexOptions, source: Path, day: str | None,
                 pinned_torch: bool) -> list[str]:
    """uv's arguments to lock `source` (hashes included), as of `day` when given."""
    args = ["pip", "compile", "--quiet", "--no-header", "--generate-hashes",
            "--python", env_python, *options.uv_args(), *options.constraint_args(),
            str(source)]
    if day:
        args += ["--exclude-newer", day]
        # torch comes from the curator's own pin, whatever its date, and so do the
        # packages it requires (an old cut-off cannot satisfy a new torch's needs).
        for name in ("torch", *torch_requirements()) if pinned_torch else ():
            args += ["--exclude-newer-package", f"{name}=2100-01-01"]
    return args


def _resolve(env_python: str, wanted: Declared, extras: list[str], torch: str | None,
             day: str | None, options: IndexOptions, work: Path,
             skipped: list[dict]) -> str:
    """A lock (pip requirements with hashes) for what the repository needs.

    The runtime dependencies, pytest, torch and --extra must resolve; a declared test
    dependency that does not (gone from the index, no wheel for this Python) is left out
    and reported, so one stale dev tool does not block the environment.
    """
    pinned = [torch] if torch else []
    core = [r for r in [*wanted.runtime, *ALWAYS, *extras]
            if requirement_name(r) != "torch"] + pinned
    optional = [r for r in wanted.test if requirement_name(r) != "torch"
                and requirement_name(r) not in {requirement_name(c) for c in core}]

    def compile_(requirements: list[str]) -> str:
        source = work / "requirements.in"
        source.write_text("\n".join(requirements) + "\n", encoding="utf-8")
        return _uv(compile_args(env_python, options, source, day, bool(torch)), options)

    try:
        return compile_(core + optional)
    except UvError:
        pass
    try:
        compile_(core)
    except UvError as exc:
        raise CuratorError(f"the repository's runtime dependencies do not resolve: "
                           f"{exc}") from None
    kept = []
    for requirement in optional:
        try:
            compile_(core + kept + [requirement])
            kept.append(requirement)
        except UvError as exc:
            skipped.append({"requirement": requirement, "reason": str(exc)})
    return compile_(core + kept)


def _installed(env_python: str, options: IndexOptions) -> list[dict]:
    out = _uv(["pip", "list", "--format", "json", "--python", env_python], options)
    try:
        rows = json.loads(out or "[]")
    except ValueError:
        return []
    return sorted(({"name": r["name"], "version": r["version"]} for r in rows),
                  key=lambda r: canonical(r["name"]))


# -- checking ---------------------------------------------------------------------------


def list_envs(store: Store) -> list[dict]:
    return repo_envs.list_with_repos(store)


def check_import(row: dict) -> tuple[bool, str]:
    """Whether the environment's interpreter imports the repository's package."""
    package = row.get("package")
    python = row.get("python") or ""
    if not os.path.exists(python):
        return False, f"{python} is missing; rebuild with `curator repo env`"
    if not package:
        return False, "no importable package found in the repository"
    try:
        done = subprocess.run([python, "-c", f"import {package}"], capture_output=True,
                              text=True, timeout=300, check=False, cwd="/",
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"import {package}: {exc}"
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return False, f"import {package}: {lines[-1] if lines else 'failed'}"
    return True, f"imports {package}"


def preload_for(store: Store, url: str | None, python: str) -> list[str]:
    """Modules warm workers of this repository's environment import once: those recorded
    when `repo env` built it, else torch and numpy (a module that is missing is skipped)."""
    record = repos.record_for(store, url) if url else None
    row = repo_envs.get(store, record["id"]) if record is not None else None
    if row is not None and row["python"] == python:
        return row["preload"]
    return ["torch", "numpy"]


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
