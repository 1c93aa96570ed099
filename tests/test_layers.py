"""The import contracts of docs/ARCHITECTURE.md#layers cover every part of curator.

`make lint` checks the contracts themselves (import-linter); this test makes sure a new
top-level module or package cannot slip past them by not being listed.
"""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["importlinter"]["contracts"]


def _top_level_modules() -> set[str]:
    names = set()
    for path in (ROOT / "curator").iterdir():
        if path.name.startswith("_") or path.name == "data":
            continue
        if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()):
            names.add(f"curator.{path.stem}")
    return names


def test_every_top_level_module_has_a_layer():
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    listed = {name.strip() for layer in layers for name in layer.replace(":", "|").split("|")}
    assert _top_level_modules() - listed == set()
    assert listed - _top_level_modules() == set()


def test_the_core_may_not_import_textual():
    core = next(c for c in _contracts() if c["type"] == "forbidden"
                and "textual" in c["forbidden_modules"] and "curator.store" in c["source_modules"])
    assert set(core["source_modules"]) == _top_level_modules() - {"curator.cli", "curator.tui"}
