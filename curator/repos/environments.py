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
import dataclasses
import fcntl
import functools
import hashlib
import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from curator.errors import CuratorError
from curator.progress import CancelCheck, Progress
from curator.repos import extbuild, identity, importcheck, recipes, requirements, uv
from curator.repos.checkout import pinned_checkout
from curator.repos.gitcache import GitError, run_git
from curator.store import Store, mined_commits, now, repo_envs
from curator.store import problems as problem_store
from curator.workspace import Workspace


@dataclass
class EnvReport:
    repo: str
    python: str
    python_version: str
    path: str
    seconds: float
    packages: list[dict]
    reused: bool = False
    skipped: list[dict] = field(default_factory=list)   # test deps left out, with why
    package: str | None = None
    repo_installed: str = ""                            # "" or why it could not be
    lock: str = ""
    status: str = "built"                               # built | broken
    reason: str = ""                                    # why it is broken
    notes: list[str] = field(default_factory=list)      # what the resolution decided
    missing: list[str] = field(default_factory=list)    # paths the checkout lacks
    recipe: str = ""                                    # the recipe file it was built from
    recipe_written: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "built"

    def to_json(self) -> dict:
        return {"repo": self.repo, "python": self.python, "seconds": round(self.seconds, 2),
                "packages": self.packages}


# What a framework brings that must be as new as the framework itself when the as-of
# resolution gives a stack it cannot import (TensorFlow with an older ml_dtypes/numpy).
FRAMEWORK_STACKS = {
    "tensorflow": ("tensorflow", "tensorflow-cpu", "tensorflow-probability", "tf-keras",
                   "keras", "ml-dtypes", "numpy", "tensorboard", "h5py", "protobuf",
                   "tensorflow-io-gcs-filesystem", "tensorflow-estimator"),
    "jax": ("jax", "jaxlib", "ml-dtypes", "numpy", "scipy", "opt-einsum"),
    "torch": (),
}


def as_of(row: dict) -> str | None:
    """The repository's as-of date (set by `dlbench resolve --as-of`), when it has one."""
    value = (row or {}).get("as_of")
    return str(value).strip() or None if value else None


def env_key(commit: str, root: Path, python_version: str, extras: list[str],
            torch: str | None, as_of_date: str | None,
            tests: list[str] | tuple[str, ...] = ()) -> str:
    digest = hashlib.sha256()
    for part in (commit, python_version, torch or "", as_of_date or "", *sorted(extras)):
        digest.update(part.encode() + b"\0")
    for path in requirements.dependency_files(root, tests):
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


def recipe_for(workspace: Workspace, row: dict, checkout: Path, wanted: requirements.Declared,
               python: str | None, extras: list[str]) -> tuple[recipes.Recipe, bool]:
    """The repository's recipe (written first when there is none); --python and --extra
    given on the command line go into it, so the file says how the env was built."""
    recipe = recipes.load(workspace, row["url"])
    written = recipe is None
    if recipe is None:
        names = [requirements.requirement_name(r) or "" for r in
                 [*wanted.runtime, *wanted.test]]
        recipe = recipes.Recipe(repo=row["url"], python=python, extras=list(extras),
                                frameworks=recipes.detect_frameworks(
                                    names + recipes.setup_frameworks(checkout), wanted.package),
                                build=recipes.detect_build(checkout))
    else:
        if python and python != recipe.python:
            recipe.python, written = python, True
        for extra in extras:
            if extra not in recipe.extras:
                recipe.extras.append(extra)
                written = True
    if written:
        recipes.save(workspace, recipe)
    return recipe, written


