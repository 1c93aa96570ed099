"""Whether a built environment imports the repository's package (and its frameworks).

Importing the package runs the repository's code (mined, nobody here reviewed it), so the
check runs like a run does: in the sandbox (bwrap: no network, everything read-only but a
private /tmp, no capabilities) when isolation is strong. Under weak isolation it runs
unsandboxed only with the consent runs need ([execution] allow_weak); otherwise it is
refused, and says why.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from curator.execution import sandbox, trust


def _argv(python: str, code: str, checkout: Path | None, settings, plugins: bool = False
          ) -> tuple[list[str], dict, str] | str:
    """(argv, env, cwd) for running `python -c code` as an import check, or why it may
    not run here. plugins: pytest loads the environment's plugins (as repository runs
    do)."""
    isolation, why = trust.level(settings)
    if isolation == "weak":
        if not trust.allowed(settings):
            return (f"not checked: isolation is weak ({why}) and the import runs the "
                    "repository's code; install bubblewrap or set [execution] allow_weak "
                    "= true")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        env["PYTHONNOUSERSITE"] = "1"
        for key in ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
            env.pop(key, None)
        return [python, "-c", code], env, str(checkout or "/")
    binds = [(str(checkout), str(checkout))] if checkout is not None else []
    spec = sandbox.SandboxSpec(python=python, ro_binds=binds)
    argv = spec.argv([python, "-c", code])
    # Nothing to switch users for: no capability at all inside (bwrap keeps some for the
    # run workers, which drop to nobody themselves).
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--cap-add":
            skip = True
            continue
        out.append(arg)
    if checkout is not None:
        out[out.index("--chdir") + 1] = str(checkout)
    return out, sandbox.base_env("/tmp", python=python, plugins_autoload=plugins), "/"


def _import(python: str, module: str, checkout: Path | None, settings,
            timeout: float) -> tuple[bool, str]:
    prefix = f"import sys; sys.path.insert(0, {str(checkout)!r}); " if checkout else ""
    how = _argv(python, prefix + f"import {module}", checkout, settings)
    if isinstance(how, str):
        return False, f"import {module}: {how}"
    argv, env, cwd = how
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False, cwd=cwd, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"import {module}: {exc}"
    if done.returncode != 0:
        return False, f"import {module}: {failure_line(done.stderr)}"
    return True, ""


def failure_line(stderr: str) -> str:
    """The last line of a failed import's traceback, and the module not found that caused
    it when the error raised is another one (`except ImportError: raise ImportError("These
    classes require PyTorch")` over deepchem's missing `tqdm`): the missing module is what
    can be installed."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return "failed"
    last = lines[-1][:300]
    causes = [line for line in lines[:-1] if line.startswith("ModuleNotFoundError: ")]
    if causes and not last.startswith("ModuleNotFoundError: "):
        return f"{last} (after {causes[-1][:200]})"
    return last


def check_import(row: dict, settings=None, checkout: Path | None = None) -> tuple[bool, str]:
    """Whether the environment's interpreter imports the repository's package (in the
    sandbox; `settings`: the [execution] table), from `checkout` when given, as runs do
    (a repository built in place by its recipe is not installed in the environment)."""
    package = row.get("package")
    python = row.get("python") or ""
    if not os.path.exists(python):
        return False, f"{python} is missing; rebuild with `curator repo env`"
    if not package:
        return False, "no importable package found in the repository"
    ok, reason = _import(python, package, checkout, settings, 300)
    return (True, f"imports {package}") if ok else (False, reason)


def check_env(python: str, checkout: Path, frameworks: list[str], package: str | None,
              settings=None) -> tuple[bool, str]:
    """Whether a new environment imports its frameworks, then the repository's package
    (from the checkout, as runs do), in the sandbox: (True, "") or (False, the failing
    import and its error's last line)."""
    modules = [*frameworks, *([package] if package else [])]
    for module in dict.fromkeys(modules):
        ok, reason = _import(python, module, checkout, settings, 600)
        if not ok:
            return False, reason
    return True, ""


def check_module(python: str, module: str, settings=None) -> tuple[bool, str]:
    """Whether the environment imports an installed module (no checkout on its path)."""
    return _import(python, module, None, settings, 600)


# Run in the environment's interpreter (in the sandbox): pytest on an empty folder with
# every plugin the environment brings (its pytest11 entry points), as a repository run
# starts; when that does not start, each plugin alone (the others disabled), each in a
# forked child. Prints {"names", "status", "error", "broken": {name: error}, "after"}.
_PLUGIN_PROBE = r"""
import json, os, sys, tempfile
from importlib import metadata
names = sorted({ep.name for ep in metadata.entry_points(group="pytest11")})
folder = tempfile.mkdtemp()
with open(os.path.join(folder, "pytest.ini"), "w") as fh:
    fh.write("[pytest]\n")
base = ["-q", "-p", "no:cacheprovider", "--rootdir", folder, "-c",
        os.path.join(folder, "pytest.ini"), folder]
def run(off):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 1)
        os.dup2(w, 2)
        os.chdir(folder)
        try:
            import pytest
            code = int(pytest.main(base + [a for n in off for a in ("-p", "no:" + n)]))
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 99
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code if 0 <= code < 256 else 99)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    status = os.waitpid(pid, 0)[1]
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
    return code, b"".join(chunks)[-20000:].decode("utf-8", "replace")
code, text = run([])
out = {"names": names, "status": code, "error": "" if code in (0, 5) else text,
       "broken": {}, "after": code}
if code not in (0, 5):
    for name in names:
        alone, why = run([n for n in names if n != name])
        if alone not in (0, 5):
            out["broken"][name] = why
    if out["broken"]:
        out["after"] = run(sorted(out["broken"]))[0]
print("\n" + json.dumps(out))
"""


@dataclass
class PluginCheck:
    """What `check_plugins` found: the environment's pytest plugins (entry point names),
    those that stop pytest from starting, each with the last line of its error, and
    whether pytest starts with those disabled (`ok`)."""

    names: list[str] = field(default_factory=list)
    broken: dict[str, str] = field(default_factory=dict)
    ok: bool = True
    error: str = ""


def check_plugins(python: str, settings=None, timeout: float = 600) -> PluginCheck:
    """Whether pytest starts in the environment with the pytest plugins it brings (a
    plugin of a requirement's old pin may not load with the harness's pytest: pytest-mpl
    0.10 under pytest 9 stopped every run of neupy before any test), and which plugins
    stop it, each found alone: runs disable those (`-p no:NAME`). In the sandbox, as
    imports are checked (a plugin is the environment's code). A check that could not
    run says so in `error` and disables nothing."""
    how = _argv(python, _PLUGIN_PROBE, None, settings, plugins=True)
    if isinstance(how, str):
        return PluginCheck(ok=False, error=f"plugins: {how}")
    argv, env, cwd = how
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False, cwd=cwd, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return PluginCheck(ok=False, error=f"plugins: {exc}")
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1])
        names = [str(n) for n in found["names"]]
        broken = {str(k): failure_line(str(v)) for k, v in found["broken"].items()}
        status, after = int(found["status"]), int(found["after"])
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return PluginCheck(ok=False, error=f"plugins: the check failed: "
                                           f"{failure_line(done.stderr)}")
    if status in (0, 5):
        return PluginCheck(names=names)
    error = failure_line(str(found.get("error") or ""))
    return PluginCheck(names=names, broken=broken, ok=after in (0, 5),
                       error=f"pytest does not start with the environment's plugins "
                             f"(status {status}): {error}")
