"""What the judge takes by name for a value a call left in its objects: a plain function
of the repository (`boundary._repository_function`) and a method bound to an instance of
a library class (`boundary._library_object_method`, `boundary._bm`), always the judge's
own definition, never the message's. Run on a generated package, no engine: the
end-to-end cases are in tests/adversarial/test_boundary_repos.py."""

from __future__ import annotations

import importlib
import sys
import textwrap
import types

import pytest

from curator.execution import boundary, worker

ROOT = "bynamepkg"
FILES = {
    "__init__.py": "",
    "other.py": "def imported():\n    return 2\n",
    "helpers.py": textwrap.dedent("""\
        from bynamepkg.other import imported  # noqa: F401


        def plain(x):
            return x + 1


        class Box:
            @staticmethod
            def static(x):
                return x

            def method(self, x):
                return x * 2


        def _make():
            def inner():
                return 1
            return inner


        made = _make()


        def proxied():
            return 0


        proxied.__curator_target__ = "proxied"
        """),
    "target.py": "def target():\n    return helper()\n\n\ndef helper():\n    return 3\n",
    "tests/__init__.py": "",
    "tests/test_x.py": "def helper():\n    return 4\n",
    "conftest.py": "def hook():\n    return 5\n",
}


@pytest.fixture
def package(tmp_path):
    for path, text in FILES.items():
        (tmp_path / ROOT / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / ROOT / path).write_text(text)
    sys.path.insert(0, str(tmp_path))
    repository, allowed = dict(boundary.REPOSITORY), set(boundary.ALLOWED_ROOTS)
    modules = {name: importlib.import_module(f"{ROOT}.{name}")
               for name in ("helpers", "other", "target", "tests.test_x", "conftest")}
    boundary.configure_allowed([ROOT])
    boundary.configure_repository(ROOT, f"{ROOT}.target", worker.defined_names(
        "def target():\n    return helper() + 1\n"))
    try:
        yield modules
    finally:
        boundary.REPOSITORY.update(repository)
        boundary.ALLOWED_ROOTS.clear()
        boundary.ALLOWED_ROOTS.update(allowed)
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == ROOT or m.startswith(ROOT + ".")]:
            del sys.modules[name]


def test_a_repository_function_is_the_judges_own(package):
    helpers = package["helpers"]
    found = boundary._repository_function
    assert found(f"{ROOT}.helpers", "plain") is helpers.plain
    assert found(f"{ROOT}.helpers", "Box.method") is helpers.Box.__dict__["method"]
    assert found(f"{ROOT}.helpers", "Box.static") is helpers.Box.__dict__["static"].__func__
    # the target's module: a name the candidate text does not bind
    assert found(f"{ROOT}.target", "helper") is package["target"].helper


@pytest.mark.parametrize("module,qualname", [
    (f"{ROOT}.helpers", "missing"),          # no such name
    (f"{ROOT}.helpers", "Box"),              # a class, no function
    (f"{ROOT}.helpers", "imported"),         # another module's function
    (f"{ROOT}.helpers", "made"),             # held there under another qualname
    (f"{ROOT}.helpers", "_make.<locals>.inner"),
    (f"{ROOT}.helpers", "plain.__globals__"),
    (f"{ROOT}.helpers", "proxied"),          # a target proxy of the judge
    (f"{ROOT}.tests.test_x", "helper"),      # a test module
    (f"{ROOT}.conftest", "hook"),            # a conftest
    (f"{ROOT}.target", "target"),            # a name the candidate text binds
    (f"{ROOT}.notimported", "f"),            # a module the judge has not imported
    ("json", "dumps"),                       # not the repository's package
    (None, "plain"), (f"{ROOT}.helpers", 3),
])
def test_anything_else_stays_a_handle(package, module, qualname):
    assert boundary._repository_function(module, qualname) is None


def test_a_forged_function_is_never_taken(package):
    def plain(x):   # the solution's, forged to the repository's name
        return 10

    plain.__module__, plain.__qualname__ = f"{ROOT}.helpers", "plain"
    assert boundary._repository_function(f"{ROOT}.helpers", "plain") is \
        package["helpers"].plain is not plain


def test_the_target_module_is_refused_whole_without_the_candidates_names(package):
    boundary.configure_repository(ROOT, f"{ROOT}.target", None)
    assert boundary._repository_function(f"{ROOT}.target", "helper") is None
    assert boundary._repository_function(f"{ROOT}.helpers", "plain") is not None


def test_the_names_a_candidate_text_binds_are_over_counted():
    text = textwrap.dedent("""\
        import os.path as p
        from x import y, z as w
        a, (b, c) = 1, (2, 3)
        d: int = 4
        e += 1
        del f


        def g():
            global h
            for i in range(3):
                pass


        class K:
            m = 1
        """)
    assert worker.defined_names(text) >= {"p", "y", "w", "a", "b", "c", "d", "e", "f",
                                          "g", "h", "i", "K", "m"}
    assert worker.defined_names("def broken(:\n") is None


def test_a_library_objects_own_method_crosses_as_owner_and_name(package):
    Box = package["helpers"].Box
    box = Box()
    assert boundary._library_object_method(box.method) == (box, "method")
    made = boundary._bm(box, "method")
    assert type(made) is types.MethodType and made.__self__ is box and \
        made.__func__ is Box.__dict__["method"]


def test_a_method_forged_onto_a_library_object_is_no_library_method(package):
    Box = package["helpers"].Box

    def method(self, x):
        return 6

    method.__module__, method.__qualname__ = f"{ROOT}.helpers", "Box.method"
    assert boundary._library_object_method(types.MethodType(method, Box())) is None
    with pytest.raises(boundary.NotData):
        boundary._bm(Box(), "unknown")
    with pytest.raises(boundary.NotData):
        boundary._bm(Box(), "static")   # a static method: no function of an instance
    with pytest.raises(boundary.NotData):
        boundary._bm(Box, "method")     # a class the judge holds


def test_never_bound_to_an_object_the_judge_holds(package):
    box = package["helpers"].Box()
    link, boundary._LINK[0] = boundary._LINK[0], types.SimpleNamespace(
        judge_ids={id(box): 7})
    try:
        with pytest.raises(boundary.NotData):
            boundary._bm(box, "method")
    finally:
        boundary._LINK[0] = link


def test_a_functions_print_is_its_code_globals_defaults_and_cells(package):
    """What the judge compares before it takes its own function for the solution's of
    the same name (`boundary.function_print`): other code, other defaults or other cells
    under the same name are another function; the same code over a dict of globals made
    up is never sent by name (`_own_globals`, on the solution's side)."""
    helpers = package["helpers"]
    plain = helpers.plain
    printed = boundary.function_print(plain)
    assert printed == boundary.function_print(plain) is not None
    assert boundary._own_globals(plain)

    def other(x):
        return x + 2

    other.__module__, other.__qualname__ = plain.__module__, "plain"
    made_up = types.FunctionType(plain.__code__, {**vars(helpers)}, "plain")
    defaulted = types.FunctionType(plain.__code__, vars(helpers), "plain", (3,))
    for forged in (other, defaulted):
        assert boundary.function_print(forged) != printed
    assert not boundary._own_globals(made_up)

    def wrap(function):
        def wrapper(*args):
            return function(*args)
        return wrapper

    assert boundary.function_print(wrap(plain)) == boundary.function_print(wrap(plain)) != \
        boundary.function_print(wrap(other))
    assert boundary.callable_print(len) != boundary.callable_print(abs)
    assert boundary.function_print(len) is None