def build(store: Store, workspace: Workspace, ident: str, python: str | None = None,
          extras: list[str] | tuple[str, ...] = (), lock: str | None = None,
          progress: Progress | None = None, cancelled: CancelCheck | None = None,
          force: bool = False) -> EnvReport:
    """Build (or reuse) the environment of a mined repository and register its interpreter.

    Reads the repository's recipe (repos/OWNER__NAME.toml; written first when missing).
    python: "X.Y" (default: the recipe's, else the curator's own). extras: more
    requirements to add. lock: a lock text to install exactly instead of resolving.
    The environment is `built` only when its frameworks and the repository's package
    import in it; otherwise it is stored `broken` with the reason (report.status/reason).
    """
    started = time.monotonic()
    steps = 7
    note = progress or (lambda done, total, label: None)

    def step(done: int, label: str) -> None:
        if cancelled is not None and cancelled():
            raise CuratorError(f"building the environment of {row['name']} was cancelled")
        note(done, steps, label)

    row = identity.find(store, ident)
    commit = _pinned_commit(store, row)
    step(0, "checkout")
    cache, checkout = pinned_checkout(workspace, row["url"], commit, store)
    missing = cache.missing_paths(commit)
    tests = problem_tests(store, row["url"])
    wanted = requirements.declared(checkout, tests)
    recipe, written = recipe_for(workspace, row, checkout, wanted, python, list(extras))
    if recipe.build:   # its steps build it here, without a build sandbox
        wanted = dataclasses.replace(wanted, test=[*wanted.test, *(
            r for r in requirements.build_requirements(wanted) if r not in wanted.test)])
    version = recipe.python or f"{sys.version_info.major}.{sys.version_info.minor}"
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", version):
        raise CuratorError(f"--python {version!r}: give a version such as 3.11")
    torch = uv.torch_pin()
    day = as_of(row)
    extras = list(recipe.extras)
    decided = recipes.dump(recipes.Recipe(repo=recipe.repo, python=recipe.python,
                                          extras=recipe.extras, overrides=recipe.overrides,
                                          frameworks=recipe.frameworks, build=recipe.build))
    key = env_key(commit, checkout, version, extras + [decided] + ([lock] if lock else []),
                  torch, day, tests)
    target = envs_dir(workspace) / row["cache_key"]
    existing = env_row(store, row["id"])
    base = {"repo": row["name"], "missing": missing, "recipe": str(recipe.path or ""),
            "recipe_written": written}
    # A broken environment is built again (what broke may be fixed since: the index,
    # the curator); a built one is reused while its inputs are the same and its folder
    # is the one that build finished (a build stopped half way, killed at a time limit,
    # leaves a folder with another lock's packages under the row of the last one that
    # finished: nncf's torchvision 0.28 beside torch 2.13, which does not import).
    if existing and existing["key"] == key and not force and \
            existing.get("status", "built") == "built" and \
            os.path.exists(existing["python"]) and finished(existing["path"]) == key:
        # a checkout written anew gets the environment's compiled extension back
        extbuild.restore_for_run(existing["path"], commit, checkout)
        # one built before its plugins were checked is checked once now
        notes = plugins_checked(workspace, recipe, existing["python"], existing["path"], key,
                                settings=workspace.config.execution
                                if workspace.config is not None else None)
        return EnvReport(python=existing["python"],
                         python_version=existing["python_version"], path=existing["path"],
                         seconds=time.monotonic() - started, packages=existing["packages"],
                         reused=True, package=existing["package"], lock=existing["lock"],
                         status=existing["status"], reason=existing["reason"],
                         skipped=existing["left_out"], notes=notes, **base)
    options = uv.pip_options()
    settings = workspace.config.execution if workspace.config is not None else None
    step(1, "venv")
    resolution = None
    try:
        env_python = uv.new_venv(target, version, options)
        work = target / ".curator"
        step(2, "resolve")
        if lock is None:
            resolution = uv.resolve(env_python, wanted, extras, torch, day, options, work,
                                    overrides=recipe.overrides)
            lock = resolution.lock
        step(3, "install")
        unbuilt: dict[str, str] = {}   # what no release of installs here: left out
        while True:
            try:
                repo_installed = uv.install(env_python, lock, checkout, options,
                                            install_repo=not recipe.build)
                break
            except uv.UvError as exc:
                # a dependency's exact pin that does not build here: relaxed, once each;
                # a requirement still without a release that installs (nlp-architect's
                # dynet: sdists only, which do not build) is left out, said in the lock,
                # and the import check decides whether the environment is one
                if resolution is None:
                    raise
                if uv.override_unbuilt(work, str(exc)) is not None:
                    step(2, "resolve (a pin that does not build overridden)")
                else:
                    name = uv.unbuilt_name(str(exc))
                    if name is None or name in unbuilt or name == "torch":
                        raise
                    unbuilt[name] = ("no release of it installs here (no wheel for this "
                                     "Python, and its source does not build): "
                                     f"{str(exc).splitlines()[0][:200]}")
                    step(2, f"resolve (without {name}, which does not build here)")
                resolution = uv.resolve(env_python, wanted, extras, torch, day, options,
                                        work, overrides=recipe.overrides,
                                        without=dict(unbuilt) or None)
                lock = resolution.lock
        without: dict[str, str] = {}
        swap = Swap([], [])   # another torch for its companions, kept by every resolution
        if resolution is not None:
            # A companion whose only release for this torch is another build of it (CUDA
            # wheels beside a CPU torch) does not import: first the torch its newest
            # release here was built for; when that does not make it import, out, said
            # why, rather than an environment where `import torchvision` raises.
            without = broken_companions(env_python, options, torch, settings)
            swapped = _companion_torch(env_python, wanted, extras, torch, day, options, work,
                                       recipe, checkout, without, settings, step) \
                if without else None
            if isinstance(swapped, tuple):
                resolution, repo_installed, torch, swap = swapped
                lock, without = resolution.lock, {}
            elif swapped:   # why the other torch did not do
                without = {name: f"{why}; {swapped}" for name, why in without.items()}
            if without:
                without = {**unbuilt, **without}
                step(2, f"resolve (without {', '.join(without)})")
                resolution = uv.resolve(env_python, wanted, extras, torch, day, options,
                                        work, overrides=recipe.overrides, without=without)
                lock = resolution.lock
                repo_installed = uv.install(env_python, lock, checkout, options,
                                            install_repo=not recipe.build)
        without = {**unbuilt, **without}   # out of every later resolution too
        if resolution is not None and lock is not None:
            # a declared exact pin whose release does not import on this Python: the
            # newest release the date allows, or left out (for every later resolution)
            mended = _pins_that_import(env_python, wanted, extras, torch, day, options,
                                       work, recipe, checkout, without, swap, lock, target,
                                       version, settings, step)
            if mended is not None:
                wanted, resolution, repo_installed, without = mended
                lock = resolution.lock
        step(4, "build")
        status, reason = "built", ""
        built_note = ""
        if recipe.build:
            folders = [extbuild.cache_folder(envs_dir(workspace), row["cache_key"], k)
                       for k in extbuild.build_keys(commit, version, torch, recipe.build,
                                                    lock)]
            built = extbuild.ensure(env_python, checkout, recipe.build, folders[0],
                                    also=folders[1:])
            reason = built.reason
            if not reason:
                extbuild.record(target, commit, built)
                built_note = (f"compiled by the recipe's build steps in {built.seconds:.0f} s"
                              if not built.reused else "compiled before, taken from the "
                              "build cache") + f" ({len(built.files)} file(s) in {built.folder})"
        if reason:
            status = "broken"
        else:
            step(5, "import check")
            ok, reason = importcheck.check_env(env_python, checkout, recipe.frameworks,
                                               wanted.package, settings)
            # the retry that made the framework import holds for every later resolution
            kept = FrameworkRetry([], [], "")
            if not ok and lock is not None and resolution is not None:
                for attempt in framework_retries(recipe, reason, lock, day, extras):
                    retried = _retry_framework(env_python, wanted, extras, torch, day,
                                               options, work, recipe, checkout, without,
                                               attempt, swap)
                    if retried is None:
                        continue
                    resolution, repo_installed = retried
                    lock = resolution.lock
                    ok, reason = importcheck.check_env(env_python, checkout,
                                                       recipe.frameworks, wanted.package,
                                                       settings)
                    if ok or not any(f"import {f}:" in reason for f in recipe.frameworks):
                        kept = attempt   # the framework imports now (maybe not the package)
                        break
            tried: list[str] = []
            while not ok and lock is not None and resolution is not None and \
                    len(tried) < MISSING_MODULE_ROUNDS:
                # A module the repository imports but does not declare: its distribution
                # goes into the recipe (reviewable), and the environment resolves again.
                wanted_req = missing_requirement(reason, wanted.package)
                if wanted_req is None or wanted_req in tried or wanted_req in recipe.extras \
                        or requirements.requirement_name(wanted_req) in without:
                    break   # (a companion left out stays out: the reason says why)
                tried.append(wanted_req)
                recipe.extras.append(wanted_req)
                recipes.save(workspace, recipe)
                base["recipe_written"] = True
                extras = list(recipe.extras)
                step(2, f"resolve (+{wanted_req})")
                resolution = uv.resolve(env_python, wanted, [*extras, *kept.add], torch, day,
                                        options, work, overrides=recipe.overrides,
                                        exempt=[*kept.exempt, *swap.exempt], without=without,
                                        said=swap.notes)
                resolution.notes += [n for n in [kept.note] if n]
                resolution.notes.append(f"{wanted_req} added to the recipe's extras: "
                                        f"{reason}")
                lock = "".join(f"# {n}\n" for n in resolution.notes[-1 - bool(kept.note):]) + \
                    resolution.lock
                resolution.lock = lock
                repo_installed = uv.install(env_python, lock, checkout, options,
                                            install_repo=not recipe.build)
                ok, reason = importcheck.check_env(env_python, checkout, recipe.frameworks,
                                                   wanted.package, settings)
            if not ok and resolution is not None and day and wanted.package and \
                    f"import {wanted.package}:" in reason and \
                    (older := commit_day(cache, commit)) is not None and older < day:
                step(2, f"resolve (as of the commit's date, {older})")
                attempt = FrameworkRetry(list(kept.add), list(kept.exempt), (
                    f"{wanted.package} did not import with its dependencies as of {day} "
                    f"({reason}); resolved as of its commit's date, {older} (a dependency "
                    "released since broke it)")[:900])
                retried = _retry_framework(env_python, wanted, extras, torch, older, options,
                                           work, recipe, checkout, without, attempt, swap)
                again, why = False, "it did not resolve or install"
                changed = retried is not None   # the environment holds another lock
                if retried is not None:
                    again, why = importcheck.check_env(
                        env_python, checkout, recipe.frameworks, wanted.package, settings)
                added: list[str] = []
                while retried is not None and not again and \
                        len(added) < MISSING_MODULE_ROUNDS and \
                        (wanted_req := missing_requirement(why, wanted.package)) and \
                        wanted_req not in attempt.add and \
                        requirements.requirement_name(wanted_req) not in without:
                    # a module the older dependencies import but no longer bring
                    # (avalanche's pkg_resources, with torch's undated setuptools 81):
                    # added to this resolution, as the first one's missing modules are
                    added.append(wanted_req)
                    step(2, f"resolve (as of the commit's date, {older}, +{wanted_req})")
                    attempt = FrameworkRetry([*attempt.add, wanted_req], attempt.exempt,
                                             f"{attempt.note}; {wanted_req} added: {why}"
                                             [:900])
                    retried = _retry_framework(env_python, wanted, extras, torch, older,
                                               options, work, recipe, checkout, without,
                                               attempt, swap)
                    if retried is not None:
                        changed = True
                        again, why = importcheck.check_env(
                            env_python, checkout, recipe.frameworks, wanted.package,
                            settings)
                if retried is not None and again:
                    resolution, repo_installed = retried
                    lock, ok, reason = resolution.lock, True, ""
                else:   # the environment as it was, with the first reason and the retry's
                    reason = f"{reason}; as of its commit's date, {older}: {why}"[:1500]
                    if changed:
                        repo_installed = uv.install(env_python, lock, checkout, options,
                                                    install_repo=not recipe.build)
            if tried:   # the recipe changed: the key is that of the recipe as it is now
                decided = recipes.dump(recipes.Recipe(
                    repo=recipe.repo, python=recipe.python, extras=recipe.extras,
                    overrides=recipe.overrides, frameworks=recipe.frameworks,
                    build=recipe.build))
                key = env_key(commit, checkout, version, extras + [decided], torch, day,
                              tests)
            status = "built" if ok else "broken"
            reason = "" if ok else with_why_left_out(reason, without)
        plugin_notes = plugins_checked(workspace, recipe, env_python, target, key,
                                       settings=settings) if status == "built" else []
        step(6, "list")
        packages = uv.installed(env_python, options)
        version_line = identity.check_python(env_python)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    seconds = time.monotonic() - started
    left_out = resolution.left_out if resolution is not None else []
    record = {"repo_id": row["id"], "commit_sha": commit, "key": key, "path": str(target),
              "python": env_python, "python_version": version_line,
              "package": wanted.package, "lock": lock,
              "preload": requirements.preload_modules(wanted.runtime, site_packages(target)),
              "packages": packages, "seconds": round(seconds, 3),
              "built_at": now(), "actor": store.actor, "status": status, "reason": reason,
              "left_out": left_out, "missing": missing}
    repo_envs.save(store, record, replaced=existing is not None)
    (target / FINISHED).write_text(key + "\n", encoding="utf-8")
    identity.set_python(store, str(row["id"]), env_python)
    step(7, "done")
    return EnvReport(python=env_python, python_version=version_line,
                     path=str(target), seconds=seconds, packages=packages, skipped=left_out,
                     package=wanted.package, repo_installed=repo_installed, lock=lock,
                     status=status, reason=reason,
                     notes=[*(resolution.notes if resolution is not None else []),
                            *([built_note] if built_note else []), *plugin_notes], **base)


