"""Bytecode shared between environments: a file of the same content is compiled once
and linked into the next environment; a file of other content gets its own; a source
changed after linking is never read from stale bytecode."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from curator.repos import bytecode, uv


def _env(root: Path, files: dict[str, str]) -> tuple[str, Path]:
    python = uv.new_venv(root, "3.11", uv.IndexOptions())
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    for name, text in files.items():
        (site / name).write_text(text, encoding="utf-8")
    return python, site


def _value(python: str, module: str) -> str:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([python, "-c", f"import {module}; print({module}.VALUE)"],
                          capture_output=True, text=True, check=True, env=env).stdout.strip()


def _pyc(site: Path, module: str) -> Path:
    return next((site / "__pycache__").glob(f"{module}.*.pyc"))


def test_the_same_file_is_compiled_once_and_linked_into_the_next_environment(tmp_path):
    store = tmp_path / "store"
    same = "VALUE = 'shared'\n"
    first, first_site = _env(tmp_path / "a", {"shared_mod.py": same,
                                             "own_mod.py": "VALUE = 'first'\n"})
    second, second_site = _env(tmp_path / "b", {"shared_mod.py": same,
                                               "own_mod.py": "VALUE = 'second'\n"})

    made = bytecode.share(first, store)
    assert made["compiled"] >= 2 and made["linked"] == made["failed"] == 0, made
    again = bytecode.share(second, store)
    # what the two environments share (the venv's own files, shared_mod) is linked; only
    # the module of other content is compiled
    assert again == {"linked": made["compiled"] - 1, "compiled": 1, "failed": 0}, again

    shared_first, shared_second = _pyc(first_site, "shared_mod"), _pyc(second_site,
                                                                      "shared_mod")
    assert shared_first.stat().st_ino == shared_second.stat().st_ino   # one file, linked
    assert _pyc(first_site, "own_mod").stat().st_ino != \
        _pyc(second_site, "own_mod").stat().st_ino
    # checked-hash pycs (PEP 552 flags = 0b11): valid by content, checked on import
    assert int.from_bytes(shared_second.read_bytes()[4:8], "little") == 0b11
    assert _value(first, "own_mod") == "first" and _value(second, "own_mod") == "second"
    assert _value(second, "shared_mod") == "shared"

    # a source changed after its bytecode was linked is compiled again, not read stale
    (second_site / "shared_mod.py").write_text("VALUE = 'edited'\n", encoding="utf-8")
    assert _value(second, "shared_mod") == "edited"
    assert _value(first, "shared_mod") == "shared"


def test_an_environment_without_a_store_entry_still_gets_bytecode(tmp_path):
    python, site = _env(tmp_path / "env", {"lonely_mod.py": "VALUE = 1\n",
                                          "broken_mod.py": "def (:\n"})
    counts = bytecode.share(python, tmp_path / "store")
    assert counts["failed"] >= 1   # the file that does not compile is left to its imports
    assert _pyc(site, "lonely_mod").is_file()
    assert not list((site / "__pycache__").glob("broken_mod.*.pyc"))


def test_a_store_that_cannot_be_written_still_leaves_the_environment_compiled(tmp_path):
    python, site = _env(tmp_path / "env", {"plain_mod.py": "VALUE = 2\n"})
    store = tmp_path / "store"
    store.write_text("a file where the store's folder would be", encoding="utf-8")
    counts = bytecode.share(python, store)
    assert counts["compiled"] >= 1 and counts["linked"] == 0, counts
    assert _pyc(site, "plain_mod").is_file()
