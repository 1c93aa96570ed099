"""The app's screens. Each top-level screen is a mode (F2 … F6); Problem is pushed on top.

A screen whose core package is not built yet is simply absent: `available_modes` imports
each screen module and leaves out those whose core cannot be imported.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from textual.screen import Screen


@dataclass(frozen=True)
class ModeInfo:
    title: str
    description: str
    module: str
    cls: str

    @property
    def screen(self) -> Callable[[], Screen]:
        return getattr(importlib.import_module(f"curator.tui.screens.{self.module}"), self.cls)


MODES: dict[str, ModeInfo] = {
    "problems": ModeInfo("Problems", "All problems: filter, sort, open", "problems",
                         "ProblemsScreen"),
    "stats": ModeInfo("Stats", "Label distribution and pass@k charts", "stats", "StatsScreen"),
    "candidates": ModeInfo("Candidates", "Mined candidate functions: accept or reject",
                           "candidates", "CandidatesScreen"),
    "review": ModeInfo("Review", "Review failing samples into the bug taxonomy", "review",
                       "ReviewScreen"),
    "release": ModeInfo("Release", "Release gates and bundle build", "release",
                        "ReleaseScreen"),
}


def _ready(info: ModeInfo) -> bool:
    try:
        module = importlib.import_module(f"curator.tui.screens.{info.module}")
    except ImportError as exc:
        missing = getattr(exc, "name", None) or ""
        if missing == f"curator.tui.screens.{info.module}":
            return False   # that screen is not written yet
        if missing.startswith("curator.") and not missing.startswith("curator.tui"):
            return False   # its core package is not there yet
        raise
    return getattr(module, "READY", True)


def available_modes() -> dict[str, ModeInfo]:
    return {name: info for name, info in MODES.items() if _ready(info)}