FINISHED = Path(".curator") / "finished"   # in an environment: the key of its last build
PLUGINS_CHECKED = Path(".curator") / "plugins-checked"   # the key its plugins were checked at


def plugins_checked(workspace: Workspace, recipe: recipes.Recipe, env_python: str,
                    target: str | Path, key: str, settings=None) -> list[str]:
    """The environment's pytest plugins checked (`importcheck.check_plugins`) once per
    build: those that stop pytest from starting go into the recipe's disable_plugins with
    their error, and runs disable them (`-p no:NAME`) instead of every run ending before
    its first test; an earlier check's entry for a plugin that loads now goes. Notes for
    the report (nothing when all load)."""
    marker = Path(target) / PLUGINS_CHECKED
    try:
        if marker.read_text(encoding="utf-8").strip() == key:
            return []
    except OSError:
        pass
    found = importcheck.check_plugins(env_python, settings)
    if found.error and not found.broken and not found.names:
        return [found.error]   # not checked (weak isolation without consent): next time
    if recipes.with_plugin_check(recipe, found.broken):
        recipes.save(workspace, recipe)
    notes = [f"pytest plugin {name} disabled for runs (recipe disable_plugins): {why}"
             for name, why in sorted(found.broken.items())]
    if not found.ok:
        notes.append(f"{found.error}; it does not start with the failing plugins "
                     "disabled either" if found.broken else found.error)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(key + "\n", encoding="utf-8")
    except OSError:
        pass
    return notes


