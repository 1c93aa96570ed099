"""uv, driven with pip's own package sources (`pip config list`, read at run time:
uv does not read it): a venv, a lock (as of a date, torch and what it needs excepted),
an exact install, the installed list.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from curator.errors import CuratorError
from curator.repos import bytecode, requirements

UV_TIMEOUT_S = 1800


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


def run(args: list[str], options: IndexOptions, cwd: Path | None = None) -> str:
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
    names = [requirements.requirement_name(r) for r in requires if "extra ==" not in r]
    return sorted({n for n in names if n})


def new_venv(target: Path, version: str, options: IndexOptions) -> str:
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    run(["venv", "--quiet", "--python", version, str(target)], options)
    (target / ".curator").mkdir()
    return str(target / "bin" / "python")


def install(env_python: str, lock: str, checkout: Path, options: IndexOptions,
            install_repo: bool = True) -> str:
    """Install exactly the lock, then (`install_repo`) the repository without its
    dependencies; "" or why the repository itself could not be installed. A repository
    whose recipe compiles it (build steps) is not installed: its steps build it in the
    checkout, where runs import it from (installing it would compile it once more)."""
    lock_path = Path(env_python).parents[1] / ".curator" / "lock.txt"
    lock_path.write_text(lock, encoding="utf-8")
    run(["pip", "sync", "--quiet", "--python", env_python, *options.uv_args(),
         str(lock_path)], options)
    # Bytecode made here: runs never write it (PYTHONDONTWRITEBYTECODE), and compiling
    # torch's and the repository's modules again in every run costs seconds. The
    # installed files' bytecode is shared between environments (compiled once per file).
    try:
        bytecode.share(env_python)
    except (OSError, ValueError, subprocess.SubprocessError):
        pass   # best effort: a module without bytecode is compiled when imported
    compile_checkout(env_python, checkout)
    if not install_repo:
        return ""
    try:
        run(["pip", "install", "--quiet", "--no-deps", "--compile-bytecode",
             "--python", env_python, *options.uv_args(), str(checkout)], options)
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


# Packages released together with torch, each build for one torch release: they follow
# the pinned torch (its own release), never the as-of date nor a declared version.
TORCH_COMPANIONS = ("torchvision", "torchaudio", "torchtext", "torchdata", "torchrec",
                    "torchao", "torchcodec")


def compile_args(env_python: str, options: IndexOptions, source: Path, day: str | None,
                 pinned_torch: bool, exempt: list[str] | tuple[str, ...] = (),
                 without: list[str] | tuple[str, ...] = ()) -> list[str]:
    """uv's arguments to lock `source` (hashes included), as of `day` when given;
    `without`: packages kept out of the lock (even when something requires them)."""
    args = ["pip", "compile", "--quiet", "--no-header", "--generate-hashes",
            "--python", env_python, *options.uv_args(), *options.constraint_args(),
            str(source)]
    for name in without:
        args += ["--no-emit-package", name]
    if day:
        args += ["--exclude-newer", day]
        # torch comes from the curator's own pin, whatever its date, and so do the
        # packages it requires (an old cut-off cannot satisfy a new torch's needs) and
        # its companions (the release built for that torch).
        for name in ("torch", *torch_requirements(), *TORCH_COMPANIONS) if pinned_torch \
                else ():
            args += ["--exclude-newer-package", f"{name}=2100-01-01"]
        for name in exempt:   # a framework (and its own stack) that must import here
            args += ["--exclude-newer-package", f"{name}=2100-01-01"]
        # the harness's pytest (requirements.ALWAYS) where the date has none: the tests'
        # pytest stays that of the date otherwise (8.3 as of 2024-09-20, not 8.4, whose
        # tests that return a value fail)
        for name in HARNESS_PACKAGES if day < HARNESS_SINCE else ():
            args += ["--exclude-newer-package", f"{name}=2100-01-01"]
    return args


# pytest and what its releases require: the harness runs in the environment's pytest
# (requirements.ALWAYS asks for pytest>=7,<9), which an as-of date before pytest 7's
# release (2022-02-11) could not give.
HARNESS_PACKAGES = ("pytest", "pluggy", "iniconfig", "pygments", "exceptiongroup", "tomli")
HARNESS_SINCE = "2022-02-12"


@dataclass
class CompanionTorch:
    """Another torch for companions that do not import beside the pinned one: its pin,
    the packages it and they need (resolved undated: an as-of date cannot hold them back),
    and the companions' versions."""
    pin: str
    stack: list[str]
    companions: dict[str, str]


