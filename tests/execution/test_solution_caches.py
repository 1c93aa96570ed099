"""The solution process keeps its caches in its own folder; numba functions decorated at
the worker's preload keep the worker's cache folder (umap, pynndescent), which the judge,
under another uid, may have made first: their compiled code is not saved there."""

from __future__ import annotations

import sys
import types

from curator.execution.worker import _own_caches


def test_caches_of_the_solution_process(tmp_path, monkeypatch):
    class Cache:
        def save_overload(self, sig, data):
            raise PermissionError(13, "Permission denied", "/tmp/.cache/numba/x")

    caching = types.ModuleType("numba.core.caching")
    caching.Cache = Cache
    numba = types.ModuleType("numba")
    numba.config = types.SimpleNamespace(CACHE_DIR="")
    monkeypatch.setitem(sys.modules, "numba", numba)
    monkeypatch.setitem(sys.modules, "numba.core.caching", caching)
    env = {}
    _own_caches(env, tmp_path)
    assert env["XDG_CACHE_HOME"] == str(tmp_path / ".cache")
    assert env["NUMBA_CACHE_DIR"] == str(tmp_path / ".cache" / "numba")
    assert numba.config.CACHE_DIR == env["NUMBA_CACHE_DIR"]
    Cache().save_overload("sig", b"code")   # skipped, not raised
    _own_caches({}, tmp_path)               # once is enough: not wrapped twice
    assert Cache.save_overload.__curator_tolerant__
