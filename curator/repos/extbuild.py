"""Compiled extensions of a repository: built once per commit, cached, found by every run.

A repository whose recipe has `build` steps (a setup.py with a C++ extension: pytorch3d,
CompressAI) is compiled by those steps in its pinned checkout, in place, with the
environment's python, so against the environment's pinned CPU torch: runs import the
repository from the checkout, so the extension must be there, not in site-packages.

What a build wrote into the checkout (the extension modules, generated version files) is
copied to a cache folder beside the environments (db/envs/builds/), keyed by what the
compiled code depends on at run time: the commit, the Python version, the pinned torch,
the build steps and numpy's major version (see `build_keys`). So:
- an environment built again for another reason (an extra, an override) gets the same
  build back without compiling;
- a checkout written anew (a run's checkout is laid from git objects) gets the built
  files back before a run (`restore_for_run`);
- splicing a Python function into a run never touches it.
The setuptools scratch folder (a new top-level `build/`, object files) is removed from
the checkout: runs that copy the checkout would copy it each time.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

BUILD_TIMEOUT_S = 3 * 3600   # pytorch3d: ~40 C++ files against torch's headers, 2 cores
MANIFEST = "manifest.json"
RECORD = "build.json"   # in the environment's .curator/: which build it uses
_SCRATCH = {"__pycache__"}


@dataclass
class Built:
    """The outcome of `ensure`: the cache folder, the files it holds (relative to the
    checkout), whether they came from the cache, and why the build failed ("" if not)."""
    folder: Path
    files: list[str] = field(default_factory=list)
    reused: bool = False
    reason: str = ""
    seconds: float = 0.0
    steps: list[str] = field(default_factory=list)


def build_keys(commit: str, python_version: str, torch: str | None, steps: list[str],
               lock: str) -> list[str]:
    """The cache keys a build may be found under, the first its own: what the compiled
    code depends on at run time (commit, Python, torch, steps, numpy's major version: its
    C ABI). A build made without numpy does not use it, so it stays good when numpy is
    added later (pytorch3d declares none; its tests need it): the second key."""
    def key(numpy: str) -> str:
        digest = hashlib.sha256()
        for part in (commit, python_version, torch or "", *steps, f"numpy={numpy}"):
            digest.update(part.encode() + b"\0")
        return digest.hexdigest()

    found = re.search(r"(?im)^numpy==(\d+)", lock or "")
    return [key(found.group(1)), key("")] if found else [key("")]


def cache_folder(envs: Path, cache_key: str, key: str) -> Path:
    return envs / "builds" / f"{cache_key}-{key[:16]}"


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" and d not in _SCRATCH]
        for name in files:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            out[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns)
    return out


def _complete(folder: Path) -> list[str] | None:
    """The files of a finished build in `folder`, or None when there is none."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list) or not all((folder / "files" / f).is_file()
                                              for f in files):
        return None
    return [str(f) for f in files]


def restore(folder: Path, checkout: Path, files: list[str]) -> list[str]:
    """Copy the cached build's files that the checkout lacks (or holds otherwise) into
    it; the paths written."""
    written = []
    for rel in files:
        source = folder / "files" / rel
        target = checkout / rel
        try:
            if target.is_file() and target.stat().st_size == source.stat().st_size:
                continue
        except OSError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.curator-tmp")
        shutil.copy2(source, tmp)
        os.replace(tmp, target)
        written.append(rel)
    return written


_DEBUG_FLAG = re.compile(r"(?:^|\s)-g\S*")