def companion_torch(env_python: str, companions: list[str], pinned: str | None,
                    options: IndexOptions, work: Path) -> CompanionTorch | None:
    """The torch that the newest releases of `companions` on the index were built for,
    when it is not the pinned one (the pinned CPU torch has only CUDA builds of
    torchvision here, which do not import beside it; the index's own torch of their
    release, a CUDA build, runs on the CPU). None when it is the same or nothing resolves."""
    def pins(items: list[str]) -> dict[str, str] | None:
        source = work / "companions.in"
        source.write_text("\n".join(items) + "\n", encoding="utf-8")
        try:
            out = run(["pip", "compile", "--quiet", "--no-header", "--python", env_python,
                       *options.uv_args(), *options.constraint_args(), str(source)], options)
        except UvError:
            return None
        return {requirements.canonical(n): v for n, v in
                re.findall(r"(?m)^([A-Za-z0-9][A-Za-z0-9_.-]*)==([^\s;\\]+)", out)}

    found = pins(["torch", *companions])
    version = (found or {}).get("torch")
    if not version or (pinned and pinned.split("==", 1)[-1] == version):
        return None
    # only torch's own stack goes undated (its CUDA libraries, triton): the companions'
    # other needs (numpy, pillow) stay as of the date, with the repository's
    stack = pins([f"torch=={version}"])
    if stack is None:
        return None
    return CompanionTorch(f"torch=={version}", sorted(stack),
                          {c: found[c] for c in companions if c in found})


@dataclass
class Resolution:
    lock: str
    left_out: list[dict] = field(default_factory=list)   # {"requirement", "reason"}
    notes: list[str] = field(default_factory=list)       # what was decided, and why


RELAX_ROUNDS = 12
SOURCE_ROUNDS = 6   # packages with no wheel at all a runtime resolution may build
_WHEEL_LESS = re.compile(r"Wheels are required for `([A-Za-z0-9][A-Za-z0-9._-]*)`")


def wheel_less(error: str) -> str | None:
    """The package a resolution from wheels only failed on, as uv's hint names it."""
    found = _WHEEL_LESS.search(error or "")
    return requirements.canonical(found.group(1)) if found else None
_UNBUILT = re.compile(r"Failed to build `([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!-]+)`")


def override_file(work: Path) -> Path:
    return work / "overrides.txt"


def pin_overrides(work: Path) -> list[str]:
    path = override_file(work)
    return path.read_text(encoding="utf-8").split() if path.is_file() else []


def unbuilt_name(error: str) -> str | None:
    """The distribution an install could not build, as uv's error names it."""
    found = _UNBUILT.search(error or "")
    return requirements.canonical(found.group(1)) if found else None


def override_unbuilt(work: Path, error: str) -> str | None:
    """A package an install had to build from source and could not (GPy[plotting] pins
    matplotlib==3.3.4, whose only file for Python 3.11 is its sdist): `X>=V` goes into
    the work folder's overrides, which every later resolution there passes to uv, and is
    returned; None when the error names none or it is overridden already."""
    found = _UNBUILT.search(error or "")
    if not found:
        return None
    line = f"{found.group(1)}>={found.group(2)}"
    have = pin_overrides(work)
    if any(requirements.requirement_name(o) == requirements.requirement_name(line)
           for o in have):
        return None
    override_file(work).write_text("\n".join([*have, line]) + "\n", encoding="utf-8")
    return line


_BOUNDED = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?)\s*([^;]*?)\s*(;.*)?$")