def finished(path: str | Path) -> str | None:
    """The key of the build that last finished in an environment's folder; None when
    none did since the folder was made (a build stopped half way)."""
    try:
        return (Path(path) / FINISHED).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def problem_tests(store: Store, url: str) -> list[str]:
    """The test files the repository's problems run (their folders' requirements files
    are test requirements of its environment)."""
    return sorted({node.split("::", 1)[0] for problem in problem_store.all_problems(store)
                   if (problem.source or {}).get("repo") == url
                   for node in problem.test_node_ids})


MISSING_MODULE_ROUNDS = 3
# Import names whose distribution is named otherwise (or must be older: setuptools 81
# no longer ships pkg_resources, which many repositories still import).
MODULE_DISTRIBUTIONS = {"pkg_resources": "setuptools<81", "yaml": "pyyaml",
                        "cv2": "opencv-python-headless", "sklearn": "scikit-learn",
                        "PIL": "pillow", "skimage": "scikit-image", "attr": "attrs",
                        "google.protobuf": "protobuf", "dateutil": "python-dateutil",
                        "Bio": "biopython", "git": "GitPython", "jwt": "PyJWT"}
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z0-9_.]+)'")
# Fixtures of pytest plugins: a test that asks for one the environment lacks ("fixture
# 'mocker' not found": nncf lists pytest-mock only in tests/torch/requirements.txt)
# needs the plugin.
FIXTURE_PLUGINS = {
    "mocker": "pytest-mock", "class_mocker": "pytest-mock", "module_mocker": "pytest-mock",
    "session_mocker": "pytest-mock", "benchmark": "pytest-benchmark",
    "httpserver": "pytest-httpserver", "requests_mock": "requests-mock",
    "httpx_mock": "pytest-httpx", "datadir": "pytest-datadir",
    "shared_datadir": "pytest-datadir", "subtests": "pytest-subtests",
    "snapshot": "syrupy", "freezer": "pytest-freezer", "fs": "pyfakefs",
    "qtbot": "pytest-qt", "event_loop": "pytest-asyncio", "xprocess": "pytest-xprocess",
    "regtest": "pytest-regtest", "data_regression": "pytest-regressions",
    "num_regression": "pytest-regressions", "file_regression": "pytest-regressions",
    "ndarrays_regression": "pytest-regressions", "image_regression": "pytest-regressions",
    "worker_id": "pytest-xdist", "testrun_uid": "pytest-xdist", "check": "pytest-check",
    "cov": "pytest-cov", "no_cover": "pytest-cov", "lazy_fixture": "pytest-lazy-fixture",
}
_NO_FIXTURE = re.compile(r"fixture '([A-Za-z0-9_]+)' not found")


def with_why_left_out(reason: str, without: dict[str, str]) -> str:
    """An import check's reason, with why the module it misses was left out when it was
    (CompressAI imports torchvision, whose only build here for the pinned CPU torch is a
    CUDA one). `without`: distribution -> why."""
    why = why_left_out(reason, without)
    return f"{reason} ({why})" if why else reason


# What numpy 2 removed, as code written for numpy 1 meets it: a module gone
# (`numpy.lib.function_base`, paramz's import under GPy), an alias gone (`np.float_`),
# an extension compiled against numpy 1. What fixes it is numpy<2.
_NUMPY2_REMOVED = re.compile(
    r"No module named 'numpy\.[A-Za-z0-9_.]+'|removed in the NumPy 2\.0 release|"
    r"compiled using NumPy 1\.x cannot be run in\s+NumPy 2|"
    r"numpy\.core\.multiarray failed to import|_ARRAY_API not found")


