"""No import cycle anywhere in curator: a module's imports only ever lead away from it.

The import graph is grimp's (the one import-linter checks the layers on), counting every
import a module makes, also those inside functions and under TYPE_CHECKING.
"""

from pathlib import Path

import grimp
import pytest

import curator


def _cycles(graph: grimp.ImportGraph) -> list[tuple[str, ...]]:
    """One import chain back to its start for every import that is part of a cycle."""
    found = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                found.append((importer, *back))
    return found


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("curator", cache_dir=None)


def test_no_import_cycle_in_curator(graph):
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    graph.add_import(importer="pkg.c", imported="pkg.d")
    assert _cycles(graph) == [("pkg.a", "pkg.b", "pkg.c", "pkg.a"),
                              ("pkg.b", "pkg.c", "pkg.a", "pkg.b"),
                              ("pkg.c", "pkg.a", "pkg.b", "pkg.c")]


def test_every_module_is_in_the_graph(graph):
    # a folder without __init__.py is a namespace package grimp (and so the contracts)
    # would not see
    root = Path(curator.__file__).parent
    modules = {".".join(("curator", *path.relative_to(root).with_suffix("").parts))
               .removesuffix(".__init__") for path in root.rglob("*.py")
               if "data" not in path.relative_to(root).parts[:1]}
    assert len(modules) > 100
    assert modules - set(graph.modules) == set()