def relax_bounds(items: list[str], torch: str | None) -> list[str]:
    """Upper bounds dropped: `name>=A,<=B` as `name>=A`, `~=V` and `==V` as `>=V` (the
    pinned torch kept). inference pins setuptools>=70.0.0,<=72.1.0 while the pinned torch
    needs setuptools>=77.0.3: no `==` to relax, the cap is what does not resolve."""
    out = []
    for item in items:
        found = _BOUNDED.match(item)
        if item == torch or not found or not found.group(2) or found.group(2).startswith("@"):
            out.append(item)
            continue
        kept = []
        for clause in (c.strip() for c in found.group(2).split(",")):
            op = re.match(r"(===|==|~=|!=|<=|>=|<|>)\s*(.*)", clause)
            if not op:
                kept.append(clause)
            elif op.group(1) in ("<", "<="):
                continue
            elif op.group(1) in ("===", "==", "~="):
                if op.group(1) == "==" and "*" in op.group(2):
                    kept.append(f">={op.group(2).rstrip('.*')}")
                else:
                    kept.append(f">={op.group(2)}")
            else:
                kept.append(clause)
        marker = found.group(3) or ""
        out.append(f"{found.group(1)}{','.join(kept)}{marker}")
    return out


def _named(requirement: str, text: str) -> bool:
    name = requirements.requirement_name(requirement)
    return bool(name) and re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])",
                                    text.replace("_", "-"), re.IGNORECASE) is not None


def relax_pins(items: list[str], torch: str | None) -> list[str]:
    """`name==V` (also `===V`) as `name>=V`, the pinned torch kept."""
    out = []
    for item in items:
        if item == torch:
            out.append(item)
            continue
        out.append(re.sub(r"^([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?)\s*===?\s*"
                          r"([A-Za-z0-9.+!*-]+)\s*(;.*)?$",
                          lambda m: f"{m.group(1)}>={m.group(2).rstrip('.*')}"
                                    f"{m.group(3) or ''}", item.strip()))
    return out


def follow_torch(items: list[str], torch: str | None, notes: list[str]) -> list[str]:
    """Requirements with torch's companions made to follow the pinned torch: a declared
    version of one (built for another torch) is dropped, and said so."""
    if not torch:
        return list(items)
    out = []
    for item in items:
        name = requirements.requirement_name(item)
        if name in TORCH_COMPANIONS:
            bare = name
            note = (f"{name} follows {torch} (the release built for it; declared "
                    f"{item.strip()!r}, not held to the as-of date)")
            if note not in notes:
                notes.append(note)
            if bare not in out:
                out.append(bare)
            continue
        out.append(item)
    return out


def apply_overrides(items: list[str], overrides: dict[str, str], notes: list[str]) -> list[str]:
    """The recipe's overrides: NAME -> the requirement to use instead ("" leaves it out)."""
    wanted = {requirements.canonical(k): v for k, v in (overrides or {}).items()}
    out = []
    for item in items:
        name = requirements.requirement_name(item)
        if name in wanted:
            replacement = wanted[name].strip()
            notes.append(f"{item.strip()} -> {replacement or '(left out)'}: the recipe's "
                         "override")
            if replacement:
                out.append(replacement)
            continue
        out.append(item)
    return out


def unmet_constraints(constraints: list[str], lock: str, torch: str | None) -> list[str]:
    """The constraints naming a package of the lock whose locked version they exclude
    (all of that package's, whatever their markers: uv decides which applies), torch and
    its companions excepted (they follow the pinned torch)."""
    from packaging.requirements import InvalidRequirement, Requirement

    locked = {requirements.canonical(m.group(1)): m.group(2) for m in re.finditer(
        r"(?m)^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", lock or "")}
    unmet: set[str] = set()
    for item in constraints:
        name = requirements.requirement_name(item)
        if not name or name not in locked or name in {"torch", *TORCH_COMPANIONS} or \
                (torch and item.strip() == torch):
            continue
        try:
            spec = Requirement(item).specifier
        except InvalidRequirement:
            continue
        if not spec.contains(locked[name], prereleases=True):
            unmet.add(name)
    return [c for c in constraints if requirements.requirement_name(c) in unmet]


