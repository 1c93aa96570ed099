"""A local package index for environment builds: pip configured as on this machine (its
local indexes and find-links) plus a folder of wheels the test builds, with uv offline,
so `repo env` resolves without the network. Used by the CLI's and the app's tests.

    from index_support import *  # noqa: F403  (fixtures: offline_index)
    from index_support import wheel
"""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile
from pathlib import Path

import pytest

from curator.repos import uv

__all__ = ["offline_index"]   # the fixtures


def wheel(folder: Path, name: str, version: str, files: dict[str, str],
          requires: list[str] = ()) -> Path:
    """A minimal pure-Python wheel, built by hand."""
    dist = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires)
    entries = {**files, f"{dist}/METADATA": meta,
               f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                "Tag: py3-none-any\n"}
    record = []
    for path, text in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest())
        record.append(f"{path},sha256={digest.rstrip(b'=').decode()},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    entries[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    target = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w") as archive:
        for path, text in entries.items():
            archive.writestr(path, text)
    return target


@pytest.fixture
def offline_index(tmp_path, monkeypatch):
    """pip configured as on this machine (its local indexes and find-links) plus a folder
    of wheels this test builds; uv offline, so nothing reaches the network."""
    machine = uv.pip_options()
    local = [u for u in [machine.index_url, *machine.extra_index_urls] if u and
             u.startswith("file:")]
    if not (machine.find_links and local):
        if os.environ.get("CI"):
            pytest.fail("pip has no local index or find-links configured on this machine")
        pytest.skip("pip has no local index or find-links configured here")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel(wheels, "tinyunits", "1.2.0", {"tinyunits/__init__.py": "CM_PER_INCH = 2.54\n"})
    wheel(wheels, "tinycheck", "0.3.0",
          {"tinycheck/__init__.py": "def close(a, b):\n    return abs(a - b) < 1e-9\n"})
    config = tmp_path / "pip.conf"
    config.write_text("[global]\nindex-url = " + local[0] + "\n" +
                      ("extra-index-url = " + " ".join(local[1:]) + "\n" if local[1:] else "") +
                      "find-links = " + " ".join([*machine.find_links, str(wheels)]) + "\n" +
                      "".join(f"constraint = {c}\n" for c in machine.constraints[:1]))
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    for name in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("UV_OFFLINE", "1")
    return wheels