def missing_requirement(reason: str, package: str | None = None) -> str | None:
    """The requirement that provides the module an import check missed, or the pytest
    plugin of a fixture a test asked for, if it says so (never the repository's own
    package); numpy<2 for what numpy 2 removed."""
    fixture = _NO_FIXTURE.search(reason or "")
    if fixture and fixture.group(1) in FIXTURE_PLUGINS:
        return FIXTURE_PLUGINS[fixture.group(1)]
    if _NUMPY2_REMOVED.search(reason or ""):
        return "numpy<2"
    found = _NO_MODULE.search(reason or "")
    if not found:
        return None
    module = found.group(1)
    if package and module.split(".")[0] == package:
        return None
    for name in (module, module.split(".")[0]):
        if name in MODULE_DISTRIBUTIONS:
            return MODULE_DISTRIBUTIONS[name]
    top = module.split(".")[0]
    return top.replace("_", "-") if top.isidentifier() else None


_NAME_ERROR = re.compile(r"NameError: name '([A-Za-z_][A-Za-z0-9_]*)' is not defined")
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def guarded_imports(source: str) -> dict[str, str]:
    """Name -> module, for the imports a module makes inside `try:` with an `except` that
    catches ImportError (deepchem's tests: `try: import tensorflow as tf` / `except:
    has_tensorflow = False`): when the module is missing, the name is simply not there."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        catches = any(h.type is None or any(
            isinstance(n, ast.Name) and n.id in _IMPORT_ERRORS for n in ast.walk(h.type))
            for h in node.handlers)
        if not catches:
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    out.setdefault(alias.asname or alias.name.split(".")[0],
                                   alias.name if alias.asname else alias.name.split(".")[0])
            elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                for alias in stmt.names:
                    out.setdefault(alias.asname or alias.name, stmt.module)
    return out


def missing_guarded(reason: str, source: str, package: str | None = None,
                    read_file: Callable[[str], str] | None = None,
                    lock: str = "") -> str | None:
    """The requirement of a module a test module imports under `try` when a test of it
    failed with NameError for the name that import binds (the module is missing). When
    that module is the repository's own (recommenders' tests: `try: from
    recommenders.models.rbm.rbm import RBM` / `except ImportError: pass`, and rbm.py
    imports tensorflow), what failed is an import of its: the first module it, or an own
    module it imports, imports unconditionally that is neither the standard library's
    nor the repository's nor in `lock` (`read_file`: a path in the checkout -> its text,
    "" when there is none)."""
    found = _NAME_ERROR.search(reason or "")
    module = guarded_imports(source).get(found.group(1)) if found else None
    if module is None:
        return None
    if package and module.split(".")[0] == package:
        return None if read_file is None else _missing_of_own(module, package, read_file,
                                                                 lock)
    return missing_requirement(f"ModuleNotFoundError: No module named '{module}'", package)


def _missing_of_own(module: str, package: str, read_file: Callable[[str], str], lock: str,
                    seen: set[str] | None = None) -> str | None:
    seen = set() if seen is None else seen
    if module in seen or len(seen) >= 20:
        return None
    seen.add(module)
    path = module.replace(".", "/")
    source = next((text for text in (read_file(f"{root}{path}{tail}")
                                     for root in ("", "src/")
                                     for tail in (".py", "/__init__.py")) if text), "")
    try:
        body = ast.parse(source).body if source else []
    except (SyntaxError, ValueError, RecursionError):
        return None
    own = []
    for stmt in body:   # the module's own statements: an import under try or if is optional
        if isinstance(stmt, ast.Import):
            names = [a.name for a in stmt.names]
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level:
            names = [stmt.module] if stmt.module else []
        elif isinstance(stmt, ast.ImportFrom):   # from .rbm import RBM: an own module
            parts = module.split(".")[:-stmt.level]
            own += [".".join([*parts, stmt.module] if stmt.module else parts)] if parts else []
            names = []
        else:
            names = []
        for name in names:
            top = name.split(".")[0]
            if top == package:
                own.append(name)
            elif top != "__future__" and top not in sys.stdlib_module_names:
                requirement = missing_requirement(
                    f"ModuleNotFoundError: No module named '{name}'", package)
                if requirement and not locked_satisfies(requirement, lock):
                    return requirement
    parents = [".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)]
    return next((r for r in (_missing_of_own(m, package, read_file, lock, seen)
                             for m in [*own, *parents]) if r), None)


def left_out(lock: str) -> dict[str, str]:
    """Distribution name -> "REQUIREMENT left out: why", for what the lock
    left out (a torch companion built for another torch, a test requirement that does
    not fit), from the lock's header (`# left out REQ: why`, `# NAME left out: why`)."""
    out: dict[str, str] = {}
    for line in (lock or "").splitlines():
        if not line.startswith("# "):
            if line.strip():
                break
            continue
        text = line[2:]
        match = re.match(r"left out (\S+): (.*)", text) or re.match(r"(\S+) left out: (.*)",
                                                                    text)
        name = requirements.requirement_name(match.group(1)) if match else None
        if name:
            out.setdefault(name, f"{match.group(1)} left out: {match.group(2)}")
    return out


def why_left_out(reason: str, left: dict[str, str], package: str | None = None
                 ) -> str | None:
    """Why the module `reason` says was not found is missing, when `left` (distribution
    -> why, as left_out gives) names the distribution that provides it; never for the
    repository's own package."""
    found = _NO_MODULE.search(reason or "")
    if not found or not left:
        return None
    module = found.group(1)
    top = module.split(".")[0]
    if package and top == package:
        return None
    names = {requirements.canonical(n)
             for n in (module, top, MODULE_DISTRIBUTIONS.get(top, "")) if n}
    return next((why for name, why in left.items()
                 if requirements.canonical(name) in names), None)


def left_out_because(store: Store, url: str, reason: str) -> str | None:
    """Why the environment of the repository at `url` lacks the module a run's reason
    says was not found, when its lock left that module's distribution out."""
    record = identity.record_for(store, url) if _NO_MODULE.search(reason or "") else None
    row = repo_envs.get(store, record["id"]) if record is not None else None
    return why_left_out(reason, left_out(row.get("lock") or "")) if row else None


