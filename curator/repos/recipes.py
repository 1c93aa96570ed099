"""Per-repository recipes: `repos/OWNER__NAME.toml` in the workspace, reviewable in git.

Whatever a maintainer decides for one repository's environment lives there: the Python
version, more requirements (`extras`), `overrides` (a declared requirement replaced, or
left out with ""), the frameworks the environment must import before it counts as built,
`build` steps for compiled extensions (run in the checkout with the environment's
Python), upstream tests excluded with their cause, and the environment's pytest plugins
its runs disable (`-p no:NAME`) with why (one that stops pytest from starting, found when
the environment is built or first reused: `importcheck.check_plugins`). `curator repo env` writes a first
version when there is none and reads it on every build; `curator dlbench rebuild` adds
the tests its triage excluded, and the modules the tests that call a problem's function
skipped without (`extras`, why in `[extras_why]`; one that does not fit the environment
in `[not_added]`, with why). The next person rebuilds the same environment from the
file and the lock.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from curator.errors import CuratorError
from curator.workspace import Workspace

FRAMEWORKS = ("torch", "tensorflow", "jax")


@dataclass
class Recipe:
    repo: str
    python: str | None = None
    extras: list[str] = field(default_factory=list)
    overrides: dict[str, str] = field(default_factory=dict)
    frameworks: list[str] = field(default_factory=list)
    build: list[str] = field(default_factory=list)
    exclude: dict[str, str] = field(default_factory=dict)   # node id -> "cause: why"
    # pytest plugin (its pytest11 entry point name) -> why runs disable it
    disable_plugins: dict[str, str] = field(default_factory=dict)
    # an extra added for the tests that call a problem's function -> why (they skipped
    # without its module); one that did not fit the environment -> why, and why not
    # (never asked for again while it is listed: delete the line to have it tried again)
    extras_why: dict[str, str] = field(default_factory=dict)
    not_added: dict[str, str] = field(default_factory=dict)
    path: Path | None = None


def file_name(url: str) -> str:
    """OWNER__NAME.toml for a hosted repository, NAME.toml for a local folder."""
    text = re.sub(r"(\.git)?/*$", "", url.strip())
    parts = [p for p in re.split(r"[/:]", text) if p]
    stem = "__".join(parts[-2:]) if "://" in url or "@" in url else (parts[-1] if parts else "repo")
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem) + ".toml"


def recipe_path(workspace: Workspace, url: str) -> Path:
    return workspace.root / "repos" / file_name(url)


def load(workspace: Workspace, url: str) -> Recipe | None:
    path = recipe_path(workspace, url)
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CuratorError(f"{path}: not valid TOML ({exc}); fix it or delete it to have "
                           "`curator repo env` write a new one") from None

    def strings(key: str) -> list[str]:
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise CuratorError(f"{path}: {key} must be a list of strings")
        return list(value)

    def table(key: str) -> dict[str, str]:
        value = data.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise CuratorError(f"{path}: [{key}] must map names to strings")
        return dict(value)

    python = data.get("python")
    if python is not None and not (isinstance(python, str) and
                                   re.fullmatch(r"\d+\.\d+(\.\d+)?", python)):
        raise CuratorError(f"{path}: python must be a version such as \"3.11\"")
    frameworks = strings("frameworks")
    unknown = [f for f in frameworks if f not in FRAMEWORKS]
    if unknown:
        raise CuratorError(f"{path}: frameworks: {unknown[0]!r} is not one of "
                           f"{', '.join(FRAMEWORKS)}")
    return Recipe(repo=str(data.get("repo") or url), python=python, extras=strings("extras"),
                  overrides=table("overrides"), frameworks=frameworks,
                  build=strings("build"), exclude=table("exclude"),
                  disable_plugins=table("disable_plugins"), extras_why=table("extras_why"),
                  not_added=table("not_added"), path=path)


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def dump(recipe: Recipe) -> str:
    lines = [f"# How `curator repo env` builds the environment of {recipe.repo}.",
             "# Written by the curator; edit it and commit it: every build reads it.",
             f"repo = {_q(recipe.repo)}",
             f"python = {_q(recipe.python)}" if recipe.python else
             "# python = \"3.11\"        # default: the curator's own",
             "# More requirements to install.",
             f"extras = [{', '.join(_q(e) for e in recipe.extras)}]",
             "# Imported (with the repository's package) before the environment counts as built.",
             f"frameworks = [{', '.join(_q(f) for f in recipe.frameworks)}]",
             "# Run in the checkout with the environment's python once per commit (compiled",
             "# extensions, against the pinned CPU torch).",
             f"build = [{', '.join(_q(b) for b in recipe.build)}]",
             "",
             "# A declared requirement -> what to install instead (\"\" leaves it out).",
             "[overrides]"]
    lines += [f"{_q(k)} = {_q(v)}" for k, v in sorted(recipe.overrides.items())]
    lines += ["", "# Upstream tests left out of this repository's problems: \"cause: why\"",
              "# (needs_gpu, needs_network, flaky, fails_upstream).", "[exclude]"]
    lines += [f"{_q(k)} = {_q(v)}" for k, v in sorted(recipe.exclude.items())]
    if recipe.disable_plugins:   # (absent otherwise: a recipe's text is in its env's key)
        lines += ["", "# pytest plugins of the environment its runs disable (-p no:NAME): "
                  "why.", "[disable_plugins]"]
        lines += [f"{_q(k)} = {_q(v)}" for k, v in sorted(recipe.disable_plugins.items())]
    if recipe.extras_why:
        lines += ["", "# Why an extra was added: the tests that call a problem's function "
                  "skipped without it.", "[extras_why]"]
        lines += [f"{_q(k)} = {_q(v)}" for k, v in sorted(recipe.extras_why.items())]
    if recipe.not_added:
        lines += ["", "# Wanted by such tests but not added (it does not fit the "
                  "environment): why. Delete a line to have it tried again.", "[not_added]"]
        lines += [f"{_q(k)} = {_q(v)}" for k, v in sorted(recipe.not_added.items())]
    return "\n".join(lines) + "\n"


# The reason a plugin the environment check found stopping pytest is recorded with; such
# an entry goes when a later check finds the plugin loads (a maintainer's stays).
PLUGIN_STOPS = "stops pytest from starting here: "


def with_plugin_check(recipe: Recipe, broken: dict[str, str]) -> bool:
    """The recipe's disabled plugins after an environment check that found `broken`
    (name -> error): those added, an earlier check's that load now dropped. Whether it
    changed."""
    before = dict(recipe.disable_plugins)
    kept = {k: v for k, v in recipe.disable_plugins.items()
            if not v.startswith(PLUGIN_STOPS) or k in broken}
    kept.update({name: PLUGIN_STOPS + why for name, why in broken.items()
                 if name not in kept or kept[name].startswith(PLUGIN_STOPS)})
    recipe.disable_plugins = kept
    return kept != before


def save(workspace: Workspace, recipe: Recipe) -> Path:
    path = recipe.path or recipe_path(workspace, recipe.repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dump(recipe), encoding="utf-8")
    tmp.replace(path)
    recipe.path = path
    return path


def detect_frameworks(names: list[str], package: str | None) -> list[str]:
    """The frameworks a repository uses, from its declared requirement names."""
    found = []
    for name in names:
        if name in ("torch", "pytorch") or name in ("torchvision", "torchaudio"):
            found.append("torch")
        elif name.startswith("tensorflow") or name in ("tf-nightly", "keras"):
            found.append("tensorflow")
        elif name in ("jax", "jaxlib", "flax"):
            found.append("jax")
    if package in FRAMEWORKS:
        found = [f for f in found if f != package]
    return list(dict.fromkeys(found))


_SETUP_IMPORT = re.compile(r"^\s*(?:import|from)\s+(torch|tensorflow|jax)\b", re.M)


def setup_frameworks(root: Path) -> list[str]:
    """The frameworks a repository's setup.py imports (pytorch3d builds its extension
    with torch.utils.cpp_extension and declares no torch requirement)."""
    try:
        text = (root / "setup.py").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return list(dict.fromkeys(_SETUP_IMPORT.findall(text)))


EXTENSION_MARKS = ("CppExtension", "CUDAExtension", "BuildExtension", "ext_modules",
                   "cythonize", "Pybind11Extension")


def detect_build(root: Path) -> list[str]:
    """Build steps for a repository whose setup.py compiles extensions."""
    setup_py = root / "setup.py"
    try:
        text = setup_py.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if any(mark in text for mark in EXTENSION_MARKS):
        return ["python setup.py build_ext --inplace"]
    return []
