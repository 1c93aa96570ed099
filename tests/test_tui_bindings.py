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