def commit_day(cache, commit: str) -> str | None:
    """The pinned commit's date (YYYY-MM-DD, UTC): the day its dependencies were those its
    authors ran it with (None when git cannot say)."""
    try:
        stamp = run_git(["show", "-s", "--format=%ct", commit], cwd=cache.path).strip()
        return datetime.fromtimestamp(int(stamp), timezone.utc).strftime("%Y-%m-%d")
    except (GitError, ValueError, OSError):
        return None


@dataclass
class FrameworkRetry:
    """One more resolution when a framework does not import: requirements added to the
    core ones (`numpy<2`), packages resolved without the as-of date, and the note the
    lock gets."""
    add: list[str]
    exempt: list[str]
    note: str


def _locked_version(lock: str, name: str) -> str | None:
    found = re.search(rf"(?im)^{re.escape(name)}==([^\s;\\]+)", lock or "")
    return found.group(1) if found else None


def locked_satisfies(requirement: str, lock: str) -> bool:
    """Whether the lock already has what REQUIREMENT asks for (its distribution, and a
    version below the bound when it says `<N`): asking for it again would build the same
    environment (numpy is there when `numpy.lib.function_base` is missing; numpy<2 is
    there when numpy 1 is locked)."""
    name = requirements.requirement_name(requirement)
    version = _locked_version(lock, requirements.canonical(name)) if name else None
    if version is None:
        return False
    spec = requirement[len(name):].strip().replace(" ", "")
    if not spec:
        return True
    bound = re.fullmatch(r"<(\d+)", spec)
    head = version.split(".")[0]
    return bool(bound and head.isdigit() and int(head) < int(bound.group(1)))


def framework_retries(recipe: recipes.Recipe, reason: str, lock: str, day: str | None,
                      extras: list[str]) -> list[FrameworkRetry]:
    """What to try, in order, when a framework of the recipe does not import (`import
    tensorflow: ...` in the reason): with numpy 2 locked, numpy<2 (numpy 2 changed its
    ABI, and framework releases built for numpy 1 often do not say numpy<2: TensorFlow
    2.14's bfloat16 then fails with "() -> handle"); with an as-of date, the framework's
    stack as new as the framework. Nothing when no framework failed."""
    failed = [f for f in recipe.frameworks if f"import {f}" in reason]
    if not failed:
        return []
    names = ", ".join(failed)
    out = []
    numpy = _locked_version(lock, "numpy")
    pinned = any(requirements.requirement_name(e) == "numpy" for e in extras) or \
        "numpy" in recipe.overrides
    if numpy and numpy.split(".")[0].isdigit() and int(numpy.split(".")[0]) >= 2 and \
            not pinned:
        out.append(FrameworkRetry(["numpy<2"], [], (
            f"{names} did not import with numpy {numpy} ({reason}); resolved again with "
            "numpy<2 (built for numpy 1, which its release does not say)")))
    exempt = [name for f in failed for name in FRAMEWORK_STACKS.get(f, ())]
    if day and exempt:
        out.append(FrameworkRetry([], exempt, (
            f"{names} did not import with its stack as of {day} ({reason}); "
            f"{', '.join(exempt)} resolved without the date")))
    return out


def _retry_framework(env_python: str, wanted, extras, torch, day, options, work,
                     recipe: recipes.Recipe, checkout: Path,
                     without: dict[str, str] | None, attempt: FrameworkRetry,
                     swap: Swap | None = None):
    """The environment resolved and installed once more as `attempt` says (said in the
    lock); None when that does not resolve or install (the environment stays as it was:
    uv builds every distribution before it installs any)."""
    swap = swap or Swap([], [])
    try:
        resolution = uv.resolve(env_python, wanted, [*extras, *attempt.add], torch, day,
                                options, work, overrides=recipe.overrides,
                                exempt=[*attempt.exempt, *swap.exempt], without=without,
                                said=swap.notes)
        resolution.notes.append(attempt.note)
        resolution.lock = f"# {attempt.note}\n" + resolution.lock
        installed = uv.install(env_python, resolution.lock, checkout, options,
                               install_repo=not recipe.build)
    except CuratorError:
        return None
    return resolution, installed


@dataclass
class Swap:
    """Another torch taken for its companions: the lock's note, and the packages every
    later resolution resolves undated (that torch's own stack)."""
    notes: list[str]
    exempt: list[str]


def _companion_torch(env_python: str, wanted, extras, torch: str | None, day, options, work,
                     recipe: recipes.Recipe, checkout: Path, broken: dict[str, str],
                     settings, step) -> tuple[uv.Resolution, str, str, Swap] | str | None:
    """Companions that do not import beside the pinned torch, with the torch their newest
    release on the index was built for instead (resolved, installed, checked in the
    sandbox): (resolution, repo_installed, that torch's pin, the swap); why not when the
    environment does not resolve or the companions still do not import with it; None
    when there is no other torch (the caller then leaves them out, which installs the
    lock without them again)."""
    other = uv.companion_torch(env_python, sorted(broken), torch, options, work)
    if other is None:
        return None
    names = ", ".join(f"{n} {v}" for n, v in sorted(other.companions.items()))
    note = (f"{other.pin} instead of {torch}: {'; '.join(broken.values())}; {names} "
            f"import with {other.pin}, the torch the index has for them (a CUDA build "
            "runs on the CPU)")[:900]
    swap = Swap([note], other.stack)
    step(2, f"resolve ({other.pin} for {', '.join(sorted(broken))})")
    try:
        resolution = uv.resolve(env_python, wanted, extras, other.pin, day, options, work,
                                overrides=recipe.overrides, exempt=swap.exempt,
                                said=swap.notes)
        installed = uv.install(env_python, resolution.lock, checkout, options,
                               install_repo=not recipe.build)
    except CuratorError as exc:
        return f"with {other.pin}, the torch the index has for them: {exc}"[:600]
    still = broken_companions(env_python, options, other.pin, settings)
    if still:
        return f"with {other.pin} too: {'; '.join(still.values())}"[:600]
    return resolution, installed, other.pin, swap


