"""The app's screens. Each top-level screen is a mode (F2 … F6); Problem is pushed on top.

A screen whose core package is not built yet is simply absent: `available_modes` looks
for the screen's module and the core packages it needs without importing them (importing
every screen's core at start-up cost half a second); a screen is imported when first shown.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

from textual.screen import Screen


@dataclass(frozen=True)
class ModeInfo:
    title: str
    description: str
    module: str
    cls: str
    requires: tuple[str, ...] = ()   # core packages the screen calls

    @property
    def screen(self) -> Callable[[], Screen]:
        return getattr(importlib.import_module(f"curator.tui.screens.{self.module}"), self.cls)


MODES: dict[str, ModeInfo] = {
    "problems": ModeInfo("Problems", "All problems: filter, sort, open", "problems",
                         "ProblemsScreen"),
    "stats": ModeInfo("Stats", "Label distribution and pass@k charts", "stats", "StatsScreen"),
    "candidates": ModeInfo("Candidates", "Mined candidate functions: accept or reject",
                           "candidates", "CandidatesScreen", ("curator.mining",)),
    "review": ModeInfo("Review", "Review failing samples into the bug taxonomy", "review",
                       "ReviewScreen", ("curator.review", "curator.taxonomy")),
    "release": ModeInfo("Release", "Release gates and bundle build", "release",
                        "ReleaseScreen", ("curator.release",)),
}


def _exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _ready(info: ModeInfo) -> bool:
    return _exists(f"curator.tui.screens.{info.module}") and all(
        _exists(name) for name in info.requires)


def available_modes() -> dict[str, ModeInfo]:
    return {name: info for name, info in MODES.items() if _ready(info)}