def resolve(env_python: str, wanted: requirements.Declared, extras: list[str], torch: str | None,
            day: str | None, options: IndexOptions, work: Path,
            skipped: list[dict] | None = None, overrides: dict[str, str] | None = None,
            exempt: list[str] | tuple[str, ...] = (),
            without: dict[str, str] | None = None, said: list[str] | tuple[str, ...] = ()
            ) -> Resolution:
    """A lock (see `_resolve_once`) that keeps the requirements files' `-c` constraints
    as pip does, also on the packages other requirements bring in: one such a lock
    breaks (nncf's tests pin tensorflow==2.15.1; tensorflow-hub's tf-keras brought 2.17,
    which nncf refuses) is asked for as a test requirement and resolved once more (left
    out, with uv's reason, when it does not fit), said in the lock."""
    args = (env_python, wanted, extras, torch, day, options, work)
    kwargs = dict(overrides=overrides, exempt=exempt, without=without, said=said)
    first = _resolve_once(*args, **kwargs)
    unmet = [c for c in unmet_constraints(wanted.constraints, first.lock, torch)
             if c not in wanted.runtime and c not in wanted.test]
    if not unmet:
        if skipped is not None:
            skipped.extend(first.left_out)
        return first
    names = sorted({requirements.requirement_name(c) or c for c in unmet})
    note = (f"constraints {', '.join(unmet)} of the requirements files (-c) held on "
            f"{', '.join(names)}, which other requirements bring in (resolved without "
            f"them: {', '.join(f'{n}=={v}' for n in names if (v := _lock_pin(first.lock, n)))})")
    again = replace(wanted, test=[*wanted.test, *unmet])
    return _resolve_once(env_python, again, extras, torch, day, options, work,
                         skipped=skipped, **{**kwargs, "said": [*said, note]})


def _lock_pin(lock: str, name: str) -> str | None:
    found = re.search(rf"(?im)^{re.escape(name)}==([^\s;\\]+)", lock or "")
    return found.group(1) if found else None