def broken_companions(env_python: str, options, torch: str | None, settings=None
                      ) -> dict[str, str]:
    """torch's companions installed in the environment that do not import (in the
    sandbox) next to its torch: name -> why (the build is for another torch)."""
    if not torch:
        return {}
    found = {requirements.canonical(p["name"]): p["version"]
             for p in uv.installed(env_python, options)}
    out = {}
    for name in uv.TORCH_COMPANIONS:
        if name not in found:
            continue
        ok, reason = importcheck.check_module(env_python, name, settings)
        if not ok:
            out[name] = (f"{name} {found[name]} does not import with {torch} ({reason}): "
                         f"its only release for this torch here is a build for another "
                         f"one (CUDA); a test that imports {name} fails with that reason")
    return out


# What a module raises at import when its release was written for an older Python
# (progressbar2 3.34.3: `collections.Iterable`, gone since 3.10): a newer release of it
# can mend that. ModuleNotFoundError is not among them: a module missing is a
# requirement to add (the missing-module rounds), not a pin to relax.
OLD_PYTHON_ERRORS = ("AttributeError", "ImportError", "SyntaxError", "IndentationError",
                     "TabError")
_EXACT_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*"
                        r"([A-Za-z0-9.+!-]+)\s*(?:;.*)?$")


def exact_pins(wanted: requirements.Declared, skip: set[str] | frozenset[str] = frozenset()
               ) -> dict[str, str]:
    """Canonical name -> the declared requirement (runtime or test) that pins it to one
    release (`name==V`, no wildcard), those named in `skip` excepted."""
    out: dict[str, str] = {}
    for item in [*wanted.runtime, *wanted.test]:
        found = _EXACT_PIN.match(item)
        if found:
            name = requirements.canonical(found.group(1))
            if name not in skip:
                out.setdefault(name, item.strip())
    return out


def old_python_error(reason: str) -> bool:
    """Whether an import check's reason (`import M: Error: ...`) is one of
    OLD_PYTHON_ERRORS raised by the module itself: not one raised over a module that was
    not found, nor a system library this machine lacks (cupy's libcuda.so: no release of
    it imports here, and a test that needs it is one for a GPU machine)."""
    found = re.match(r"import [\w.]+: (\w+):", reason or "")
    return bool(found) and found.group(1) in OLD_PYTHON_ERRORS and \
        "(after ModuleNotFoundError" not in reason and \
        "cannot open shared object file" not in reason


def _same_release(a: str, b: str) -> bool:
    from packaging.version import InvalidVersion, Version
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def pins_that_do_not_import(env_python: str, pins: dict[str, str], lock: str,
                            prefix: str | Path, settings=None, exact: bool = True
                            ) -> dict[str, str]:
    """Of `pins` (canonical name -> requirement), those whose installed distribution's
    top-level modules do not import in the environment (in the sandbox, as the other
    import checks) with one of OLD_PYTHON_ERRORS: name -> "NAME VERSION: import M: ...".
    exact: only those the lock holds at the pinned release (a pin relaxed already, or
    left out, is not this one's business)."""
    site = site_packages(Path(prefix))
    modules = requirements.installed_modules(site) if site is not None else {}
    out: dict[str, str] = {}
    for name, requirement in pins.items():
        version = _locked_version(lock, name)
        found = _EXACT_PIN.match(requirement)
        if version is None or not modules.get(name) or \
                (exact and not (found and _same_release(version, found.group(2)))):
            continue
        for module in modules[name]:
            ok, why = importcheck.check_module(env_python, module, settings)
            if not ok and old_python_error(why):
                out[name] = f"{name} {version}: {why}"[:400]
                break
    return out


def _with_relaxed(wanted: requirements.Declared, pins: dict[str, str], torch: str | None,
                  notes: list[str]) -> requirements.Declared:
    """`wanted` with the requirements `pins` names (canonical name -> requirement) relaxed
    to >= their release (also as a constraint), and `notes` added to its notes (the
    lock's header)."""
    def swap(items: list[str]) -> list[str]:
        out = []
        for item in items:
            found = _EXACT_PIN.match(item)
            name = requirements.canonical(found.group(1)) if found else None
            out.append(uv.relax_pins([item], torch)[0] if name in pins else item)
        return out

    return dataclasses.replace(wanted, runtime=swap(wanted.runtime), test=swap(wanted.test),
                               constraints=swap(wanted.constraints),
                               notes=[*wanted.notes, *notes])


