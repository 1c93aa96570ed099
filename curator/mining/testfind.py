"""Which tests exercise which functions: test modules -> pytest node ids -> references.

A test module is read statically. For every test function (`test*` at module level, or in
a `Test*` / `*TestCase` class) we collect the names it uses once resolved through the
module's imports (`from pkg.mod import f`, `import pkg.mod as m`, function-local imports,
star imports), including calls through instances (`layer = Layer(); layer(x)` uses
`Layer.__call__` / `Layer.forward`; `Layer().f()` uses `Layer.f`; `with Layer() as x`),
through helper functions and fixtures of the same module, through `self.x` (or `cls.x`)
set anywhere in the class or its bases in the module, and through setUp-style methods,
which count for every test of the class. An attribute of an instance names the attribute
on its class (`net.encoder.f` and `self.net.encoder.f` both use `Net.encoder`). The result
is a set of absolute dotted references per node id; the indexer maps them to candidates.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from curator.pysource.modules import ModuleInfo, dotted, import_bindings

SETUP_METHODS = {"setUp", "setup_method", "setUpClass", "setup_class", "setup",
                 "asyncSetUp", "setup_class_method"}
# Calls that return the same object (model.eval(), Layer().to(device) ...).
SELF_RETURNING = {"to", "eval", "train", "cuda", "cpu", "double", "float", "half",
                  "requires_grad_", "type"}


def is_test_module(path: str) -> bool:
    name = PurePosixPath(path).name
    return (name.startswith("test_") or name.endswith("_test.py")) and name.endswith(".py")


def in_test_folder(path: str) -> bool:
    parts = PurePosixPath(path).parts[:-1]
    return any(p in ("tests", "test", "testing") for p in parts)


@dataclass
class FoundTest:
    node_id: str
    refs: set[str]


@dataclass
class _Use:
    refs: set[str] = field(default_factory=set)
    local_calls: set[str] = field(default_factory=set)   # module-level functions used
    self_calls: set[str] = field(default_factory=set)    # self.method used


class _Analyser(ast.NodeVisitor):
    def __init__(self, bindings: dict[str, str], stars: list[str], instances: dict[str, str],
                 self_attrs: dict[str, str], module_funcs: set[str], package: str):
        self.bindings = dict(bindings)
        self.stars = stars
        self.instances = dict(instances)
        self.self_attrs = self_attrs
        self.module_funcs = module_funcs
        self.package = package
        self.use = _Use()

    # -- name resolution -----------------------------------------------------

    def ref_of(self, node: ast.AST) -> str | None:
        """The absolute dotted name an expression denotes, when it is an imported name."""
        chain = dotted(node)
        if chain is None:
            return None
        root, _, rest = chain.partition(".")
        if root in self.bindings:
            target = self.bindings[root]
            return f"{target}.{rest}" if rest else target
        if root == "self":  # self.x.y, x an instance set in the class: y on x's class
            parts = rest.split(".")
            owner = self.self_attrs.get(parts[0])
            return f"{owner}.{parts[1]}" if owner and len(parts) > 1 else None
        if self.stars and root not in self.instances and root not in self.module_funcs:
            return f"{self.stars[0]}.{chain}"  # `from m import *`: most likely from there
        return None

    def instance_of(self, node: ast.AST) -> str | None:
        """The class an expression is an instance of: `C(...)`, `C(...).to(d)`, a variable."""
        while (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr in SELF_RETURNING):
            node = node.func.value
        if isinstance(node, ast.Call):
            return self.ref_of(node.func)
        if isinstance(node, ast.Name):
            return self.instances.get(node.id)
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == "self"):
            return self.self_attrs.get(node.attr)
        return None

    # -- visiting --------------------------------------------------------------

    def visit_Import(self, node) -> None:
        found, stars = import_bindings(node, self.package)
        for binding in found:
            self.bindings[binding.name] = binding.target
        self.stars = self.stars + stars

    visit_ImportFrom = visit_Import

    def visit_Assign(self, node: ast.Assign) -> None:
        cls = self.instance_of(node.value)
        if cls:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.instances[target.id] = cls
        self.generic_visit(node)

    def visit_withitem(self, node: ast.withitem) -> None:
        cls = self.instance_of(node.context_expr)
        if cls and isinstance(node.optional_vars, ast.Name):
            self.instances[node.optional_vars.id] = cls
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            return
        name = node.id
        if name in self.bindings:
            self.use.refs.add(self.bindings[name])
        elif name in self.module_funcs:
            self.use.local_calls.add(name)
        elif self.stars and name not in self.instances:
            for star in self.stars:
                self.use.refs.add(f"{star}.{name}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain = dotted(node)
        if chain is None:
            self.generic_visit(node)
            return
        root, first = chain.split(".")[:2]
        # ref_of covers imported roots, star imports and `self.x.y` with x set in setUp.
        ref = self.ref_of(node)
        if ref:
            self.use.refs.add(ref)
        elif root in self.instances:
            self.use.refs.add(f"{self.instances[root]}.{first}")
        elif root == "self":
            if first not in self.self_attrs:
                self.use.self_calls.add(first)
        elif root in self.module_funcs:
            self.use.local_calls.add(root)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        cls = self.instance_of(func)  # calling an instance: net(x), Layer()(x), self.net(x)
        if cls:
            self.use.refs.add(f"{cls}.__call__")
            self.use.refs.add(f"{cls}.forward")
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
            owner = self.instance_of(func.value)
            if owner:
                self.use.refs.add(f"{owner}.{func.attr}")
        self.generic_visit(node)

    def visit_FunctionDef(self, node) -> None:
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
            if arg.arg in self.module_funcs:  # a fixture defined in this module
                self.use.local_calls.add(arg.arg)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef


def _self_attrs(cls: ast.ClassDef, probe: _Analyser) -> dict[str, str]:
    """`self.x = C(...)` (or `cls.x = ...`) anywhere in the class -> {x: C}."""
    found: dict[str, str] = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign):
            owner = probe.instance_of(node.value)
            if not owner:
                continue
            for target in node.targets:
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id in ("self", "cls")):
                    found[target.attr] = owner
    return found


def _is_test_class(cls: ast.ClassDef) -> bool:
    if cls.name.startswith("Test"):
        return True
    return any((dotted(b) or "").endswith("TestCase") for b in cls.bases)


def find_tests(module: ModuleInfo) -> list[FoundTest]:
    """Every test in a test module with the absolute names it uses."""
    tree = module.tree
    bindings = {name: b.target for name, b in module.bindings.items()}
    module_funcs = {s.name: s for s in tree.body
                    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}
    package = module.package

    def analyser_for(self_attrs: dict[str, str], instances=None) -> _Analyser:
        return _Analyser(bindings, module.stars, instances or {}, self_attrs,
                         set(module_funcs), package)

    # Module-level instances: MODEL = Model() at import time. The probe that finds them
    # then finds the classes' `self.x = ...` instances too (`self.model = MODEL` works).
    probe = analyser_for({})
    module_instances = probe.instances
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            owner = probe.instance_of(stmt.value)
            if owner:
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        module_instances[target.id] = owner

    uses: dict[tuple[str, ...], _Use] = {}

    def analyse(key: tuple[str, ...], node, self_attrs) -> None:
        analyser = analyser_for(self_attrs, module_instances)
        analyser.visit(node)
        uses[key] = analyser.use

    for name, node in module_funcs.items():
        analyse((name,), node, {})

    tests: list[FoundTest] = []

    def closure(keys: list[tuple[str, ...]], methods: dict[str, tuple[str, ...]]) -> set[str]:
        """Everything the functions under `keys` use, following helpers and self.methods."""
        refs: set[str] = set()
        seen: set[tuple[str, ...]] = set()
        stack = list(keys)
        while stack:
            current = stack.pop()
            if current in seen:  # recursion, or a helper reached twice
                continue
            seen.add(current)
            use = uses[current]
            refs |= use.refs
            stack.extend((name,) for name in use.local_calls)
            stack.extend(methods[name] for name in use.self_calls if name in methods)
        return refs

    def lineage(cls: ast.ClassDef) -> list[ast.ClassDef]:
        """The class and its ancestors defined in this module, nearest first."""
        found: list[ast.ClassDef] = []
        pending = [cls]
        while pending:
            current = pending.pop(0)
            if current not in found:  # also ends a cycle of bases in broken code
                found.append(current)
                pending.extend(classes[n] for n in map(dotted, current.bases) if n in classes)
        return found

    own_attrs = functools.cache(lambda cls: _self_attrs(cls, probe))

    def visit_class(cls: ast.ClassDef, outer: tuple[str, ...]) -> None:
        path = (*outer, cls.name)
        if not _is_test_class(cls):
            return
        # Farthest ancestor first, so a nearer class's methods and attributes win.
        self_attrs: dict[str, str] = {}
        methods: dict[str, ast.AST] = {}
        for klass in reversed(lineage(cls)):
            self_attrs.update(own_attrs(klass))
            methods.update((item.name, item) for item in klass.body
                           if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
        keys = {name: (*path, name) for name in methods}
        for name, node in methods.items():
            analyse(keys[name], node, self_attrs)
        setups = [keys[n] for n in SETUP_METHODS if n in keys]
        for name in sorted(methods):
            if name.startswith("test"):
                tests.append(FoundTest(f"{module.path}::{'::'.join(keys[name])}",
                                       closure([keys[name], *setups], keys)))
        for item in cls.body:
            if isinstance(item, ast.ClassDef):
                visit_class(item, path)

    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                stmt.name.startswith("test"):
            tests.append(FoundTest(f"{module.path}::{stmt.name}",
                                   closure([(stmt.name,)], {})))
        elif isinstance(stmt, ast.ClassDef):
            visit_class(stmt, ())
    return tests