def _resolve_once(env_python: str, wanted: requirements.Declared, extras: list[str],
                  torch: str | None, day: str | None, options: IndexOptions, work: Path,
                  skipped: list[dict] | None = None, overrides: dict[str, str] | None = None,
                  exempt: list[str] | tuple[str, ...] = (),
                  without: dict[str, str] | None = None,
                  said: list[str] | tuple[str, ...] = ()) -> Resolution:
    """A lock (pip requirements with hashes) for what the repository needs.

    The runtime dependencies, pytest, torch and --extra must resolve first; then the test
    dependencies that fit are added, and each one that does not (a conflict with the
    runtime ones, gone from the index, no wheel for this Python) is left out and named
    with uv's reason. torch's companions follow the pinned torch. The lock starts with
    comment lines saying what was decided. `without`: name -> why it is kept out of the
    environment (a torch companion whose only build here is for another torch). `said`:
    notes of decisions made before (another torch for its companions), first in the lock.
    """
    notes: list[str] = [*said, *wanted.notes, *(f"{name} left out: {why}"
                                                for name, why in (without or {}).items())]
    dropped = set(without or {})
    pinned = [torch] if torch else []
    core = [r for r in [*wanted.runtime, *requirements.ALWAYS, *extras]
            if requirements.requirement_name(r) not in {"torch", *dropped}]
    core = apply_overrides(follow_torch(core, torch, notes), overrides or {}, notes) + pinned
    optional = [r for r in wanted.test if requirements.requirement_name(r)
                not in {"torch", *dropped} and r not in core]
    optional = apply_overrides(follow_torch(optional, torch, notes), overrides or {}, notes)
    optional = [r for r in optional if r not in core]
    left_out: list[dict] = []

    # A test requirement is taken from a wheel only: one that would build from source
    # (a C++ dev tool such as atari-py) is left out and named, not compiled for minutes.
    binary_only = sorted({n for n in (requirements.requirement_name(r) for r in optional)
                          if n and n not in {requirements.requirement_name(c) for c in core}})

    # Wheels only, when the runtime requirements resolve so: a resolution free to build
    # from source backtracks into old sdists whose metadata bounds nothing (deepchecks'
    # test pins pandas==1.3.5 and scikit-learn==1.0.2, then scipy 1.6.1, numba 0.53.1
    # beside numpy 2: none builds on this Python, and each failed install cost another
    # resolution). A package with no wheel in any release (fasttext, gputil) is built
    # from source (`sourced`); a runtime pin of a release without one (pandas==1.3.5)
    # leaves the whole resolution free to build, as before.
    wheels = {"only": True}
    sourced: list[str] = []
    # The repository's own distribution, when a dependency requires it (pyod's plugin
    # combo>=0.1 requires pyod, which has sdists only): read from its source, never
    # emitted. From wheels only, combo fell back to 0.0.5, the last release without that
    # requirement, which imports a module scikit-learn removed in 0.24.
    # Only when the index has no wheel of it: a wheel-only one (pennylane, which its
    # plugin pennylane-lightning requires) has no source to read.
    own = {"name": requirements.requirement_name(wanted.project) if wanted.project else None,
           "sourced": None}

    def own_from_source() -> bool:
        if own["name"] is None or own["sourced"] is not None:
            return bool(own["sourced"])
        own["sourced"] = False   # (while asking, the question is not asked again)
        try:
            compile_([own["name"]], "own.in")
        except UvError as exc:
            own["sourced"] = wheel_less(exc.stderr) == own["name"]
        return own["sourced"]

    def compile_(items: list[str], name: str = "requirements.in") -> str:
        source = work / name
        source.write_text("\n".join(items) + "\n", encoding="utf-8")
        args = compile_args(env_python, options, source, day, bool(torch), exempt,
                            sorted(dropped))
        if override_file(work).is_file():
            args += ["--override", str(override_file(work))]
        if own["name"]:   # the checkout is installed: the index's release says what it needs
            args += ["--no-emit-package", own["name"]]
        if wheels["only"]:
            args += ["--only-binary", ":all:"]
            for wheelless in [*sourced, *([own["name"]] if own_from_source() else [])]:
                args += ["--no-binary", wheelless]
        else:
            for binary in binary_only:
                args += ["--only-binary", binary]
        return run(args, options)

    def never_a_wheel(name: str) -> bool:
        """Whether no release the runtime requirements allow of NAME has a wheel
        (deepchecks' seqeval>=1.0.0: its 0.0 releases had one); never for an exact pin,
        whose source would be built again at every later version an override takes."""
        asked = [c for c in core if requirements.requirement_name(c) == name] or [name]
        if any(re.search(r"===?", c.split(";")[0]) for c in asked):
            return False
        try:
            compile_(asked, "wheels.in")
        except UvError as exc:
            return wheel_less(exc.stderr) == name
        return False

    def allow_source(exc: UvError) -> str | None:
        """The package uv's error names as having no wheel, now taken from its source
        (added to `sourced`); None when none is named, or it is allowed already, binary
        only, or has a wheel in some release."""
        name = wheel_less(exc.stderr)   # (uv's hint: past the message's lines)
        if name is None or name in sourced or name in binary_only or \
                not never_a_wheel(name):
            return None
        sourced.append(name)
        return name

    def core_from_wheels() -> bool:
        """Whether the runtime requirements resolve from wheels (and the sources of
        packages that never have one); `sourced` holds those."""
        for _ in range(SOURCE_ROUNDS):
            try:
                compile_(core)
                return True
            except UvError as exc:
                if allow_source(exc) is None:
                    return False
        return False

    for line in pin_overrides(work):
        notes.append(f"{line}: overrides a dependency's exact pin, which does not build "
                     "here (no wheel for this Python)")

    def done(lock: str) -> Resolution:
        if skipped is not None:
            skipped.extend(left_out)
        header = [f"# {note}" for note in notes] + [
            f"# left out {item['requirement']}: {item['reason']}"[:400] for item in left_out]
        return Resolution(("\n".join(header) + "\n" if header else "") + lock, left_out,
                          notes)

    try:
        return done(compile_(core + optional))
    except UvError:
        pass
    if not core_from_wheels():
        wheels["only"] = False   # the runtime requirements need a source somewhere
        sourced.clear()
    if sourced or not wheels["only"]:
        try:
            return done(compile_(core + optional))
        except UvError:
            pass
    try:
        if not wheels["only"]:
            compile_(core)
    except UvError as exc:
        # Exact pins of another Python's day (DeepReg: tensorflow==2.3.1, wheels up to
        # cp38 only) never resolve here: each is relaxed to that release or a later one
        # (as of the date), said in the lock, rather than no environment at all.
        relaxed, error = list(core), str(exc)
        # The recipe's extras are decisions (a maintainer's, or the tool's own from a run:
        # `setuptools<81` for pkg_resources, `numpy<2`): never relaxed. inference's
        # setuptools cap was relaxed and took that extra's cap with it, so the newest
        # setuptools, without pkg_resources, failed 8 of its references.
        held = set(extras)
        for _ in range(RELAX_ROUNDS):
            # the pins uv's reason names first; all of them when it names none
            named = [relax_pins([c], torch)[0] if _named(c, error) and c not in held else c
                     for c in relaxed]
            if named == relaxed:   # no exact pin named: the caps of those named
                named = [relax_bounds([c], torch)[0] if _named(c, error) and c not in held
                         else c for c in relaxed]
            step = named if named != relaxed else [
                c if c in held else relax_pins([c], torch)[0] for c in relaxed]
            if step == relaxed:
                break
            relaxed = step
            try:
                compile_(relaxed)
                break
            except UvError as again:
                error = str(again)
        else:
            relaxed = core
        try:
            if relaxed == core:
                raise exc
            compile_(relaxed)
        except UvError:
            raise CuratorError(f"the repository's runtime dependencies do not resolve: "
                               f"{exc}") from None
        changed = [c for c, r in zip(core, relaxed, strict=True) if c != r]
        notes.append(f"pins relaxed to >= ({', '.join(changed)}): they do not resolve "
                     f"here (this Python, the pinned torch): "
                     f"{str(exc).splitlines()[0][:200]}")
        core = relaxed
        optional = [r for r in optional if r not in core]
        binary_only[:] = [n for n in binary_only
                          if n not in {requirements.requirement_name(c) for c in core}]

    def built_from_source(exc: UvError) -> bool:
        """Whether a test requirement failed only for a package it depends on that has no
        wheel in any release (small-text's pytest-approvaltests: approvaltests needs
        pyperclip, sdists only): that one is built from source, as a runtime one is, and
        the requirement tried again (left out, small-text's pytest.ini addopts named the
        plugin's option and every run stopped before pytest started). A test requirement
        itself is still taken from a wheel only."""
        name = allow_source(exc) if len(sourced) < SOURCE_ROUNDS else None
        if name is None:
            return False
        notes.append(f"{name} built from source: no release of it has a wheel, and a test "
                     "requirement needs it")
        return True

    def fitting(base: list[str], items: list[str], known_bad: bool = False) -> list[str]:
        """The items kept as one by one in order would keep them (each that does not
        resolve with base and those kept before it is left out, with uv's reason), found
        by halves: a set that resolves keeps all of it (fewer requirements resolve too),
        so a long test extra with one conflict costs a few resolutions, not one each
        (deepchecks: dozens, minutes apiece on a loaded machine)."""
        if not items:
            return []
        if not known_bad:
            try:
                compile_(base + items)
                return list(items)
            except UvError as exc:
                if len(items) == 1:
                    if wheels["only"] and built_from_source(exc):
                        return fitting(base, items)
                    left_out.append({"requirement": items[0], "reason": str(exc)})
                    return []
        if len(items) == 1:   # known not to fit, with no reason of its own yet
            return fitting(base, items)
        half = len(items) // 2
        first = fitting(base, items[:half])
        return first + fitting(base + first, items[half:])

    before = len(sourced)
    kept = fitting(core, optional, known_bad=True)
    if len(sourced) > before and left_out:
        # a source allowed for a later requirement may be what an earlier one lacked
        # (small-text's approvaltests, left out before pytest-approvaltests had pyperclip
        # built): those left out are tried once more
        again = [item["requirement"] for item in left_out]
        del left_out[:]
        kept += fitting(core + kept, again)
        kept = [r for r in optional if r in kept]
    return done(compile_(core + kept))


def installed(env_python: str, options: IndexOptions) -> list[dict]:
    out = run(["pip", "list", "--format", "json", "--python", env_python], options)
    try:
        rows = json.loads(out or "[]")
    except ValueError:
        return []
    return sorted(({"name": r["name"], "version": r["version"]} for r in rows),
                  key=lambda r: requirements.canonical(r["name"]))


# -- checking ---------------------------------------------------------------------------

