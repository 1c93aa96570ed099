"""Compiled bytecode shared between environments: each source file is compiled once per
interpreter and content, then linked into every environment that installs the same file.

`uv pip sync --compile-bytecode` compiled every module of torch and its companions again
for each new environment (tens of seconds of CPU each, minutes on a loaded machine),
although most environments install the very same files. Here the `.pyc` files are
*checked-hash* pycs (PEP 552): valid for a source of that content wherever it lies, and
checked against the source's hash on import, so a file changed later is compiled again
rather than read stale. The store is content-addressed (`<cache tag>/<sha256>.pyc`) in the
user's cache, like uv's own; a file missing from it is compiled by the environment's own
interpreter and added. Environments link, never write, what the store holds: the
strong sandbox mounts an environment read-only and weak runs drop to another uid where
they can (a weak run that keeps the owner's uid could change the environment's files, and
with them the store's, as it could change the environment itself).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

COMPILE_TIMEOUT_S = 1800

_PATHS = ("import json, sys, sysconfig; p = sysconfig.get_paths(); "
          "print(json.dumps([sys.implementation.cache_tag, p['purelib'], p['platlib']]))")
# Run by the environment's interpreter: compile the (source, pyc) pairs read from stdin.
_COMPILE = ("import json, py_compile, sys\n"
            "for src, dst in json.load(sys.stdin):\n"
            "    try:\n"
            "        py_compile.compile(src, cfile=dst, doraise=True, invalidation_mode="
            "py_compile.PycInvalidationMode.CHECKED_HASH)\n"
            "    except Exception:\n"
            "        pass\n")


def store_folder() -> Path:
    """The shared store: $CURATOR_BYTECODE_CACHE, else the user's cache folder."""
    explicit = os.environ.get("CURATOR_BYTECODE_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "curator" / "bytecode"


def _sources(folders: list[Path]):
    seen = set()
    for folder in folders:
        if folder in seen or not folder.is_dir():
            continue
        seen.add(folder)
        for root, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                if name.endswith(".py"):
                    yield Path(root) / name


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _place(source: Path, target: Path) -> bool:
    """Link (else copy) `source` to `target` atomically; whether it is there (a store or
    folder that cannot be written is only a missed share: the file is compiled instead)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError:
        return False
    try:
        try:
            os.link(source, tmp)
        except OSError:
            import shutil
            shutil.copyfile(source, tmp)
        os.replace(tmp, target)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def share(env_python: str, store: Path | None = None) -> dict:
    """Give every module of the environment's site-packages its compiled bytecode: linked
    from the store when a file of the same content was compiled before, else compiled
    by the environment's interpreter and added to the store. Counts, for the log."""
    store = Path(store or store_folder())
    found = subprocess.run([env_python, "-c", _PATHS], capture_output=True, text=True,
                           timeout=120, check=True, stdin=subprocess.DEVNULL)
    tag, purelib, platlib = json.loads(found.stdout)
    shelf = store / tag
    linked, missing = 0, []
    for source in _sources([Path(purelib), Path(platlib)]):
        digest = _digest(source)
        if digest is None:
            continue
        pyc = source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
        kept = shelf / digest[:2] / f"{digest}.pyc"
        if kept.is_file() and _place(kept, pyc):
            linked += 1
        else:
            missing.append((source, pyc, kept))
    if missing:
        _compile(env_python, [(str(s), str(p)) for s, p, _ in missing])
    compiled = 0
    for _, pyc, kept in missing:
        if pyc.is_file():
            compiled += 1
            if not kept.is_file():
                _place(pyc, kept)
    return {"linked": linked, "compiled": compiled, "failed": len(missing) - compiled}


def _compile(env_python: str, pairs: list[tuple[str, str]]) -> None:
    """Compile in two processes of the environment's interpreter (half the files each)."""
    halves = [pairs[0::2], pairs[1::2]]
    procs = [subprocess.Popen([env_python, "-c", _COMPILE], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              text=True) for half in halves if half]
    for proc, half in zip(procs, [h for h in halves if h]):
        try:
            proc.stdin.write(json.dumps(half))
            proc.stdin.close()
        except OSError:
            pass
    for proc in procs:
        try:
            proc.wait(timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