def build_env(env_python: str) -> dict[str, str]:
    """The build steps' environment: the environment's bin first on PATH, no variables of
    another interpreter, at most one compile job per core (MAX_JOBS, unless set), and no
    debug information (`-g0` after Python's own `-g`, unless the flags set one). The code
    compiled is the same; what is not written is the debug information: pytorch3d's CPU
    objects were 16 MB each with it, 0.3 MB without, and each compiled in two thirds of
    the time. It goes in CPPFLAGS, which setuptools appends to the compiler's flags (its
    CFLAGS replaces Python's, -O3 with them)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = str(Path(env_python).parent) + os.pathsep + env.get("PATH", "")
    env["VIRTUAL_ENV"] = str(Path(env_python).parents[1])
    env.setdefault("MAX_JOBS", str(os.cpu_count() or 1))
    if not any(_DEBUG_FLAG.search(env.get(name, ""))
               for name in ("CPPFLAGS", "CFLAGS", "CXXFLAGS")):
        env["CPPFLAGS"] = f"{env.get('CPPFLAGS', '')} -g0".strip()
    return env


def failure_line(output: str, returncode: int) -> str:
    """The line that says why a build failed: the compiler's first `error:` line (the
    last lines of a failed setup.py only say that a command failed), else the last."""
    lines = [x.strip() for x in output.splitlines() if x.strip()]
    compiler = [x for x in lines if re.search(r":\d+(:\d+)?: (fatal )?error:", x)]
    if compiler:
        return compiler[0]
    errors = [x for x in lines if "error" in x.lower() and "failed with exit" not in x]
    if errors:
        return errors[-1]
    return lines[-1] if lines else f"exit code {returncode}"


def _run_group(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """(exit code, stdout and stderr) of a build command in its own process group, which
    is stopped whole when it times out or the caller stops: SIGTERM first, on which ninja
    ends the compilers it started (each in a process group of its own), then SIGKILL. A
    compiler must not go on compiling for nobody."""
    with subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                          errors="replace", start_new_session=True) as process:
        try:
            output, _ = process.communicate(timeout=BUILD_TIMEOUT_S)
        except BaseException:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(process.pid, sig)
                    process.wait(timeout=10)
                    break
                except (OSError, subprocess.TimeoutExpired):
                    continue
            raise
        return process.returncode, output or ""


def run_steps(env_python: str, checkout: Path, steps: list[str], log: Path | None = None
              ) -> str:
    """Run the build steps in the checkout with the environment's python (a leading
    `python` is that interpreter); "" or why one failed (its output goes to `log`)."""
    env = build_env(env_python)
    for line in steps:
        try:
            args = shlex.split(line)
        except ValueError as exc:
            return f"build step {line!r}: {exc}"
        if args and args[0] in ("python", "python3"):
            args[0] = env_python
        try:
            returncode, output = _run_group(args, checkout, env)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"build step {line!r}: {exc}"
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"$ {line}\n{output}\n")
        if returncode != 0:
            where = f" (log: {log})" if log is not None else ""
            return (f"build step {line!r} failed: "
                    f"{failure_line(output, returncode)[:400]}{where}")
    return ""


def ensure(env_python: str, checkout: Path, steps: list[str], folder: Path,
           also: list[Path] | tuple[Path, ...] = ()) -> Built:
    """The build of `checkout` in `folder` (or in one of `also`, builds as good):
    restored from it when it is there, else made by running `steps` in the checkout and
    kept in `folder` (one build at a time per folder)."""
    started = time.monotonic()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        for place in (folder, *also):
            files = _complete(place)
            if files is not None:
                restore(place, checkout, files)
                return Built(place, files, reused=True,
                             seconds=time.monotonic() - started, steps=steps)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        before = _snapshot(checkout)
        scratch = [] if (checkout / "build").exists() else [checkout / "build"]
        reason = run_steps(env_python, checkout, steps, folder / "build.log")
        for path in scratch:
            shutil.rmtree(path, ignore_errors=True)
        if reason:
            return Built(folder, reason=reason, seconds=time.monotonic() - started)
        after = _snapshot(checkout)
        files = sorted(rel for rel, stat in after.items() if before.get(rel) != stat
                       and not rel.endswith((".pyc", ".o")))
        for rel in files:
            target = folder / "files" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(checkout / rel, target)
        (folder / MANIFEST).write_text(json.dumps({"files": files, "steps": steps},
                                                  indent=1) + "\n", encoding="utf-8")
        return Built(folder, files, seconds=time.monotonic() - started, steps=steps)


def record(env_dir: Path, commit: str, built: Built) -> None:
    """Say in the environment which build it uses (read by `restore_for_run`)."""
    (env_dir / ".curator").mkdir(parents=True, exist_ok=True)
    (env_dir / ".curator" / RECORD).write_text(json.dumps(
        {"commit": commit, "folder": str(built.folder), "files": built.files,
         "steps": built.steps},
        indent=1) + "\n", encoding="utf-8")


def _record_of(env_dir: str | Path | None, commit: str) -> dict | None:
    if not env_dir:
        return None
    try:
        data = json.loads((Path(env_dir) / ".curator" / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("commit") == commit else None


def steps_of(env_dir: str | Path | None, commit: str) -> list[str]:
    """The build steps of the environment's build of `commit` (none without one): what a
    cluster node runs to build it for itself."""
    data = _record_of(env_dir, commit)
    steps = (data or {}).get("steps")
    return [str(s) for s in steps] if isinstance(steps, list) else []


def restore_for_run(env_dir: str | Path | None, commit: str, checkout: Path) -> list[str]:
    """Before a run in `checkout` (of `commit`): the built files of the environment's
    build put back where the checkout lacks them (a checkout written anew); the paths
    written. Nothing for an environment without a build, or one of another commit."""
    data = _record_of(env_dir, commit)
    if data is None:
        return []
    folder = Path(str(data.get("folder") or ""))
    files = _complete(folder)
    if not files:
        return []
    missing = [f for f in files if not (checkout / f).is_file()]
    return restore(folder, checkout, missing) if missing else []
