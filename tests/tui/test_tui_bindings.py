"""Every key binding of the app has an id, so a [keymap] in curator.toml can remap it."""

from __future__ import annotations

import importlib
import pkgutil

from textual.binding import Binding
from textual.dom import DOMNode

import curator.tui


def our_classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(curator.tui.__path__, prefix="curator.tui."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, DOMNode) and \
                    value.__module__ == module.__name__:
                found.append(value)
    return found


def test_every_binding_has_a_unique_id():
    ids: dict[str, str] = {}
    classes = our_classes()
    assert len(classes) > 10
    for cls in classes:
        for binding in Binding.make_bindings(cls.__dict__.get("BINDINGS", [])):
            assert binding.id, f"{cls.__name__}: binding {binding.key} -> {binding.action} has no id"
            where = f"{cls.__name__}.{binding.action}"
            assert ids.setdefault(binding.id, where) == where, \
                f"binding id {binding.id} used by {ids[binding.id]} and {where}"


def test_navigation_keys_are_the_apps_alone():
    """F2-F6, alt+arrows, alt+digits and the reload key mean the same on every screen:
    only the App binds them, and no screen or widget of ours takes them for itself."""
    from curator.tui.app import CuratorApp

    reserved = {"f2", "f3", "f4", "f5", "f6", "alt+left", "alt+right", "ctrl+l",
                *(f"alt+{n}" for n in range(1, 10))}
    app_keys = {b.key: b for b in Binding.make_bindings(CuratorApp.BINDINGS)}
    assert reserved <= set(app_keys)
    assert all(app_keys[k].priority for k in reserved)   # editors cannot swallow them
    for cls in our_classes():
        if cls is CuratorApp:
            continue
        for binding in Binding.make_bindings(cls.__dict__.get("BINDINGS", [])):
            assert binding.key not in reserved, f"{cls.__name__} binds {binding.key}"
    # the reload key reaches each screen that can go stale
    from curator.tui.screens import MODES

    for info in MODES.values():
        assert hasattr(info.screen, "action_reload"), info.cls