def _pins_that_import(env_python: str, wanted: requirements.Declared, extras: list[str],
                      torch: str | None, day: str | None, options, work: Path,
                      recipe: recipes.Recipe, checkout: Path, without: dict[str, str],
                      swap: Swap, lock: str, target: Path, python_version: str, settings,
                      step) -> tuple[requirements.Declared, uv.Resolution, str,
                                     dict[str, str]] | None:
    """Declared exact pins whose release does not import on this Python (neupy's
    progressbar2==3.34.3: `import progressbar` raises AttributeError on 3.11) relaxed to
    >= that release, resolved and installed once more, so the newest release the as-of
    date allows comes in (said in the lock); one whose newest release does not import
    either is left out, named with both reasons (one resolution more). Only exact pins
    of declared requirements (torch, its companions, the recipe's overrides and what is
    left out already excepted); None when every one imports, or when the resolution
    with them relaxed does not resolve or install (the environment is as it was).
    (wanted with the pins relaxed, the resolution, the repository's install result, the
    packages left out) otherwise."""
    skip = {"torch", *uv.TORCH_COMPANIONS, *without,
            *(requirements.canonical(n) for n in recipe.overrides)}
    pins = exact_pins(wanted, skip)
    broken = pins_that_do_not_import(env_python, pins, lock, target, settings)
    if not broken:
        return None
    failing = {name: pins[name] for name in broken}

    def note(name: str) -> str:
        return (f"pin relaxed to >= ({failing[name]}): its release does not import on "
                f"Python {python_version} here ({broken[name]}); the newest release the "
                "as-of date allows instead")

    def attempt(relaxed: dict[str, str], left: dict[str, str]):
        again = _with_relaxed(wanted, relaxed, torch, [note(n) for n in relaxed])
        resolution = uv.resolve(env_python, again, extras, torch, day, options, work,
                                overrides=recipe.overrides, exempt=swap.exempt,
                                without=left, said=swap.notes)
        installed = uv.install(env_python, resolution.lock, checkout, options,
                               install_repo=not recipe.build)
        return again, resolution, installed

    step(2, f"resolve ({', '.join(failing.values())} relaxed: no import here)")
    try:
        again, resolution, installed = attempt(failing, without)
    except CuratorError:
        uv.install(env_python, lock, checkout, options, install_repo=not recipe.build)
        return None
    relaxed_pins = {name: uv.relax_pins([req], torch)[0] for name, req in failing.items()}
    still = pins_that_do_not_import(env_python, relaxed_pins, resolution.lock, target,
                                    settings, exact=False)
    if not still:
        return again, resolution, installed, without
    left = {**without, **{name: (f"{failing[name]} does not import on Python "
                                 f"{python_version} here ({broken[name]}), nor does the "
                                 f"newest release the as-of date allows ({still[name]})")
                          [:600] for name in still}}
    step(2, f"resolve (without {', '.join(still)}, which does not import here)")
    try:
        again, resolution, installed = attempt(
            {n: r for n, r in failing.items() if n not in still}, left)
    except CuratorError:   # the relaxed environment, as it was installed
        uv.install(env_python, resolution.lock, checkout, options,
                   install_repo=not recipe.build)
        return again, resolution, installed, without
    return again, resolution, installed, left


def run_build_steps(env_python: str, checkout: Path, steps: list[str]) -> str:
    """Run the recipe's build steps in the checkout with the environment's python (a
    leading `python` is that interpreter); "" or why one failed."""
    return extbuild.run_steps(env_python, checkout, steps)


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
            options = uv.pip_options()
            try:
                uv.new_venv(target, version, options)
                uv.install(str(python), lock, checkout, options,
                           install_repo=not spec.get("build"))
            except BaseException:
                shutil.rmtree(target, ignore_errors=True)
                raise
            done.write_text(spec["commit"] + "\n", encoding="utf-8")
        if spec.get("build"):   # the compiled extension, once per node and commit
            built = extbuild.ensure(str(python), checkout, list(spec["build"]),
                                    root / "envs" / "builds" / key)
            if built.reason:
                raise CuratorError(f"{spec['url']} at {spec['commit'][:12]}: {built.reason}")
    return str(checkout), str(python)


def portable_spec(store: Store, url: str, commit: str, python: str) -> dict | None:
    """What a cluster node needs to rebuild this repository's checkout and environment:
    None when the interpreter is one a node cannot rebuild (set by hand, no lock)."""
    record = identity.record_for(store, url)
    if record is not None:   # clone from where it was registered (a local folder, a mirror)
        url = record.get("source") or record["url"]
    if python == sys.executable:
        return {"url": url, "commit": commit, "lock": None, "python_version": None}
    row = repo_envs.get(store, record["id"]) if record is not None else None
    if row is None or row["python"] != python or not row["lock"]:
        return None
    version = ".".join(row["python_version"].split(".")[:2])
    spec = {"url": url, "commit": commit, "lock": row["lock"], "python_version": version}
    steps = extbuild.steps_of(row["path"], commit)
    return {**spec, "build": steps} if steps else spec


def list_envs(store: Store) -> list[dict]:
    return repo_envs.list_with_repos(store)


def _env_of(store: Store, url: str | None) -> dict | None:
    """The environment row of the repository registered under `url`, or None."""
    record = identity.record_for(store, url) if url else None
    return repo_envs.get(store, record["id"]) if record is not None else None


def lock_for(store: Store, url: str | None) -> str:
    """The lock of the environment this repository's runs use now ("" when it has none)."""
    return str((_env_of(store, url) or {}).get("lock") or "")


def preload_for(store: Store, url: str | None, python: str) -> list[str]:
    """Modules warm workers of this repository's environment import once: those recorded
    when `repo env` built it, else torch and numpy (a module that is missing is skipped)."""
    row = _env_of(store, url)
    if row is not None and row["python"] == python:
        # An environment recorded before preloads were import names holds distribution
        # names (scikit_learn): they are read again from what it installed.
        return _import_names(tuple(row["preload"]), str(row.get("path") or ""))
    return ["torch", "numpy"]


def site_packages(prefix: Path) -> Path | None:
    """The site-packages folder of the environment at `prefix` (None without one)."""
    found = sorted(Path(prefix).glob("lib/python*/site-packages"))
    return found[0] if found else None


def _import_names(names: tuple[str, ...], prefix: str) -> list[str]:
    site = site_packages(Path(prefix)) if prefix else None
    if site is None:
        return list(names)
    try:
        stamp = site.stat().st_mtime_ns
    except OSError:
        return list(names)
    return list(_import_names_cached(names, str(site), stamp))


@functools.lru_cache(maxsize=32)
def _import_names_cached(names: tuple[str, ...], site: str, stamp: int) -> tuple[str, ...]:
    del stamp   # part of the key: an environment rebuilt in place is read again
    return tuple(requirements.preload_modules(list(names), Path(site)))

